import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import { BusUnavailableError, type JetStreamServer } from '#bus';
import { SUBJECTS } from '#contracts';
import { systemClock } from '#workqueue';
import { RecordingBus, SchedulerFacts } from '../../../../test/fixtures/scheduler-facts.js';
import { AssignmentsService } from '../assignments/assignments.service.js';
import type { LeaderElectionService } from '../leader/leader-election.service.js';
import { SchedulerCache } from '../cache/scheduler-cache.service.js';
import { NodeLifecycleService } from '../node-lifecycle/node-lifecycle.service.js';
import { SchedulerConfig } from '../scheduler.config.js';
import { schedulerMetrics } from '../metrics/scheduler.metrics.js';
import { PASS_SLICE, SchedulingService, UNANSWERED_BINDING_MS } from './scheduling.service.js';

const T0 = Date.parse('2024-05-01T10:00:00.000Z');
const UID = '6f1c2b1e-3b9a-4c1d-9f2e-0a1b2c3d4e5f';
/** The i-th of many pods' uids. */
const uidOf = (i: number): string => `6f1c2b1e-3b9a-4c1d-9f2e-${i.toString(16).padStart(12, '0')}`;

/** A lease this test hands out and takes back. */
class TestLeader {
  leading = true;
  private readonly listeners: Array<() => void> = [];
  isLeader(): boolean {
    return this.leading;
  }
  onStartedLeading(listener: () => void): void {
    this.listeners.push(listener);
  }
  lead(): void {
    this.leading = true;
    for (const listener of this.listeners) listener();
  }
}

/** Lets the event loop turn until `condition` holds (at most 10,000 turns). */
async function waitUntil(condition: () => boolean): Promise<void> {
  for (let turn = 0; !condition(); turn++) {
    if (turn >= 10_000) throw new Error('condition never held');
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe('SchedulingService', () => {
  let bus: RecordingBus;
  let facts: SchedulerFacts;
  let sut: SchedulingService;
  let leader: TestLeader;

  /** A scheduler on `bus` with a window of `bindsInFlight` bindings, and the facts its cache folds. */
  const build = (bindsInFlight: number): void => {
    const config = Object.assign(new SchedulerConfig(), { NODE_GRACE_SECONDS: 40, RESYNC_SECONDS: 5, BINDS_IN_FLIGHT: bindsInFlight });
    const cache = new SchedulerCache(systemClock);
    const assignments = new AssignmentsService(bus.bus, cache);
    const transport = { caughtUp: () => Promise.resolve() } as unknown as JetStreamServer;
    leader = new TestLeader();
    const elected = leader as unknown as LeaderElectionService;
    sut = new SchedulingService(config, systemClock, bus.bus, transport, cache, assignments, new NodeLifecycleService(config, bus.bus, cache), elected);
    facts = new SchedulerFacts({
      pod: (e, d) => cache.applyPod(e, d),
      node: (e, d) => cache.applyNode(e, d),
      assignment: (e, d) => assignments.apply(e, d),
    });
  };

  beforeEach(() => {
    mock.timers.enable({ apis: ['Date', 'setInterval'], now: T0 });
    bus = new RecordingBus();
    build(4);
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

  it('schedules nothing while another scheduler leads, and goes on once it leads', async () => {
    leader.leading = false;
    facts.nodeRegistered('node-1', T0);
    facts.podCreated('web-0', UID, T0);
    await sut.onApplicationBootstrap();
    await sut.idle();
    mock.timers.tick(5_000);
    await sut.idle();
    assert.equal(bus.published.length, 0, 'a standby writes nothing, on a change or on a resync');

    leader.lead();
    await sut.idle();
    assert.deepEqual(
      bus.published.map((p) => p.type),
      ['PodScheduled', 'PodAssigned'],
    );
  });

  it('stops a pass at its next turn once it no longer leads', async () => {
    facts.nodeRegistered('node-1', T0);
    const pods = PASS_SLICE.pods * 3;
    for (let i = 0; i < pods; i++) facts.podCreated(`web-${i}`, uidOf(i), T0);
    // The lease is lost with the pass's first binding, in its first slice.
    bus.refuse = () => {
      leader.leading = false;
      return undefined;
    };
    await sut.onApplicationBootstrap();
    await sut.idle();
    const bound = bus.published.filter((p) => p.type === 'PodScheduled').length;
    assert.ok(bound > 0 && bound <= PASS_SLICE.pods, `${bound} bound of ${pods}`);
  });

  it('sends no binding that waited for its slot past the end of its leading', async () => {
    facts.nodeRegistered('node-1', T0);
    for (let i = 0; i < 10; i++) facts.podCreated(`web-${i}`, uidOf(i), T0);
    bus.hold = (_subject, type) => type === 'PodScheduled';
    await sut.onApplicationBootstrap();
    await waitUntil(() => bus.of('PodScheduled').length === 4);
    // The window is full; the lease lapses before the writes in it are answered.
    leader.leading = false;
    bus.release();
    await sut.idle();
    assert.equal(bus.of('PodScheduled').length, 4, 'the six that waited are not sent');
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

  it('records each pod that fits no node with the message of the nodes as they are after the bindings before it', async () => {
    const big = { containers: [{ name: 'app', image: 'busybox:1.36', resources: { requests: { cpu: '5', memory: '1Gi' } } }] };
    const all = { containers: [{ name: 'app', image: 'busybox:1.36', resources: { requests: { memory: '8Gi' } } }] };
    facts.nodeRegistered('node-1', T0);
    facts.podCreated('a-big', uidOf(0), T0, big);
    facts.podCreated('b-all-memory', uidOf(1), T0, all);
    facts.podCreated('c-big', uidOf(2), T0, big);
    facts.podCreated('d-big', uidOf(3), T0, big);
    facts.podCreated('e-elsewhere', uidOf(4), T0, { nodeSelector: { disk: 'ssd' } });

    await sut.onApplicationBootstrap();
    await sut.idle();

    assert.deepEqual(
      bus.of('PodScheduled').map((p) => p.data.nodeName),
      ['node-1'],
    );
    assert.deepEqual(
      bus.of('PodUnschedulable').map((p) => [p.subject, p.data.message]),
      [
        [SUBJECTS.pod('default', 'a-big'), '0/1 nodes are available: 1 Insufficient cpu.'],
        [SUBJECTS.pod('default', 'c-big'), '0/1 nodes are available: 1 Insufficient cpu, 1 Insufficient memory.'],
        [SUBJECTS.pod('default', 'd-big'), '0/1 nodes are available: 1 Insufficient cpu, 1 Insufficient memory.'],
        [SUBJECTS.pod('default', 'e-elsewhere'), "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector."],
      ],
    );
  });

  /** Turns of the event loop until `done`, a bounded number of them. */
  const until = async (what: string, done: () => boolean): Promise<void> => {
    for (let turn = 0; turn < 1000 && !done(); turn++) await new Promise<void>((resolve) => setImmediate(resolve));
    assert.ok(done(), `never: ${what}`);
  };

  /** Two pods, a-0 and b-0, on a window of one binding: a-0's binding is held, so b-0's, decided, waits for the slot. */
  const withBindingWaiting = async (): Promise<void> => {
    build(1);
    facts.nodeRegistered('node-1', T0);
    facts.nodeRegistered('node-2', T0);
    facts.podCreated('a-0', uidOf(0), T0);
    facts.podCreated('b-0', uidOf(1), T0);
    bus.hold = (subject, type) => type === 'PodScheduled' && subject === SUBJECTS.pod('default', 'a-0');
    await sut.onApplicationBootstrap();
    await until("a-0's binding sent", () => bus.of('PodScheduled').length === 1);
  };

  it("drops a binding that waited while another scheduler bound the pod, rather than expect the other's sequence", async () => {
    await withBindingWaiting();
    facts.podScheduled('b-0', uidOf(1), 'node-2', T0);
    bus.release();
    await sut.idle();
    assert.deepEqual(
      bus.of('PodScheduled').map((p) => p.subject),
      [SUBJECTS.pod('default', 'a-0')],
      'b-0 is bound once, by the other scheduler',
    );
    assert.equal(
      bus.of('PodAssigned').some((p) => p.subject === SUBJECTS.assignment('node-1', uidOf(1))),
      false,
    );
  });

  it('drops a binding that waited while the pod was deleted: nothing is bound nor sent to a node for it', async () => {
    await withBindingWaiting();
    facts.podDeletionRequested('b-0', uidOf(1), T0);
    bus.release();
    await sut.idle();
    mock.timers.tick(5_000);
    await sut.idle();
    assert.deepEqual(
      bus.published.filter((p) => p.subject.endsWith(uidOf(1)) || p.subject === SUBJECTS.pod('default', 'b-0')).map((p) => p.type),
      [],
    );
  });

  it('drops a binding that waited while its node was cordoned, and binds the pod elsewhere', async () => {
    await withBindingWaiting();
    // a-0 went to node-1, so b-0 was decided for the emptier node-2.
    facts.nodeCordoned('node-2', T0);
    bus.release();
    await sut.idle();
    assert.deepEqual(
      bus.of('PodScheduled').map((p) => [p.subject, p.data.nodeName]),
      [
        [SUBJECTS.pod('default', 'a-0'), 'node-1'],
        [SUBJECTS.pod('default', 'b-0'), 'node-1'],
      ],
    );
  });

  it('keeps a binding whose node only reported the same status again while it waited', async () => {
    await withBindingWaiting();
    facts.nodeRegistered('node-2', T0 + 1000);
    bus.release();
    await sut.idle();
    assert.deepEqual(
      bus.of('PodScheduled').map((p) => p.data.nodeName),
      ['node-1', 'node-2'],
    );
  });

  it('stops deciding against a node cordoned during the pass; the pass it asked for binds the rest elsewhere', async () => {
    const pods = PASS_SLICE.pods * 3;
    // Room for every pod (110 each) without node-1.
    for (const node of ['node-1', 'node-2', 'node-3']) facts.nodeRegistered(node, T0);
    for (let i = 0; i < pods; i++) facts.podCreated(`web-${String(i).padStart(3, '0')}`, uidOf(i), T0);
    let cordonedAfter: number | undefined;
    setImmediate(() => {
      cordonedAfter = bus.of('PodScheduled').length;
      facts.nodeCordoned('node-1', T0);
    });

    await sut.onApplicationBootstrap();
    await sut.idle();

    assert.ok(cordonedAfter !== undefined && cordonedAfter < pods, `cordoned after ${cordonedAfter} of ${pods} bindings`);
    const later = bus.of('PodScheduled').slice(cordonedAfter);
    assert.equal(bus.of('PodScheduled').length, pods, 'every pod is bound once');
    assert.deepEqual(
      later.filter((p) => p.data.nodeName === 'node-1').map((p) => p.subject),
      [],
      'nothing decided after the cordon goes to node-1',
    );
  });

  describe('a binding whose write got no answer', () => {
    const big = { containers: [{ name: 'app', image: 'busybox:1.36', resources: { requests: { cpu: '3' } } }] };
    const lostAck = async (): Promise<void> => {
      facts.nodeRegistered('node-1', T0);
      facts.podCreated('z-0', uidOf(0), T0, big);
      bus.refuse = (subject, type) =>
        type === 'PodScheduled' && subject === SUBJECTS.pod('default', 'z-0') ? new BusUnavailableError('no answer in time') : undefined;
      await sut.onApplicationBootstrap();
      await sut.idle();
      bus.refuse = () => undefined;
      // The next pass, before the stream's copy of z-0's binding (if it was stored) is read.
      facts.podCreated('b-0', uidOf(1), T0, big);
      await sut.idle();
    };
    const boundTo = (name: string): string[] =>
      bus
        .of('PodScheduled')
        .filter((p) => p.subject === SUBJECTS.pod('default', name))
        .map((p) => p.data.nodeName as string);

    it('is assumed on its node: the next pass neither puts another pod in its room nor decides its pod again', async () => {
      await lostAck();
      assert.deepEqual(boundTo('b-0'), []);
      assert.deepEqual(
        bus.of('PodUnschedulable').map((p) => [p.subject, p.data.message]),
        [[SUBJECTS.pod('default', 'b-0'), '0/1 nodes are available: 1 Insufficient cpu.']],
      );
      assert.deepEqual(boundTo('z-0'), ['node-1'], 'z-0 is not bound a second time');
      // The stream's copy says it was stored: z-0 stays, counted from the log now.
      facts.podScheduled('z-0', uidOf(0), 'node-1', T0);
      mock.timers.tick(UNANSWERED_BINDING_MS);
      await sut.idle();
      assert.deepEqual(boundTo('z-0'), ['node-1']);
      assert.deepEqual(boundTo('b-0'), []);
    });

    it('is decided again once UNANSWERED_BINDING_MS passed and the log never showed it', async () => {
      await lostAck();
      mock.timers.tick(UNANSWERED_BINDING_MS);
      await sut.idle();
      assert.equal(boundTo('z-0').length + boundTo('b-0').length, 2, 'one of the two is bound now, beside the unanswered write');
      assert.deepEqual(boundTo('z-0').slice(0, 1), ['node-1']);
    });
  });

  it('expects the sequence a binding was decided at, when nothing changed while it waited', async () => {
    await withBindingWaiting();
    const decidedAt = facts.lastSeq;
    bus.release();
    await sut.idle();
    const b = bus.of('PodScheduled').find((p) => p.subject === SUBJECTS.pod('default', 'b-0'));
    assert.equal(b?.options.expectedLastSubjectSequence, decidedAt);
  });

  it('gives the event loop turns during a pass over many pods', async () => {
    const pods = PASS_SLICE.pods * 3;
    for (const node of ['node-1', 'node-2', 'node-3']) facts.nodeRegistered(node, T0);
    for (let i = 0; i < pods; i++) facts.podCreated(`web-${i}`, uidOf(i), T0);
    let boundAtFirstTurn: number | undefined;
    setImmediate(() => (boundAtFirstTurn = bus.of('PodScheduled').length));

    await sut.onApplicationBootstrap();
    await sut.idle();

    assert.equal(bus.of('PodScheduled').length, pods);
    assert.ok(boundAtFirstTurn !== undefined && boundAtFirstTurn < pods, `the loop had its first turn after ${boundAtFirstTurn} of ${pods} bindings`);
  });
});
