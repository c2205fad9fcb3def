import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { NodeObject, Pod } from '#contracts';
import { Cluster, uniqueName } from '../harness/cluster.js';
import { DockerProxy } from '../harness/docker-proxy.js';
import { waitFor } from '../harness/processes.js';

/**
 * The agent's Docker engine becomes unreachable (through a relay in front of its socket; the
 * shared engine is never touched): after a grace the node says its container runtime is down
 * and its pods are no longer Ready, instead of everything looking fine; when the engine is
 * back, the node is Ready and its pods run on, untouched.
 */
describe('a Docker engine outage at one agent', () => {
  let cluster: Cluster;
  let proxy: DockerProxy;
  const node = uniqueName('engine-down');

  before(async () => {
    cluster = await Cluster.start();
    proxy = await DockerProxy.start();
    await cluster.startAgent(node, { DOCKER_HOST: proxy.dockerHost });
  });

  after(async () => {
    await proxy?.stop();
    await cluster?.stop();
  });

  const readyCondition = async (): Promise<NonNullable<NodeObject['status']['conditions']>[number] | undefined> =>
    (await cluster.request<NodeObject>('GET', `/api/v1/nodes/${node}`)).body.status.conditions?.find((c) => c.type === 'Ready');
  const podReady = (pod: Pod): string | undefined => pod.status.conditions?.find((c) => c.type === 'Ready')?.status;

  it('reports the runtime down on the node and the pods, and recovers when the engine returns', { timeout: 180_000 }, async () => {
    await cluster.createPod('default', {
      metadata: { name: 'steady' },
      spec: { nodeName: node, terminationGracePeriodSeconds: 2, containers: [{ name: 'main', image: 'jetlet/busybox:1.35', command: ['sleep', '600'] }] },
    });
    const running = await cluster.waitForPod('default', 'steady', 'Ready', (p) => p.status.phase === 'Running' && podReady(p) === 'True');
    const containers = (await cluster.podContainers(node, running.metadata.uid ?? '')).map((c) => c.Id).sort();
    assert.equal((await readyCondition())?.status, 'True');

    await proxy.break();
    const down = await waitFor(
      'the node to say its container runtime is down',
      async () => {
        const c = await readyCondition();
        return c?.status === 'False' ? c : undefined;
      },
      60_000,
      200,
    );
    assert.equal(down.reason, 'KubeletNotReady');
    assert.match(down.message ?? '', /^container runtime is down/);
    const { body: nodeDown } = await cluster.request<NodeObject>('GET', `/api/v1/nodes/${node}`);
    assert.ok(nodeDown.spec.taints?.some((t) => t.key === 'node.kubernetes.io/not-ready' && t.effect === 'NoSchedule'));
    const notReady = await cluster.waitForPod('default', 'steady', 'not Ready', (p) => podReady(p) === 'False', 60_000);
    assert.equal(notReady.status.conditions?.find((c) => c.type === 'Ready')?.reason, 'ContainerRuntimeDown');
    // A pod created meanwhile is not placed on a node whose runtime is down.
    await cluster.createPod('default', {
      metadata: { name: 'fresh' },
      spec: { containers: [{ name: 'main', image: 'jetlet/busybox:1.35', command: ['sleep', '600'] }] },
    });
    await cluster.waitForPod(
      'default',
      'fresh',
      'unschedulable',
      (p) => p.status.conditions?.some((c) => c.type === 'PodScheduled' && c.status === 'False') ?? false,
      30_000,
    );

    await proxy.restore();
    await waitFor('the node to be Ready again', async () => (await readyCondition())?.status === 'True', 60_000, 200);
    await cluster.waitForPod('default', 'steady', 'Ready again', (p) => p.status.phase === 'Running' && podReady(p) === 'True', 60_000);
    assert.deepEqual((await cluster.podContainers(node, running.metadata.uid ?? '')).map((c) => c.Id).sort(), containers, 'the same containers ran on');
    await cluster.waitForRunning('default', 'fresh', 60_000);
  });
});
