import 'reflect-metadata';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { authorizationConfig, identityName, inboxPrefix, parseIdentity, permissionsFor, permits, type Identity } from './nats-permissions.js';
import { STREAMS, SUBJECTS } from './subjects.js';
import { CORE_ROUTES, WRITE_ROUTES } from './writers.js';

const UID = '6f1c2b1e-3b9a-4c1d-9f2e-0a1b2c3d4e5f';
const node1: Identity = { kind: 'node', node: 'node-1' };
const pub = (id: Identity, subject: string): boolean => permits(permissionsFor(id), 'publish', subject);
const sub = (id: Identity, subject: string): boolean => permits(permissionsFor(id), 'subscribe', subject);
const ALL: Identity[] = [{ kind: 'api' }, { kind: 'scheduler' }, { kind: 'alerter' }, { kind: 'jetctl' }, { kind: 'admin' }, node1];

describe('NATS permissions generated from the writer tables', () => {
  it('lets a node publish its own registration, heartbeat, statuses, events and mirror pods', () => {
    for (const subject of [
      SUBJECTS.nodeRegistration('node-1'),
      SUBJECTS.nodeHeartbeat('node-1'),
      SUBJECTS.podStatus('node-1', UID),
      SUBJECTS.containerEvents('node-1', UID),
      SUBJECTS.nodeEvents('node-1'),
      SUBJECTS.mirrorPod('node-1', UID),
    ])
      assert.ok(pub(node1, subject), subject);
  });

  it("refuses a node another node's subjects, assignments, pod aggregates and the scheduler's lifecycle events", () => {
    for (const subject of [
      SUBJECTS.nodeRegistration('node-2'),
      SUBJECTS.nodeHeartbeat('node-2'),
      SUBJECTS.podStatus('node-2', UID),
      SUBJECTS.containerEvents('node-2', UID),
      SUBJECTS.mirrorPod('node-2', UID),
      SUBJECTS.assignment('node-1', UID),
      SUBJECTS.assignment('node-2', UID),
      SUBJECTS.pod('default', 'web'),
      SUBJECTS.nodeSpec('node-1'),
      SUBJECTS.nodeLifecycleEvents('node-1'),
      SUBJECTS.logRequests('node-2'),
      SUBJECTS.secret('default', 's'),
    ])
      assert.ok(!pub(node1, subject), subject);
  });

  it('lets a node read only its own assignments and requests', () => {
    assert.ok(sub(node1, SUBJECTS.logRequests('node-1')));
    assert.ok(sub(node1, SUBJECTS.streamRequests('node-1')));
    assert.ok(sub(node1, SUBJECTS.statsRequests('node-1')));
    assert.ok(sub(node1, SUBJECTS.mirrorDeleted('node-1')));
    assert.ok(sub(node1, SUBJECTS.nodeStreamInput('node-1')));
    assert.ok(!sub(node1, SUBJECTS.logRequests('node-2')));
    assert.ok(!sub(node1, SUBJECTS.streamRequests('node-2')));
    assert.ok(!sub(node1, '_INBOX.>'));
    assert.ok(!sub(node1, '_INBOX_api.>'));
    assert.ok(pub(node1, '$JS.API.CONSUMER.CREATE.JETLET_ASSIGN.agent-node-1.jetlet.assign.node-1.>'));
    assert.ok(pub(node1, '$JS.API.CONSUMER.MSG.NEXT.JETLET_ASSIGN.agent-node-1'));
    assert.ok(pub(node1, '$JS.ACK.JETLET_ASSIGN.agent-node-1.1.5.5.1700000000.0'));
    assert.ok(!pub(node1, '$JS.API.CONSUMER.CREATE.JETLET_ASSIGN.agent-node-2.jetlet.assign.node-2.>'));
    assert.ok(!pub(node1, '$JS.API.CONSUMER.CREATE.JETLET_ASSIGN.agent-node-1.jetlet.assign.node-2.>'));
    assert.ok(!pub(node1, '$JS.API.CONSUMER.MSG.NEXT.JETLET_ASSIGN.agent-node-2'));
    assert.ok(!pub(node1, '$JS.ACK.JETLET_ASSIGN.agent-node-2.1.5.5.1700000000.0'));
    // Its consumer's start reads each of its own assignments by name, and no other node's.
    assert.ok(pub(node1, `$JS.API.DIRECT.GET.JETLET_ASSIGN.${SUBJECTS.assignment('node-1', UID)}`));
    assert.ok(!pub(node1, `$JS.API.DIRECT.GET.JETLET_ASSIGN.${SUBJECTS.assignment('node-2', UID)}`));
    assert.ok(!pub(node1, '$JS.API.DIRECT.GET.JETLET_ASSIGN'));
    assert.ok(!pub(node1, '$JS.API.STREAM.MSG.GET.JETLET_ASSIGN'));
  });

  it('answers requests only on the requester identity inbox', () => {
    assert.ok(pub(node1, '_INBOX_api.abc.1'));
    assert.ok(!pub(node1, '_INBOX_scheduler.abc'));
    assert.ok(!pub(node1, '_INBOX.abc'));
  });

  it('lets only the scheduler write assignments and bindings, and only the API pod specs', () => {
    for (const id of ALL) {
      assert.equal(pub(id, SUBJECTS.assignment('node-1', UID)), id.kind === 'scheduler', identityName(id));
      assert.equal(pub(id, SUBJECTS.nodeLifecycleEvents('node-1')), id.kind === 'scheduler', identityName(id));
      // The aggregate subject is shared: bindings (PodScheduled) by the scheduler, specs by the API.
      assert.equal(pub(id, SUBJECTS.pod('default', 'web')), id.kind === 'scheduler' || id.kind === 'api', identityName(id));
      assert.equal(pub(id, SUBJECTS.namespace('team-a')), id.kind === 'api', identityName(id));
      assert.equal(pub(id, SUBJECTS.secret('default', 's')), id.kind === 'api', identityName(id));
      assert.equal(pub(id, SUBJECTS.nodeHeartbeat('node-1')), id.kind === 'node', identityName(id));
    }
  });

  it('gives stream deletion to admin only, creation to the API and admin, message deletion to the scheduler and admin, purge to admin', () => {
    for (const id of ALL) {
      for (const stream of Object.values(STREAMS)) {
        assert.equal(pub(id, `$JS.API.STREAM.DELETE.${stream}`), id.kind === 'admin', identityName(id));
        assert.equal(pub(id, `$JS.API.STREAM.CREATE.${stream}`), id.kind === 'admin' || id.kind === 'api', identityName(id));
        assert.equal(pub(id, `$JS.API.STREAM.UPDATE.${stream}`), id.kind === 'admin' || id.kind === 'api', identityName(id));
      }
      assert.equal(pub(id, `$JS.API.STREAM.MSG.DELETE.${STREAMS.pods}`), id.kind === 'admin' || id.kind === 'scheduler', identityName(id));
      assert.equal(pub(id, `$JS.API.STREAM.MSG.DELETE.${STREAMS.assign}`), id.kind === 'admin' || id.kind === 'scheduler', identityName(id));
      assert.equal(pub(id, `$JS.API.STREAM.MSG.DELETE.${STREAMS.events}`), id.kind === 'admin', identityName(id));
      assert.equal(pub(id, `$JS.API.STREAM.PURGE.${STREAMS.pods}`), id.kind === 'admin', identityName(id));
    }
  });

  it('keeps alerter and jetctl read-only', () => {
    for (const id of [{ kind: 'alerter' }, { kind: 'jetctl' }] as Identity[]) {
      const p = permissionsFor(id);
      assert.deepEqual(
        p.publish.allow.filter((s) => !s.startsWith('$JS.')),
        [],
        identityName(id),
      );
    }
    assert.ok(pub({ kind: 'jetctl' }, '$JS.API.CONSUMER.CREATE.JETLET_PODS.oc_x_1'));
    assert.ok(pub({ kind: 'alerter' }, '$JS.API.CONSUMER.CREATE.JETLET_PODS.alerter-pods.jetlet.pods.>'));
    assert.ok(!pub({ kind: 'alerter' }, '$JS.API.CONSUMER.DELETE.JETLET_ASSIGN.agent-node-1'));
  });

  it('covers every writer route and core route with some identity', () => {
    const n = 'node-1';
    for (const route of Object.values(WRITE_ROUTES).flat()) {
      const subject = route.subject.replace('{node}', n).replace(/\*/g, 'x');
      const id: Identity = route.writer === 'agent' ? node1 : { kind: route.writer };
      assert.ok(pub(id, subject), `${route.writer} ${subject}`);
    }
    for (const route of CORE_ROUTES) {
      const subject = route.subject.replace('{node}', n).replace(/\*/g, 'x');
      assert.ok(pub({ kind: 'api' }, subject), subject);
      assert.ok(sub(node1, subject), subject);
    }
  });

  it('gives a hollow process exactly what its nodes may do, and nothing of any other node', () => {
    const hollow: Identity = { kind: 'hollow', prefix: 'h', first: 2, count: 3 };
    for (const node of ['h-2', 'h-3', 'h-4']) {
      const one: Identity = { kind: 'node', node };
      for (const subject of [SUBJECTS.nodeRegistration(node), SUBJECTS.nodeHeartbeat(node), SUBJECTS.podStatus(node, UID), SUBJECTS.containerEvents(node, UID)])
        assert.ok(pub(hollow, subject) && pub(one, subject), subject);
      assert.ok(pub(hollow, `$JS.API.CONSUMER.MSG.NEXT.${STREAMS.assign}.agent-${node}`));
      assert.ok(sub(hollow, SUBJECTS.logRequests(node)));
      assert.ok(!pub(hollow, SUBJECTS.nodeLifecycleEvents(node)));
      assert.ok(!pub(hollow, SUBJECTS.assignment(node, UID)));
    }
    // Its neighbours, even those whose names share the prefix, stay out of reach.
    for (const node of ['h-1', 'h-5', 'h-20', 'h']) {
      assert.ok(!pub(hollow, SUBJECTS.nodeHeartbeat(node)), node);
      assert.ok(!pub(hollow, SUBJECTS.podStatus(node, UID)), node);
      assert.ok(!pub(hollow, `$JS.API.CONSUMER.MSG.NEXT.${STREAMS.assign}.agent-${node}`), node);
      assert.ok(!sub(hollow, SUBJECTS.logRequests(node)), node);
    }
    assert.ok(!pub(hollow, SUBJECTS.pod('default', 'web')));
    assert.ok(!pub(hollow, `$JS.API.STREAM.PURGE.${STREAMS.pods}`));
    assert.ok(!pub(hollow, `$JS.API.STREAM.MSG.DELETE.${STREAMS.pods}`));
    // One inbox for the process; its nodes' own inboxes are not part of it.
    assert.ok(sub(hollow, `${inboxPrefix(hollow)}.x`));
    assert.ok(!sub(hollow, `${inboxPrefix({ kind: 'node', node: 'h-2' })}.x`));
    assert.ok(!sub(hollow, '_INBOX.x'));
  });

  it('names identities and inboxes injectively', () => {
    assert.equal(identityName({ kind: 'hollow', prefix: 'a-1', first: 0, count: 10 }), 'hollow:a-1-0..9');
    assert.deepEqual(parseIdentity('hollow:a-1-0..9'), { kind: 'hollow', prefix: 'a-1', first: 0, count: 10 });
    assert.equal(parseIdentity('hollow:a-9..0'), undefined);
    assert.notEqual(inboxPrefix({ kind: 'hollow', prefix: 'a', first: 0, count: 10 }), inboxPrefix({ kind: 'hollow', prefix: 'a', first: 0, count: 11 }));
    assert.equal(inboxPrefix(node1), '_INBOX_node_node-1');
    assert.equal(inboxPrefix({ kind: 'node', node: 'a.b' }), '_INBOX_node_a_b');
    assert.deepEqual(parseIdentity('node:a.b'), { kind: 'node', node: 'a.b' });
    assert.deepEqual(parseIdentity('jetctl'), { kind: 'jetctl' });
    assert.equal(parseIdentity('root'), undefined);
    assert.equal(parseIdentity('node:'), undefined);
  });

  it('renders an authorization block with one nkey user per identity', () => {
    const text = authorizationConfig([
      { identity: { kind: 'api' }, nkey: 'UAPI' },
      { identity: node1, nkey: 'UNODE' },
    ]);
    assert.match(text, /authorization \{/);
    assert.match(text, /nkey: "UNODE"/);
    assert.match(text, /deny: \["jetlet\.events\.node-1\.lifecycle"\]/);
    assert.equal((text.match(/nkey:/g) ?? []).length, 2);
  });
});
