import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AnyEnvelope } from '#contracts';
import { EventLog } from './event-log.js';

const UID = '00000000-0000-4000-8000-000000000001';

const podEvent = (id: string, data: Record<string, unknown>): AnyEnvelope =>
  ({
    id,
    type: 'PodEvent',
    version: 2,
    time: '2026-01-01T00:00:00Z',
    source: { component: 'agent', node: 'node-1' },
    correlationId: UID,
    data: { uid: UID, namespace: 'default', name: 'web', nodeName: 'node-1', eventType: 'Normal', reason: 'Started', message: 'Started container main', ...data },
  }) as unknown as AnyEnvelope;

describe('EventLog', () => {
  it('folds the messages of one series into one Event: count, lastTimestamp and resourceVersion move, name and uid stay', () => {
    const sut = new EventLog(10);
    const first = sut.apply(podEvent('m1', { series: 's1', count: 1, observedAt: '2026-01-01T00:00:00Z', firstObservedAt: '2026-01-01T00:00:00Z' }), 5).added;
    const later = sut.apply(podEvent('m2', { series: 's1', count: 7, observedAt: '2026-01-01T00:02:00Z', firstObservedAt: '2026-01-01T00:00:00Z' }), 9).added;
    assert.equal(sut.list().length, 1);
    assert.equal(later?.metadata.name, first?.metadata.name);
    assert.equal(later?.metadata.uid, 'm1');
    assert.deepEqual([later?.count, later?.firstTimestamp, later?.lastTimestamp, later?.metadata.resourceVersion], [7, '2026-01-01T00:00:00Z', '2026-01-01T00:02:00Z', '9']);
    assert.equal(first?.count, 1, 'the earlier object is not changed in place');
    // A redelivered older message of the series changes nothing.
    assert.equal(sut.apply(podEvent('m1', { series: 's1', count: 1, observedAt: '2026-01-01T00:00:00Z' }), 10).added, undefined);
    assert.equal(sut.list()[0]?.count, 7);
  });

  it('keeps one-off events and other series apart, and pushes the oldest out past its capacity', () => {
    const sut = new EventLog(2);
    sut.apply(podEvent('a', { observedAt: '2026-01-01T00:00:00Z' }), 1);
    sut.apply(podEvent('b', { series: 's1', observedAt: '2026-01-01T00:00:00Z' }), 2);
    const { evicted } = sut.apply(podEvent('c', { series: 's2', observedAt: '2026-01-01T00:00:00Z' }), 3);
    assert.deepEqual(evicted.map((e) => e.metadata.uid), ['a']);
    assert.deepEqual(sut.list().map((e) => [e.metadata.uid, e.count]), [['b', 1], ['c', 1]]);
  });
});
