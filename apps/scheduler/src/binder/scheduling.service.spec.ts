import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import type { JetStreamServer } from '#bus';
import { SUBJECTS } from '#contracts';
import { systemClock } from '#workqueue';
import { RecordingBus, SchedulerFacts } from '../../../../test/fixtures/scheduler-facts.js';
import { AssignmentsService } from '../assignments/assignments.service.js';
import { SchedulerCache } from '../cache/scheduler-cache.service.js';
import { NodeLifecycleService } from '../node-lifecycle/node-lifecycle.service.js';
import { SchedulerConfig } from '../scheduler.config.js';
import { schedulerMetrics } from '../metrics/scheduler.metrics.js';
import { SchedulingService } from './scheduling.service.js';

const T0 = Date.parse('2024-05-01T10:00:00.000Z');
const UID = '6f1c2b1e-3b9a-4c1d-9f2e-0a1b2c3d4e5f';

describe('SchedulingService', () => {
  let bus: RecordingBus;
  let facts: SchedulerFacts;
  let sut: SchedulingService;

  beforeEach(() => {
    mock.timers.enable({ apis: ['Date', 'setInterval'], now: T0 });
    bus = new RecordingBus();
    const config = Object.assign(new SchedulerConfig(), { NODE_GRACE_SECONDS: 40, RESYNC_SECONDS: 5, BINDS_IN_FLIGHT: 4 });
    const cache = new SchedulerCache(systemClock);
    const assignments = new AssignmentsService(bus.bus, cache);
    const transport = { caughtUp: () => Promise.resolve() } as unknown as JetStreamServer;
    sut = new SchedulingService(config, systemClock, bus.bus, transport, cache, assignments, new NodeLifecycleService(config, bus.bus, cache));
    facts = new SchedulerFacts({
      pod: (e, d) => cache.applyPod(e, d),
      node: (e, d) => cache.applyNode(e, d),
      assignment: (e, d) => assignments.apply(e, d),
    });
  });

  afterEach(async () => {
    await sut.onModuleDestroy();
    mock.timers.reset();
  });

  it('binds a pending pod, then sends its node the assignment, and sends neither again once they come back', async () => {
    facts.nodeRegistered('node-1', T0);
    const created = facts.podCreated('web-0', UID, T0);
    const createdSeq = facts.lastSeq;

    await sut.onApplicationBootstrap();
    await sut.idle();

    assert.deepEqual(
      bus.published.map((p) => [p.type, p.subject]),
      [
        ['PodScheduled', SUBJECTS.pod('default', 'web-0')],
        ['PodAssigned', SUBJECTS.assignment('node-1', UID)],
      ],
    );
    const [scheduled, assigned] = bus.published;
    assert.deepEqual(scheduled.data, { uid: UID, nodeName: 'node-1' });
    assert.deepEqual(scheduled.options, { correlationId: UID, expectedLastSubjectSequence: createdSeq, causationId: created.id, prevalidated: true });
    assert.equal(assigned.options.id, `assign-${UID}-1`);
    assert.equal(assigned.options.causationId, 'PodScheduled-1001', 'the assignment carries out the binding');

    facts.podScheduled('web-0', UID, 'node-1', T0);
    facts.podAssigned('web-0', UID, 'node-1', T0);
    await sut.idle();
    mock.timers.tick(5_000);
    await sut.idle();
    assert.equal(bus.published.length, 2, 'the passes those messages and the resync asked for write nothing');
  });

  it("runs no pass for a running pod's status or a Ready node's heartbeat, and one for a pod that finished", async () => {
    const passes = async (): Promise<number> => (await schedulerMetrics.passes.get()).values[0]?.value ?? 0;
    facts.nodeRegistered('node-1', T0);
    facts.podCreated('web-0', UID, T0);
    await sut.onApplicationBootstrap();
    await sut.idle();
    facts.podScheduled('web-0', UID, 'node-1', T0);
    facts.podAssigned('web-0', UID, 'node-1', T0);
    await sut.idle();
    const before = await passes();

    facts.podStatus('web-0', UID, 'node-1', T0 + 1000, 'Running');
    facts.heartbeat('node-1', T0 + 1000);
    await sut.idle();
    assert.equal(await passes(), before, 'nothing a pass decides changed');

    facts.podStatus('web-0', UID, 'node-1', T0 + 2000, 'Succeeded');
    await sut.idle();
    assert.equal(await passes(), before + 1, 'a finished pod frees its room on the node');
  });

  it('records NodeNotReady from a resync pass once heartbeats stop, and NodeReady when one arrives', async () => {
    facts.nodeRegistered('node-1', T0);
    await sut.onApplicationBootstrap();
    await sut.idle();

    mock.timers.tick(40_000);
    await sut.idle();
    assert.deepEqual(bus.of('NodeEvent'), [], 'Ready for the grace period');

    mock.timers.tick(5_000);
    await sut.idle();
    mock.timers.tick(5_000);
    await sut.idle();
    facts.heartbeat('node-1', T0 + 50_000);
    await sut.idle();

    assert.deepEqual(
      bus.of('NodeEvent').map((p) => [p.data.reason, p.data.observedAt]),
      [
        ['NodeNotReady', new Date(T0 + 45_000).toISOString()],
        ['NodeReady', new Date(T0 + 50_000).toISOString()],
      ],
    );
  });
});
