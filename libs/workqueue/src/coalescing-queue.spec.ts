import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CoalescingQueue } from './coalescing-queue.js';

/** A run that ends when the test says so. */
function gate(): { wait: Promise<void>; open: () => void } {
  let open: () => void = () => undefined;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}

describe('CoalescingQueue', () => {
  it('runs nothing before start, then once per ask when idle', async () => {
    let runs = 0;
    const sut = new CoalescingQueue(
      async () => void runs++,
      (error) => assert.fail(String(error)),
    );
    sut.add();
    await sut.idle();
    assert.equal(runs, 0);
    sut.start(false);
    sut.add();
    await sut.idle();
    sut.add();
    await sut.idle();
    assert.equal(runs, 2);
  });

  it('never overlaps runs, and folds every ask made during a run into one run after it', async () => {
    const gates = [gate(), gate()];
    let running = 0;
    let overlapped = false;
    let runs = 0;
    const sut = new CoalescingQueue(
      async () => {
        overlapped ||= running > 0;
        running++;
        await gates[runs++]?.wait;
        running--;
      },
      (error) => assert.fail(String(error)),
    );
    sut.start();
    sut.add();
    sut.add();
    sut.add();
    gates[0]?.open();
    gates[1]?.open();
    await sut.idle();
    assert.equal(runs, 2, 'the first run, then one for the three asks made during it');
    assert.equal(overlapped, false);
  });

  it('reports a failed run and keeps serving asks; runs nothing after stop', async () => {
    const errors: unknown[] = [];
    let runs = 0;
    const sut = new CoalescingQueue(
      async () => {
        runs++;
        if (runs === 1) throw new Error('first run failed');
      },
      (error) => errors.push(error),
    );
    sut.start();
    await sut.idle();
    sut.add();
    await sut.idle();
    assert.equal(runs, 2);
    assert.match(String(errors[0]), /first run failed/);
    await sut.stop();
    sut.add();
    await sut.idle();
    assert.equal(runs, 2);
  });
});
