import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { jetstream, DeliverPolicy } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { STREAMS, SUBJECTS } from '#contracts';
import { Cluster, uniqueName } from '../harness/cluster.js';
import { waitFor } from '../harness/processes.js';

/** Two schedulers at once: optimistic concurrency on each pod's subject binds every pod exactly once. */
describe('two schedulers', () => {
  let cluster: Cluster;
  const nodes = [uniqueName('two-a'), uniqueName('two-b')];

  before(async () => {
    cluster = await Cluster.start();
    await cluster.startExtraScheduler();
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
