import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import { systemClock } from '#workqueue';
import { SchedulerFacts } from '../../../../test/fixtures/scheduler-facts.js';
import { SchedulerCache } from './scheduler-cache.service.js';

const T0 = Date.parse('2024-05-01T10:00:00.000Z');
const UID = '6f1c2b1e-3b9a-4c1d-9f2e-0a1b2c3d4e5f';
const UID_UNBOUND = '0b7e6a52-8d1f-4c3e-a5b9-1f2e3d4c5b6a';

describe('SchedulerCache', () => {
  let sut: SchedulerCache;
  let facts: SchedulerFacts;

  beforeEach(() => {
    mock.timers.enable({ apis: ['Date'], now: T0 });
    sut = new SchedulerCache(systemClock);
    facts = new SchedulerFacts({ pod: (e, d) => sut.applyPod(e, d), node: (e, d) => sut.applyNode(e, d) });
  });

  afterEach(() => mock.timers.reset());

  it('keeps live pods by node, and marks a pod gone, its assignment purgeable, once its node let it go', () => {
    facts.nodeRegistered('node-1', T0);
    facts.podCreated('web-0', UID, T0);
    facts.podScheduled('web-0', UID, 'node-1', T0);
    facts.podCreated('pending-0', UID_UNBOUND, T0);
    facts.podDeletionRequested('web-0', UID, T0);
    assert.deepEqual(
      [...sut.podsByNode()].map(([node, pods]) => [node, pods.map((p) => p.name)]),
      [['node-1', ['web-0']]],
    );
    assert.equal(sut.gone.size, 0, 'deleted, but its node has not let it go');

    mock.timers.tick(7_000);
    facts.podRemoved('web-0', UID, 'node-1', T0 + 7_000);
    const removedSeq = facts.lastSeq;

    assert.deepEqual(
      sut.pods.list().map((p) => p.name),
      ['pending-0'],
    );
    assert.deepEqual([...sut.purgeable], [[UID, 'node-1']]);
    assert.deepEqual(sut.gone.get(UID), { namespace: 'default', name: 'web-0', nodeName: 'node-1', subjectSeq: removedSeq - 1, seenMs: T0 + 7_000 });
    assert.equal(sut.nodes.get('node-1')?.lastHeartbeatMs, T0);
  });
});
