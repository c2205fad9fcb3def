import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { jetstream, DeliverPolicy } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { STREAMS, SUBJECTS } from '#contracts';
import { Cluster, uniqueName } from '../harness/cluster.js';
import { Kubectl } from '../harness/kubectl.js';
import { waitFor } from '../harness/processes.js';

/** Two schedulers at once: optimistic concurrency on each pod's subject binds every pod exactly once. */
describe('two schedulers without leader election', () => {
  let cluster: Cluster;
  const nodes = [uniqueName('two-a'), uniqueName('two-b')];

  before(async () => {
    cluster = await Cluster.start({ LEADER_ELECT: 'false' });
    await cluster.startExtraScheduler({ LEADER_ELECT: 'false' });
    for (const node of nodes) await cluster.startAgent(node);
  });

  after(async () => {
    await cluster?.stop();
  });

  it('binds each of 30 pods exactly once', async () => {
    const names = Array.from({ length: 30 }, (_, i) => `race-${i}`);
    await Promise.all(
      names.map((name) =>
        cluster.createPod('default', {
          metadata: { name },
          spec: { terminationGracePeriodSeconds: 0, containers: [{ name: 'main', image: 'jetlet/busybox:1.35', command: ['sleep', '600'] }] },
        }),
      ),
    );
    for (const name of names) await cluster.waitForRunning('default', name, 120_000);

    const nc = await connect({ servers: cluster.nats.url });
    try {
      const js = jetstream(nc);
      const consumer = await js.consumers.get(STREAMS.pods, { filter_subjects: SUBJECTS.allPods, deliver_policy: DeliverPolicy.All });
      const bindings = new Map<string, number>();
      const info = await consumer.info(true);
      let left = info.num_pending;
      const messages = await consumer.consume();
      for await (const m of messages) {
        const envelope = m.json<{ type: string; data: { uid: string } }>();
        if (envelope.type === 'PodScheduled') bindings.set(envelope.data.uid, (bindings.get(envelope.data.uid) ?? 0) + 1);
        if (--left === 0) break;
      }
      assert.equal(bindings.size, 30);
      assert.deepEqual([...new Set(bindings.values())], [1], 'no pod bound twice');
    } finally {
      await nc.close();
    }
    const containers = await waitFor('one set of containers per pod', async () => {
      const all = (await Promise.all(nodes.map((n) => cluster.containersOf(n)))).flat();
      return all.length === 60 ? all : undefined;
    });
    assert.equal(new Set(containers.map((c) => c.Labels['io.jetlet.pod.uid'])).size, 30);
  });
});

/** The identity a "leading: <identity> holds ..." line names. */
const identityIn = (line: string): string => /leading: (\S+) holds/.exec(line)?.[1] ?? '';

/** The `kube-scheduler` lease's records the stream keeps, oldest first. */
async function leaseHistory(url: string): Promise<Array<{ holderIdentity: string }>> {
  const nc = await connect({ servers: url });
  try {
    const consumer = await jetstream(nc).consumers.get(STREAMS.leases, {
      filter_subjects: SUBJECTS.lease('kube-scheduler'),
      deliver_policy: DeliverPolicy.All,
    });
    let left = (await consumer.info(true)).num_pending;
    const records: Array<{ holderIdentity: string }> = [];
    if (left === 0) return records;
    for await (const m of await consumer.consume()) {
      records.push(m.json<{ data: { holderIdentity: string } }>().data);
      if (--left === 0) break;
    }
    return records;
  } finally {
    await nc.close();
  }
}

/** Leader election: of the schedulers running, the holder of the `kube-scheduler` lease schedules. */
describe('two schedulers with leader election', () => {
  // Short, so a takeover is waited for in seconds: 4 s lease, 3 s renew deadline, a try every 0.5 s.
  const LEASE = { LEADER_ELECT_LEASE_DURATION_SECONDS: '4', LEADER_ELECT_RENEW_DEADLINE_SECONDS: '3', LEADER_ELECT_RETRY_PERIOD_SECONDS: '0.5' };
  let cluster: Cluster;
  let firstId: string;
  const node = uniqueName('elect');
  const pod = (name: string) => ({
    metadata: { name },
    spec: { terminationGracePeriodSeconds: 0, containers: [{ name: 'main', image: 'jetlet/busybox:1.35', command: ['sleep', '600'] }] },
  });

  before(async () => {
    cluster = await Cluster.start(LEASE);
    firstId = identityIn(await cluster.scheduler.waitForLine(/leading: \S+ holds the kube-scheduler lease/));
    await cluster.startAgent(node);
  });

  after(async () => {
    await cluster?.stop();
  });

  it('shows kubectl the lease and who holds it, as kube-system/kube-scheduler', async () => {
    const kubectl = Kubectl.as(cluster);
    try {
      const table = await kubectl.ok(['get', 'lease', '-n', 'kube-system']);
      const rows = table
        .trim()
        .split('\n')
        .map((line) => line.split(/\s+/));
      assert.deepEqual(
        rows.map((r) => r.slice(0, 2)),
        [
          ['NAME', 'HOLDER'],
          ['kube-scheduler', firstId],
        ],
        table,
      );
      const lease = JSON.parse(await kubectl.ok(['get', 'lease', 'kube-scheduler', '-n', 'kube-system', '-o', 'json'])) as {
        spec: { holderIdentity: string; leaseDurationSeconds: number; renewTime: string };
      };
      assert.equal(lease.spec.holderIdentity, firstId);
      assert.equal(lease.spec.leaseDurationSeconds, 4);
      assert.match(lease.spec.renewTime, /T\d\d:\d\d:\d\d\.\d{6}Z$/);
      assert.equal(await kubectl.ok(['get', 'leases', '--all-namespaces', '-o', 'name']), 'lease.coordination.k8s.io/kube-scheduler\n');
      // Described in the group's own OpenAPI document, as kubectl explain reads it.
      const explained = await kubectl.ok(['explain', 'lease.spec']);
      assert.match(explained, /GROUP:\s+coordination\.k8s\.io/);
      assert.match(explained, /KIND:\s+Lease/);
      assert.match(explained, /FIELD:\s+spec\s+<LeaseSpec>/);
      assert.match(explained, /holderIdentity\s+<string>/);
      assert.match(explained, /renewTime\s+<string>\n\s+renewTime is a time/);
      assert.match(explained, /leaseDurationSeconds\s+<integer>/);
      const elsewhere = await kubectl.run(['get', 'lease', 'kube-scheduler', '-n', 'default']);
      assert.notEqual(elsewhere.code, 0);
      assert.match(elsewhere.stderr, /leases.coordination.k8s.io "kube-scheduler" not found/);
      // Only the schedulers write it, over the bus; nor is it watched.
      const removal = await kubectl.run(['delete', 'lease', 'kube-scheduler', '-n', 'kube-system']);
      assert.notEqual(removal.code, 0);
      assert.match(removal.stderr, /does not allow this method/);
      const watch = await cluster.request<{ reason: string; message: string }>('GET', '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases?watch=true');
      assert.equal(watch.status, 405);
      assert.equal(watch.body.message, 'watch is not supported on resources of kind "leases.coordination.k8s.io"');
      assert.equal(
        (JSON.parse(await kubectl.ok(['get', 'lease', 'kube-scheduler', '-n', 'kube-system', '-o', 'json'])) as typeof lease).spec.holderIdentity,
        firstId,
        'still there, held as before',
      );
    } finally {
      kubectl.dispose();
    }
  });

  it('lets one lead and the other take over when it dies, and at once when it lets go', async () => {
    const second = await cluster.startExtraScheduler(LEASE);
    await second.waitForLine(/not leading: the kube-scheduler lease is held by /);
    await cluster.createPod('default', pod('led-0'));
    await cluster.waitForRunning('default', 'led-0', 60_000);

    // The leader dies without letting go: the other waits out the lease, then schedules.
    await cluster.scheduler.stop('SIGKILL');
    const secondId = identityIn(await second.waitForLine(/leading: \S+ holds the kube-scheduler lease/, 20_000));
    await cluster.createPod('default', pod('led-1'));
    await cluster.waitForRunning('default', 'led-1', 60_000);

    // A third stands by; the leader stops cleanly and lets the lease go to it.
    const third = await cluster.startExtraScheduler(LEASE);
    await third.waitForLine(/not leading: the kube-scheduler lease is held by /);
    await second.stop();
    const thirdId = identityIn(await third.waitForLine(/leading: \S+ holds the kube-scheduler lease/, 20_000));
    const holders = (await leaseHistory(cluster.nats.url)).map((l) => l.holderIdentity);
    const released = holders.lastIndexOf('');
    assert.ok(
      released > holders.lastIndexOf(secondId) && holders.indexOf(thirdId) > released,
      `the leader let the lease go on its way out, and the third took it then: ${holders.join(', ')}`,
    );
    await cluster.createPod('default', pod('led-2'));
    await cluster.waitForRunning('default', 'led-2', 60_000);
  });
});
