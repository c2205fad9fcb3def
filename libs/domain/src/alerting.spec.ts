import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AnyEnvelope } from '#contracts';
import { AlertFacts, crashEpisode, evaluateAlerts, expandTemplate, parseDuration, type AlertRule } from './alerting.js';

const UID = '6f1c2b1e-3b9a-4c1d-9f2e-0a1b2c3d4e5f';
const T0 = Date.parse('2026-05-01T10:00:00Z');
const iso = (offsetMs: number): string => new Date(T0 + offsetMs).toISOString();

function rule(over: Partial<AlertRule>): AlertRule {
  return {
    alert: 'A',
    condition: 'OOMKilled',
    severity: 'warning',
    forMs: 0,
    labels: {},
    annotations: {},
    restarts: 3,
    windowMs: 60_000,
    clearAfterMs: 10_000,
    pressure: 'MemoryPressure',
    ...over,
  };
}

/** A log of facts, folded in order; each message stamped `at` ms after T0. */
function fold(...messages: Array<[number, string, string, object]>): AlertFacts {
  const sut = new AlertFacts();
  messages.forEach(([at, stream, type, data], i) =>
    sut.apply(
      { id: `m${i}`, type, version: 1, time: iso(at), source: { component: 'agent' }, correlationId: UID, data } as unknown as AnyEnvelope,
      stream,
      i + 1,
    ),
  );
  return sut;
}

const created: [number, string, string, object] = [
  0,
  'P',
  'PodCreated',
  { pod: { metadata: { name: 'web', namespace: 'default', uid: UID }, spec: { containers: [] } } },
];
const died = (at: number, oom = false): [number, string, string, object] => [
  at,
  'E',
  'ContainerEvent',
  {
    uid: UID,
    namespace: 'default',
    name: 'web',
    nodeName: 'n1',
    containerName: 'main',
    containerID: `docker://${at}`,
    reason: oom ? 'OOMKilled' : 'Died',
    observedAt: iso(at),
  },
];
const status = (at: number, running: boolean, removed = false): [number, string, string, object] => [
  at,
  'P',
  'PodStatusReported',
  {
    uid: UID,
    namespace: 'default',
    name: 'web',
    nodeName: 'n1',
    removed,
    status: {
      phase: 'Running',
      containerStatuses: [
        {
          name: 'main',
          state: running ? { running: { startedAt: iso(at) } } : { waiting: { reason: 'CrashLoopBackOff' } },
          lastState: {},
          ready: running,
          restartCount: 1,
          image: 'i',
          imageID: '',
        },
      ],
    },
  },
];

describe('alerting', () => {
  it('parses durations and expands label templates', () => {
    assert.equal(parseDuration('1h30m'), 5_400_000);
    assert.equal(parseDuration('500ms'), 500);
    assert.equal(parseDuration('0'), 0);
    assert.throws(() => parseDuration('ten minutes'), /not a duration/);
    assert.equal(expandTemplate('{{ $labels.pod }} {{$value}}', { pod: 'web' }, { reason: 'OOMKilled' }), 'web OOMKilled');
  });

  it('counts deaths in a sliding window for crash loops', () => {
    assert.equal(crashEpisode([0, 10, 20], 3, 15), undefined);
    assert.deepEqual(crashEpisode([0, 10, 20], 3, 30), { since: 20, until: 30 });
    assert.deepEqual(crashEpisode([0, 10, 20, 25], 3, 30), { since: 20, until: 40 });
    assert.deepEqual(crashEpisode([0, 10, 20, 500, 510, 520], 3, 30), { since: 520, until: 530 });
  });

  it('fires an OOM alert from the kill and clears it once the container has run long enough', () => {
    const r = rule({ alert: 'PodOOMKilled', annotations: { summary: '{{ $labels.pod }}/{{ $labels.container }}' } });
    const facts = fold(created, died(1000, true), status(2000, true));
    const [firing] = evaluateAlerts([r], facts, T0 + 5000, 60_000);
    assert.deepEqual(firing?.labels, { namespace: 'default', pod: 'web', container: 'main', node: 'n1', alertname: 'PodOOMKilled', severity: 'warning' });
    assert.equal(firing?.startsAt, T0 + 1000);
    assert.equal(firing?.endsAt, undefined);
    assert.equal(firing?.annotations.summary, 'web/main');
    const [resolved] = evaluateAlerts([r], facts, T0 + 13_000, 60_000);
    assert.equal(resolved?.endsAt, T0 + 12_000);
    assert.deepEqual(evaluateAlerts([r], facts, T0 + 200_000, 60_000), [], 'forgotten after the retention');
  });

  it('fires a crash loop after N deaths and resolves when the pod is gone', () => {
    const r = rule({ alert: 'PodCrashLooping', condition: 'CrashLoopBackOff' });
    const facts = fold(created, died(1000), died(3000), died(7000), status(7500, false));
    assert.equal(evaluateAlerts([r], fold(created, died(1000), died(3000)), T0 + 8000, 60_000).length, 0);
    const reportedTwice = fold(created, died(1000), died(3000), [3001, 'E', 'ContainerEvent', { ...died(3000)[3], observedAt: iso(3001) }]);
    assert.equal(evaluateAlerts([r], reportedTwice, T0 + 8000, 60_000).length, 0, 'one run dies once');
    assert.equal(evaluateAlerts([r], facts, T0 + 8000, 60_000)[0]?.startsAt, T0 + 7000);
    facts.apply(
      {
        id: 'gone',
        type: 'PodStatusReported',
        version: 1,
        time: iso(9000),
        source: { component: 'agent' },
        correlationId: UID,
        data: status(9000, false, true)[3],
      } as unknown as AnyEnvelope,
      'P',
      100,
    );
    assert.equal(evaluateAlerts([r], facts, T0 + 10_000, 60_000)[0]?.endsAt, T0 + 9000);
  });

  it('waits for `for:` and gives the same alerts when the same log is folded twice', () => {
    const r = rule({ alert: 'PodUnschedulable', condition: 'FailedScheduling', forMs: 5000 });
    const log: Array<[number, string, string, object]> = [created, [1000, 'P', 'PodUnschedulable', { uid: UID, message: '0/1 nodes are available' }]];
    assert.equal(evaluateAlerts([r], fold(...log), T0 + 5000, 60_000).length, 0);
    const once = evaluateAlerts([r], fold(...log), T0 + 7000, 60_000);
    const facts = fold(...log);
    assert.equal(
      facts.apply(
        {
          id: 'again',
          type: 'PodScheduled',
          version: 1,
          time: iso(6500),
          source: { component: 'scheduler' },
          correlationId: UID,
          data: { uid: UID, nodeName: 'n1' },
        } as unknown as AnyEnvelope,
        'P',
        2,
      ),
      false,
      'a redelivery is ignored',
    );
    assert.deepEqual(evaluateAlerts([r], facts, T0 + 7000, 60_000), once);
    assert.equal(once[0]?.startsAt, T0 + 6000);
  });

  it('follows node readiness', () => {
    const r = rule({ alert: 'NodeNotReady', condition: 'NodeNotReady', severity: 'critical' });
    const ev = (at: number, reason: string): [number, string, string, object] => [
      at,
      'E',
      'NodeEvent',
      { nodeName: 'n1', eventType: 'Warning', reason, message: '', observedAt: iso(at) },
    ];
    const down = fold(ev(1000, 'NodeNotReady'));
    assert.deepEqual(evaluateAlerts([r], down, T0 + 2000, 60_000)[0]?.labels, { node: 'n1', alertname: 'NodeNotReady', severity: 'critical' });
    assert.equal(evaluateAlerts([r], fold(ev(1000, 'NodeNotReady'), ev(4000, 'NodeReady')), T0 + 5000, 60_000)[0]?.endsAt, T0 + 4000);
  });
});
