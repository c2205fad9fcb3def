import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AnyEnvelope, NodeObject } from '#contracts';
import { NodeTable, isNodeReady, nodeView, type NodeRecord } from './node-table.js';

const T0 = Date.parse('2024-05-01T10:00:00.000Z');
const iso = (ms: number): string => new Date(ms).toISOString();
const GRACE_MS = 40_000;
const rfc3339 = (ms: number): string => iso(ms).replace(/\.\d+Z$/, 'Z');

function nodeObject(name: string, labels: Record<string, string> = {}): NodeObject {
  return {
    metadata: { name, labels: { 'kubernetes.io/hostname': name, ...labels } },
    spec: {},
    status: {
      capacity: { cpu: '4', memory: '8Gi', pods: '110' },
      allocatable: { cpu: '4', memory: '8Gi', pods: '110' },
      addresses: [{ type: 'InternalIP', address: '10.0.0.11' }],
      nodeInfo: {
        kubeletVersion: 'jetlet/0.1.0',
        containerRuntimeVersion: 'docker://24.0.7',
        operatingSystem: 'linux',
        architecture: 'amd64',
        kernelVersion: '6.1.0',
        osImage: 'Debian GNU/Linux 12',
      },
    },
  };
}

function registered(name: string, atMs: number, labels: Record<string, string> = {}): AnyEnvelope {
  return {
    id: `reg-${name}-${atMs}`,
    type: 'NodeRegistered',
    version: 1,
    time: iso(atMs),
    source: { component: 'agent', node: name },
    correlationId: name,
    data: { nodeName: name, node: nodeObject(name, labels) },
  };
}

function heartbeat(name: string, atMs: number, runningPods: number): AnyEnvelope {
  return {
    id: `hb-${name}-${atMs}`,
    type: 'NodeHeartbeat',
    version: 1,
    time: iso(atMs),
    source: { component: 'agent', node: name },
    correlationId: name,
    data: { nodeName: name, renewTime: iso(atMs), runningPods },
  };
}

function record(lastHeartbeatMs: number): NodeRecord {
  return { name: 'node-1', node: nodeObject('node-1'), resourceVersion: 7, lastHeartbeatMs, runningPods: 2, readySinceMs: T0 - 60_000 };
}

describe('NodeTable', () => {
  it('records a registered node with its registration time as heartbeat', () => {
    const sut = new NodeTable();

    sut.apply(registered('node-1', T0, { disk: 'ssd' }), 1);

    assert.deepEqual(sut.get('node-1'), {
      name: 'node-1',
      node: nodeObject('node-1', { disk: 'ssd' }),
      resourceVersion: 1,
      lastHeartbeatMs: T0,
      runningPods: 0,
      readySinceMs: T0,
    });
  });

  it('moves heartbeat time, pod count and resourceVersion forward on a heartbeat', () => {
    const sut = new NodeTable();
    sut.apply(registered('node-1', T0), 1);

    sut.apply(heartbeat('node-1', T0 + 10_000, 4), 5);

    const node = sut.get('node-1');
    assert.equal(node?.lastHeartbeatMs, T0 + 10_000);
    assert.equal(node?.runningPods, 4);
    assert.equal(node?.resourceVersion, 5);
  });

  it('never moves the heartbeat time backwards', () => {
    const sut = new NodeTable();
    sut.apply(registered('node-1', T0), 1);
    sut.apply(heartbeat('node-1', T0 + 10_000, 1), 2);

    sut.apply(heartbeat('node-1', T0 + 5_000, 1), 3);

    assert.equal(sut.get('node-1')?.lastHeartbeatMs, T0 + 10_000);
  });

  it('keeps the pod count and the newest heartbeat across a re-registration', () => {
    const sut = new NodeTable();
    sut.apply(registered('node-1', T0), 1);
    sut.apply(heartbeat('node-1', T0 + 30_000, 6), 2);

    sut.apply(registered('node-1', T0 + 20_000, { zone: 'b' }), 3);

    const node = sut.get('node-1');
    assert.equal(node?.runningPods, 6);
    assert.equal(node?.lastHeartbeatMs, T0 + 30_000);
    assert.deepEqual(node?.node.metadata.labels, { 'kubernetes.io/hostname': 'node-1', zone: 'b' });
  });

  it('ignores a heartbeat from a node that never registered', () => {
    const sut = new NodeTable();

    const result = sut.apply(heartbeat('ghost', T0, 1), 1);

    assert.equal(result, undefined);
    assert.deepEqual(sut.list(), []);
  });

  it('lists nodes by name', () => {
    const sut = new NodeTable();
    for (const [i, name] of ['node-c', 'node-a', 'node-b'].entries()) sut.apply(registered(name, T0), i + 1);

    assert.deepEqual(
      sut.list().map((n) => n.name),
      ['node-a', 'node-b', 'node-c'],
    );
  });
});

describe('isNodeReady', () => {
  it('is ready up to exactly the grace period after the last heartbeat, not after', () => {
    assert.equal(isNodeReady(record(T0), T0 + GRACE_MS, GRACE_MS), true);
    assert.equal(isNodeReady(record(T0), T0 + GRACE_MS + 1, GRACE_MS), false);
  });
});

describe('nodeView', () => {
  it('shows a Kubernetes Node with Ready True while heartbeats are fresh', () => {
    const sut = nodeView(record(T0), T0 + 5_000, GRACE_MS);

    assert.equal(sut.apiVersion, 'v1');
    assert.equal(sut.kind, 'Node');
    assert.equal(sut.metadata.resourceVersion, '7');
    assert.deepEqual(sut.status.conditions, [
      {
        type: 'Ready',
        status: 'True',
        reason: 'KubeletReady',
        message: 'jetlet agent is posting ready status',
        lastHeartbeatTime: rfc3339(T0),
        lastTransitionTime: rfc3339(T0 - 60_000),
      },
    ]);
  });

  it('shows Ready Unknown once the heartbeat is older than the grace period', () => {
    const sut = nodeView(record(T0), T0 + GRACE_MS + 1, GRACE_MS);

    assert.deepEqual(sut.status.conditions, [
      {
        type: 'Ready',
        status: 'Unknown',
        reason: 'NodeStatusUnknown',
        message: 'Kubelet stopped posting node status.',
        lastHeartbeatTime: rfc3339(T0),
        lastTransitionTime: rfc3339(T0 + GRACE_MS),
      },
    ]);
  });

  it('replaces a Ready condition the agent sent and keeps the others', () => {
    const input = record(T0);
    input.node.status.conditions = [
      { type: 'Ready', status: 'True' },
      { type: 'MemoryPressure', status: 'False' },
    ];

    const sut = nodeView(input, T0 + GRACE_MS * 10, GRACE_MS);

    assert.deepEqual(
      sut.status.conditions?.map((c) => [c.type, c.status]),
      [
        ['MemoryPressure', 'False'],
        ['Ready', 'Unknown'],
      ],
    );
  });

  it("moves Ready's last transition to the first heartbeat after a silence longer than the grace", () => {
    const sut = new NodeTable(GRACE_MS);
    sut.apply(registered('node-1', T0), 1);
    sut.apply(heartbeat('node-1', T0 + 10_000, 0), 2);
    const steady = nodeView(sut.get('node-1')!, T0 + 11_000, GRACE_MS);
    sut.apply(heartbeat('node-1', T0 + 10_000 + GRACE_MS + 1_000, 0), 3);
    const back = nodeView(sut.get('node-1')!, T0 + 10_000 + GRACE_MS + 2_000, GRACE_MS);

    assert.equal(steady.status.conditions?.find((c) => c.type === 'Ready')?.lastTransitionTime, rfc3339(T0));
    assert.equal(back.status.conditions?.find((c) => c.type === 'Ready')?.lastTransitionTime, rfc3339(T0 + 10_000 + GRACE_MS + 1_000));
  });

  it("taints a cordoned node node.kubernetes.io/unschedulable:NoSchedule from the cordon's time, and not once uncordoned", () => {
    const sut = new NodeTable(GRACE_MS);
    const cordon = (unschedulable: boolean, atMs: number): AnyEnvelope => ({
      id: `spec-${atMs}`,
      type: 'NodeSpecChanged',
      version: 1,
      time: iso(atMs),
      source: { component: 'api' },
      correlationId: 'node-1',
      data: { nodeName: 'node-1', unschedulable },
    });
    sut.apply(registered('node-1', T0), 1);
    sut.apply(cordon(true, T0 + 1_000), 2);
    const cordoned = nodeView(sut.get('node-1')!, T0 + 2_000, GRACE_MS);
    sut.apply(cordon(false, T0 + 3_000), 3);
    const uncordoned = nodeView(sut.get('node-1')!, T0 + 4_000, GRACE_MS);

    assert.deepEqual(cordoned.spec.taints, [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule', timeAdded: rfc3339(T0 + 1_000) }]);
    assert.equal(uncordoned.spec.taints, undefined);
  });
});

describe('a node whose agent says NotReady (container runtime down)', () => {
  const notReady = (atMs: number): AnyEnvelope => {
    const envelope = registered('node-1', atMs) as AnyEnvelope & { data: { node: NodeObject } };
    envelope.data.node.status.conditions = [
      { type: 'Ready', status: 'False', reason: 'KubeletNotReady', message: 'container runtime is down: connect ENOENT', lastTransitionTime: iso(atMs) },
    ];
    return envelope;
  };

  it("is not Ready for scheduling, and shows the agent's condition with the not-ready taints", () => {
    const sut = new NodeTable();
    sut.apply(notReady(T0), 1);
    const record = sut.get('node-1') as NodeRecord;
    assert.equal(isNodeReady(record, T0 + 1000, GRACE_MS), false);
    const view = nodeView(record, T0 + 1000, GRACE_MS);
    const ready = view.status.conditions?.find((c) => c.type === 'Ready');
    assert.equal(ready?.status, 'False');
    assert.equal(ready?.message, 'container runtime is down: connect ENOENT');
    assert.deepEqual(
      view.spec.taints?.map((t) => `${t.key}:${t.effect}`),
      ['node.kubernetes.io/not-ready:NoSchedule', 'node.kubernetes.io/not-ready:NoExecute'],
    );
  });

  it('is Ready again once it registers without that condition', () => {
    const sut = new NodeTable();
    sut.apply(notReady(T0), 1);
    sut.apply(registered('node-1', T0 + 2000), 2);
    assert.equal(isNodeReady(sut.get('node-1') as NodeRecord, T0 + 3000, GRACE_MS), true);
  });
});
