import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { jetstream, DeliverPolicy } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { STREAMS, SUBJECTS, type Pod } from '#contracts';
import type { KubeEvent } from '#domain';
import { Cluster, uniqueName } from '../harness/cluster.js';
import { waitFor } from '../harness/processes.js';

const BUSYBOX = 'jetlet/busybox:1.35';
/** The same image under a second, local tag: an image change that needs no pull. */
const RETAGGED = 'jetlet/busybox:update-test';

/** Updates that Kubernetes allows on a running pod, graceful deletion, and the events the agent records. */
describe('pod updates, termination and events', () => {
  let cluster: Cluster;
  let nc: NatsConnection;
  const node = uniqueName('upd-node');

  before(async () => {
    cluster = await Cluster.start();
    await cluster.startAgent(node);
    nc = await connect({ servers: cluster.nats.url });
    await cluster.docker.getImage(BUSYBOX).tag({ repo: 'jetlet/busybox', tag: 'update-test' });
  });

  after(async () => {
    await nc?.close();
    await cluster?.stop();
    await cluster?.docker
      .getImage(RETAGGED)
      .remove()
      .catch(() => undefined);
  });

  it('restarts only the container whose image changed, and rejects any other spec change', async () => {
    const manifest = {
      metadata: { name: 'updated' },
      spec: {
        terminationGracePeriodSeconds: 2,
        containers: [
          { name: 'a', image: BUSYBOX, command: ['sleep', '3600'] },
          { name: 'b', image: BUSYBOX, command: ['sleep', '3600'] },
        ],
      },
    };
    assert.equal((await cluster.request('POST', '/api/v1/namespaces/default/pods', manifest)).status, 201);
    const running = await cluster.waitForRunning('default', 'updated');
    const idsBefore = Object.fromEntries((running.status.containerStatuses ?? []).map((s) => [s.name, s.containerID]));

    const forbidden = await cluster.request<{ code: number; details: { causes: Array<{ field: string; reason: string }> } }>(
      'PATCH',
      '/api/v1/namespaces/default/pods/updated',
      { spec: { restartPolicy: 'Never' } },
      'application/merge-patch+json',
    );
    assert.equal(forbidden.status, 422);
    assert.deepEqual(
      forbidden.body.details.causes.map((c) => `${c.field}:${c.reason}`),
      ['spec:FieldValueForbidden'],
    );

    const patched = await cluster.request<Pod>(
      'PATCH',
      '/api/v1/namespaces/default/pods/updated',
      { spec: { containers: [{ name: 'b', image: RETAGGED }] } },
      'application/strategic-merge-patch+json',
    );
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    assert.equal(patched.body.metadata.generation, 2);
    assert.deepEqual(
      patched.body.spec.containers.map((c) => c.image),
      [BUSYBOX, RETAGGED],
    );

    const restarted = await cluster.withLogs(
      waitFor(
        'container b to run again with the new spec',
        async () => {
          const pod = await cluster.getPod('default', 'updated');
          const b = pod?.status.containerStatuses?.find((s) => s.name === 'b');
          return b?.state.running && b.restartCount === 1 ? pod : undefined;
        },
        60_000,
      ),
    );
    const a = restarted.status.containerStatuses?.find((s) => s.name === 'a');
    assert.equal(a?.containerID, idsBefore.a, 'container a was not touched');
    assert.equal(a?.restartCount, 0);
    const events = await cluster.request<{ items: KubeEvent[] }>(
      'GET',
      `/api/v1/namespaces/default/events?fieldSelector=involvedObject.name=updated,reason=Killing`,
    );
    assert.ok(events.body.items.some((e) => e.involvedObject.fieldPath === 'spec.containers{b}' && /definition changed/.test(e.message)));
  });

  it('sends SIGTERM, then SIGKILL once the grace period runs out; the pod ends in a terminal phase before it leaves the API', async () => {
    const manifest = {
      metadata: { name: 'stubborn' },
      spec: {
        terminationGracePeriodSeconds: 3,
        containers: [
          // Ignores SIGTERM: only the SIGKILL after the grace period ends it.
          { name: 'ignores-term', image: BUSYBOX, command: ['sh', '-c', "trap '' TERM; while true; do sleep 1; done"] },
          // Leaves at once on SIGTERM with exit code 0.
          { name: 'obeys-term', image: BUSYBOX, command: ['sh', '-c', "trap 'exit 0' TERM; while true; do sleep 1 & wait; done"] },
        ],
      },
    };
    assert.equal((await cluster.request('POST', '/api/v1/namespaces/default/pods', manifest)).status, 201);
    const pod = await cluster.waitForRunning('default', 'stubborn');
    const statuses: Array<{ phase: string; removed: boolean; exit?: Record<string, number | undefined> }> = [];
    const js = jetstream(nc);
    const consumer = await js.consumers.get(STREAMS.pods, {
      filter_subjects: SUBJECTS.podStatus(node, pod.metadata.uid ?? ''),
      deliver_policy: DeliverPolicy.New,
    });
    const messages = await consumer.consume();
    const collecting = (async () => {
      for await (const m of messages) {
        const { data } = m.json<{ data: { status: Pod['status']; removed: boolean } }>();
        const exit = Object.fromEntries((data.status.containerStatuses ?? []).map((s) => [s.name, s.state.terminated?.exitCode]));
        statuses.push({ phase: data.status.phase, removed: data.removed, exit });
        if (data.removed) break;
      }
    })();

    const started = Date.now();
    assert.equal((await cluster.request('DELETE', '/api/v1/namespaces/default/pods/stubborn')).status, 200);
    await cluster.waitForGone('default', 'stubborn');
    const took = Date.now() - started;
    await collecting;

    assert.ok(took >= 3000, `the pod left after ${took} ms, before its 3 s grace period ran out`);
    const terminal = statuses.find((s) => !s.removed && (s.phase === 'Failed' || s.phase === 'Succeeded'));
    assert.ok(terminal, `a terminal status before removal, got ${JSON.stringify(statuses)}`);
    assert.equal(terminal.phase, 'Failed', 'SIGKILLed containers make the pod Failed');
    assert.equal(terminal.exit?.['ignores-term'], 137);
    assert.equal(terminal.exit?.['obeys-term'], 0);
    assert.equal(statuses.at(-1)?.removed, true);
    const killing = await cluster.request<{ items: KubeEvent[] }>(
      'GET',
      `/api/v1/namespaces/default/events?fieldSelector=involvedObject.uid=${pod.metadata.uid ?? ''}`,
    );
    assert.deepEqual([...new Set(killing.body.items.map((e) => e.reason))].sort(), ['Created', 'Killing', 'Pulled', 'Started']);
  });

  it("honours a DELETE gracePeriodSeconds shorter than the pod's own", async () => {
    const manifest = {
      metadata: { name: 'hurried' },
      spec: {
        terminationGracePeriodSeconds: 60,
        containers: [{ name: 'main', image: BUSYBOX, command: ['sh', '-c', "trap '' TERM; while true; do sleep 1; done"] }],
      },
    };
    assert.equal((await cluster.request('POST', '/api/v1/namespaces/default/pods', manifest)).status, 201);
    await cluster.waitForRunning('default', 'hurried');
    const started = Date.now();
    const deleted = await cluster.request<Pod>('DELETE', '/api/v1/namespaces/default/pods/hurried?gracePeriodSeconds=2');
    assert.equal(deleted.body.metadata.deletionGracePeriodSeconds, 2);
    await cluster.waitForGone('default', 'hurried', 30_000);
    assert.ok(Date.now() - started < 30_000, 'the 60 s grace of the pod was not used');
  });
});
