import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Pod } from '#contracts';
import { Cluster, uniqueName } from '../harness/cluster.js';

const BUSYBOX = 'jetlet/busybox:1.35';
/** A container that stops at once on SIGTERM. */
const SLEEPER = ['sh', '-c', "trap 'exit 0' TERM; sleep 3600 & wait"];

/** Pods bound straight to a node (spec.nodeName): no scheduler looked at them, so the agent admits or refuses them. */
describe('node admission of pods bound through spec.nodeName', () => {
  let cluster: Cluster;
  const node = uniqueName('admit-node');

  function bound(name: string, extra: Record<string, unknown> = {}, requests?: Record<string, string>): object {
    return {
      metadata: { name },
      spec: {
        nodeName: node,
        terminationGracePeriodSeconds: 1,
        tolerations: [{ key: 'maintenance', operator: 'Exists' }],
        containers: [{ name: 'main', image: BUSYBOX, command: SLEEPER, ...(requests ? { resources: { requests } } : {}) }],
        ...extra,
      },
    };
  }

  const failed = (pod: Pod): boolean => pod.status.phase === 'Failed';

  async function assertRejected(name: string, reason: string, message: RegExp): Promise<void> {
    const pod = await cluster.waitForPod('default', name, `rejected with ${reason}`, failed);
    assert.equal(pod.status.reason, reason);
    assert.match(pod.status.message ?? '', message);
    assert.deepEqual(await cluster.podContainers(node, pod.metadata.uid ?? ''), [], `${name} has no container`);
    const events = await cluster.request<{ items: Array<{ reason: string; type: string }> }>(
      'GET',
      `/api/v1/namespaces/default/events?fieldSelector=${encodeURIComponent(`involvedObject.name=${name}`)}`,
    );
    assert.ok(
      events.body.items.some((e) => e.reason === reason && e.type === 'Warning'),
      JSON.stringify(events.body.items.map((e) => e.reason)),
    );
  }

  before(async () => {
    cluster = await Cluster.start();
    // Two pods at most, labelled disk=ssd, and a NoExecute taint only pods that tolerate it may run under.
    await cluster.startAgent(node, { MAX_PODS: '2', NODE_LABELS: 'disk=ssd', REGISTER_WITH_TAINTS: 'maintenance=now:NoExecute' });
  });

  after(async () => {
    await cluster?.stop();
  });

  it("refuses what cannot fit with the kubelet's reasons, runs what does, and never starts a refused pod", async () => {
    await cluster.createPod('default', bound('huge', {}, { memory: '1000Gi' }));
    await assertRejected(
      'huge',
      'OutOfmemory',
      /^Pod was rejected: Node didn't have enough resource: memory, requested: 1073741824000, used: 0, capacity: \d+$/,
    );
    await cluster.createPod('default', bound('hoarder', {}, { 'ephemeral-storage': '1000Ti' }));
    await assertRejected(
      'hoarder',
      'OutOfephemeral-storage',
      /^Pod was rejected: Node didn't have enough resource: ephemeral-storage, requested: 1099511627776000, used: 0, capacity: \d+$/,
    );
    await cluster.createPod('default', bound('elsewhere', { nodeSelector: { disk: 'hdd' } }));
    await assertRejected('elsewhere', 'NodeAffinity', /^Pod was rejected: Predicate NodeAffinity failed$/);
    await cluster.createPod('default', { ...bound('intolerant'), spec: { ...(bound('intolerant') as { spec: object }).spec, tolerations: [] } });
    await assertRejected('intolerant', 'Taint', /^Pod was rejected: Predicate TaintToleration failed$/);

    await cluster.createPod('default', bound('first', { nodeSelector: { disk: 'ssd' } }));
    await cluster.waitForRunning('default', 'first');
    await cluster.createPod('default', bound('second'));
    await cluster.waitForRunning('default', 'second');
    await cluster.createPod('default', bound('third'));
    await assertRejected('third', 'OutOfpods', /^Pod was rejected: Node didn't have enough resource: pods, requested: 1, used: 2, capacity: 2$/);
  });

  it('keeps a refused pod refused across an agent restart, and the admitted ones running', async () => {
    const third = await cluster.getPod('default', 'third');
    const running = (await cluster.podContainers(node, (await cluster.getPod('default', 'first'))?.metadata.uid ?? '')).map((c) => c.Id).sort();
    await cluster.agents.get(node)!.process.stop('SIGKILL');
    await cluster.startAgent(node, { MAX_PODS: '2', NODE_LABELS: 'disk=ssd', REGISTER_WITH_TAINTS: 'maintenance=now:NoExecute' });
    await cluster.waitForPasses(node, 3);
    const after = await cluster.getPod('default', 'third');
    assert.equal(after?.status.phase, 'Failed');
    assert.equal(after?.status.reason, 'OutOfpods');
    assert.deepEqual(await cluster.podContainers(node, third?.metadata.uid ?? ''), []);
    assert.deepEqual((await cluster.podContainers(node, (await cluster.getPod('default', 'first'))?.metadata.uid ?? '')).map((c) => c.Id).sort(), running);
  });

  it('lets a refused pod be deleted', async () => {
    assert.equal((await cluster.request('DELETE', '/api/v1/namespaces/default/pods/huge')).status, 200);
    await cluster.waitForGone('default', 'huge');
  });
});
