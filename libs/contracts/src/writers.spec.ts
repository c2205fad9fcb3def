import 'reflect-metadata';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MESSAGES, type MessageType } from './message-map.js';
import { SUBJECTS } from './subjects.js';
import { CORE_ROUTES, subjectMatches, WRITE_ROUTES, WRITERS, writerOf } from './writers.js';

const UID = '6f1c2b1e-3b9a-4c1d-9f2e-0a1b2c3d4e5f';

/** Where each type is really published, built with the subject routes the writers use. */
const PUBLISHED_ON: Record<MessageType, string[]> = {
  PodCreated: [SUBJECTS.pod('default', 'web')],
  PodUpdated: [SUBJECTS.pod('default', 'web')],
  PodDeletionRequested: [SUBJECTS.pod('default', 'web')],
  PodScheduled: [SUBJECTS.pod('default', 'web')],
  PodUnschedulable: [SUBJECTS.pod('default', 'web')],
  PodEvicted: [SUBJECTS.pod('default', 'web')],
  PodDeletionFinalized: [SUBJECTS.pod('default', 'web')],
  PodAssigned: [SUBJECTS.assignment('node-1', UID)],
  PodUnassigned: [SUBJECTS.assignment('node-1', UID)],
  PodStatusReported: [SUBJECTS.podStatus('node-1', UID)],
  MirrorPodUpdated: [SUBJECTS.mirrorPod('node-1', UID)],
  ContainerEvent: [SUBJECTS.containerEvents('node-1', UID)],
  BackoffRecorded: [SUBJECTS.containerEvents('node-1', UID)],
  ProbeResultChanged: [SUBJECTS.containerEvents('node-1', UID)],
  ImagePullProgress: [SUBJECTS.containerEvents('node-1', UID)],
  PodEvent: [SUBJECTS.containerEvents('node-1', UID), SUBJECTS.nodeLifecycleEvents('node-1')],
  NodeEvent: [SUBJECTS.nodeEvents('node-1'), SUBJECTS.nodeLifecycleEvents('node-1')],
  NodeRegistered: [SUBJECTS.nodeRegistration('node-1')],
  NodeHeartbeat: [SUBJECTS.nodeHeartbeat('node-1')],
  NodeSpecChanged: [SUBJECTS.nodeSpec('node-1')],
  NamespaceCreated: [SUBJECTS.namespace('team-a')],
  NamespaceDeletionRequested: [SUBJECTS.namespace('team-a')],
  NamespaceRemoved: [SUBJECTS.namespace('team-a')],
  ConfigMapWritten: [SUBJECTS.configMap('default', 'cfg')],
  ConfigMapDeleted: [SUBJECTS.configMap('default', 'cfg')],
  SecretWritten: [SUBJECTS.secret('default', 's')],
  SecretDeleted: [SUBJECTS.secret('default', 's')],
  RequestAudited: [SUBJECTS.audit('pods', 'default', 'web'), SUBJECTS.audit('nodes', '', 'node-1')],
  LeaseRenewed: [SUBJECTS.lease('kube-scheduler')],
};

describe('WRITERS', () => {
  it('names a writer for every message type', () => {
    assert.deepEqual(Object.keys(WRITERS).sort(), Object.keys(MESSAGES).sort());
    for (const routes of Object.values(WRITE_ROUTES)) assert.ok(routes.length > 0);
  });

  it('covers every subject a type is published on, with the node in the agent subjects', () => {
    for (const [type, subjects] of Object.entries(PUBLISHED_ON) as [MessageType, string[]][]) {
      for (const subject of subjects) assert.ok(writerOf(type, subject, 'node-1'), `${type} on ${subject} has no writer`);
    }
    assert.equal(writerOf('PodEvent', SUBJECTS.nodeLifecycleEvents('node-1')), 'scheduler');
    assert.equal(writerOf('PodEvent', SUBJECTS.containerEvents('node-1', UID), 'node-1'), 'agent');
    assert.equal(writerOf('PodStatusReported', SUBJECTS.podStatus('node-2', UID), 'node-1'), undefined);
    assert.equal(writerOf('PodCreated', SUBJECTS.assignment('node-1', UID)), undefined);
  });

  it('matches subjects as NATS does', () => {
    assert.ok(subjectMatches('a.*.c', 'a.b.c'));
    assert.ok(!subjectMatches('a.*', 'a.b.c'));
    assert.ok(subjectMatches('a.>', 'a.b.c'));
    assert.ok(!subjectMatches('a.>', 'a'));
    assert.ok(subjectMatches('a.{node}.c', 'a.n1.c', 'n1'));
    assert.ok(!subjectMatches('a.{node}.c', 'a.n2.c', 'n1'));
  });
});

describe('CORE_ROUTES', () => {
  it('covers every core NATS subject the API publishes to an agent', () => {
    const streamId = '6f1c2b1e-3b9a-4c1d-9f2e-0a1b2c3d4e5f';
    const published = [
      SUBJECTS.logRequests('node-1'),
      SUBJECTS.logStreamControl('node-1', streamId),
      SUBJECTS.streamRequests('node-1'),
      SUBJECTS.streamInput('node-1', streamId),
      SUBJECTS.mirrorDeleted('node-1'),
      SUBJECTS.statsRequests('node-1'),
    ];
    for (const subject of published) {
      const routes = CORE_ROUTES.filter((r) => subjectMatches(r.subject, subject, 'node-1'));
      assert.equal(routes.length, 1, subject);
      assert.equal(routes[0]?.publisher, 'api');
      assert.equal(routes[0]?.subscriber, 'agent');
      assert.equal(subjectMatches(routes[0]?.subject ?? '', subject, 'node-2'), false, `${subject} is only node-1's`);
    }
  });

  it('lets an agent subscribe to the wildcard it uses for stream and log input', () => {
    for (const subject of [SUBJECTS.nodeStreamInput('node-1'), SUBJECTS.nodeLogStreamControl('node-1')]) {
      assert.ok(
        CORE_ROUTES.some((r) => r.subject.replace('{node}', 'node-1') === subject),
        subject,
      );
    }
  });
});
