import { setImmediate as turnOfTheLoop } from 'node:timers/promises';
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { BUS, JetStreamServer, SequenceConflictError, type Bus } from '#bus';
import { STREAMS, SUBJECTS, type AnyEnvelope, type NodeObject } from '#contracts';
import { buildCandidates, fitKey, isNodeReady, searchNodes, withPod, type NodeCandidate, type Placement, type PodRecord } from '#domain';
import { podRef } from '#observability';
import { CLOCK, CoalescingQueue, type Clock } from '#workqueue';
import { AssignmentsService } from '../assignments/assignments.service.js';
import { SchedulerCache } from '../cache/scheduler-cache.service.js';
import { phaseTimer, schedulerMetrics, setPendingSource, startAttempt } from '../metrics/scheduler.metrics.js';
import { LeaderElectionService } from '../leader/leader-election.service.js';
import { NodeLifecycleService } from '../node-lifecycle/node-lifecycle.service.js';
import { schedulerMessages } from '../messages/scheduler-messages.js';
import { SCHEDULER_CONFIG } from '../scheduler.constants.js';
import type { SchedulerConfig } from '../scheduler.config.js';
import { BindWindow, CLEANUPS_IN_FLIGHT } from './bind-window.js';
import { FOLLOWED } from './scheduling.constants.js';

/**
 * Whether a message can change what a pass decides. A running pod's status report cannot (only
 * a terminal phase frees its room, and only a removal lets its assignment go), nor can the
 * heartbeat of a node that was Ready; at 1,000 nodes and 10,000 pods those are hundreds a
 * second, and each asked for a pass over every pod. A node that goes silent is noticed by the
 * resync pass, every RESYNC_SECONDS, as kube-controller-manager's node monitor period does.
 */
export function asksForPass(envelope: AnyEnvelope, wasReady: (node: string) => boolean): boolean {
  if (envelope.type === 'PodStatusReported') {
    const phase = envelope.data.status.phase;
    return envelope.data.removed || phase === 'Succeeded' || phase === 'Failed';
  }
  if (envelope.type === 'NodeHeartbeat') return !wasReady(envelope.data.nodeName);
  return true;
}

/**
 * A pass gives the event loop a turn after this many pods, or this many milliseconds, whichever
 * comes first. Its searches are synchronous: without a turn, at 5,000 nodes and 3,000 pods
 * that fit none, one pass held the loop for seconds, so heartbeats were read late (and the
 * nodes counted NotReady, which asked for another pass), writes timed out and `/metrics`
 * went unanswered.
 */
export const PASS_SLICE = { pods: 64, ms: 10 } as const;

/**
 * What of a node a placement reads: its labels, taints, cordon, allocatable and the agent's
 * Ready condition. A node's full status comes again every NODE_STATUS_REPORT_SECONDS mostly
 * unchanged; only a change of these makes a decision against the old node stale.
 */
function placementView(node: NodeObject | undefined): string {
  if (!node) return '';
  const ready = node.status.conditions?.find((c) => c.type === 'Ready')?.status;
  return JSON.stringify([node.metadata.labels ?? {}, node.spec.taints ?? [], node.spec.unschedulable ?? false, node.status.allocatable, ready]);
}

/**
 * Whether the pod's subject moved past `decidedAt`, the sequence a decision on it was made
 * at, or the pod was bound or deleted since: the log has said more than the decision knew.
 */
function movedSince(pod: PodRecord, decidedAt: number): boolean {
  return pod.subjectSeq !== decidedAt || pod.nodeName !== undefined || pod.deletion !== undefined || pod.removed;
}

/** The nodes a pass decided against, as they were when its candidates were built. */
type NodesAt = ReadonlyMap<string, NodeObject>;

/** A binding written without an answer: the pod, the node, the sequence it was decided at, and when. */
interface UnansweredBinding {
  pod: PodRecord;
  node: string;
  decidedAt: number;
  atMs: number;
}

/**
 * How long a binding whose write got no answer is assumed stored, at most: its pod is counted
 * on the node and not decided again meanwhile, as kube-scheduler keeps an assumed pod until
 * its binding is confirmed. The stream's copy of a stored binding, or any later change of the
 * pod's subject, ends the wait sooner.
 */
export const UNANSWERED_BINDING_MS = 30_000;

/**
 * Binds pods to nodes and turns bindings and deletions into node work. Level-triggered:
 * every message folded into the cache that can change a decision asks for a pass (see
 * `asksForPass`), the resync asks every RESYNC_SECONDS, and every pass compares the cache
 * with the node work sent — so a crash between two of its writes is repaired by the next pass.
 */
@Injectable()
export class SchedulingService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(SchedulingService.name);
  private ready = false;
  /** Passes: never two at once; every change during one folds into one pass after it. */
  private readonly passes = new CoalescingQueue(
    () => this.pass(),
    (error) => this.logger.error(`scheduling pass failed: ${(error as Error).stack ?? String(error)}`),
  );
  private resync?: NodeJS.Timeout;
  /** Where the next pod's node search starts: kube-scheduler's round-robin over a sample of the nodes. */
  private nextStart = 0;
  /** The nodes whose registration or cordon was folded since the pass's candidates were built. */
  private readonly nodesFolded = new Set<string>();
  /** Bindings whose write got no answer, by pod uid: assumed on their node until the log says (see `countUnanswered`). */
  private readonly unanswered = new Map<string, UnansweredBinding>();

  constructor(
    @Inject(SCHEDULER_CONFIG) private readonly config: SchedulerConfig,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(BUS) private readonly bus: Bus,
    private readonly transport: JetStreamServer,
    private readonly cache: SchedulerCache,
    private readonly assignments: AssignmentsService,
    private readonly nodeLifecycle: NodeLifecycleService,
    private readonly leader: LeaderElectionService,
  ) {
    // A message that can change a decision asks for a pass. An assignment read back does not:
    // this scheduler assumed its own at once, and another's only spares a duplicate the stream would drop.
    this.cache.onFolded((envelope) => {
      if (envelope.type === 'NodeRegistered' || envelope.type === 'NodeSpecChanged') this.nodesFolded.add(envelope.data.nodeName);
      if (asksForPass(envelope, (node) => this.nodeLifecycle.wasReady(node))) this.trigger();
    });
    // A scheduler that takes over starts with a pass: what the old leader left undone is in the cache.
    this.leader.onStartedLeading(() => this.trigger());
  }

  async onApplicationBootstrap(): Promise<void> {
    setPendingSource(() => {
      const pending = this.cache.pods.list().filter((p) => !p.nodeName && !p.deletion && !p.mirror && !p.removed);
      const unschedulable = pending.filter((p) => p.unschedulable).length;
      return { active: pending.length - unschedulable, unschedulable };
    });
    await Promise.all(Object.values(FOLLOWED).map((pattern) => this.transport.caughtUp(pattern)));
    for (const followed of [this.cache.pods, this.cache.nodes, this.assignments.sent] as const) followed.markSynced();
    this.ready = true;
    this.logger.log(`caught up: ${this.cache.pods.list().length} pod(s), ${this.cache.nodes.list().length} node(s)`);
    this.resync = setInterval(() => this.resyncTick(), this.config.RESYNC_SECONDS * 1000);
    this.passes.start();
  }

  async onModuleDestroy(): Promise<void> {
    clearInterval(this.resync);
    this.ready = false;
    await this.passes.stop();
  }

  /** Resolves once no pass is under way nor asked for. */
  idle(): Promise<void> {
    return this.passes.idle();
  }

  /**
   * The resync: a pass on the leader; on a standby, the node lifecycle's memory (which node
   * was Ready, whether none was) kept as the leader keeps it, without a write, so that a
   * standby that takes over records and evicts as the leader would have.
   */
  private resyncTick(): void {
    if (this.leader.isLeader()) this.trigger();
    else if (this.ready)
      void this.nodeLifecycle
        .monitorNodes(this.clock.now(), () => false)
        .catch((error: unknown) => this.logger.error(`node lifecycle failed: ${(error as Error).message}`));
  }

  /** Asks for a pass: of the leader only (every scheduler follows the log; one acts on it). */
  private trigger(): void {
    if (this.ready && this.leader.isLeader()) this.passes.add();
  }

  /** Every node with the requests and host ports of its non-terminal pods, once per pass; and the nodes they were built from. */
  private candidates(now: number): { candidates: NodeCandidate[]; nodesAt: NodesAt } {
    const graceMs = this.config.NODE_GRACE_SECONDS * 1000;
    const nodes = this.cache.nodes.list();
    this.nodesFolded.clear();
    return {
      candidates: buildCandidates(
        nodes.map((n) => ({ node: n.node, ready: isNodeReady(n, now, graceMs) })),
        this.cache.pods.list(),
      ),
      nodesAt: new Map(nodes.map((n) => [n.name, n.node])),
    };
  }

  /**
   * Counts each binding whose write got no answer on its node, for this pass, while the log
   * has not said what became of it and UNANSWERED_BINDING_MS have not passed: such a write may
   * have been stored, and a node that takes other pods in its room meanwhile is overcommitted.
   * Returns the uids of those pods, which the pass does not decide again.
   */
  private countUnanswered(now: number, candidates: NodeCandidate[]): ReadonlySet<string> {
    for (const [uid, { pod, node, decidedAt, atMs }] of this.unanswered) {
      if (movedSince(pod, decidedAt) || now - atMs >= UNANSWERED_BINDING_MS) {
        this.unanswered.delete(uid);
        continue;
      }
      const at = candidates.findIndex((c) => c.name === node);
      if (at !== -1) candidates[at] = withPod(candidates[at], pod.manifest.spec);
    }
    return new Set(this.unanswered.keys());
  }

  /**
   * Whether `node` (or, without one, any node the pass decided against) no longer looks to a
   * placement as it did when the candidates were built: cordoned, tainted, relabelled or
   * resized while the pass gave the loop turns or a binding waited for its slot.
   */
  private nodesMoved(nodesAt: NodesAt, node?: string): boolean {
    const folded = node === undefined ? [...this.nodesFolded] : [node].filter((name) => this.nodesFolded.has(name));
    for (const name of folded) {
      const before = nodesAt.get(name);
      // A node that joined meanwhile only adds room: this pass's decisions stand.
      if (before === undefined) continue;
      if (placementView(this.cache.nodes.get(name)?.node) !== placementView(before)) return true;
      this.nodesFolded.delete(name);
    }
    return false;
  }

  private async pass(): Promise<void> {
    if (!this.leader.isLeader()) return;
    schedulerMetrics.passes.inc();
    // One clock reading per pass: the NodeNotReady/NodeReady it records are the readiness it schedules with.
    const now = this.clock.now();
    const leading = (): boolean => this.leader.isLeader();
    await this.nodeLifecycle.monitorNodes(now, leading).catch((error: unknown) => this.logger.error(`node lifecycle failed: ${(error as Error).message}`));
    await this.nodeLifecycle
      .finalizeDeletions(now, leading)
      .catch((error: unknown) => this.logger.error(`finalising deletions failed: ${(error as Error).message}`));
    const stopCandidates = phaseTimer('candidates');
    const { candidates, nodesAt } = this.candidates(now);
    const assumed = this.countUnanswered(now, candidates);
    stopCandidates();
    // Bindings are pipelined: decided one after the other against the candidates (each counted
    // on its node at once), their writes in flight together up to the window's bound.
    const binds = new BindWindow(this.config.BINDS_IN_FLIGHT);
    const failed = (pod: PodRecord) => (error: unknown) => this.logger.error(`${podRef(pod)}: ${(error as Error).message}`);
    const unfit = new Map<string, string>();
    let sliceStart = performance.now();
    let sliced = 0;
    for (const pod of this.cache.pods.list()) {
      if (++sliced >= PASS_SLICE.pods || performance.now() - sliceStart >= PASS_SLICE.ms) {
        await turnOfTheLoop();
        sliceStart = performance.now();
        sliced = 0;
        // A leader whose lease was not renewed in time stops: another may lead by now.
        if (!this.leader.isLeader()) {
          this.logger.warn('no longer leading: the pass stops');
          break;
        }
        // The pass the change asked for decides the rest against the nodes as they are now.
        if (this.nodesMoved(nodesAt)) {
          this.logger.log('a node changed during the pass; the next pass goes on');
          break;
        }
      }
      // A mirror's static pod runs from its node's own files: no scheduling, no node work.
      if (pod.mirror) continue;
      try {
        if (!pod.nodeName && !pod.deletion) {
          if (!assumed.has(pod.uid)) await this.schedule(pod, candidates, nodesAt, binds, unfit);
        } else if (pod.nodeName) {
          const node = pod.nodeName;
          const work = this.assignments.due(pod);
          if (work === 'assign') await binds.run(async () => void (leading() && (await this.assignments.assign(pod, node))), failed(pod));
          else if (work === 'unassign') await binds.run(async () => void (leading() && (await this.assignments.unassign(pod, node))), failed(pod));
        }
      } catch (error) {
        // One pod's trouble never holds up the others.
        failed(pod)(error);
      }
    }
    await binds.drain();
    if (!this.leader.isLeader()) return;
    await this.assignments.purgeTombstones();
    await this.purgeHistory(now);
  }

  /**
   * A pod that is gone leaves the pods stream: its aggregate up to its last fact (a later pod
   * of the same name, written after, stays) and its status subject. After
   * HISTORY_RETENTION_SECONDS, so every projection has read the removal first. Start-up cost
   * then follows the live pods, not every pod ever created; history is in the events stream.
   */
  private async purgeHistory(now: number): Promise<void> {
    const due = now - this.config.HISTORY_RETENTION_SECONDS * 1000;
    const cleanups = new BindWindow(CLEANUPS_IN_FLIGHT);
    for (const [uid, pod] of this.cache.gone) {
      if (pod.seenMs > due) continue;
      await cleanups.run(
        async () => {
          await this.bus.purgeSubject(STREAMS.pods, SUBJECTS.pod(pod.namespace, pod.name), { upToSeq: pod.subjectSeq });
          if (pod.nodeName) await this.bus.purgeSubject(STREAMS.pods, SUBJECTS.podStatus(pod.nodeName, uid));
          this.cache.gone.delete(uid);
        },
        (error) => this.logger.warn(`history of ${pod.namespace}/${pod.name} (${uid}) not purged: ${(error as Error).message}`),
      );
    }
    await cleanups.drain();
  }

  /**
   * Picks the best node for the pod and counts it there for the rest of the pass at once, then
   * sends the binding through the window: `PodScheduled` with the subject's expected sequence
   * (so two schedulers never both bind it), and only once that is stored, `PodAssigned`.
   * A pod that fits nowhere gets the reason recorded. `unfit` holds, for this pass, the message
   * of each fit key (see `fitKey`) that fit no node since the last binding: a pod with such a
   * key gets it without a search, which would reject every node again for the same reasons.
   */
  private async schedule(pod: PodRecord, candidates: NodeCandidate[], nodesAt: NodesAt, binds: BindWindow, unfit: Map<string, string>): Promise<void> {
    const attempt = startAttempt();
    const stopFilter = phaseTimer('filter_score');
    const key = fitKey(pod.manifest.spec);
    const known = unfit.get(key);
    // A search that finds no node looks at every node, so it ends where it started.
    const placement: Placement & { nextStart: number } =
      known === undefined
        ? searchNodes(pod.manifest.spec, candidates, { start: this.nextStart, percentageOfNodesToScore: this.config.PERCENTAGE_OF_NODES_TO_SCORE })
        : { message: known, nextStart: this.nextStart };
    stopFilter();
    this.nextStart = placement.nextStart;
    if (placement.node === undefined) {
      unfit.set(key, placement.message);
      attempt('unschedulable');
      // With no node at all the pod's view already says "no nodes available to schedule pods", as Kubernetes does.
      const decidedAt = pod.subjectSeq;
      if (candidates.length > 0)
        await binds.run(
          () => this.recordUnschedulable(pod, placement.message, decidedAt),
          (error) => this.logger.error(`${podRef(pod)}: ${(error as Error).message}`),
        );
      return;
    }
    const node = placement.node;
    const decidedAt = pod.subjectSeq;
    // Counted now, so the next decision in this pass sees it; a lost race leaves the node
    // counted a little full until the next pass rebuilds the candidates from the log.
    const chosen = candidates.findIndex((c) => c.name === node);
    if (chosen !== -1) candidates[chosen] = withPod(candidates[chosen], pod.manifest.spec);
    // A fuller node rejects no fewer pods, but the messages' counts change.
    unfit.clear();
    await binds.run(
      async () => attempt((await this.bind(pod, node, decidedAt, nodesAt)) ? 'scheduled' : 'error'),
      (error) => {
        attempt('error');
        this.logger.error(`${podRef(pod)}: ${(error as Error).message}`);
      },
    );
  }

  /**
   * Whether the pod moved since the decision (`movedSince`), logged. A write decided on a pod
   * waits for a slot in the window, and the cache folds meanwhile: another scheduler's
   * binding, a deletion. Its compare-and-set must expect what was decided on, never the
   * sequence the pod has by then.
   */
  private changedSince(pod: PodRecord, decidedAt: number, what: string): boolean {
    if (!movedSince(pod, decidedAt)) return false;
    this.logger.log(`${podRef(pod)} changed while its ${what} waited; deciding again`);
    return true;
  }

  /** Writes the binding, then the node's work: `PodScheduled` (compare-and-set), then `PodAssigned`. False when the pod changed meanwhile. */
  private async bind(pod: PodRecord, node: string, decidedAt: number, nodesAt: NodesAt): Promise<boolean> {
    // Checked again when its slot comes: a write that waited past the lease's renew deadline is not sent.
    if (!this.leader.isLeader()) return false;
    if (this.changedSince(pod, decidedAt, 'binding')) return false;
    if (this.nodesMoved(nodesAt, node)) {
      this.logger.log(`node ${node} changed while the binding of ${podRef(pod)} waited; deciding again`);
      return false;
    }
    const stopBind = phaseTimer('bind');
    try {
      const message = schedulerMessages.podScheduled(pod, node, decidedAt);
      const { seq, envelope } = await this.bus.publish(message.subject, message.type, message.data, message.options).catch((error: unknown) => {
        // No answer (a timeout, the connection lost): the binding may be stored all the same.
        if (!(error instanceof SequenceConflictError)) this.unanswered.set(pod.uid, { pod, node, decidedAt, atMs: this.clock.now() });
        throw error;
      });
      // Fold our own write now; the stream's copy of it arrives later.
      pod.nodeName = node;
      delete pod.unschedulable;
      pod.subjectSeq = Math.max(pod.subjectSeq, seq);
      pod.eventId = envelope.id;
      // Debug only: every binding is recorded as its PodScheduled fact, and a line each at a thousand a second was a twentieth of the scheduler's CPU.
      // Nor is the line built unless it is written.
      if (Logger.isLevelEnabled('debug')) this.logger.debug(`bound ${podRef(pod)} to ${node}`);
      await this.assignments.assign(pod, node);
      return true;
    } catch (error) {
      if (!(error instanceof SequenceConflictError)) throw error;
      this.logger.log(`${podRef(pod)} changed while scheduling; deciding again`);
      return false;
    } finally {
      stopBind();
    }
  }

  /**
   * Records on the pod's subject why no node fits, once per distinct message: the API shows
   * it in the PodScheduled condition, and a new pass (any node or pod change) tries again.
   */
  private async recordUnschedulable(pod: PodRecord, message: string, decidedAt: number): Promise<void> {
    if (!this.leader.isLeader() || pod.unschedulable === message || this.changedSince(pod, decidedAt, 'reason')) return;
    try {
      const sent = schedulerMessages.podUnschedulable(pod, message, decidedAt);
      const { seq } = await this.bus.publish(sent.subject, sent.type, sent.data, sent.options);
      pod.unschedulable = message;
      pod.subjectSeq = Math.max(pod.subjectSeq, seq);
      this.logger.log(`${podRef(pod)} unschedulable: ${message}`);
    } catch (error) {
      if (!(error instanceof SequenceConflictError)) throw error;
      this.logger.log(`${podRef(pod)} changed while recording why it is unschedulable; deciding again`);
    }
  }
}
