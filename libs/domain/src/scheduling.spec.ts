import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { NodeObject, PodSpec, Taint, Toleration } from '#contracts';
import type { PodRecord } from './pod-projection.js';
import {
  balancedAllocationScore,
  buildCandidates,
  leastAllocatedScore,
  podEphemeralStorageRequest,
  podNonZeroRequests,
  podRequests,
  feasibleNodesToFind,
  filterReasons,
  fitKey,
  schedule,
  scoreNodes,
  searchNodes,
  toleratesTaint,
  withPod,
  type NodeCandidate,
} from './scheduling.js';

const GI = 2 ** 30;
const MI = 2 ** 20;

/** An empty 4-cpu, 8Gi, 110-pod node. */
function candidate(name: string, overrides: Partial<NodeCandidate> = {}): NodeCandidate {
  return {
    name,
    labels: { 'kubernetes.io/hostname': name },
    ready: true,
    unschedulable: false,
    taints: [],
    allocatable: { milliCPU: 4000, memory: 8 * GI, pods: 110 },
    requested: { milliCPU: 0, memory: 0 },
    requestedEphemeralStorage: 0,
    nonZeroRequested: { milliCPU: 0, memory: 0 },
    pods: 0,
    usedPorts: [],
    ...overrides,
  };
}

function pod(requests: Record<string, string> = {}, extra: Partial<PodSpec> = {}): PodSpec {
  return {
    containers: [{ name: 'main', image: 'jetlet/busybox:1.35', ...(Object.keys(requests).length ? { resources: { requests } } : {}) }],
    ...extra,
  };
}

const DEDICATED: Taint = { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' };

describe('schedule: filters', () => {
  it('skips not-ready, unschedulable and full nodes', () => {
    const sut = schedule(pod(), [
      candidate('node-a', { ready: false }),
      candidate('node-b', { unschedulable: true }),
      candidate('node-c', { pods: 110 }),
      candidate('node-d', { pods: 50 }),
    ]);

    assert.deepEqual(sut, { node: 'node-d' });
  });

  it('only considers nodes carrying every nodeSelector label', () => {
    const sut = schedule(pod({}, { nodeSelector: { disk: 'ssd', zone: 'a' } }), [
      candidate('node-a', { labels: { disk: 'ssd' } }),
      candidate('node-b', { labels: { disk: 'ssd', zone: 'a' }, pods: 9 }),
      candidate('node-c', { labels: { disk: 'hdd', zone: 'a' } }),
    ]);

    assert.deepEqual(sut, { node: 'node-b' });
  });

  it('keeps a pod with a preset nodeName to that node', () => {
    const sut = schedule(pod({}, { nodeName: 'node-b' }), [candidate('node-a'), candidate('node-b', { pods: 9 })]);

    assert.deepEqual(sut, { node: 'node-b' });
  });

  it('says why a preset nodeName fits nowhere else', () => {
    const sut = schedule(pod({}, { nodeName: 'node-z' }), [candidate('node-a'), candidate('node-b')]);

    assert.deepEqual(sut, { message: "0/2 nodes are available: 2 node(s) didn't match the requested node name." });
  });

  it('keeps a pod off a node with a NoSchedule or NoExecute taint it does not tolerate', () => {
    const sut = schedule(pod(), [candidate('node-a', { taints: [DEDICATED] }), candidate('node-b', { taints: [{ key: 'maintenance', effect: 'NoExecute' }] })]);

    assert.deepEqual(sut, {
      message: '0/2 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 1 node(s) had untolerated taint {maintenance: }.',
    });
  });

  it('places a pod on a tainted node when it tolerates the taint', () => {
    const sut = schedule(pod({}, { tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }] }), [
      candidate('node-a', { taints: [DEDICATED] }),
    ]);

    assert.deepEqual(sut, { node: 'node-a' });
  });

  it('never filters on a PreferNoSchedule taint', () => {
    const sut = schedule(pod(), [candidate('node-a', { taints: [{ key: 'spot', effect: 'PreferNoSchedule' }] })]);

    assert.deepEqual(sut, { node: 'node-a' });
  });

  it('lets a pod tolerating the not-ready taint onto a node that is not Ready, as Kubernetes does', () => {
    const sut = schedule(pod({}, { tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists' }] }), [candidate('node-a', { ready: false })]);

    assert.deepEqual(sut, { node: 'node-a' });
  });

  it('lets a pod tolerating the unschedulable taint onto a cordoned node', () => {
    const sut = schedule(pod({}, { tolerations: [{ key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' }] }), [
      candidate('node-a', { unschedulable: true }),
    ]);

    assert.deepEqual(sut, { node: 'node-a' });
  });

  it('keeps a pod off a node whose host port it would take', () => {
    const spec = pod({}, { containers: [{ name: 'web', image: 'jetlet/busybox:1.35', ports: [{ containerPort: 80, hostPort: 8080 }] }] });

    const sut = schedule(spec, [candidate('node-a', { usedPorts: ['TCP/8080'] }), candidate('node-b', { usedPorts: ['UDP/8080'], pods: 5 })]);

    assert.deepEqual(sut, { node: 'node-b' });
  });

  it('names a host port conflict in the message', () => {
    const spec = pod({}, { containers: [{ name: 'web', image: 'jetlet/busybox:1.35', ports: [{ containerPort: 80, hostPort: 8080 }] }] });

    assert.deepEqual(schedule(spec, [candidate('node-a', { usedPorts: ['TCP/8080'] })]), {
      message: "0/1 nodes are available: 1 node(s) didn't have free ports for the requested pod ports.",
    });
  });

  it("checks the pod's requests against what the node's pods already request", () => {
    const sut = schedule(pod({ cpu: '1', memory: '2Gi' }), [
      candidate('node-a', { requested: { milliCPU: 3500, memory: 0 } }),
      candidate('node-b', { requested: { milliCPU: 0, memory: 7 * GI } }),
      candidate('node-c', { requested: { milliCPU: 3000, memory: 6 * GI } }),
    ]);

    assert.deepEqual(sut, { node: 'node-c' });
  });

  it('names every resource a node is short of, and counts each over the nodes', () => {
    const sut = schedule(pod({ cpu: '5', memory: '9Gi' }), [
      candidate('node-a', { pods: 110 }),
      candidate('node-b'),
      candidate('node-c', { allocatable: { milliCPU: 8000, memory: 8 * GI, pods: 110 } }),
    ]);

    assert.deepEqual(sut, { message: '0/3 nodes are available: 1 Too many pods, 2 Insufficient cpu, 3 Insufficient memory.' });
  });

  it('checks ephemeral-storage requests against what the node offers and its pods already request', () => {
    const storage = (total: number, requested = 0): Partial<NodeCandidate> => ({
      allocatable: { milliCPU: 4000, memory: 8 * GI, pods: 110, ephemeralStorage: total },
      requestedEphemeralStorage: requested,
    });
    const sut = schedule(pod({ 'ephemeral-storage': '2Gi' }), [
      candidate('node-a', storage(10 * GI, 9 * GI)),
      candidate('node-b', storage(GI)),
      candidate('node-c', storage(10 * GI, 8 * GI)),
    ]);

    assert.deepEqual(sut, { node: 'node-c' });
    assert.deepEqual(schedule(pod({ 'ephemeral-storage': '2Gi', memory: '9Gi' }), [candidate('node-a', storage(GI))]), {
      message: '0/1 nodes are available: 1 Insufficient ephemeral-storage, 1 Insufficient memory.',
    });
  });

  it('does not check ephemeral-storage on a node that does not report it', () => {
    assert.deepEqual(schedule(pod({ 'ephemeral-storage': '100Ti' }), [candidate('node-a')]), { node: 'node-a' });
  });

  it('reads the example message of kube-scheduler: selector and memory, reasons sorted', () => {
    const sut = schedule(pod({ memory: '4Gi' }, { nodeSelector: { disk: 'ssd' } }), [
      candidate('node-a', { labels: { disk: 'hdd' } }),
      candidate('node-b', { labels: { disk: 'ssd' }, requested: { milliCPU: 0, memory: 6 * GI } }),
      candidate('node-c'),
    ]);

    assert.deepEqual(sut, { message: "0/3 nodes are available: 1 Insufficient memory, 2 node(s) didn't match Pod's node affinity/selector." });
  });

  it('reports a node by its first failing filter only', () => {
    const sut = schedule(pod({ memory: '16Gi' }, { nodeSelector: { disk: 'ssd' } }), [candidate('node-a', { ready: false, unschedulable: true })]);

    assert.deepEqual(sut, { message: '0/1 nodes are available: 1 node(s) were unschedulable.' });
  });

  it('explains not-ready nodes with the not-ready taint, as the Kubernetes scheduler does', () => {
    const sut = schedule(pod({}, { nodeSelector: { disk: 'ssd' } }), [
      candidate('node-a', { labels: { disk: 'hdd' } }),
      candidate('node-b', { ready: false, labels: { disk: 'ssd' } }),
      candidate('node-c', { ready: false, labels: { disk: 'ssd' } }),
    ]);

    assert.deepEqual(sut, {
      message:
        "0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 2 node(s) had untolerated taint {node.kubernetes.io/not-ready: }.",
    });
  });

  it('gives the same message whatever the order of the candidates', () => {
    const nodes = [candidate('node-a', { ready: false }), candidate('node-b', { pods: 110 }), candidate('node-c', { labels: {} })];
    const spec = pod({}, { nodeSelector: { 'kubernetes.io/hostname': 'node-b' } });

    const expected = {
      message:
        "0/3 nodes are available: 1 Too many pods, 1 node(s) didn't match Pod's node affinity/selector, 1 node(s) had untolerated taint {node.kubernetes.io/not-ready: }.",
    };
    assert.deepEqual(schedule(spec, [...nodes].reverse()), expected);
    assert.deepEqual(schedule(spec, nodes), expected);
  });

  it('says 0/0 when there are no nodes', () => {
    assert.deepEqual(schedule(pod(), []), { message: '0/0 nodes are available.' });
  });
});

describe('schedule: scores', () => {
  it('prefers the node with the most room left', () => {
    const sut = schedule(pod({ cpu: '500m', memory: '1Gi' }), [
      candidate('node-a', { requested: { milliCPU: 2000, memory: 4 * GI }, nonZeroRequested: { milliCPU: 2000, memory: 4 * GI } }),
      candidate('node-b', { requested: { milliCPU: 1000, memory: 2 * GI }, nonZeroRequested: { milliCPU: 1000, memory: 2 * GI } }),
    ]);

    assert.deepEqual(sut, { node: 'node-b' });
  });

  it('spreads pods without requests by the default stand-ins for their requests', () => {
    const sut = schedule(pod(), [
      candidate('node-a', { pods: 3, nonZeroRequested: { milliCPU: 300, memory: 600 * MI } }),
      candidate('node-b', { pods: 1, nonZeroRequested: { milliCPU: 100, memory: 200 * MI } }),
    ]);

    assert.deepEqual(sut, { node: 'node-b' });
  });

  it('prefers the node where cpu and memory stay balanced when room is equal', () => {
    // Both end at 75% on average; node-b ends balanced (75% and 75%), node-a not (100% and 50%).
    const sut = schedule(pod({ cpu: '1', memory: '2Gi' }), [
      candidate('node-a', { requested: { milliCPU: 3000, memory: 2 * GI }, nonZeroRequested: { milliCPU: 3000, memory: 2 * GI } }),
      candidate('node-b', { requested: { milliCPU: 2000, memory: 4 * GI }, nonZeroRequested: { milliCPU: 2000, memory: 4 * GI } }),
    ]);

    assert.deepEqual(sut, { node: 'node-b' });
  });

  it('avoids a PreferNoSchedule taint the pod does not tolerate, unless it tolerates it', () => {
    const nodes = [candidate('node-a', { taints: [{ key: 'spot', value: 'true', effect: 'PreferNoSchedule' }] }), candidate('node-b', { pods: 20 })];

    assert.deepEqual(schedule(pod(), nodes), { node: 'node-b' });
    assert.deepEqual(schedule(pod({}, { tolerations: [{ key: 'spot', operator: 'Exists' }] }), nodes), { node: 'node-a' });
  });

  it('breaks a tie by name, whatever the order of the candidates', () => {
    const sut = schedule(pod(), [candidate('node-c'), candidate('node-b'), candidate('node-d')]);

    assert.deepEqual(sut, { node: 'node-b' });
  });

  it('places six equal pods two per node when each binding is counted', () => {
    const spec = pod({ cpu: '100m', memory: '512Mi' });
    let nodes = [candidate('node-a'), candidate('node-b'), candidate('node-c')];
    const placed: string[] = [];

    for (let i = 0; i < 6; i++) {
      const placement = schedule(spec, nodes);
      assert.ok(placement.node);
      placed.push(placement.node);
      nodes = nodes.map((n) => (n.name === placement.node ? withPod(n, spec) : n));
    }

    assert.deepEqual(placed, ['node-a', 'node-b', 'node-c', 'node-a', 'node-b', 'node-c']);
  });
});

describe('scores', () => {
  it('picks the node scoreNodes ranks first, with the scores as kube-scheduler writes them, for any nodes and pod', () => {
    // kube-scheduler's formulas over lists of the scored resources, as the scores were first written here.
    const leastAllocated = (spec: PodSpec, node: NodeCandidate): number => {
      const p = podNonZeroRequests(spec);
      const scores: number[] = [];
      const free = (requested: number, capacity: number) =>
        capacity === 0 || requested > capacity ? 0 : Math.floor(((capacity - requested) * 100) / capacity);
      if (node.allocatable.milliCPU > 0) scores.push(free(node.nonZeroRequested.milliCPU + p.milliCPU, node.allocatable.milliCPU));
      if (node.allocatable.memory > 0) scores.push(free(node.nonZeroRequested.memory + p.memory, node.allocatable.memory));
      return scores.length === 0 ? 0 : Math.floor(scores.reduce((a, b) => a + b, 0) / scores.length);
    };
    const balanced = (spec: PodSpec, node: NodeCandidate): number => {
      const p = podRequests(spec);
      if (p.milliCPU === 0 && p.memory === 0) return 0;
      const fractions: number[] = [];
      if (node.allocatable.milliCPU > 0) fractions.push(Math.min(1, (node.requested.milliCPU + p.milliCPU) / node.allocatable.milliCPU));
      if (node.allocatable.memory > 0) fractions.push(Math.min(1, (node.requested.memory + p.memory) / node.allocatable.memory));
      return Math.trunc((1 - (fractions.length === 2 ? Math.abs((fractions[0] - fractions[1]) / 2) : 0)) * 100);
    };
    const amount = fc.oneof(
      fc.constant(0),
      fc.integer({ min: 1, max: 64 }).map((n) => n * 250),
    );
    const node = fc.record({
      name: fc.constantFrom('node-a', 'node-b', 'node-c', 'node-d'),
      cpu: amount,
      memory: fc.oneof(
        fc.constant(0),
        fc.integer({ min: 1, max: 16 }).map((n) => n * 512 * MI),
      ),
      usedCpu: amount,
      usedMemory: fc.integer({ min: 0, max: 16 }).map((n) => n * 256 * MI),
      spot: fc.boolean(),
      gpu: fc.boolean(),
    });
    fc.assert(
      fc.property(
        fc.uniqueArray(node, { minLength: 1, maxLength: 6, selector: (n) => n.name }),
        fc.constantFrom<Record<string, string>>({}, { cpu: '250m' }, { memory: '256Mi' }, { cpu: '1', memory: '1Gi' }),
        fc.boolean(),
        (nodes, requests, toleratesSpot) => {
          const candidates = nodes.map((n) =>
            candidate(n.name, {
              allocatable: { milliCPU: n.cpu, memory: n.memory, pods: 110 },
              requested: { milliCPU: n.usedCpu, memory: n.usedMemory },
              nonZeroRequested: { milliCPU: n.usedCpu, memory: n.usedMemory },
              taints: [
                ...(n.spot ? [{ key: 'spot', effect: 'PreferNoSchedule' as const }] : []),
                ...(n.gpu ? [{ key: 'gpu', effect: 'PreferNoSchedule' as const }] : []),
              ],
            }),
          );
          const spec = pod(requests, toleratesSpot ? { tolerations: [{ key: 'spot', operator: 'Exists' }] } : {});
          const ranked = scoreNodes(spec, candidates);
          for (const score of ranked) {
            const scored = candidates.find((c) => c.name === score.name);
            assert.ok(scored);
            assert.equal(score.leastAllocated, leastAllocated(spec, scored));
            assert.equal(score.balancedAllocation, balanced(spec, scored));
          }
          const placement = schedule(spec, candidates);
          // Without room anywhere the filter rejects every node; otherwise the best feasible one wins.
          const feasible = scoreNodes(
            spec,
            candidates.filter((c) => searchNodes(spec, [c]).node !== undefined),
          );
          assert.equal(placement.node, feasible[0]?.name);
        },
      ),
      { numRuns: 500 },
    );
  });

  it("computes LeastAllocated as kube-scheduler: the mean of each resource's free share, in whole points", () => {
    // cpu: (4000 - 1000 - 500) * 100 / 4000 = 62.5 → 62; memory: (8Gi - 2Gi - 2Gi) * 100 / 8Gi = 50; mean 56.
    const node = candidate('node-a', { nonZeroRequested: { milliCPU: 1000, memory: 2 * GI } });

    assert.equal(leastAllocatedScore(pod({ cpu: '500m', memory: '2Gi' }), node), 56);
  });

  it('computes BalancedAllocation from the difference of the cpu and memory fractions', () => {
    // cpu 2000/4000 = 0.5, memory 2Gi/8Gi = 0.25: std 0.125 → 87.
    const node = candidate('node-a', { requested: { milliCPU: 1000, memory: GI } });

    assert.equal(balancedAllocationScore(pod({ cpu: '1', memory: '1Gi' }), node), 87);
  });

  it('does not score balance for a pod that requests nothing', () => {
    assert.equal(balancedAllocationScore(pod(), candidate('node-a', { requested: { milliCPU: 3000, memory: 0 } })), 0);
  });
});

describe('toleratesTaint', () => {
  const taint: Taint = { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' };

  it('matches Equal on key and value, Exists on key, and an empty key with Exists on everything', () => {
    assert.equal(toleratesTaint({ key: 'dedicated', value: 'gpu' }, taint), true);
    assert.equal(toleratesTaint({ key: 'dedicated', operator: 'Equal', value: 'cpu' }, taint), false);
    assert.equal(toleratesTaint({ key: 'dedicated', operator: 'Exists' }, taint), true);
    assert.equal(toleratesTaint({ key: 'other', operator: 'Exists' }, taint), false);
    assert.equal(toleratesTaint({ operator: 'Exists' }, taint), true);
  });

  it('matches the effect only when the toleration names one', () => {
    assert.equal(toleratesTaint({ key: 'dedicated', operator: 'Exists', effect: 'NoSchedule' }, taint), true);
    assert.equal(toleratesTaint({ key: 'dedicated', operator: 'Exists', effect: 'NoExecute' }, taint), false);
  });

  it('treats a taint without value as the empty value', () => {
    assert.equal(toleratesTaint({ key: 'maintenance', operator: 'Equal', value: '' }, { key: 'maintenance', effect: 'NoExecute' }), true);
  });
});

describe('pod requests', () => {
  it('sums the containers, taking a limit for a missing request as Kubernetes defaults it', () => {
    const spec: PodSpec = {
      containers: [
        { name: 'a', image: 'x', resources: { requests: { cpu: '250m', memory: '64Mi' } } },
        { name: 'b', image: 'x', resources: { limits: { cpu: '1', memory: '1Gi' } } },
      ],
    };

    assert.deepEqual(podRequests(spec), { milliCPU: 1250, memory: 64 * MI + GI });
  });

  it('puts 100m and 200Mi in for each container without a request when scoring', () => {
    const spec: PodSpec = {
      containers: [
        { name: 'a', image: 'x' },
        { name: 'b', image: 'x', resources: { requests: { cpu: '1' } } },
      ],
    };

    assert.deepEqual(podNonZeroRequests(spec), { milliCPU: 1100, memory: 400 * MI });
  });

  it('sums ephemeral-storage as cpu and memory: a limit stands for a missing request, init containers at their peak', () => {
    const spec: PodSpec = {
      initContainers: [
        { name: 'setup', image: 'x', resources: { requests: { 'ephemeral-storage': '3Gi' } } },
        { name: 'proxy', image: 'x', restartPolicy: 'Always', resources: { requests: { 'ephemeral-storage': '100Mi' } } },
      ],
      containers: [
        { name: 'a', image: 'x', resources: { requests: { 'ephemeral-storage': '1Gi' } } },
        { name: 'b', image: 'x', resources: { limits: { 'ephemeral-storage': '500Mi' } } },
      ],
    };

    assert.equal(podEphemeralStorageRequest(spec), 3 * GI);
    assert.equal(podEphemeralStorageRequest({ ...spec, initContainers: spec.initContainers?.slice(1) }), GI + 600 * MI);
    assert.equal(podEphemeralStorageRequest(pod()), 0);
  });
});

describe('buildCandidates', () => {
  function node(name: string, extra: Partial<NodeObject['spec']> = {}, storage?: string): NodeObject {
    return {
      metadata: { name, labels: { 'kubernetes.io/hostname': name } },
      spec: extra,
      status: {
        capacity: { cpu: '2', memory: '4Gi', pods: '10' },
        allocatable: { cpu: '2', memory: '4Gi', pods: '10', ...(storage ? { 'ephemeral-storage': storage } : {}) },
        addresses: [],
        nodeInfo: { kubeletVersion: '', containerRuntimeVersion: '', operatingSystem: 'linux', architecture: 'amd64', kernelVersion: '', osImage: '' },
      },
    };
  }

  function record(name: string, nodeName: string | undefined, spec: PodSpec, extra: Partial<PodRecord> = {}): PodRecord {
    return {
      namespace: 'default',
      name,
      uid: `uid-${name}`,
      manifest: { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec },
      subjectSeq: 1,
      resourceVersion: 1,
      ...(nodeName ? { nodeName } : {}),
      removed: false,
      ...extra,
    };
  }

  const web: PodSpec = {
    containers: [{ name: 'web', image: 'x', ports: [{ containerPort: 80, hostPort: 8080 }], resources: { requests: { cpu: '500m', memory: '1Gi' } } }],
  };

  it("counts the requests, pods and host ports of each node's non-terminal pods", () => {
    const pods = [
      record('running', 'node-a', web, { status: { phase: 'Running' } }),
      record('pending', 'node-a', pod({ cpu: '250m', 'ephemeral-storage': '512Mi' })),
      record('done', 'node-a', web, { status: { phase: 'Succeeded' } }),
      record('failed', 'node-a', web, { status: { phase: 'Failed' } }),
      record('gone', 'node-a', web, { removed: true }),
      record('unbound', undefined, web),
      record('elsewhere', 'node-x', web),
    ];

    const sut = buildCandidates(
      [
        { node: node('node-a', { taints: [DEDICATED] }, '20Gi'), ready: true },
        { node: node('node-b', { unschedulable: true }), ready: false },
      ],
      pods,
    );

    assert.deepEqual(sut, [
      {
        name: 'node-a',
        labels: { 'kubernetes.io/hostname': 'node-a' },
        ready: true,
        unschedulable: false,
        taints: [DEDICATED],
        allocatable: { milliCPU: 2000, memory: 4 * GI, pods: 10, ephemeralStorage: 20 * GI },
        requested: { milliCPU: 750, memory: GI },
        requestedEphemeralStorage: 512 * MI,
        nonZeroRequested: { milliCPU: 750, memory: GI + 200 * MI },
        pods: 2,
        usedPorts: ['TCP/8080'],
      },
      {
        name: 'node-b',
        labels: { 'kubernetes.io/hostname': 'node-b' },
        ready: false,
        unschedulable: true,
        taints: [],
        allocatable: { milliCPU: 2000, memory: 4 * GI, pods: 10 },
        requested: { milliCPU: 0, memory: 0 },
        requestedEphemeralStorage: 0,
        nonZeroRequested: { milliCPU: 0, memory: 0 },
        pods: 0,
        usedPorts: [],
      },
    ]);
  });

  it('leaves the candidate it adds a pod to as it was', () => {
    const before = candidate('node-a');

    const after = withPod(before, web);

    assert.deepEqual(before, candidate('node-a'));
    assert.equal(after.pods, 1);
    assert.deepEqual(after.usedPorts, ['TCP/8080']);
  });
});

describe('searchNodes: a sample of the nodes, as percentageOfNodesToScore', () => {
  const nodes = (count: number): NodeCandidate[] => Array.from({ length: count }, (_, i) => candidate(`node-${String(i).padStart(4, '0')}`));

  it("finds kube-scheduler's adaptive share of feasible nodes, never fewer than 100", () => {
    assert.equal(feasibleNodesToFind(50), 50);
    assert.equal(feasibleNodesToFind(100), 100);
    assert.equal(feasibleNodesToFind(1000), 420);
    assert.equal(feasibleNodesToFind(5000), 500);
    assert.equal(feasibleNodesToFind(100_000), 5000);
    assert.equal(feasibleNodesToFind(1000, 5), 100);
    assert.equal(feasibleNodesToFind(1000, 30), 300);
    assert.equal(feasibleNodesToFind(1000, 100), 1000);
  });

  it('stops after the share it looks for and starts the next search where this one stopped', () => {
    const all = nodes(1000);

    const first = searchNodes(pod(), all, { start: 0, percentageOfNodesToScore: 0 });
    const second = searchNodes(pod(), all, { start: first.nextStart, percentageOfNodesToScore: 0 });
    const wrapped = searchNodes(pod(), all, { start: 900, percentageOfNodesToScore: 0 });

    assert.deepEqual(first, { node: 'node-0000', nextStart: 420 });
    assert.deepEqual(second, { node: 'node-0420', nextStart: 840 });
    assert.deepEqual(wrapped, { node: 'node-0000', nextStart: 320 });
  });

  it('counts rejected nodes toward the search but only feasible ones toward the share', () => {
    const all = nodes(300).map((n, i) => (i % 2 === 0 ? { ...n, pods: 110 } : n));

    const sut = searchNodes(pod(), all, { start: 0, percentageOfNodesToScore: 10 });

    assert.deepEqual(sut, { node: 'node-0001', nextStart: 200 });
  });

  it('checks every node before calling a pod unschedulable, and names them all', () => {
    const all = nodes(500).map((n) => ({ ...n, pods: 110 }));

    const sut = searchNodes(pod(), all, { start: 123, percentageOfNodesToScore: 0 });

    assert.deepEqual(sut, { message: '0/500 nodes are available: 500 Too many pods.', nextStart: 123 });
  });

  it('scores every node without a percentage, as schedule does', () => {
    const all = nodes(1000);
    all[999] = candidate('node-0999', { pods: 0, nonZeroRequested: { milliCPU: 0, memory: 0 } });
    const busy = all.map((n, i) => (i < 999 ? { ...n, nonZeroRequested: { milliCPU: 2000, memory: 4 * GI } } : n));

    assert.deepEqual(searchNodes(pod(), busy), { node: 'node-0999', nextStart: 0 });
    assert.deepEqual(schedule(pod(), busy), { node: 'node-0999' });
  });
});

describe('fitKey', () => {
  const specs = fc.record({
    requests: fc.record({ cpu: fc.constantFrom('100m', '1', '5'), memory: fc.constantFrom('64Mi', '8Gi') }, { requiredKeys: [] }),
    image: fc.constantFrom('jetlet/busybox:1.35', 'jetlet/pause:3.9'),
    nodeName: fc.option(fc.constantFrom('node-a', 'node-b'), { nil: undefined }),
    nodeSelector: fc.option(fc.constant({ disk: 'ssd' }), { nil: undefined }),
    tolerations: fc.option(fc.constant<Toleration[]>([{ key: 'dedicated', operator: 'Exists' }]), { nil: undefined }),
    hostPort: fc.option(fc.constantFrom(80, 443), { nil: undefined }),
  });
  const specOf = (s: typeof specs extends fc.Arbitrary<infer T> ? T : never): PodSpec => ({
    containers: [
      {
        name: 'main',
        image: s.image,
        resources: { requests: s.requests },
        ...(s.hostPort === undefined ? {} : { ports: [{ containerPort: 8080, hostPort: s.hostPort }] }),
      },
    ],
    ...(s.nodeName === undefined ? {} : { nodeName: s.nodeName }),
    ...(s.nodeSelector === undefined ? {} : { nodeSelector: s.nodeSelector }),
    ...(s.tolerations === undefined ? {} : { tolerations: s.tolerations }),
  });
  const nodes = [
    candidate('node-a'),
    candidate('node-b', { labels: { disk: 'ssd' }, taints: [DEDICATED] }),
    candidate('node-c', { ready: false, usedPorts: ['TCP/80'] }),
    candidate('node-d', { requested: { milliCPU: 3900, memory: 7 * GI }, pods: 109 }),
    candidate('node-e', { unschedulable: true }),
  ];

  it('is the same for two pods only when every node takes or rejects both for the same reasons', () => {
    fc.assert(
      fc.property(specs, specs, (a, b) => {
        const [x, y] = [specOf(a), specOf(b)];
        if (fitKey(x) !== fitKey(y)) return;
        for (const node of nodes) assert.deepEqual(filterReasons(x, node), filterReasons(y, node), node.name);
      }),
      { numRuns: 2000 },
    );
  });

  it('leaves out what no filter reads, such as the image', () => {
    assert.equal(
      fitKey(pod({ cpu: '1' })),
      fitKey({ ...pod({ cpu: '1' }), containers: [{ name: 'other', image: 'jetlet/pause:3.9', resources: { requests: { cpu: '1' } } }] }),
    );
    assert.notEqual(fitKey(pod({ cpu: '1' })), fitKey(pod({ cpu: '2' })));
  });
});
