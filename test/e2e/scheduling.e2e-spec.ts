import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Pod } from '#contracts';
import { Cluster, uniqueName } from '../harness/cluster.js';
import { waitFor } from '../harness/processes.js';

const MAX_PODS = 3;

interface NodeBody {
  status: { allocatable: Record<string, string>; conditions: Array<{ type: string; status: string }> };
}

function sleeper(name: string, spec: Record<string, unknown> = {}, requests?: Record<string, string>): object {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: {
      terminationGracePeriodSeconds: 1,
      containers: [{ name: 'main', image: 'jetlet/busybox:1.35', command: ['sleep', '3600'], ...(requests ? { resources: { requests } } : {}) }],
      ...spec,
    },
  };
}

const scheduledCondition = (pod: Pod) => pod.status.conditions?.find((c) => c.type === 'PodScheduled');

/** The PodScheduled condition without its transition time, after checking that it carries one. */
function scheduledConditionShape(pod: Pod) {
  const condition = scheduledCondition(pod);
  assert.ok(condition?.lastTransitionTime !== undefined && !Number.isNaN(Date.parse(condition.lastTransitionTime)), 'a lastTransitionTime');
  const { lastTransitionTime: _time, ...rest } = condition;
  return rest;
}

/**
 * The scheduler against three real agents on the one Docker engine. Every agent reports the
 * machine's own cpu and memory, so requests here are fractions of what a node reports.
 * Taints cannot be set on a node by its agent yet (a later part of issue #5), so taints and
 * tolerations are covered by the domain's unit tests (libs/domain/src/scheduling.spec.ts).
 */
describe('scheduling across nodes', () => {
  let cluster: Cluster;
  // The prefixes order the nodes by name, which is how the scheduler breaks ties.
  const nodes = ['sched-a', 'sched-b', 'sched-c'].map(uniqueName);
  const extra = uniqueName('sched-d');
  let allocatableKi: number;

  const nodeOf = async (name: string): Promise<string> =>
    (await cluster.waitForPod('default', name, 'to be bound to a node', (p) => p.spec.nodeName !== undefined)).spec.nodeName!;

  const podsPerNode = async (): Promise<Record<string, number>> => {
    const { body } = await cluster.request<{ items: Pod[] }>('GET', '/api/v1/namespaces/default/pods');
    const counts: Record<string, number> = {};
    for (const pod of body.items) if (pod.spec.nodeName) counts[pod.spec.nodeName] = (counts[pod.spec.nodeName] ?? 0) + 1;
    return counts;
  };

  before(async () => {
    cluster = await Cluster.start();
    await Promise.all(nodes.map((node) => cluster.startAgent(node, { MAX_PODS: String(MAX_PODS) })));
    const { body } = await cluster.request<NodeBody>('GET', `/api/v1/nodes/${nodes[0]}`);
    const memory = /^(\d+)Ki$/.exec(body.status.allocatable.memory ?? '');
    assert.ok(memory, `allocatable memory in Ki, got ${body.status.allocatable.memory}`);
    allocatableKi = Number(memory[1]);
  });

  after(async () => {
    await cluster?.stop();
  });

  it('spreads equal pods over the nodes by score: six pods, two per node', async () => {
    // A tenth of a node's memory each: enough for the least-allocated score to tell the nodes apart.
    const requests = { cpu: '10m', memory: `${Math.floor(allocatableKi / 10)}Ki` };
    for (let i = 0; i < 6; i++) await cluster.createPod('default', sleeper(`spread-${i}`, {}, requests));

    await Promise.all([0, 1, 2, 3, 4, 5].map((i) => cluster.waitForRunning('default', `spread-${i}`)));

    assert.deepEqual(await podsPerNode(), Object.fromEntries(nodes.map((n) => [n, 2])));
  });

  it('keeps a pod that requests more memory than any node has Pending, with the reason kube-scheduler gives', async () => {
    await cluster.createPod('default', sleeper('too-big', {}, { memory: `${allocatableKi * 2}Ki` }));

    const pod = await cluster.waitForPod('default', 'too-big', 'to be found unschedulable', (p) => scheduledCondition(p)?.message?.startsWith('0/') ?? false);

    assert.equal(pod.status.phase, 'Pending');
    assert.equal(pod.spec.nodeName, undefined);
    assert.deepEqual(scheduledConditionShape(pod), {
      type: 'PodScheduled',
      status: 'False',
      reason: 'Unschedulable',
      message: '0/3 nodes are available: 3 Insufficient memory.',
    });
    assert.equal((await cluster.request('DELETE', '/api/v1/namespaces/default/pods/too-big')).status, 200);
    await cluster.waitForGone('default', 'too-big');
  });

  it("keeps a pod that requests more ephemeral-storage than any node's file system Pending", async () => {
    const { body } = await cluster.request<NodeBody>('GET', `/api/v1/nodes/${nodes[0]}`);
    const storage = /^(\d+)Ki$/.exec(body.status.allocatable['ephemeral-storage'] ?? '');
    assert.ok(storage, `allocatable ephemeral-storage in Ki, got ${body.status.allocatable['ephemeral-storage']}`);
    await cluster.createPod('default', sleeper('too-much-disk', {}, { 'ephemeral-storage': `${Number(storage[1]) * 2}Ki` }));

    const pod = await cluster.waitForPod(
      'default',
      'too-much-disk',
      'to be found unschedulable',
      (p) => scheduledCondition(p)?.message?.startsWith('0/') ?? false,
    );

    assert.equal(pod.spec.nodeName, undefined);
    assert.equal(scheduledCondition(pod)?.message, '0/3 nodes are available: 3 Insufficient ephemeral-storage.');
    assert.equal((await cluster.request('DELETE', '/api/v1/namespaces/default/pods/too-much-disk')).status, 200);
    await cluster.waitForGone('default', 'too-much-disk');
  });

  it('honours a nodeSelector on the node name label', async () => {
    await cluster.createPod('default', sleeper('pinned', { nodeSelector: { 'kubernetes.io/hostname': nodes[2] } }));

    const pod = await cluster.waitForRunning('default', 'pinned');

    assert.equal(pod.spec.nodeName, nodes[2]);
  });

  it('keeps a pod Pending while every node is full, and schedules it when a node with room registers', async () => {
    // Fill the two nodes with room left; the third is full since the pinned pod.
    await cluster.createPod('default', sleeper('filler-0'));
    await cluster.createPod('default', sleeper('filler-1'));
    assert.notEqual(await nodeOf('filler-0'), nodes[2]);
    assert.notEqual(await nodeOf('filler-1'), nodes[2]);
    assert.deepEqual(await podsPerNode(), Object.fromEntries(nodes.map((n) => [n, MAX_PODS])));

    await cluster.createPod('default', sleeper('waiting'));
    const pending = await cluster.waitForPod(
      'default',
      'waiting',
      'to be found unschedulable',
      (p) => scheduledCondition(p)?.message?.startsWith('0/') ?? false,
    );
    assert.equal(pending.status.phase, 'Pending');
    assert.equal(scheduledCondition(pending)?.message, '0/3 nodes are available: 3 Too many pods.');

    await cluster.startAgent(extra);
    const pod = await cluster.waitForRunning('default', 'waiting');

    assert.equal(pod.spec.nodeName, extra);
    assert.deepEqual(scheduledConditionShape(pod), { type: 'PodScheduled', status: 'True' });
    await waitFor('the pods to stay where they are', async () => (await podsPerNode())[extra] === 1);
  });
});
