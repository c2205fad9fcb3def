import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { NodeObject, Pod } from '#contracts';
import type { KubeEvent } from '#domain';
import { Cluster, uniqueName } from '../harness/cluster.js';
import { waitFor } from '../harness/processes.js';

const GRACE = 3;
const TOLERATION = 3;

/** A node whose agent stops: NotReady, unreachable taint, eviction; and back again. */
describe('node lifecycle', () => {
  let cluster: Cluster;
  const node = uniqueName('life-node');

  before(async () => {
    cluster = await Cluster.start({ NODE_GRACE_SECONDS: String(GRACE), EVICTION_TOLERATION_SECONDS: String(TOLERATION) });
    await cluster.startAgent(node);
  });

  after(async () => {
    await cluster?.stop();
  });

  const ready = async (): Promise<string | undefined> =>
    (await cluster.request<NodeObject>('GET', `/api/v1/nodes/${node}`)).body.status.conditions?.find((c) => c.type === 'Ready')?.status;
  const events = async (reason: string): Promise<KubeEvent[]> =>
    (await cluster.request<{ items: KubeEvent[] }>('GET', `/api/v1/events?fieldSelector=reason=${reason}`)).body.items.filter(
      (e) => e.involvedObject.name === node,
    );

  it('turns the node NotReady with the unreachable taint, evicts its pods after the toleration, and stops them when the agent returns', async () => {
    const sleeper = (name: string, tolerations?: unknown[]): object => ({
      metadata: { name },
      spec: {
        nodeName: node,
        terminationGracePeriodSeconds: 2,
        ...(tolerations ? { tolerations } : {}),
        containers: [{ name: 'main', image: 'jetlet/busybox:1.35', command: ['sleep', '600'] }],
      },
    });
    await cluster.createPod('default', sleeper('evicted'));
    // Its own tolerationSeconds wins over the default.
    await cluster.createPod(
      'default',
      sleeper('patient', [{ key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 3600 }]),
    );
    const evicted = await cluster.waitForRunning('default', 'evicted');
    await cluster.waitForRunning('default', 'patient');
    const stoppedAt = Date.now();
    await cluster.agents.get(node)?.process.stop('SIGKILL');

    await waitFor('the node to turn NotReady', async () => (await ready()) === 'Unknown', 30_000);
    // The grace counts from the last heartbeat, which came up to one heartbeat period (1 s) before the kill.
    assert.ok(Date.now() - stoppedAt >= GRACE * 1000 - 1000 - 200, `not before the grace period (${Date.now() - stoppedAt} ms)`);
    const { body: down } = await cluster.request<NodeObject>('GET', `/api/v1/nodes/${node}`);
    assert.deepEqual(
      down.spec.taints?.map((t) => `${t.key}:${t.effect}`),
      ['node.kubernetes.io/unreachable:NoSchedule', 'node.kubernetes.io/unreachable:NoExecute'],
    );
    await waitFor('a NodeNotReady event', async () => (await events('NodeNotReady')).length > 0, 30_000);

    const marked = await cluster.waitForPod('default', 'evicted', 'marked for deletion', (p) => p.metadata.deletionTimestamp !== undefined, 30_000);
    assert.equal(marked.status.conditions?.find((c) => c.type === 'DisruptionTarget')?.reason, 'DeletionByTaintManager');
    const eviction = await waitFor('a TaintManagerEviction event', async () => {
      const { body } = await cluster.request<{ items: KubeEvent[] }>(
        'GET',
        '/api/v1/namespaces/default/events?fieldSelector=involvedObject.name=evicted,reason=TaintManagerEviction',
      );
      return body.items[0];
    });
    assert.equal(eviction.message, 'Marking for deletion Pod default/evicted');
    const patient = await cluster.getPod('default', 'patient');
    assert.equal(patient?.metadata.deletionTimestamp, undefined, 'a pod that tolerates the taint longer stays');
    // The evicted pod's containers still run: nobody is there to stop them.
    assert.equal((await cluster.podContainers(node, evicted.metadata.uid ?? '')).length, 2);

    await cluster.startAgent(node);
    await waitFor('the node to be Ready again', async () => (await ready()) === 'True', 30_000);
    await waitFor('a NodeReady event', async () => (await events('NodeReady')).length > 0, 30_000);
    await cluster.waitForGone('default', 'evicted', 60_000);
    assert.deepEqual(await cluster.podContainers(node, evicted.metadata.uid ?? ''), []);
    const back = await cluster.waitForPod('default', 'patient', 'running', (p: Pod) => p.status.phase === 'Running');
    assert.equal(back.metadata.deletionTimestamp, undefined);
  });

  it('finalises the deletion of a pod bound to a node that does not exist once the node grace has passed', async () => {
    const ghost = uniqueName('ghost-node');
    await cluster.createPod('default', {
      metadata: { name: 'on-ghost' },
      spec: { nodeName: ghost, containers: [{ name: 'main', image: 'jetlet/busybox:1.35', command: ['sleep', '600'] }] },
    });
    const deleted = await cluster.request<Pod>('DELETE', '/api/v1/namespaces/default/pods/on-ghost');
    assert.equal(deleted.status, 200);
    assert.ok(deleted.body.metadata.deletionTimestamp, 'Terminating: no node confirmed it');
    await cluster.scheduler.waitForLine(new RegExp(`finalised the deletion of default/on-ghost.*node ${ghost} does not exist`), 30_000);
    await cluster.waitForGone('default', 'on-ghost', 30_000);
    // The name is free again.
    await cluster.createPod('default', { metadata: { name: 'on-ghost' }, spec: { containers: [{ name: 'main', image: 'jetlet/busybox:1.35' }] } });
  });
});
