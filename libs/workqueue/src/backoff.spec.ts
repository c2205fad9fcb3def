import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import { Backoff, retry } from './backoff.js';

describe('Backoff', () => {
  it('doubles from the first delay up to the cap, and starts over after reset', () => {
    const sut = new Backoff({ initialMs: 100, maxMs: 1000 });
    assert.deepEqual([sut.next(), sut.next(), sut.next(), sut.next(), sut.next(), sut.next()], [100, 200, 400, 800, 1000, 1000]);
    sut.reset();
    assert.equal(sut.next(), 100);
  });
});

describe('retry', () => {
  beforeEach(() => mock.timers.enable({ apis: ['setTimeout'] }));
  afterEach(() => mock.timers.reset());

  /** Lets pending promise callbacks run. */
  const settle = async (): Promise<void> => {
    for (let i = 0; i < 10; i++) await Promise.resolve();
  };

  it('tries again after each back-off until the attempt succeeds', async () => {
    const attempts: number[] = [];
    const waits: number[] = [];
    const result = retry(
      async (n) => {
        attempts.push(n);
        if (n < 4) throw new Error(`failure ${n}`);
        return 'done';
      },
      { initialMs: 100, maxMs: 300, onRetry: (_error, _n, delay) => waits.push(delay) },
    );
    await settle();
    assert.deepEqual(attempts, [1]);
    mock.timers.tick(99);
    await settle();
    assert.deepEqual(attempts, [1], 'nothing before the back-off ends');
    mock.timers.tick(1);
    await settle();
    assert.deepEqual(attempts, [1, 2]);
    mock.timers.tick(200);
    await settle();
    mock.timers.tick(300);
    await settle();
    assert.equal(await result, 'done');
    assert.deepEqual(attempts, [1, 2, 3, 4]);
    assert.deepEqual(waits, [100, 200, 300]);
  });

  it('throws at once an error that is not retryable, and stops when aborted', async () => {
    await assert.rejects(
      retry(
        async () => {
          throw new Error('refused');
        },
        { initialMs: 100, maxMs: 100, retryable: () => false },
      ),
      /refused/,
    );
    const abort = new AbortController();
    const result = retry(
      async () => {
        throw new Error('down');
      },
      { initialMs: 1000, maxMs: 1000, signal: abort.signal },
    );
    await settle();
    abort.abort();
    await assert.rejects(result, /down/);
  });

  it('throws the last error after maxAttempts, without waiting after it', async () => {
    let attempts = 0;
    const waits: number[] = [];
    const result = retry(
      async (n) => {
        attempts = n;
        throw new Error(`failure ${n}`);
      },
      { initialMs: 100, maxMs: 100, maxAttempts: 3, onRetry: (_error, _n, delay) => waits.push(delay) },
    );
    result.catch(() => undefined);
    await settle();
    mock.timers.tick(100);
    await settle();
    mock.timers.tick(100);
    await settle();
    await assert.rejects(result, /failure 3/);
    assert.equal(attempts, 3);
    assert.deepEqual(waits, [100, 100]);
  });
});
