import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { STREAMS, SUBJECTS, type AnyEnvelope, type MessageData, type MessageType, type NodeObject, type PodManifest } from '#contracts';
import { explainPod } from './explain.js';
import { replayTo } from './cluster-replay.js';
import type { RecordedMessage } from './recorded.js';
import { buildTimeline } from './timeline.js';
import { podSwimlanes } from './swimlanes.js';

const UID = '6f1c2b1e-3b9a-4c1d-9f2e-0a1b2c3d4e5f';
const T0 = Date.parse('2026-01-01T12:00:00.000Z');
const iso = (ms: number): string => new Date(ms).toISOString();

/** A recorded log built message by message, each stream with its own sequence. */
class Log {
  readonly messages: RecordedMessage[] = [];
  private readonly seqs = new Map<string, number>();
  private n = 0;

  add<T extends MessageType>(
    stream: string,
    subject: string,
    type: T,
    data: MessageData<T>,
    atMs: number,
    extra: { component?: 'api' | 'scheduler' | 'agent'; node?: string; causationId?: string } = {},
  ): string {
    const seq = (this.seqs.get(stream) ?? 0) + 1;
    this.seqs.set(stream, seq);
    const id = `m${++this.n}`;
    const envelope = {
      id,
      type,
      version: 1,
      time: iso(atMs),
      source: { component: extra.component ?? 'agent', ...(extra.node ? { node: extra.node } : {}) },
      // Node messages correlate by node name, pod messages by the pod's uid.
      correlationId: stream === STREAMS.nodes || subject.endsWith('.lifecycle') ? (data as { nodeName: string }).nodeName : UID,
      ...(extra.causationId ? { causationId: extra.causationId } : {}),
      data,
    } as unknown as AnyEnvelope;
    this.messages.push({ stream, subject, seq, storedMs: atMs, envelope });
    return id;
  }
}

function node(name: string, labels: Record<string, string> = {}): NodeObject {
  return {
    metadata: { name, labels },
    spec: {},
    status: {
      capacity: { cpu: '2', memory: '4Gi', pods: '110' },
      allocatable: { cpu: '2', memory: '4Gi', pods: '110' },
      addresses: [{ type: 'InternalIP', address: '10.0.0.1' }],
      nodeInfo: {
        kubeletVersion: 'jetlet',
        containerRuntimeVersion: 'docker',
        operatingSystem: 'linux',
        architecture: 'amd64',
        kernelVersion: '6',
        osImage: 'debian',
      },
    },
  };
}

const manifest: PodManifest = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web', namespace: 'default', uid: UID, creationTimestamp: iso(T0) },
  spec: { restartPolicy: 'Always', nodeSelector: { disk: 'ssd' }, containers: [{ name: 'main', image: 'busybox' }] },
};

/** Node a (no ssd), a pod that fits nowhere, node b (ssd) joins, binding, three crashes with back-off 10s doubling. */
function story(): Log {
  const log = new Log();
  const beat = (n: string, ms: number): void =>
    void log.add(STREAMS.nodes, SUBJECTS.nodeHeartbeat(n), 'NodeHeartbeat', { nodeName: n, renewTime: iso(ms), runningPods: 0 }, ms, { node: n });
  log.add(STREAMS.nodes, SUBJECTS.nodeRegistration('a'), 'NodeRegistered', { nodeName: 'a', node: node('a') }, T0, { node: 'a' });
  const created = log.add(STREAMS.pods, SUBJECTS.pod('default', 'web'), 'PodCreated', { pod: manifest }, T0 + 100, { component: 'api' });
  log.add(
    STREAMS.pods,
    SUBJECTS.pod('default', 'web'),
    'PodUnschedulable',
    { uid: UID, message: "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector." },
    T0 + 200,
    { component: 'scheduler', causationId: created },
  );
  beat('a', T0 + 1000);
  log.add(STREAMS.nodes, SUBJECTS.nodeRegistration('b'), 'NodeRegistered', { nodeName: 'b', node: node('b', { disk: 'ssd' }) }, T0 + 5000, { node: 'b' });
  const bound = log.add(STREAMS.pods, SUBJECTS.pod('default', 'web'), 'PodScheduled', { uid: UID, nodeName: 'b' }, T0 + 5100, {
    component: 'scheduler',
    causationId: created,
  });
  log.add(STREAMS.assign, SUBJECTS.assignment('b', UID), 'PodAssigned', { pod: { ...manifest, spec: { ...manifest.spec, nodeName: 'b' } } }, T0 + 5150, {
    component: 'scheduler',
    causationId: bound,
  });
  const ev = { uid: UID, namespace: 'default', name: 'web', nodeName: 'b', containerName: 'main' };
  const policy = { baseMs: 10_000, capMs: 300_000 };
  let at = T0 + 6000;
  log.add(
    STREAMS.events,
    SUBJECTS.containerEvents('b', UID),
    'ContainerEvent',
    { ...ev, containerID: 'docker://0', reason: 'Started', observedAt: iso(at) },
    at,
    { node: 'b' },
  );
  // Deaths at +1s after each start; restarts after 0, 10, 20 s of back-off.
  for (const [restart, wait, delay] of [
    [1, 0, 10_000],
    [2, 10_000, 20_000],
    [3, 20_000, 40_000],
  ]) {
    const died = at + 1000;
    log.add(
      STREAMS.events,
      SUBJECTS.containerEvents('b', UID),
      'ContainerEvent',
      { ...ev, containerID: `docker://${restart}`, reason: 'Died', exitCode: 1, exitReason: 'Error', observedAt: iso(died) },
      died,
      { node: 'b' },
    );
    at = died + wait + 20;
    log.add(
      STREAMS.events,
      SUBJECTS.containerEvents('b', UID),
      'BackoffRecorded',
      { ...ev, kind: 'CrashLoop', failedAt: iso(died), recordedAt: iso(at), delayMs: delay, ...policy, restartCount: restart },
      at,
      { node: 'b' },
    );
    log.add(
      STREAMS.events,
      SUBJECTS.containerEvents('b', UID),
      'ContainerEvent',
      { ...ev, containerID: `docker://${restart}`, reason: 'Started', observedAt: iso(at + 50) },
      at + 50,
      { node: 'b' },
    );
  }
  return log;
}

describe('explainPod', () => {
  it('re-runs the scheduler on the node table of each decision: the recorded message, then the recorded choice', () => {
    const sut = explainPod(story().messages, 'default', 'web', { timeMs: T0 + 600_000 }, { graceMs: 40_000 });

    assert.deepEqual(
      sut.scheduling.map((d) => [d.kind, d.recorded, d.matches]),
      [
        ['PodUnschedulable', "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector.", true],
        ['PodScheduled', 'b', true],
      ],
    );
    assert.deepEqual(
      sut.scheduling[1].nodes.map((n) => [n.name, n.reasons]),
      [
        ['a', ["node(s) didn't match Pod's node affinity/selector"]],
        ['b', []],
      ],
    );
    assert.deepEqual(sut.findings, []);
  });

  it('reports a decision the re-run does not reproduce as a finding', () => {
    const log = story();
    const scheduled = log.messages.find((m) => m.envelope?.type === 'PodScheduled');
    if (scheduled?.envelope?.type === 'PodScheduled') scheduled.envelope.data.nodeName = 'a';

    const sut = explainPod(log.messages, 'default', 'web', { timeMs: T0 + 600_000 }, { graceMs: 40_000 });

    assert.equal(sut.scheduling[1].matches, false);
    assert.match(sut.findings.join('\n'), /the scheduler recorded node a, its code re-run on the log gives node b/);
  });

  it("replays each restart through the agent's back-off code: waits of 0, 10 and 20 s", () => {
    const sut = explainPod(story().messages, 'default', 'web', { timeMs: T0 + 600_000 }, { graceMs: 40_000 });

    const main = sut.containers[0];
    assert.deepEqual(
      main.restarts.map((r) => [r.restartCount, r.exitCode, r.waitMs, r.recordedDelayMs, r.computedDelayMs]),
      [
        [1, 1, 0, 10_000, 10_000],
        [2, 1, 10_000, 20_000, 20_000],
        [3, 1, 20_000, 40_000, 40_000],
      ],
    );
    assert.deepEqual(sut.findings, []);
  });

  it('takes a death the engine announced as an OOM kill only after it for an OOM kill', () => {
    const log = story();
    const died = log.messages.find((m) => m.envelope?.type === 'ContainerEvent' && m.envelope.data.reason === 'Died');
    const at = (died?.envelope?.type === 'ContainerEvent' ? Date.parse(died.envelope.data.observedAt) : 0) + 5;
    const ev = { uid: UID, namespace: 'default', name: 'web', nodeName: 'b', containerName: 'main' };
    log.add(
      STREAMS.events,
      SUBJECTS.containerEvents('b', UID),
      'ContainerEvent',
      { ...ev, containerID: 'docker://1', reason: 'OOMKilled', observedAt: iso(at) },
      at,
      {
        node: 'b',
      },
    );

    const sut = explainPod(log.messages, 'default', 'web', { timeMs: T0 + 600_000 }, { graceMs: 40_000 });

    assert.deepEqual(
      sut.containers[0].restarts.map((r) => r.exitReason),
      ['OOMKilled', 'Error', 'Error'],
    );
  });

  it('finds a recorded back-off its code does not give, and a restart before its back-off ended', () => {
    const log = story();
    const facts = log.messages.filter((m) => m.envelope?.type === 'BackoffRecorded');
    const second = facts[1].envelope;
    if (second?.type === 'BackoffRecorded') {
      second.data.delayMs = 99_000;
      second.data.recordedAt = iso(Date.parse(second.data.failedAt) + 1000);
    }

    const sut = explainPod(log.messages, 'default', 'web', { timeMs: T0 + 600_000 }, { graceMs: 40_000 });

    assert.match(sut.findings.join('\n'), /main restart 2 started at .*, before its back-off ended/);
    assert.match(sut.findings.join('\n'), /main restart 2: the agent recorded a back-off of 1m39s, its back-off code gives 20s/);
  });

  it('explains only what was recorded up to the point asked for', () => {
    const log = story();
    const unschedulableSeq = log.messages.find((m) => m.envelope?.type === 'PodUnschedulable')?.seq ?? 0;

    const sut = explainPod(log.messages, 'default', 'web', { seq: unschedulableSeq }, { graceMs: 40_000 });

    assert.equal(sut.scheduling.length, 1);
    assert.equal(sut.pod?.spec.nodeName, undefined);
    assert.deepEqual(sut.containers, []);
  });
});

describe('replayTo', () => {
  it('folds the log up to a sequence with the projections the API uses', () => {
    const log = story();
    const bound = log.messages.find((m) => m.envelope?.type === 'PodScheduled')?.seq ?? 0;

    const before = replayTo(log.messages, { seq: bound - 1 }).state.podList();
    const after = replayTo(log.messages, { seq: bound }).state.podList();

    assert.equal(before[0].status.conditions?.[0]?.message, "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector.");
    assert.equal(after[0].spec.nodeName, 'b');
  });

  it('takes readiness from the lifecycle events where the heartbeats of that moment are gone', () => {
    const log = story();
    // Only a late heartbeat of node a is left; the scheduler recorded it NotReady before.
    log.add(
      STREAMS.events,
      SUBJECTS.nodeLifecycleEvents('a'),
      'NodeEvent',
      { nodeName: 'a', eventType: 'Warning', reason: 'NodeNotReady', message: 'x', observedAt: iso(T0 + 50_000) },
      T0 + 50_000,
      { component: 'scheduler' },
    );
    log.messages.splice(
      log.messages.findIndex((m) => m.envelope?.type === 'NodeHeartbeat'),
      1,
    );
    log.add(STREAMS.nodes, SUBJECTS.nodeHeartbeat('a'), 'NodeHeartbeat', { nodeName: 'a', renewTime: iso(T0 + 900_000), runningPods: 0 }, T0 + 900_000, {
      node: 'a',
    });

    const { state, atMs } = replayTo(log.messages, { timeMs: T0 + 60_000 });
    const a = state.nodes.get('a');

    assert.ok(a);
    assert.deepEqual(state.readiness(a, atMs, 40_000), { ready: false, source: 'lifecycle-events' });
  });
});

describe('buildTimeline and podSwimlanes', () => {
  it('orders the messages, hangs the assignment under its binding, and draws running and back-off', () => {
    const log = story();

    const sut = buildTimeline(log.messages, { kind: 'pod', namespace: 'default', name: 'web' });

    const types = sut.map((e) => `${'  '.repeat(e.depth)}${e.type}`);
    assert.deepEqual(types.slice(0, 4), ['PodCreated', '  PodUnschedulable', '  PodScheduled', '    PodAssigned']);
    const lanes = podSwimlanes(sut, T0 + 60_000);
    const main = lanes.lanes.find((l) => l.name === 'main');
    assert.deepEqual(
      main?.segments.map((s) => s.state),
      // The first restart is immediate: no back-off before it.
      ['running', 'running', 'back-off', 'running', 'back-off', 'running'],
    );
    assert.equal(main?.marks.filter((m) => m.kind === 'crashed').length, 3);
  });

  it('marks an invalid message on the pod subjects', () => {
    const log = story();
    log.messages.push({
      stream: STREAMS.events,
      subject: SUBJECTS.containerEvents('b', UID),
      seq: 99,
      storedMs: T0 + 90_000,
      invalid: 'invalid envelope: not JSON',
    });

    const sut = buildTimeline(log.messages, { kind: 'pod', namespace: 'default', name: 'web' });

    assert.equal(sut[sut.length - 1].type, 'INVALID');
    assert.match(sut[sut.length - 1].summary, /not JSON/);
  });
});
