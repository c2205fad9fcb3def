import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Cluster, uniqueName } from '../harness/cluster.js';
import { waitFor } from '../harness/processes.js';
import { TcpProxy } from '../harness/tcp-proxy.js';

/** An agent that loses the bus keeps its pods running, and catches up when the bus returns. */
describe('bus outage at one agent', () => {
  let cluster: Cluster;
  let proxy: TcpProxy;
  const node = uniqueName('outage-node');

  before(async () => {
    cluster = await Cluster.start();
    proxy = await TcpProxy.start(Number(new URL(cluster.nats.url).port));
    await cluster.startAgent(node, { NATS_URL: `nats://127.0.0.1:${proxy.port}` });
  });

  after(async () => {
    await proxy?.break();
    await cluster?.stop();
  });

  const sleeper = (name: string): object => ({
    metadata: { name },
    spec: { nodeName: node, terminationGracePeriodSeconds: 2, containers: [{ name: 'main', image: 'jetlet/busybox:1.35', command: ['sleep', '600'] }] },
  });

  it('keeps running pods while cut off, then runs what was assigned meanwhile', async () => {
    const before = await cluster.createPod('default', sleeper('steady'));
    await cluster.waitForRunning('default', 'steady');
    const containers = (await cluster.podContainers(node, before.metadata.uid ?? '')).map((c) => c.Id).sort();

    await proxy.break();
    await cluster.agents.get(node)?.process.waitForLine(/lost the NATS connection/);
    // Assigned while the agent cannot hear it: the stream keeps it.
    await cluster.createPod('default', sleeper('missed'));
    await cluster.waitForPasses(node, 2);
    assert.deepEqual((await cluster.podContainers(node, before.metadata.uid ?? '')).map((c) => c.Id).sort(), containers, 'the pod ran on untouched');
    assert.ok(cluster.agents.get(node)?.process.running, 'the agent is still up');

    await proxy.restore();
    await cluster.agents.get(node)?.process.waitForLine(/NATS connection is back/, 60_000);
    await cluster.waitForRunning('default', 'missed', 60_000);
    assert.deepEqual((await cluster.podContainers(node, before.metadata.uid ?? '')).map((c) => c.Id).sort(), containers);
  });

  it('keeps retrying registration while the bus is unreachable, says so on /healthz, and registers once it answers', async () => {
    const late = uniqueName('late-node');
    const cut = await TcpProxy.start(Number(new URL(cluster.nats.url).port));
    await cut.break();
    try {
      const agent = await cluster.startAgent(late, { NATS_URL: `nats://127.0.0.1:${cut.port}` }, false);
      await agent.waitForLine(/cannot reach NATS .* retrying/);
      const health = await waitFor('the startup health answer', async () => fetch(`${cluster.agentUrl(late)}/healthz`).catch(() => undefined));
      assert.equal(health.status, 503);
      assert.match(await health.text(), new RegExp(`registering node ${late}: waiting for the bus`));
      assert.equal((await cluster.request('GET', `/api/v1/nodes/${late}`)).status, 404);

      await cut.restore();
      await agent.waitForLine(/desired state rebuilt/, 60_000);
      await waitFor('the node to register', async () => (await cluster.request('GET', `/api/v1/nodes/${late}`)).status === 200, 30_000);
      const healthy = await waitFor(
        '/healthz ok',
        async () => {
          const r = await fetch(`${cluster.agentUrl(late)}/healthz`).catch(() => undefined);
          return r?.status === 200 ? r : undefined;
        },
        30_000,
      );
      assert.equal(healthy.status, 200);
    } finally {
      await cut.break();
    }
  });
});
