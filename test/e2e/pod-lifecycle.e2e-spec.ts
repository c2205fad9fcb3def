import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { randomUUID } from 'node:crypto';
import { jetstream } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { SUBJECTS, type Pod } from '#contracts';
import { Cluster, uniqueName } from '../harness/cluster.js';
import { ROOT, waitFor } from '../harness/processes.js';

const FIXTURE = join(ROOT, 'test/fixtures/web-pod.yaml');

/** The first pod, end to end: jetctl → API → scheduler → agent → Docker, all over JetStream. */
describe('a pod, end to end', () => {
  let cluster: Cluster;
  const node = uniqueName('e2e-node');

  before(async () => {
    cluster = await Cluster.start();
    await cluster.startAgent(node);
  });

  after(async () => {
    await cluster?.stop();
  });

  it('registers the node with capacity from the machine', async () => {
    const { status, body } = await cluster.request<{
      metadata: { labels: Record<string, string> };
      status: { capacity: Record<string, string>; conditions: Array<{ type: string; status: string }> };
    }>('GET', `/api/v1/nodes/${node}`);
    assert.equal(status, 200);
    assert.equal(body.metadata.labels['kubernetes.io/hostname'], node);
    assert.equal(body.metadata.labels['kubernetes.io/os'], 'linux');
    assert.ok(Number(body.status.capacity.cpu) >= 1);
    assert.equal(body.status.conditions.find((c) => c.type === 'Ready')?.status, 'True');
  });

  it('runs a pod applied from a manifest file, with a pod IP, as labelled containers', async () => {
    const applied = await cluster.jetctl('apply', '-f', FIXTURE);
    assert.equal(applied.code, 0, applied.stderr);
    assert.match(applied.stdout, /pod\/web created/);

    const pod = await cluster.waitForRunning('default', 'web');
    assert.equal(pod.spec.nodeName, node);
    assert.match(pod.status.podIP ?? '', /^\d+\.\d+\.\d+\.\d+$/);
    assert.equal(pod.status.containerStatuses?.length, 2);
    assert.ok(Number(pod.metadata.resourceVersion) > 0);

    const containers = await cluster.containersOf(node);
    const uid = pod.metadata.uid!;
    assert.equal(containers.length, 3, 'a sandbox and two app containers');
    for (const c of containers) {
      assert.equal(c.State, 'running');
      assert.equal(c.Labels['io.jetlet.pod.uid'], uid);
      assert.equal(c.Labels['io.jetlet.pod.namespace'], 'default');
      assert.equal(c.Labels['io.jetlet.pod.name'], 'web');
    }
    const kinds = containers.map((c) => `${c.Labels['io.jetlet.kind']}:${c.Labels['io.jetlet.container.name'] ?? ''}`).sort();
    assert.deepEqual(kinds, ['container:client', 'container:server', 'sandbox:']);

    const reapplied = await cluster.jetctl('apply', '-f', FIXTURE);
    assert.match(reapplied.stdout, /pod\/web unchanged/, reapplied.stderr);

    const listed = await cluster.jetctl('get', 'pods', '-o', 'wide');
    assert.match(listed.stdout, new RegExp(`web\\s+2/2\\s+Running\\s+0\\s+\\S+\\s+${pod.status.podIP!.replaceAll('.', '\\.')}\\s+${node}`));
  });

  it('keeps exactly one set of containers when the agent is killed with SIGKILL and started again', async () => {
    const before = (await cluster.containersOf(node)).map((c) => c.Id).sort();
    await cluster.agents.get(node)!.process.stop('SIGKILL');
    await cluster.startAgent(node);
    // Give the restarted agent several passes to do anything it (wrongly) would.
    await waitFor('a status report after restart', async () => (await cluster.getPod('default', 'web'))?.status.phase === 'Running');
    await cluster.waitForPasses(node, 3);
    const after = (await cluster.containersOf(node)).map((c) => c.Id).sort();
    assert.deepEqual(after, before);
  });

  it('runs a pod in a namespace other than default', async () => {
    const manifest = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'worker' },
      spec: { terminationGracePeriodSeconds: 2, containers: [{ name: 'main', image: 'jetlet/busybox:1.35', command: ['sleep', '3600'] }] },
    };
    await cluster.ensureNamespace('team-a');
    const created = await cluster.request<Pod>('POST', '/api/v1/namespaces/team-a/pods', manifest);
    assert.equal(created.status, 201);
    assert.equal(created.body.metadata.namespace, 'team-a');
    const pod = await cluster.waitForRunning('team-a', 'worker');
    const { body } = await cluster.request<{ items: Pod[] }>('GET', '/api/v1/namespaces/team-a/pods');
    assert.deepEqual(
      body.items.map((p) => p.metadata.name),
      ['worker'],
    );
    const containers = await cluster.containersOf(node);
    assert.equal(containers.filter((c) => c.Labels['io.jetlet.pod.uid'] === pod.metadata.uid && c.Labels['io.jetlet.pod.namespace'] === 'team-a').length, 2);
  });

  it("terminates a malformed message on its node's subject, counts it, and keeps working", async () => {
    const nc = await connect({ servers: cluster.nats.url });
    try {
      const js = jetstream(nc);
      await js.publish(SUBJECTS.assignment(node, randomUUID()), 'this is not an envelope');
      await js.publish(SUBJECTS.assignment(node, randomUUID()), JSON.stringify({ type: 'PodAssigned', version: 1, data: { pod: { spec: {} } } }));
    } finally {
      await nc.close();
    }
    const series = `jetlet_bus_messages_terminated_total{stream="JETLET_ASSIGN",consumer="agent-${node}"}`;
    await cluster.withLogs(
      waitFor('the agent to count two terminated messages', async () => {
        const metrics = await (await fetch(`${cluster.agentUrl(node)}/metrics`)).text();
        return metrics.split('\n').includes(`${series} 2`);
      }),
    );
    const manifest = {
      metadata: { name: 'after-junk' },
      spec: { terminationGracePeriodSeconds: 2, containers: [{ name: 'main', image: 'jetlet/busybox:1.35', command: ['sleep', '3600'] }] },
    };
    assert.equal((await cluster.request('POST', '/api/v1/namespaces/default/pods', manifest)).status, 201);
    await cluster.waitForRunning('default', 'after-junk');
    assert.ok(cluster.agents.get(node)?.process.running, 'the agent is still up');
  });

  it('deletes a pod: its containers leave Docker, then the pod leaves the API', async () => {
    const pod = await cluster.getPod('default', 'web');
    assert.ok(pod);
    const deleted = await cluster.jetctl('delete', 'pod', 'web');
    assert.equal(deleted.code, 0, deleted.stderr);
    const terminating = await cluster.getPod('default', 'web');
    if (terminating) assert.ok(terminating.metadata.deletionTimestamp, 'a pod being deleted carries its deletionTimestamp');
    await cluster.waitForGone('default', 'web');
    const left = (await cluster.containersOf(node)).filter((c) => c.Labels['io.jetlet.pod.uid'] === pod.metadata.uid);
    assert.deepEqual(left, []);
    const missing = await cluster.request<{ reason: string; code: number }>('GET', '/api/v1/namespaces/default/pods/web');
    assert.equal(missing.status, 404);
    assert.equal(missing.body.reason, 'NotFound');
  });
});
