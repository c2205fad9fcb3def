import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Container } from '#contracts';
import { evictionMessage, EvictionTracker, parseThresholds, rankForEviction, thresholdsMet, type EvictionCandidate } from './eviction.js';
import { parseQuantity } from './quantity.js';
import { evictedStatus } from './pod-status.js';

const GI = 2 ** 30;
const MI = 2 ** 20;
const T0 = Date.parse('2024-05-01T10:00:00.000Z');

describe('parseThresholds', () => {
  it('reads the kubelet syntax: quantities and percentages, soft ones with their grace periods', () => {
    assert.deepEqual(parseThresholds('memory.available<100Mi,nodefs.available<10%', true), [
      { signal: 'memory.available', quantity: 100 * MI, gracePeriodMs: 0, hard: true },
      { signal: 'nodefs.available', percentage: 0.1, gracePeriodMs: 0, hard: true },
    ]);
    assert.deepEqual(parseThresholds('pid.available<1k', false, 'pid.available=1m30s'), [
      { signal: 'pid.available', quantity: 1000, gracePeriodMs: 90_000, hard: false },
    ]);
  });

  it('refuses, naming each, a bad item, a percentage over 100 and a soft threshold without grace', () => {
    assert.throws(
      () => parseThresholds('memory.available>1Gi,nodefs.available<120%,imagefs.available<1Gi', false, 'nodefs.available=10s'),
      /invalid eviction threshold "memory.available>1Gi"; eviction percentage threshold nodefs.available must be at most 100%; soft eviction threshold imagefs.available needs a grace period/,
    );
  });
});

describe('EvictionTracker', () => {
  const disk = (available: number) => ({ 'nodefs.available': { available, capacity: 100 * GI } });

  it('holds DiskPressure while nodefs.available is under its threshold and reclaims at once for a hard one', () => {
    const sut = new EvictionTracker(parseThresholds('nodefs.available<10%', true), 60_000);
    const decision = sut.observe(disk(5 * GI), T0);
    assert.deepEqual([...decision.pressure], ['DiskPressure']);
    assert.equal(decision.reclaim?.threshold.signal, 'nodefs.available');
    assert.equal(sut.observe(disk(50 * GI), T0 + 1000).reclaim, undefined);
  });

  it('keeps the condition for the transition period after the last crossing, then drops it', () => {
    const sut = new EvictionTracker(parseThresholds('nodefs.available<10%', true), 60_000);
    sut.observe(disk(5 * GI), T0);
    assert.deepEqual([...sut.observe(disk(50 * GI), T0 + 59_000).pressure], ['DiskPressure']);
    assert.deepEqual([...sut.observe(disk(50 * GI), T0 + 60_000).pressure], []);
  });

  it('evicts for a soft threshold only once it held for its grace period, which starts again when it clears', () => {
    const sut = new EvictionTracker(parseThresholds('memory.available<1Gi', false, 'memory.available=30s'), 0);
    const low = { 'memory.available': { available: 512 * MI, capacity: 16 * GI } };
    assert.equal(sut.observe(low, T0).reclaim, undefined);
    assert.deepEqual([...sut.observe(low, T0 + 29_000).pressure], ['MemoryPressure']);
    assert.equal(sut.observe(low, T0 + 30_000).reclaim?.threshold.signal, 'memory.available');
    sut.observe({ 'memory.available': { available: 8 * GI, capacity: 16 * GI } }, T0 + 31_000);
    assert.equal(sut.observe(low, T0 + 40_000).reclaim, undefined);
  });

  it('never crosses a threshold on a signal it could not read', () => {
    assert.deepEqual(thresholdsMet(parseThresholds('imagefs.available<15%', true), {}), []);
  });
});

describe('rankForEviction', () => {
  const c = (resources: Container['resources'] = {}): Container => ({ name: 'main', image: 'jetlet/busybox:1.35', resources });
  const pod = (uid: string, containers: Container[], usage?: number, priority?: number): EvictionCandidate => ({
    uid,
    spec: { containers, ...(priority !== undefined ? { priority } : {}) },
    ...(usage !== undefined ? { usage } : {}),
  });
  const order = (pods: EvictionCandidate[], signal: Parameters<typeof rankForEviction>[1] = 'memory.available'): string[] =>
    rankForEviction(pods, signal, parseQuantity).map((p) => p.uid);

  it('puts pods using more than they request first, then lower priority, then lower QoS, then more use above requests', () => {
    const guaranteed = pod('guaranteed', [c({ limits: { cpu: '1', memory: '1Gi' } })], 2 * GI);
    const burstable = pod('burstable', [c({ requests: { memory: '1Gi' } })], 100 * MI);
    const bestEffort = pod('besteffort', [c()], 10 * MI);
    assert.deepEqual(order([burstable, bestEffort, guaranteed]), ['besteffort', 'guaranteed', 'burstable']);
    const bigger = pod('bigger', [c()], 50 * MI);
    assert.deepEqual(order([bestEffort, bigger]), ['bigger', 'besteffort']);
  });

  it('falls back to QoS when no use is known, as for disk here', () => {
    const burstable = pod('burstable', [c({ requests: { 'ephemeral-storage': '1Gi' } })]);
    const bestEffort = pod('besteffort', [c()]);
    assert.deepEqual(order([burstable, bestEffort], 'nodefs.available'), ['besteffort', 'burstable']);
    assert.deepEqual(order([pod('low', [c()], undefined, 0), pod('high', [c()], undefined, 1000)].reverse(), 'pid.available'), ['low', 'high']);
  });
});

describe('evictionMessage and evictedStatus', () => {
  it('says what Kubernetes says, and the pod ends Failed, reason Evicted, with DisruptionTarget', () => {
    const [threshold] = parseThresholds('memory.available<100Mi', true);
    const victim: EvictionCandidate = {
      uid: 'u',
      spec: { containers: [{ name: 'hog', image: 'x', resources: { requests: { memory: '10Mi' } } }] },
      usage: 80 * MI,
      containers: [{ name: 'hog', usage: 80 * MI }],
    };
    const message = evictionMessage(threshold, { available: 50 * MI, capacity: 16 * GI }, victim, parseQuantity);
    assert.equal(
      message,
      'The node was low on resource: memory. Threshold quantity: 102400Ki, available: 51200Ki. Container hog was using 81920Ki, request is 10Mi, has larger consumption of memory. ',
    );
    const status = evictedStatus({ phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] }, message);
    assert.equal(status.phase, 'Failed');
    assert.equal(status.reason, 'Evicted');
    assert.deepEqual(status.conditions, [
      { type: 'Ready', status: 'False', reason: 'PodFailed' },
      { type: 'DisruptionTarget', status: 'True', reason: 'TerminationByKubelet', message },
    ]);
  });
});
