import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { LogSession, splitChunks, type LogSessionMessage, type LogSessionParams } from './log-session.js';

const FAST: LogSessionParams = { windowChunks: 64, chunkChars: 1024, keepAliveMs: 20, timeoutMs: 80 };

/** Lets every promise that can settle without time passing settle (setImmediate runs on real time). */
const settle = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await new Promise<void>((r) => setImmediate(r));
};

/** Fake time for the session's timer and clock: nothing in these tests waits on real time. */
function fakeTime(t: TestContext): { now: () => number; tick: (ms: number) => void } {
  t.mock.timers.enable({ apis: ['setInterval', 'Date'], now: 0 });
  return {
    now: () => Date.now(),
    // In 5 ms steps, so each timer callback sees the clock at its own time.
    tick: (ms) => {
      for (let left = ms; left > 0; left -= 5) t.mock.timers.tick(Math.min(5, left));
    },
  };
}

/** A source that yields `pieces`, then (when `follow`) waits until the session aborts it. */
function source(pieces: string[], follow = false): { read: (signal: AbortSignal) => AsyncIterable<string>; aborted: () => boolean } {
  let aborted = false;
  return {
    aborted: () => aborted,
    read: async function* (signal: AbortSignal) {
      for (const piece of pieces) yield piece;
      if (!follow) return;
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      aborted = true;
    },
  };
}

const kinds = (messages: LogSessionMessage[]): string[] => messages.map((m) => (m.kind === 'data' ? `data${m.seq}:${m.data}` : `${m.kind}${m.seq}`));

describe('splitChunks', () => {
  it('cuts at the size and never inside a surrogate pair', () => {
    assert.deepEqual(splitChunks('abcdefg', 3), ['abc', 'def', 'g']);
    assert.deepEqual(splitChunks('ab😀cd', 3), ['ab', '😀c', 'd']);
    assert.deepEqual(splitChunks('', 3), []);
  });
});

describe('LogSession', () => {
  it('sends start, numbered chunks and end for a log that ends', async () => {
    const sent: LogSessionMessage[] = [];
    const sut = new LogSession((m) => sent.push(m), FAST);
    const result = await sut.run(source(['Hello ', 'World\n']).read);
    assert.deepEqual(kinds(sent), ['start0', 'data1:Hello ', 'data2:World\n', 'end2']);
    assert.deepEqual(result, { outcome: 'completed', chunks: 2 });
  });

  it('waits for acks when the window is full, and goes on when they come', async (t) => {
    const clock = fakeTime(t);
    const sent: LogSessionMessage[] = [];
    const sut = new LogSession((m) => sent.push(m), { ...FAST, windowChunks: 2, chunkChars: 3 }, clock.now);
    const done = sut.run(source(['abcdefghijkl']).read);
    await settle();
    clock.tick(30);
    await settle();
    assert.deepEqual(
      kinds(sent).filter((k) => !k.startsWith('heartbeat')),
      ['start0', 'data1:abc', 'data2:def'],
    );
    sut.control({ kind: 'ack', delivered: 1 });
    await settle();
    assert.equal(sent.filter((m) => m.kind === 'data').length, 3);
    sut.control({ kind: 'ack', delivered: 4 });
    const result = await done;
    assert.deepEqual(
      kinds(sent).filter((k) => !k.startsWith('heartbeat')),
      ['start0', 'data1:abc', 'data2:def', 'data3:ghi', 'data4:jkl', 'end4'],
    );
    assert.equal(result.outcome, 'completed');
  });

  it('stops reading a followed log when the API cancels, and says nothing more', async (t) => {
    const clock = fakeTime(t);
    const sent: LogSessionMessage[] = [];
    const sut = new LogSession((m) => sent.push(m), FAST, clock.now);
    const log = source(['line\n'], true);
    const done = sut.run(log.read);
    await settle();
    sut.control({ kind: 'cancel', delivered: 1 });
    const result = await done;
    assert.equal(result.outcome, 'cancelled');
    assert.ok(log.aborted(), 'the runtime read was aborted');
    assert.deepEqual(kinds(sent), ['start0', 'data1:line\n']);
  });

  it('keeps the API informed with heartbeats and gives up when it stops acking', async (t) => {
    const clock = fakeTime(t);
    const sent: LogSessionMessage[] = [];
    const sut = new LogSession((m) => sent.push(m), FAST, clock.now);
    const log = source([], true);
    let ended = false;
    const done = sut.run(log.read).finally(() => (ended = true));
    await settle();
    clock.tick(50);
    assert.equal(sent.filter((m) => m.kind === 'heartbeat').length, 2, 'a heartbeat every keep-alive period (20 ms) of quiet');
    sut.control({ kind: 'ack', delivered: 0 });
    // 70 ms after the ack: past the timeout measured from the start, not from the ack.
    clock.tick(70);
    await settle();
    assert.equal(ended, false, 'the ack reset the silence timer');
    clock.tick(20);
    const result = await done;
    assert.equal(result.outcome, 'timed out');
    assert.ok(log.aborted());
    assert.equal(sent.at(-1)?.kind, 'heartbeat', 'no end for an API that is gone');
  });

  it('ends with the runtime error when the read fails', async () => {
    const sent: LogSessionMessage[] = [];
    const sut = new LogSession((m) => sent.push(m), FAST);
    const result = await sut.run(async function* () {
      yield 'partial';
      throw new Error('docker stream logs failed: socket hang up');
    });
    assert.equal(result.outcome, 'failed');
    assert.deepEqual(sent.at(-1), { kind: 'end', seq: 1, error: { code: 500, reason: 'InternalError', message: 'docker stream logs failed: socket hang up' } });
  });

  it('tells the API it is shutting down when stopped', async (t) => {
    const clock = fakeTime(t);
    const sent: LogSessionMessage[] = [];
    const sut = new LogSession((m) => sent.push(m), FAST, clock.now);
    const done = sut.run(source([], true).read);
    await settle();
    sut.stop('stopped');
    assert.equal((await done).outcome, 'stopped');
    assert.equal(sent.at(-1)?.error?.code, 503);
  });
});
