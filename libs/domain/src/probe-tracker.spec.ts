import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ProbeTracker, type ProbeResult } from './probe-tracker.js';

const feed = (sut: ProbeTracker, outcomes: ProbeResult[]): Array<ProbeResult | 'unknown'> =>
  outcomes.map((o) => {
    sut.record(o);
    return sut.result;
  });

describe('ProbeTracker', () => {
  it('starts liveness as a success, readiness as a failure and startup as unknown', () => {
    assert.equal(new ProbeTracker('liveness', 1, 3).result, 'success');
    assert.equal(new ProbeTracker('readiness', 1, 3).result, 'failure');
    assert.equal(new ProbeTracker('startup', 1, 3).result, 'unknown');
  });

  it('turns a startup probe to failure after failureThreshold failures, and says so', () => {
    const sut = new ProbeTracker('startup', 1, 3);
    assert.deepEqual(
      (['failure', 'failure', 'failure'] as const).map((o) => sut.record(o)),
      [false, false, true],
    );
    assert.equal(sut.result, 'failure');
  });

  it('fails only after failureThreshold failures in a row', () => {
    const sut = new ProbeTracker('liveness', 1, 3);
    assert.deepEqual(feed(sut, ['failure', 'failure', 'success', 'failure', 'failure', 'failure']), [
      'success',
      'success',
      'success',
      'success',
      'success',
      'failure',
    ]);
  });

  it('succeeds only after successThreshold successes in a row', () => {
    const sut = new ProbeTracker('readiness', 2, 1);
    assert.deepEqual(feed(sut, ['success', 'failure', 'success', 'success', 'failure']), ['failure', 'failure', 'failure', 'success', 'failure']);
  });

  it('says when the result changed, and only then', () => {
    const sut = new ProbeTracker('readiness', 1, 2);
    assert.deepEqual(
      (['success', 'success', 'failure', 'failure', 'failure'] as const).map((o) => sut.record(o)),
      [true, false, false, true, false],
    );
  });
});
