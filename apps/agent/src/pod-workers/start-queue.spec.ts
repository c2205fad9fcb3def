import assert from 'node:assert/strict';
import { setImmediate as turn } from 'node:timers/promises';
import { describe, it, mock } from 'node:test';
import { StartQueue } from './start-queue.js';

/** A start the test finishes by hand; `began` tells whether the queue has let it run. */
function start(log: string[], name: string): { run: () => Promise<string>; finish: () => void; began: () => boolean } {
  let finish: () => void = () => undefined;
  let began = false;
  const done = new Promise<void>((resolve) => (finish = resolve));
  return {
    run: async () => {
      began = true;
      log.push(name);
      await done;
      return name;
    },
    finish: () => finish(),
    began: () => began,
  };
}

describe('StartQueue', () => {
  it('gives the engine at most its limit of starts at once', async () => {
    const queue = new StartQueue(2);
    const log: string[] = [];
    const starts = ['a', 'b', 'c', 'd'].map((uid) => start(log, uid));
    const results = starts.map((s, i) => queue.run(['a', 'b', 'c', 'd'][i] ?? '', s.run));
    await turn();
    assert.deepEqual(log, ['a', 'b']);
    starts[0]?.finish();
    assert.equal(await results[0], 'a');
    await turn();
    assert.deepEqual(log, ['a', 'b', 'c']);
    for (const s of starts) s.finish();
    assert.deepEqual(await Promise.all(results), ['a', 'b', 'c', 'd']);
  });

  it('hands a free slot to the pod it saw first, ahead of the sandboxes of pods that came after', async () => {
    const queue = new StartQueue(1);
    const log: string[] = [];
    const sandboxA = start(log, 'sandbox a');
    const sandboxB = start(log, 'sandbox b');
    const sandboxC = start(log, 'sandbox c');
    const containerA = start(log, 'container a');
    const running = [queue.run('a', sandboxA.run), queue.run('b', sandboxB.run), queue.run('c', sandboxC.run)];
    await turn();
    // Pod a's container asks once its sandbox is created, after b and c queued their sandboxes.
    running.push(queue.run('a', containerA.run));
    for (const s of [sandboxA, sandboxB, sandboxC, containerA]) s.finish();
    await Promise.all(running);
    assert.deepEqual(log, ['sandbox a', 'container a', 'sandbox b', 'sandbox c']);
  });

  it('gives a pod that was forgotten and comes back a place after the pods waiting now', async () => {
    const queue = new StartQueue(1);
    const log: string[] = [];
    const first = start(log, 'a once');
    const holding = queue.run('a', first.run);
    const b = start(log, 'b');
    const again = start(log, 'a again');
    const waiting = queue.run('b', b.run);
    queue.forget('a');
    const later = queue.run('a', again.run);
    for (const s of [first, b, again]) s.finish();
    await Promise.all([holding, waiting, later]);
    assert.deepEqual(log, ['a once', 'b', 'a again']);
  });

  it('lets every start through as it comes with a limit of 0', async () => {
    const queue = new StartQueue(0);
    const log: string[] = [];
    const starts = ['a', 'b', 'c'].map((uid) => start(log, uid));
    const results = starts.map((s, i) => queue.run(String(i), s.run));
    assert.ok(starts.every((s) => s.began()));
    for (const s of starts) s.finish();
    await Promise.all(results);
  });

  it('fails a start that outlasts the timeout and gives its slot to the next', async () => {
    mock.timers.enable({ apis: ['setTimeout'] });
    try {
      const queue = new StartQueue(1, 120_000);
      const hung = queue.run('a', () => new Promise<never>(() => undefined));
      const log: string[] = [];
      const next = start(log, 'b');
      const waiting = queue.run('b', next.run);
      await turn();
      mock.timers.tick(119_999);
      await turn();
      assert.deepEqual(log, []);
      mock.timers.tick(1);
      await assert.rejects(hung, { name: 'TimeoutError' });
      await turn();
      assert.deepEqual(log, ['b']);
      next.finish();
      assert.equal(await waiting, 'b');
    } finally {
      mock.timers.reset();
    }
  });

  it('passes a failed start on to its caller and frees its slot', async () => {
    const queue = new StartQueue(1);
    const failed = queue.run('a', () => Promise.reject(new Error('no such image')));
    await assert.rejects(failed, /no such image/);
    assert.equal(await queue.run('b', () => Promise.resolve('next')), 'next');
  });
});
