import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { JetStreamApiError, jetstreamManager } from '@nats-io/jetstream';
import { connect, createInbox, errors, type NatsConnection } from '@nats-io/transport-node';
import { Bus } from '#bus';
import { busMetrics } from '#observability';
import { identityName, inboxPrefix, STREAMS, SUBJECTS, type Identity } from '#contracts';
import { Cluster, uniqueName } from '../harness/cluster.js';
import { HOLLOW_READY, spawnHollow } from '../harness/hollow.js';
import { waitFor, type ManagedProcess } from '../harness/processes.js';

/**
 * The bus secured with per-component nkey identities and the permissions `jetctl nats-config`
 * generates from the writer tables, on a real nats-server: the pod flow works end to end, and
 * what issue 14's attacker did from 127.0.0.1 is refused by the server.
 */
describe('NATS identities and permissions', () => {
  let cluster: Cluster;
  const node1 = uniqueName('nats-n1');
  const node2 = uniqueName('nats-n2');
  const n1: Identity = { kind: 'node', node: node1 };
  const open: NatsConnection[] = [];
  let hollow: ManagedProcess | undefined;

  /** A raw connection as `id`, holding its seed (what an attacker with that seed can do). */
  async function as(id: Identity): Promise<NatsConnection> {
    const nc = await connect({ servers: cluster.nats.url, name: `attacker-${identityName(id)}`, ...cluster.natsOptions(id) });
    open.push(nc);
    return nc;
  }

  /** Runs `act` and resolves with the server's permission violation for `subject` on `nc`. */
  async function refused(nc: NatsConnection, operation: 'publish' | 'subscription', subject: string, act: () => unknown): Promise<void> {
    const seen = (async () => {
      for await (const status of nc.status()) {
        if (status.type === 'error' && status.error instanceof errors.PermissionViolationError && status.error.subject === subject) {
          assert.equal(status.error.operation, operation);
          return true;
        }
      }
      return false;
    })();
    act();
    // An upper bound on waiting for the server's refusal, not a pause: a refused act resolves at once.
    const outcome = await Promise.race([seen, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 30_000).unref())]);
    assert.equal(outcome, true, `${operation} to ${subject} was not refused`);
  }

  /** The newest message on `subject`, read as admin: undefined when nothing was stored. */
  async function stored(stream: string, subject: string): Promise<unknown> {
    const jsm = await jetstreamManager(await as({ kind: 'admin' }));
    return (await jsm.streams.getMessage(stream, { last_by_subj: subject }).catch(() => undefined)) ?? undefined;
  }

  before(async () => {
    cluster = await Cluster.start({}, { secureNats: true });
    await cluster.startAgent(node1);
    await cluster.startAgent(node2);
  });

  after(async () => {
    await Promise.all(open.map((nc) => nc.close().catch(() => undefined)));
    await hollow?.stop('SIGKILL');
    await cluster?.stop();
  });

  it('runs a pod end to end with every component on its own identity, and serves its logs', async () => {
    const name = uniqueName('secured');
    const created = await cluster.request('POST', '/api/v1/namespaces/default/pods', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [{ name: 'main', image: 'jetlet/busybox:1.35', command: ['sh', '-c', 'echo hello-secured-bus; sleep 3600'] }],
      },
    });
    assert.equal(created.status, 201);
    const pod = await cluster.waitForRunning('default', name);
    assert.ok(pod.spec.nodeName === node1 || pod.spec.nodeName === node2, pod.spec.nodeName);
    const logs = await cluster.withLogs(
      waitFor('the pod log through the API and the node', async () => {
        const response = await fetch(`${cluster.apiUrl}/api/v1/namespaces/default/pods/${name}/log`, { headers: cluster.authHeaders() });
        const text = await response.text();
        return response.status === 200 && text.includes('hello-secured-bus') ? text : undefined;
      }),
    );
    assert.match(logs, /hello-secured-bus/);
    // The read-only jetctl identity reads the streams.
    const events = await cluster.jetctl('events', '--nats', cluster.nats.url, '-o', 'json');
    assert.equal(events.code, 0, events.stderr);
    // Nothing the components did was refused, and each said who it is.
    for (const line of [...cluster.nats.output]) assert.doesNotMatch(line, /Violation/, line);
    assert.ok(!cluster.api.output.some((l) => /WITHOUT NATS credentials/.test(l)));
    assert.equal(await cluster.request('DELETE', `/api/v1/namespaces/default/pods/${name}`).then((r) => r.status), 200);
    await cluster.waitForGone('default', name);
  });

  it("refuses a node's forged assignment, and another node's status, heartbeat and registration", async () => {
    const nc = await as(n1);
    const uid = randomUUID();
    for (const subject of [
      SUBJECTS.assignment(node1, uid),
      SUBJECTS.assignment(node2, uid),
      SUBJECTS.podStatus(node2, uid),
      SUBJECTS.nodeHeartbeat(node2),
      SUBJECTS.nodeRegistration(node2),
      SUBJECTS.nodeLifecycleEvents(node1),
      SUBJECTS.pod('default', 'forged'),
    ]) {
      await refused(nc, 'publish', subject, () => nc.publish(subject, JSON.stringify({ type: 'PodAssigned', data: { nodeName: node2 } })));
    }
    // The server logs each refusal too, naming the user's nkey.
    assert.ok(
      cluster.nats.output.some((l) => l.includes('Violation') && l.includes(SUBJECTS.assignment(node2, uid))),
      cluster.nats.output.slice(-5).join('\n'),
    );
    assert.equal(await stored(STREAMS.assign, SUBJECTS.assignment(node1, uid)), undefined);
    assert.equal(await stored(STREAMS.pods, SUBJECTS.podStatus(node2, uid)), undefined);
    // Its own subjects go through (its agent has been heartbeating all along).
    assert.ok(await stored(STREAMS.nodes, SUBJECTS.nodeHeartbeat(node1)));
  });

  it("keeps a node off another node's requests and consumer", async () => {
    const nc = await as(n1);
    await refused(nc, 'subscription', SUBJECTS.logRequests(node2), () => nc.subscribe(SUBJECTS.logRequests(node2)));
    await refused(nc, 'subscription', SUBJECTS.streamRequests(node2), () => nc.subscribe(SUBJECTS.streamRequests(node2)));
    const next = `$JS.API.CONSUMER.MSG.NEXT.${STREAMS.assign}.agent-${node2}`;
    await refused(nc, 'publish', next, () => nc.publish(next, '{"batch":1}', { reply: createInbox(inboxPrefix(n1)) }));
  });

  it("lets nobody read another identity's inbox", async () => {
    const ids: Identity[] = [{ kind: 'api' }, { kind: 'scheduler' }, { kind: 'alerter' }, { kind: 'jetctl' }, { kind: 'admin' }, n1];
    for (const id of ids) {
      const nc = await as(id);
      for (const other of [
        '_INBOX.>',
        `${inboxPrefix(id.kind === 'api' ? { kind: 'scheduler' } : { kind: 'api' })}.>`,
        `${inboxPrefix({ kind: 'node', node: node2 })}.>`,
      ]) {
        await refused(nc, 'subscription', other, () => nc.subscribe(other));
      }
    }
  });

  it('keeps jetctl read-only, stream deletion and purge to admin, and message deletion to the scheduler', async () => {
    const jetctl = await as({ kind: 'jetctl' });
    await refused(jetctl, 'publish', SUBJECTS.pod('default', 'forged'), () => jetctl.publish(SUBJECTS.pod('default', 'forged'), '{}'));
    for (const id of [{ kind: 'api' }, { kind: 'scheduler' }, { kind: 'alerter' }, { kind: 'jetctl' }, n1] as Identity[]) {
      const nc = id.kind === 'jetctl' ? jetctl : await as(id);
      for (const op of ['DELETE', 'PURGE', 'MSG.DELETE']) {
        if (op === 'MSG.DELETE' && id.kind === 'scheduler') continue;
        const subject = `$JS.API.STREAM.${op}.${STREAMS.pods}`;
        await refused(nc, 'publish', subject, () => nc.publish(subject, '', { reply: createInbox(inboxPrefix(id)) }));
      }
    }
    // The scheduler's clean-up reaches the server: a sequence never written is refused by
    // JetStream itself, not by the permissions.
    const scheduler = await jetstreamManager(await as({ kind: 'scheduler' }));
    await assert.rejects(scheduler.streams.deleteMessage(STREAMS.pods, 1e12, false), JetStreamApiError);
    const create = `$JS.API.STREAM.CREATE.JETLET_FORGED`;
    await refused(jetctl, 'publish', create, () => jetctl.publish(create, '{"name":"JETLET_FORGED","subjects":["jetlet.>"]}'));
    // The streams are all still there, and admin may manage them.
    const admin = await jetstreamManager(await as({ kind: 'admin' }));
    for (const stream of Object.values(STREAMS)) assert.equal((await admin.streams.info(stream)).config.name, stream);
  });

  it('logs a refusal at ERROR with the identity and subject, counts it, and keeps the connection', async () => {
    const before = (await busMetrics.permissionViolations.get()).values.find((v) => v.labels.operation === 'publish')?.value ?? 0;
    const bus = await Bus.connect({
      servers: cluster.nats.url,
      name: 'forger',
      source: { component: 'agent', node: node1 },
      credentials: { identity: n1, seedFile: cluster.seedFile(n1) },
    });
    try {
      bus.nc.publish(SUBJECTS.assignment(node1, randomUUID()), '{}');
      await waitFor('the refusal to be counted', async () => {
        const now = (await busMetrics.permissionViolations.get()).values.find((v) => v.labels.operation === 'publish')?.value ?? 0;
        return now > before;
      });
      assert.ok(bus.connected);
      assert.ok(!bus.nc.isClosed());
      assert.equal(bus.identity, `node:${node1}`);
    } finally {
      await bus.close();
    }
  });

  it('runs hollow nodes on their process identity, which may act for those nodes and no other', async () => {
    const prefix = uniqueName('nats-h');
    const COUNT = 3;
    // The server's log from here on: the attacks of the tests before were refused and logged.
    const mark = cluster.nats.output.length;
    const names = Array.from({ length: COUNT }, (_, i) => `${prefix}-${i}`);
    hollow = spawnHollow(cluster.nats.url, prefix, COUNT, { ...(await cluster.hollowEnv(prefix, COUNT)), HEARTBEAT_SECONDS: '1', RESYNC_SECONDS: '2' });
    const withLogs = <T>(work: Promise<T>): Promise<T> =>
      work.catch((error: Error) => {
        throw new Error(`${error.message}\n--- ${hollow?.name}\n${hollow?.tail(60)}\n${cluster.logs()}`, { cause: error });
      });
    await withLogs(hollow.waitForLine(HOLLOW_READY, 60_000));
    assert.ok(!hollow.output.some((l) => /WITHOUT NATS credentials/.test(l)), hollow.tail());
    type NodeBody = { metadata: { name: string }; status: { conditions?: Array<{ type: string; status: string }> } };
    await withLogs(
      waitFor(`${COUNT} hollow nodes Ready`, async () => {
        const { body } = await cluster.request<{ items: NodeBody[] }>('GET', '/api/v1/nodes');
        const ours = body.items.filter((n) => names.includes(n.metadata.name));
        return ours.length === COUNT && ours.every((n) => n.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
      }),
    );
    // Each node runs a pod (assignment read, status written) and gives it up again.
    for (const node of names)
      assert.equal(
        (
          await cluster.request('POST', '/api/v1/namespaces/default/pods', {
            apiVersion: 'v1',
            kind: 'Pod',
            metadata: { name: node },
            spec: {
              nodeName: node,
              terminationGracePeriodSeconds: 1,
              containers: [{ name: 'main', image: 'jetlet/busybox:1.35', command: ['sleep', '3600'] }],
            },
          })
        ).status,
        201,
      );
    for (const node of names) await withLogs(cluster.waitForRunning('default', node));
    for (const node of names) assert.equal((await cluster.request('DELETE', `/api/v1/namespaces/default/pods/${node}`)).status, 200);
    for (const node of names) await withLogs(cluster.waitForGone('default', node));
    for (const line of cluster.nats.output.slice(mark)) assert.doesNotMatch(line, /Violation/, line);

    // Its seed acts for its own nodes, and is refused for a neighbour with the same prefix, a real node, and assignments.
    const id: Identity = { kind: 'hollow', prefix, first: 0, count: COUNT };
    const nc = await as(id);
    const uid = randomUUID();
    for (const subject of [
      SUBJECTS.nodeHeartbeat(`${prefix}-${COUNT}`),
      SUBJECTS.nodeRegistration(`${prefix}-${COUNT}`),
      SUBJECTS.podStatus(node1, uid),
      SUBJECTS.nodeHeartbeat(node1),
      SUBJECTS.assignment(names[0] ?? '', uid),
      SUBJECTS.nodeLifecycleEvents(names[0] ?? ''),
    ])
      await refused(nc, 'publish', subject, () => nc.publish(subject, '{}'));
    await refused(nc, 'subscription', SUBJECTS.logRequests(node1), () => nc.subscribe(SUBJECTS.logRequests(node1)));
    await refused(nc, 'subscription', `${inboxPrefix(n1)}.>`, () => nc.subscribe(`${inboxPrefix(n1)}.>`));
    assert.equal(await stored(STREAMS.nodes, SUBJECTS.nodeHeartbeat(`${prefix}-${COUNT}`)), undefined);
    assert.ok(await stored(STREAMS.nodes, SUBJECTS.nodeHeartbeat(names[COUNT - 1] ?? '')));
  });
});
