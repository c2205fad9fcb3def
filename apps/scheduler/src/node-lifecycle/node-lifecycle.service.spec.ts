import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import { SUBJECTS } from '#contracts';
import { systemClock } from '#workqueue';
import { RecordingBus, SchedulerFacts } from '../../../../test/fixtures/scheduler-facts.js';
import { SchedulerCache } from '../cache/scheduler-cache.service.js';
import { SchedulerConfig } from '../scheduler.config.js';
import { NodeLifecycleService } from './node-lifecycle.service.js';

const T0 = Date.parse('2024-05-01T10:00:00.000Z');
const GRACE_MS = 40_000;
const TOLERATION_MS = 300_000;
const UID_WEB = '6f1c2b1e-3b9a-4c1d-9f2e-0a1b2c3d4e5f';
const UID_TOLERANT = '0b7e6a52-8d1f-4c3e-a5b9-1f2e3d4c5b6a';

describe('NodeLifecycleService', () => {
  let bus: RecordingBus;
  let cache: SchedulerCache;
  let facts: SchedulerFacts;
  let sut: NodeLifecycleService;

  beforeEach(() => {
    bus = new RecordingBus();
    cache = new SchedulerCache(systemClock);
    facts = new SchedulerFacts({ pod: (e, d) => cache.applyPod(e, d), node: (e, d) => cache.applyNode(e, d) });
    const config = Object.assign(new SchedulerConfig(), { NODE_GRACE_SECONDS: GRACE_MS / 1000, EVICTION_TOLERATION_SECONDS: TOLERATION_MS / 1000 });
    sut = new NodeLifecycleService(config, bus.bus, cache);
  });

  it('records one NodeNotReady once heartbeats stop past the grace, then evicts each pod when its toleration runs out', async () => {
    facts.nodeRegistered('node-1', T0);
    const lastHeartbeat = T0 + 10_000;
    facts.heartbeat('node-1', lastHeartbeat);
    facts.podCreated('web-0', UID_WEB, T0);
    facts.podScheduled('web-0', UID_WEB, 'node-1', T0);
    const webSeq = facts.lastSeq;
    facts.podCreated('tolerant-0', UID_TOLERANT, T0, {
      tolerations: [{ key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 60 }],
    });
    facts.podScheduled('tolerant-0', UID_TOLERANT, 'node-1', T0);
    const tolerantSeq = facts.lastSeq;
    const taintedSince = lastHeartbeat + GRACE_MS;

    await sut.monitorNodes(lastHeartbeat + 1_000);
    await sut.monitorNodes(taintedSince);
    assert.deepEqual(bus.published, [], 'Ready up to the end of the grace period');

    await sut.monitorNodes(taintedSince + 1);
    await sut.monitorNodes(taintedSince + 30_000);
    const notReady = bus.of('NodeEvent');
    assert.equal(notReady.length, 1, 'one event per transition, not one per pass');
    assert.equal(notReady[0].subject, SUBJECTS.nodeLifecycleEvents('node-1'));
    assert.equal(notReady[0].buffered, true);
    assert.deepEqual(
      { reason: notReady[0].data.reason, eventType: notReady[0].data.eventType, message: notReady[0].data.message },
      { reason: 'NodeNotReady', eventType: 'Warning', message: 'Node node-1 status is now: NodeNotReady' },
    );
    assert.deepEqual(bus.of('PodEvicted'), [], 'no pod stopped tolerating the taint yet');

    await sut.monitorNodes(taintedSince + 60_000);
    const tolerantEvicted = bus.of('PodEvicted');
    assert.deepEqual(
      tolerantEvicted.map((p) => [p.subject, p.data.uid, p.options.expectedLastSubjectSequence]),
      [[SUBJECTS.pod('default', 'tolerant-0'), UID_TOLERANT, tolerantSeq]],
      'its own 60 s toleration, compare-and-set on its subject',
    );

    facts.podEvicted('tolerant-0', UID_TOLERANT, taintedSince + 60_000);

    const evictedAt = taintedSince + TOLERATION_MS;
    await sut.monitorNodes(evictedAt - 1);
    assert.equal(bus.of('PodEvicted').length, 1, 'an evicted pod is deleted: not evicted again; web-0 still tolerates');
    await sut.monitorNodes(evictedAt);
    const web = bus.of('PodEvicted').find((p) => p.data.uid === UID_WEB);
    assert.ok(web, 'web-0 evicted after the default toleration');
    assert.equal(web.subject, SUBJECTS.pod('default', 'web-0'));
    assert.equal(web.options.expectedLastSubjectSequence, webSeq);
    assert.equal(web.options.correlationId, UID_WEB);
    assert.equal(web.data.deletionTimestamp, new Date(evictedAt).toISOString().replace(/\.\d+Z$/, 'Z'));
    assert.equal(web.data.gracePeriodSeconds, 30);
    const taintEvents = bus.of('PodEvent').filter((p) => p.data.uid === UID_WEB);
    assert.deepEqual(
      taintEvents.map((p) => [p.subject, p.data.reason, p.buffered]),
      [[SUBJECTS.nodeLifecycleEvents('node-1'), 'TaintManagerEviction', true]],
    );
  });

  it('writes nothing as a standby, and records once it leads what it saw meanwhile', async () => {
    facts.nodeRegistered('node-1', T0);
    facts.heartbeat('node-1', T0);
    facts.podCreated('web-0', UID_WEB, T0);
    facts.podScheduled('web-0', UID_WEB, 'node-1', T0);
    // node-2 goes silent and comes back while this scheduler stands by: nothing to record. node-3 stays Ready.
    facts.nodeRegistered('node-2', T0);
    facts.heartbeat('node-2', T0);
    facts.nodeRegistered('node-3', T0);
    facts.heartbeat('node-3', T0 + GRACE_MS);
    const standby = () => false;
    await sut.monitorNodes(T0 + 1_000, standby);
    // node-1 goes silent and its pod's toleration runs out while another scheduler leads.
    await sut.monitorNodes(T0 + GRACE_MS + 1, standby);
    facts.heartbeat('node-2', T0 + GRACE_MS + TOLERATION_MS);
    facts.heartbeat('node-3', T0 + GRACE_MS + TOLERATION_MS);
    await sut.monitorNodes(T0 + GRACE_MS + TOLERATION_MS + 1, standby);
    await sut.finalizeDeletions(T0 + GRACE_MS + TOLERATION_MS + 1, standby);
    assert.equal(bus.published.length, 0, 'a standby writes nothing');

    // Leading now: node-1's NodeNotReady is recorded once (the old leader may have too), and its overdue eviction goes out.
    await sut.monitorNodes(T0 + GRACE_MS + TOLERATION_MS + 2_000);
    facts.podEvicted('web-0', UID_WEB, T0 + GRACE_MS + TOLERATION_MS + 2_000);
    await sut.monitorNodes(T0 + GRACE_MS + TOLERATION_MS + 3_000);
    assert.deepEqual(
      bus.published.map((p) => [p.type, p.data.reason ?? '', p.subject]),
      [
        ['NodeEvent', 'NodeNotReady', SUBJECTS.nodeLifecycleEvents('node-1')],
        ['PodEvicted', '', SUBJECTS.pod('default', 'web-0')],
        ['PodEvent', 'TaintManagerEviction', SUBJECTS.nodeLifecycleEvents('node-1')],
      ],
    );
  });

  it('records NodeReady when the heartbeats come back', async () => {
    facts.nodeRegistered('node-1', T0);
    await sut.monitorNodes(T0 + 1_000);
    await sut.monitorNodes(T0 + GRACE_MS + 1);
    facts.heartbeat('node-1', T0 + GRACE_MS + 5_000);
    await sut.monitorNodes(T0 + GRACE_MS + 6_000);
    await sut.monitorNodes(T0 + GRACE_MS + 7_000);

    assert.deepEqual(
      bus.of('NodeEvent').map((p) => [p.data.reason, p.data.eventType]),
      [
        ['NodeNotReady', 'Warning'],
        ['NodeReady', 'Normal'],
      ],
    );
  });

  it('finalises the deletion of a pod whose node is gone once the grace has passed, and not one on a Ready node', async () => {
    facts.nodeRegistered('node-1', T0);
    facts.podCreated('web-0', UID_WEB, T0);
    facts.podScheduled('web-0', UID_WEB, 'node-vanished', T0);
    const deletedAt = T0 + 5_000;
    facts.podDeletionRequested('web-0', UID_WEB, deletedAt);
    const deletionSeq = facts.lastSeq;
    facts.podCreated('kept-0', UID_TOLERANT, T0);
    facts.podScheduled('kept-0', UID_TOLERANT, 'node-1', T0);
    facts.podDeletionRequested('kept-0', UID_TOLERANT, deletedAt);
    facts.heartbeat('node-1', deletedAt + GRACE_MS - 1_000);

    await sut.finalizeDeletions(deletedAt + GRACE_MS - 1);
    assert.deepEqual(bus.published, [], 'within the grace period');

    await sut.finalizeDeletions(deletedAt + GRACE_MS);
    assert.deepEqual(
      bus.of('PodDeletionFinalized').map((p) => [p.subject, p.data.uid, p.data.message, p.options.expectedLastSubjectSequence]),
      [[SUBJECTS.pod('default', 'web-0'), UID_WEB, 'node node-vanished does not exist', deletionSeq]],
    );
    assert.deepEqual([...cache.purgeable], [[UID_WEB, 'node-vanished']], 'its assignment subject can go');
  });
  it('evicts nothing while no node of the cluster is Ready, and counts a toleration from the moment one is again', async () => {
    facts.nodeRegistered('node-1', T0);
    facts.nodeRegistered('node-2', T0);
    facts.podCreated('web-0', UID_WEB, T0);
    facts.podScheduled('web-0', UID_WEB, 'node-1', T0);
    facts.podCreated('kept-0', UID_TOLERANT, T0);
    facts.podScheduled('kept-0', UID_TOLERANT, 'node-1', T0);
    facts.podDeletionRequested('kept-0', UID_TOLERANT, T0);
    // Neither node is heard from: the bus, not both nodes, is the likelier cause.
    const silentFrom = T0 + GRACE_MS + 1;
    await sut.monitorNodes(silentFrom);
    await sut.monitorNodes(silentFrom + TOLERATION_MS + 1);
    await sut.finalizeDeletions(silentFrom + TOLERATION_MS + 1);
    assert.deepEqual(bus.of('PodEvicted'), [], 'no eviction while every node is NotReady');
    assert.deepEqual(bus.of('PodDeletionFinalized'), [], 'nor a deletion finalised behind a silent node');
    assert.deepEqual(
      bus.of('NodeEvent').map((p) => [p.data.nodeName, p.data.reason]),
      [],
      'both were NotReady from the first look, so no transition is recorded',
    );

    // node-2 comes back; node-1 stays silent, and is evicted from a toleration counted from then.
    const resumedAt = silentFrom + TOLERATION_MS + 10_000;
    facts.heartbeat('node-2', resumedAt - 1_000);
    await sut.monitorNodes(resumedAt);
    facts.heartbeat('node-2', resumedAt + TOLERATION_MS - 2_000);
    await sut.monitorNodes(resumedAt + TOLERATION_MS - 1);
    await sut.finalizeDeletions(resumedAt + GRACE_MS - 1);
    assert.deepEqual(bus.of('PodEvicted'), [], 'the toleration counts from the end of the disruption');
    assert.deepEqual(bus.of('PodDeletionFinalized'), [], 'the silent node has a whole grace again');
    await sut.monitorNodes(resumedAt + TOLERATION_MS);
    await sut.finalizeDeletions(resumedAt + GRACE_MS);
    assert.deepEqual(
      bus.of('PodEvicted').map((p) => p.data.uid),
      [UID_WEB],
    );
    assert.deepEqual(
      bus.of('PodDeletionFinalized').map((p) => p.data.uid),
      [UID_TOLERANT],
    );
  });

  it('evicts from the one node of a one-node cluster', async () => {
    facts.nodeRegistered('node-1', T0);
    facts.podCreated('web-0', UID_WEB, T0);
    facts.podScheduled('web-0', UID_WEB, 'node-1', T0);
    await sut.monitorNodes(T0 + GRACE_MS + TOLERATION_MS + 1);
    assert.deepEqual(
      bus.of('PodEvicted').map((p) => p.data.uid),
      [UID_WEB],
    );
  });
});
