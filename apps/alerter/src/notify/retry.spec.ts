import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { postJson } from './retry.js';

/** A fetch that answers each call with the next status in `statuses` (a throw for 0). */
function fakeFetch(statuses: number[]): { fetchFn: typeof fetch; calls: number } {
  const state = {
    calls: 0,
    fetchFn: (async () => {
      const status = statuses[state.calls++] ?? 200;
      if (status === 0) throw new TypeError('fetch failed');
      return new Response(status === 200 ? '' : 'nope', { status });
    }) as unknown as typeof fetch,
  };
  return state;
}

describe('postJson', () => {
  it('retries failures with capped exponential back-off, then succeeds', async () => {
    const waits: number[] = [];
    const target = fakeFetch([0, 503, 500, 200]);
    await postJson(
      'http://127.0.0.1:1/x',
      {},
      { attempts: 5, baseMs: 100, capMs: 250, timeoutMs: 1000, sleep: async (ms) => void waits.push(ms), fetchFn: target.fetchFn },
    );
    assert.equal(target.calls, 4);
    assert.deepEqual(waits, [100, 200, 250]);
  });

  it('gives up after its attempts, and at once on a 4xx', async () => {
    const down = fakeFetch([503, 503, 503]);
    await assert.rejects(
      postJson('http://127.0.0.1:1/x', {}, { attempts: 3, baseMs: 1, capMs: 1, timeoutMs: 1000, sleep: async () => undefined, fetchFn: down.fetchFn }),
      /answered 503/,
    );
    assert.equal(down.calls, 3);
    const bad = fakeFetch([400]);
    await assert.rejects(
      postJson('http://127.0.0.1:1/x', {}, { attempts: 3, baseMs: 1, capMs: 1, timeoutMs: 1000, sleep: async () => undefined, fetchFn: bad.fetchFn }),
      /answered 400/,
    );
    assert.equal(bad.calls, 1);
  });
});
