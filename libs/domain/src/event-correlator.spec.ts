import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { COMBINED_PREFIX, EventCorrelator, type EventOccurrence } from './event-correlator.js';

const UID = '00000000-0000-4000-8000-000000000001';
const backOff: EventOccurrence = { uid: UID, namespace: 'default', name: 'web', fieldPath: 'spec.containers{main}', type: 'Warning', reason: 'BackOff', message: 'Back-off restarting failed container main' };
const T0 = Date.parse('2026-01-01T00:00:00Z');

describe('EventCorrelator', () => {
  it('publishes the first occurrence at once, with a count of 1', () => {
    const sut = new EventCorrelator();
    const first = sut.observe(backOff, T0);
    assert.deepEqual(first && { count: first.count, firstMs: first.firstMs, lastMs: first.lastMs, message: first.message }, {
      count: 1,
      firstMs: T0,
      lastMs: T0,
      message: backOff.message,
    });
  });

  it('folds identical repeats into one series whose count grows, published at doubling intervals', () => {
    const sut = new EventCorrelator();
    const first = sut.observe(backOff, T0);
    const published = [first];
    // A repeat every 100 ms for 10 minutes: 6,000 occurrences.
    for (let t = T0 + 100; t <= T0 + 600_000; t += 100) {
      const now = sut.observe(backOff, t);
      if (now) published.push(now);
      published.push(...sut.due(t));
    }
    assert.equal(sut.due(T0 + 600_000).length, 0);
    assert.ok((published.at(-1)?.count ?? 0) < 6001, 'the latest repeats are held back');
    published.push(...sut.due(sut.nextDueMs() ?? 0));
    const last = published.at(-1);
    assert.equal(last?.count, 6001);
    assert.equal(last?.lastMs, T0 + 600_000);
    assert.ok(published.every((e) => e?.series === first?.series), 'one series, so one Event object');
    assert.ok(published.every((e) => e?.firstMs === T0));
    // 1 s, 2 s, 4 s ... up to 5 min apart: a dozen publications, not 6,001.
    assert.ok(published.length <= 12, `${published.length} publications`);
    const counts = published.map((e) => e?.count ?? 0);
    assert.deepEqual([...counts].sort((a, b) => a - b), counts, 'counts only grow');
  });

  it('publishes a held repeat when it comes due, with the latest count and time', () => {
    const sut = new EventCorrelator();
    sut.observe(backOff, T0);
    assert.equal(sut.observe(backOff, T0 + 10), undefined);
    assert.equal(sut.observe(backOff, T0 + 20), undefined);
    assert.equal(sut.nextDueMs(), T0 + 1000);
    assert.deepEqual(sut.due(T0 + 999), []);
    const [due] = sut.due(T0 + 1000);
    assert.equal(due?.count, 3);
    assert.equal(due?.lastMs, T0 + 20);
    assert.equal(sut.nextDueMs(), undefined);
  });

  it('keeps different objects, reasons and messages apart, and starts a new series after a long idle', () => {
    const sut = new EventCorrelator();
    const a = sut.observe(backOff, T0);
    const b = sut.observe({ ...backOff, uid: '00000000-0000-4000-8000-000000000002' }, T0);
    const c = sut.observe({ ...backOff, reason: 'Failed', message: 'Error: boom' }, T0);
    assert.equal(new Set([a?.series, b?.series, c?.series]).size, 3);
    const later = sut.observe(backOff, T0 + 2 * 60 * 60_000);
    assert.notEqual(later?.series, a?.series);
    assert.equal(later?.count, 1);
  });

  it('combines more than ten distinct messages for one object and reason into one series, as client-go does', () => {
    const sut = new EventCorrelator();
    const series = new Set<string>();
    let last;
    for (let i = 0; i < 30; i++) {
      const e = sut.observe({ ...backOff, reason: 'Unhealthy', message: `Liveness probe failed: attempt ${i}` }, T0 + i * 2000);
      if (e) {
        series.add(e.series);
        last = e;
      }
    }
    assert.equal(series.size, 11, 'ten on their own, then one combined');
    assert.ok(last?.message.startsWith(COMBINED_PREFIX));
    assert.ok((last?.count ?? 0) > 1);
  });

  it('forgets the series of a pod that is gone, and bounds what it remembers', () => {
    const sut = new EventCorrelator({ maxSeries: 2, idleMs: 3_600_000, minIntervalMs: 1000, maxIntervalMs: 300_000, maxSimilar: 10, similarWindowMs: 600_000 });
    const first = sut.observe(backOff, T0);
    sut.forget(UID);
    assert.notEqual(sut.observe(backOff, T0 + 1)?.series, first?.series);
    sut.observe({ ...backOff, reason: 'A' }, T0 + 2);
    sut.observe({ ...backOff, reason: 'B' }, T0 + 3);
    assert.equal(sut.observe(backOff, T0 + 4)?.count, 1, 'the oldest series was forgotten');
  });
});
