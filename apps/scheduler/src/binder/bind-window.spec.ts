import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BindWindow } from './bind-window.js';

/** A task that finishes when the test says so. */
function gate(): { task: () => Promise<void>; open: () => void; fail: (error: Error) => void } {
  let open: () => void = () => undefined;
  let fail: (error: Error) => void = () => undefined;
  const done = new Promise<void>((resolve, reject) => ((open = resolve), (fail = reject)));
  return { task: () => done, open: () => open(), fail: (error) => fail(error) };
}

const unexpected = (error: unknown): void => assert.fail(error as Error);

describe('BindWindow', () => {
  it('keeps at most its limit in flight and starts the next as soon as one settles', async () => {
    const sut = new BindWindow(2);
    const gates = [gate(), gate(), gate()];
    let running = 0;
    let most = 0;
    const tracked = gates.map((g) => async () => {
      running++;
      most = Math.max(most, running);
      await g.task();
      running--;
    });

    await sut.run(tracked[0], unexpected);
    await sut.run(tracked[1], unexpected);
    let thirdStarted = false;
    const third = sut.run(tracked[2], unexpected).then(() => (thirdStarted = true));
    await Promise.resolve();
    assert.equal(thirdStarted, false);
    gates[0].open();
    await third;
    assert.equal(thirdStarted, true);
    gates[1].open();
    gates[2].open();
    await sut.drain();

    assert.equal(most, 2);
    assert.equal(running, 0);
  });

  it('hands freed slots to waiting callers in order, and drains only once the last settles', async () => {
    const sut = new BindWindow(1);
    const gates = [gate(), gate(), gate()];
    const started: number[] = [];
    const runs = gates.map((g, i) =>
      sut.run(() => {
        started.push(i);
        return g.task();
      }, unexpected),
    );
    let drained = false;
    const draining = Promise.all(runs).then(() => sut.drain().then(() => (drained = true)));
    for (const [i, g] of gates.entries()) {
      await Promise.resolve();
      assert.deepEqual(
        started,
        gates.slice(0, i + 1).map((_, k) => k),
      );
      g.open();
      await runs[Math.min(i + 1, runs.length - 1)];
    }
    await draining;
    assert.equal(drained, true);
  });

  it('frees the slot of a task that throws before it returns a promise', async () => {
    const sut = new BindWindow(1);
    const errors: string[] = [];
    await sut.run(
      () => {
        throw new Error('at once');
      },
      (error) => errors.push((error as Error).message),
    );
    await sut.run(() => Promise.resolve(), unexpected);
    await sut.drain();
    assert.deepEqual(errors, ['at once']);
  });

  it("hands a task's failure to its own handler and keeps going", async () => {
    const sut = new BindWindow(4);
    const failing = gate();
    const errors: string[] = [];
    let after = false;

    await sut.run(failing.task, (error) => errors.push((error as Error).message));
    await sut.run(async () => {
      after = true;
    }, unexpected);
    failing.fail(new Error('conflict'));
    await sut.drain();

    assert.deepEqual(errors, ['conflict']);
    assert.equal(after, true);
  });
});
