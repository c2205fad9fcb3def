import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import { STREAMS, SUBJECTS } from '#contracts';
import { systemClock } from '#workqueue';
import { RecordingBus, SchedulerFacts } from '../../../../test/fixtures/scheduler-facts.js';
import { SchedulerCache } from '../cache/scheduler-cache.service.js';
import { AssignmentsService } from './assignments.service.js';

const T0 = Date.parse('2024-05-01T10:00:00.000Z');
const UID = '6f1c2b1e-3b9a-4c1d-9f2e-0a1b2c3d4e5f';

describe('AssignmentsService', () => {
  let bus: RecordingBus;
  let cache: SchedulerCache;
  let facts: SchedulerFacts;
  let sut: AssignmentsService;

  const pod = () => {
    const record = cache.pods.list().find((p) => p.uid === UID);
    assert.ok(record);
    return record;
  };

  beforeEach(() => {
    bus = new RecordingBus();
    cache = new SchedulerCache(systemClock);
    sut = new AssignmentsService(bus.bus, cache);
    facts = new SchedulerFacts({
      pod: (e, d) => cache.applyPod(e, d),
      node: (e, d) => cache.applyNode(e, d),
      assignment: (e, d) => sut.apply(e, d),
    });
  });

  it('owes nothing for a pod not bound yet, and its node the pod once it is bound', async () => {
    facts.podCreated('web-0', UID, T0);
    assert.equal(sut.due(pod()), undefined);

    const binding = facts.podScheduled('web-0', UID, 'node-1', T0);
    assert.equal(sut.due(pod()), 'assign');
    await sut.assign(pod(), 'node-1');

    const [assigned] = bus.published;
    assert.equal(bus.published.length, 1);
    assert.equal(assigned.type, 'PodAssigned');
    assert.equal(assigned.subject, SUBJECTS.assignment('node-1', UID));
    assert.deepEqual(assigned.options, { correlationId: UID, id: `assign-${UID}-1`, causationId: binding.id, prevalidated: true });
    const sent = assigned.data.pod as { spec: { nodeName?: string }; metadata: { uid?: string } };
    assert.equal(sent.spec.nodeName, 'node-1');
    assert.equal(sent.metadata.uid, UID);
    assert.equal(sut.due(pod()), undefined, 'assumed sent at once, before the stream gives it back');
  });

  it('sends nothing again for a generation already assigned, read back from the stream after a restart, and sends a new generation', async () => {
    facts.podCreated('web-0', UID, T0);
    facts.podScheduled('web-0', UID, 'node-1', T0);
    facts.podAssigned('web-0', UID, 'node-1', T0);
    assert.equal(sut.due(pod()), undefined);

    facts.podUpdated('web-0', UID, T0 + 1_000, { nodeName: 'node-1' });
    assert.equal(sut.due(pod()), 'assign');
    await sut.assign(pod(), 'node-1');
    assert.deepEqual(
      bus.published.map((p) => [p.type, p.options.id]),
      [['PodAssigned', `assign-${UID}-2`]],
    );
    assert.equal(sut.due(pod()), undefined);
  });

  it('takes a deleted pod back from its node once, with its grace period', async () => {
    facts.podCreated('web-0', UID, T0);
    facts.podScheduled('web-0', UID, 'node-1', T0);
    facts.podAssigned('web-0', UID, 'node-1', T0);
    const deletion = facts.podDeletionRequested('web-0', UID, T0 + 5_000, 12);

    assert.equal(sut.due(pod()), 'unassign');
    await sut.unassign(pod(), 'node-1');

    assert.deepEqual(
      bus.published.map((p) => [p.type, p.subject, p.data, p.options]),
      [
        [
          'PodUnassigned',
          SUBJECTS.assignment('node-1', UID),
          { uid: UID, namespace: 'default', name: 'web-0', gracePeriodSeconds: 12 },
          { correlationId: UID, id: `unassign-${UID}`, causationId: deletion.id, prevalidated: true },
        ],
      ],
    );
    assert.equal(sut.due(pod()), undefined, 'the tombstone is assumed sent');
  });

  it('purges the tombstone once the node let the pod go, and forgets it', async () => {
    facts.podCreated('web-0', UID, T0);
    facts.podScheduled('web-0', UID, 'node-1', T0);
    facts.podDeletionRequested('web-0', UID, T0 + 5_000);
    await sut.unassign(pod(), 'node-1');
    await sut.purgeTombstones();
    assert.deepEqual(bus.purged, [], 'the node has not let it go yet');

    facts.podRemoved('web-0', UID, 'node-1', T0 + 10_000);
    await sut.purgeTombstones();

    assert.deepEqual(bus.purged, [{ stream: STREAMS.assign, subject: SUBJECTS.assignment('node-1', UID) }]);
    assert.equal(sut.sent.get(UID), undefined);
    assert.equal(cache.purgeable.size, 0);
  });
});
