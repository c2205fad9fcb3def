import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sharedFor } from './node-info.js';

describe('sharedFor', () => {
  it('reads once per period however many nodes ask, and afresh once the period has passed', (t) => {
    t.mock.timers.enable({ apis: ['Date'], now: 1_000_000 });
    let reads = 0;
    const sut = sharedFor(500, () => ++reads);

    const burst = Array.from({ length: 250 }, () => sut());
    t.mock.timers.tick(499);
    const stillShared = sut();
    t.mock.timers.tick(1);
    const fresh = sut();

    assert.deepEqual(new Set(burst), new Set([1]));
    assert.equal(stillShared, 1);
    assert.equal(fresh, 2);
    assert.equal(reads, 2);
  });

  it('reads afresh when the clock goes back', (t) => {
    t.mock.timers.enable({ apis: ['Date'], now: 1_000_000 });
    let reads = 0;
    const sut = sharedFor(500, () => ++reads);

    sut();
    t.mock.timers.setTime(900_000);

    assert.equal(sut(), 2);
  });
});
