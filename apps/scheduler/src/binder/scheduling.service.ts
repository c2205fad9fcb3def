import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { BUS, JetStreamServer, ListWatch, SequenceConflictError, type Bus, type Delivery, type Folded } from '#bus';
import { STREAMS, SUBJECTS, type AnyEnvelope } from '#contracts';
import {
  buildCandidates,
  deletionFinalizeTimeMs,
  evictionTimeMs,
  isNodeReady,
  NodeTable,
  PodProjection,
  searchNodes,
  withPod,
  type NodeCandidate,
  type NodeRecord,
  type PodRecord,
} from '#domain';
import { podRef } from '#observability';
import { CoalescingQueue } from '#workqueue';
import { SCHEDULER_CONFIG } from '../scheduler.constants.js';
import type { SchedulerConfig } from '../scheduler.config.js';
import { phaseTimer, setPendingSource, startAttempt } from '../metrics/scheduler.metrics.js';
import { BindWindow } from './bind-window.js';
import { FOLLOWED } from './scheduling.constants.js';

/** The node work last sent for a pod: the generation assigned, or its removal. */
type AssignmentState = { kind: 'assigned'; generation: number } | { kind: 'unassigned' };

/** What an assignment message says was last sent for its pod. */
function foldAssignment(envelope: AnyEnvelope): Folded<AssignmentState> | undefined {
  if (envelope.type === 'PodAssigned') {
    return {
      key: envelope.data.pod.metadata.uid ?? envelope.correlationId,
      object: { kind: 'assigned', generation: envelope.data.pod.metadata.generation ?? 1 },
      exists: true,
    };
  }
  if (envelope.type === 'PodUnassigned') return { key: envelope.data.uid, object: { kind: 'unassigned' }, exists: true };
  return undefined;
}

/**
 * Binds pods to nodes and turns bindings and deletions into node work. Level-triggered:
 * it folds pods, nodes and its own assignments from the streams, and every pass compares
 * them — so a crash between two of its writes is repaired by the next pass.
 */
@Injectable()
export class SchedulingService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(SchedulingService.name);
  /** The fold behind the pods cache (removed pods included, with their subjects' sequences). */
  private readonly podFold = new PodProjection();
  private readonly nodeFold = new NodeTable();
  /** Live pods by namespace/name, in that order: the records of the fold, so a binding folded here is seen at once. */
  private readonly pods = new ListWatch<PodRecord>({
    fold: (envelope, delivery) => {
      const record = this.podFold.apply(envelope, delivery.seq, delivery.subject);
      // The node let the pod go: its assignment subject can go too.
      if (envelope.type === 'PodStatusReported' && envelope.data.removed && record?.removed) this.purgeable.set(record.uid, envelope.data.nodeName);
      return record && { key: `${record.namespace}/${record.name}`, object: record, exists: !record.removed };
    },
    skip: (delivery) => this.podFold.skip(delivery.subject, delivery.seq),
    identity: (p) => p.uid,
    compare: (a, b) => a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name),
  });
  private readonly nodes = new ListWatch<NodeRecord>({
    fold: (envelope, delivery) => {
      const record = this.nodeFold.apply(envelope, delivery.seq);
      return record && { key: record.name, object: record, exists: true };
    },
    compare: (a, b) => a.name.localeCompare(b.name),
  });
  /** The node work last sent for each pod, by uid: its own assignments, read back, and each write assumed at once. */
  private readonly assignments = new ListWatch<AssignmentState>({ fold: foldAssignment });
  /** Pods their node let go of, by uid, with the node: their assignment subjects can go. */
  private readonly purgeable = new Map<string, string>();
  /** Pods that are gone, by uid: their history leaves the pods stream once HISTORY_RETENTION_SECONDS have passed. */
  private readonly gone = new Map<string, { namespace: string; name: string; nodeName?: string; subjectSeq: number; seenMs: number }>();
  /** Each node's readiness at the last pass, to record its transitions. */
  private readonly readiness = new Map<string, boolean>();
  private ready = false;
  /** Passes: never two at once; every change during one folds into one pass after it. */
  private readonly passes = new CoalescingQueue(
    () => this.pass(),
    (error) => this.logger.error(`scheduling pass failed: ${(error as Error).stack ?? String(error)}`),
  );
  private resync?: NodeJS.Timeout;
  /** Where the next pod's node search starts: kube-scheduler's round-robin over a sample of the nodes. */
  private nextStart = 0;

  constructor(
    @Inject(SCHEDULER_CONFIG) private readonly config: SchedulerConfig,
    @Inject(BUS) private readonly bus: Bus,
    private readonly transport: JetStreamServer,
  ) {
    // A pod that is gone leaves the pods stream later (see purgeHistory); a mirror's history is its agent's.
    this.pods.on('delete', (record) => {
      if (!record.removed || record.mirror || this.gone.has(record.uid)) return;
      this.gone.set(record.uid, {
        namespace: record.namespace,
        name: record.name,
        ...(record.nodeName ? { nodeName: record.nodeName } : {}),
        subjectSeq: record.subjectSeq,
        seenMs: Date.now(),
      });
    });
    // Every message asks for a pass.
    for (const cache of [this.pods, this.nodes, this.assignments] as const) cache.on('advance', () => this.trigger());
  }

  async onApplicationBootstrap(): Promise<void> {
    setPendingSource(() => {
      const pending = this.pods.list().filter((p) => !p.nodeName && !p.deletion && !p.mirror && !p.removed);
      const unschedulable = pending.filter((p) => p.unschedulable).length;
      return { active: pending.length - unschedulable, unschedulable };
    });
    await Promise.all(Object.values(FOLLOWED).map((pattern) => this.transport.caughtUp(pattern)));
    for (const cache of [this.pods, this.nodes, this.assignments] as const) cache.markSynced();
    this.ready = true;
    this.logger.log(`caught up: ${this.pods.list().length} pod(s), ${this.nodes.list().length} node(s)`);
    this.resync = setInterval(() => this.trigger(), this.config.RESYNC_SECONDS * 1000);
    this.passes.start();
  }

  async onModuleDestroy(): Promise<void> {
    clearInterval(this.resync);
    this.ready = false;
    await this.passes.stop();
  }

  /** A fact from the pods stream (SchedulingController): status reports say when a node let a pod go, mirrors take room on their node. */
  applyPod(e: AnyEnvelope, delivery: Delivery): void {
    this.pods.apply(e, delivery);
  }

  /** A skipped (invalid) message of the pods stream still counts for its subject's sequence. */
  skipPod(delivery: Delivery): void {
    this.pods.skip(delivery);
  }

  applyNode(e: AnyEnvelope, delivery: Delivery): void {
    this.nodes.apply(e, delivery);
  }

  applyAssignment(e: AnyEnvelope, delivery: Delivery): void {
    this.assignments.apply(e, delivery);
  }

  private trigger(): void {
    if (this.ready) this.passes.add();
  }

  /** Every node with the requests and host ports of its non-terminal pods, once per pass. */
  private candidates(now: number): NodeCandidate[] {
    const graceMs = this.config.NODE_GRACE_SECONDS * 1000;
    return buildCandidates(
      this.nodes.list().map((n) => ({ node: n.node, ready: isNodeReady(n, now, graceMs) })),
      this.pods.list(),
    );
  }

  /**
   * The node lifecycle controller's part: a node turns NotReady (and unreachable-tainted)
   * once its heartbeats stop for the grace period, with a NodeNotReady event, and NodeReady
   * when they return; the pods of an unreachable node are evicted once they stop tolerating
   * it. Everything follows from heartbeat times in the log, so a restarted scheduler decides
   * the same.
   */
  private async nodeLifecycle(now: number): Promise<void> {
    const graceMs = this.config.NODE_GRACE_SECONDS * 1000;
    let podsByNode: Map<string, PodRecord[]> | undefined;
    for (const node of this.nodes.list()) {
      const ready = isNodeReady(node, now, graceMs);
      const before = this.readiness.get(node.name);
      this.readiness.set(node.name, ready);
      if (before !== undefined && before !== ready) {
        const [reason, message] = ready
          ? ['NodeReady', `Node ${node.name} status is now: NodeReady`]
          : ['NodeNotReady', `Node ${node.name} status is now: NodeNotReady`];
        this.logger.log(message);
        this.bus.publishBuffered(
          SUBJECTS.nodeLifecycleEvents(node.name),
          'NodeEvent',
          { nodeName: node.name, eventType: ready ? 'Normal' : 'Warning', reason, message, observedAt: new Date(now).toISOString() },
          { correlationId: node.name },
        );
      }
      if (ready) continue;
      const taintedSince = node.lastHeartbeatMs + graceMs;
      podsByNode ??= this.podsByNode();
      for (const pod of podsByNode.get(node.name) ?? []) {
        if (pod.mirror || pod.deletion) continue;
        const due = evictionTimeMs(pod.manifest.spec, taintedSince, this.config.EVICTION_TOLERATION_SECONDS);
        if (due === undefined || now < due) continue;
        try {
          await this.bus.publish(
            SUBJECTS.pod(pod.namespace, pod.name),
            'PodEvicted',
            {
              uid: pod.uid,
              gracePeriodSeconds: pod.manifest.spec.terminationGracePeriodSeconds ?? 30,
              deletionTimestamp: new Date(now).toISOString().replace(/\.\d+Z$/, 'Z'),
              message: `Taint manager: deleting due to NoExecute taint node.kubernetes.io/unreachable on node ${node.name}`,
            },
            { correlationId: pod.uid, expectedLastSubjectSequence: pod.subjectSeq },
          );
          this.logger.log(`evicted ${podRef(pod)} from unreachable node ${node.name}`);
          // The taint manager's event, on the scheduler's own subject of that node.
          this.bus.publishBuffered(
            SUBJECTS.nodeLifecycleEvents(node.name),
            'PodEvent',
            {
              uid: pod.uid,
              namespace: pod.namespace,
              name: pod.name,
              nodeName: node.name,
              eventType: 'Normal',
              reason: 'TaintManagerEviction',
              message: `Marking for deletion Pod ${pod.namespace}/${pod.name}`,
              observedAt: new Date(now).toISOString(),
            },
            { correlationId: pod.uid },
          );
        } catch (error) {
          if (!(error instanceof SequenceConflictError)) throw error;
        }
      }
    }
  }

  /** The live pods by the node they are bound to. */
  private podsByNode(): Map<string, PodRecord[]> {
    const byNode = new Map<string, PodRecord[]>();
    for (const pod of this.pods.list()) {
      if (pod.nodeName === undefined) continue;
      const list = byNode.get(pod.nodeName);
      if (list) list.push(pod);
      else byNode.set(pod.nodeName, [pod]);
    }
    return byNode;
  }

  private async pass(): Promise<void> {
    // One clock reading per pass: the NodeNotReady/NodeReady it records are the readiness it schedules with.
    const now = Date.now();
    await this.nodeLifecycle(now).catch((error: unknown) => this.logger.error(`node lifecycle failed: ${(error as Error).message}`));
    await this.finalizeDeletions().catch((error: unknown) => this.logger.error(`finalising deletions failed: ${(error as Error).message}`));
    const stopCandidates = phaseTimer('candidates');
    const candidates = this.candidates(now);
    stopCandidates();
    // Bindings are pipelined: decided one after the other against the candidates (each counted
    // on its node at once), their writes in flight together up to the window's bound.
    const binds = new BindWindow(this.config.BINDS_IN_FLIGHT);
    const failed = (pod: PodRecord) => (error: unknown) => this.logger.error(`${podRef(pod)}: ${(error as Error).message}`);
    for (const pod of this.pods.list()) {
      // A mirror's static pod runs from its node's own files: no scheduling, no node work.
      if (pod.mirror) continue;
      try {
        const sent = this.assignments.get(pod.uid);
        const generation = pod.manifest.metadata.generation ?? 1;
        if (!pod.nodeName && !pod.deletion) await this.schedule(pod, candidates, binds);
        else if (pod.nodeName && !pod.deletion && (sent?.kind !== 'assigned' || sent.generation < generation)) {
          const node = pod.nodeName;
          await binds.run(() => this.assign(pod, node), failed(pod));
        } else if (pod.nodeName && pod.deletion && sent?.kind !== 'unassigned') {
          const node = pod.nodeName;
          await binds.run(() => this.unassign(pod, node), failed(pod));
        }
      } catch (error) {
        // One pod's trouble never holds up the others.
        failed(pod)(error);
      }
    }
    await binds.drain();
    await this.purgeTombstones();
    await this.purgeHistory();
  }

  /**
   * A pod that is gone leaves the pods stream: its aggregate up to its last fact (a later pod
   * of the same name, written after, stays) and its status subject. After
   * HISTORY_RETENTION_SECONDS, so every projection has read the removal first. Start-up cost
   * then follows the live pods, not every pod ever created; history is in the events stream.
   */
  private async purgeHistory(): Promise<void> {
    const due = Date.now() - this.config.HISTORY_RETENTION_SECONDS * 1000;
    for (const [uid, pod] of this.gone) {
      if (pod.seenMs > due) continue;
      try {
        await this.bus.purgeSubject(STREAMS.pods, SUBJECTS.pod(pod.namespace, pod.name), { upToSeq: pod.subjectSeq });
        if (pod.nodeName) await this.bus.purgeSubject(STREAMS.pods, SUBJECTS.podStatus(pod.nodeName, uid));
        this.gone.delete(uid);
      } catch (error) {
        this.logger.warn(`history of ${pod.namespace}/${pod.name} (${uid}) not purged: ${(error as Error).message}`);
      }
    }
  }

  /**
   * The pod garbage collector's part: a deleted pod whose node does not exist, or has not been
   * heard from for the node grace period since the deletion, will never be confirmed gone by
   * it. Its deletion is finalised with `PodDeletionFinalized`, and its assignment subject
   * purged like any other whose pod is gone. Decided from the log and the clock alone.
   */
  private async finalizeDeletions(): Promise<void> {
    const now = Date.now();
    const graceMs = this.config.NODE_GRACE_SECONDS * 1000;
    for (const pod of this.pods.list()) {
      if (!pod.deletion || !pod.nodeName || pod.mirror) continue;
      const record = this.nodes.get(pod.nodeName);
      const node = record ? { ready: isNodeReady(record, now, graceMs), lastHeartbeatMs: record.lastHeartbeatMs } : undefined;
      const due = deletionFinalizeTimeMs(Date.parse(pod.deletion.timestamp), node, graceMs, pod.eviction !== undefined);
      if (due === undefined || now < due) continue;
      const message = record
        ? `node ${pod.nodeName} has not been heard from since ${new Date(record.lastHeartbeatMs).toISOString()}`
        : `node ${pod.nodeName} does not exist`;
      try {
        await this.bus.publish(
          SUBJECTS.pod(pod.namespace, pod.name),
          'PodDeletionFinalized',
          { uid: pod.uid, message },
          { correlationId: pod.uid, expectedLastSubjectSequence: pod.subjectSeq },
        );
        this.logger.log(`finalised the deletion of ${podRef(pod)}: ${message}`);
        this.purgeable.set(pod.uid, pod.nodeName);
      } catch (error) {
        if (!(error instanceof SequenceConflictError)) throw error;
      }
    }
  }

  /**
   * Once a node has let a pod go, its assignment subject is purged: the tombstone did its
   * work, and an agent's rebuild keeps costing what the node runs now, not what it ever ran.
   */
  private async purgeTombstones(): Promise<void> {
    for (const [uid, node] of this.purgeable) {
      try {
        await this.bus.purgeSubject(STREAMS.assign, SUBJECTS.assignment(node, uid));
        this.assignments.forget(uid);
        this.purgeable.delete(uid);
      } catch (error) {
        this.logger.warn(`assignment of ${uid} on ${node} not purged: ${(error as Error).message}`);
      }
    }
  }

  /**
   * Picks the best node for the pod and counts it there for the rest of the pass at once, then
   * sends the binding through the window: `PodScheduled` with the subject's expected sequence
   * (so two schedulers never both bind it), and only once that is stored, `PodAssigned`.
   * A pod that fits nowhere gets the reason recorded.
   */
  private async schedule(pod: PodRecord, candidates: NodeCandidate[], binds: BindWindow): Promise<void> {
    const attempt = startAttempt();
    const stopFilter = phaseTimer('filter_score');
    const placement = searchNodes(pod.manifest.spec, candidates, { start: this.nextStart, percentageOfNodesToScore: this.config.PERCENTAGE_OF_NODES_TO_SCORE });
    stopFilter();
    this.nextStart = placement.nextStart;
    if (placement.node === undefined) {
      attempt('unschedulable');
      // With no node at all the pod's view already says "no nodes available to schedule pods", as Kubernetes does.
      if (candidates.length > 0)
        await binds.run(
          () => this.recordUnschedulable(pod, placement.message),
          (error) => this.logger.error(`${podRef(pod)}: ${(error as Error).message}`),
        );
      return;
    }
    const node = placement.node;
    // Counted now, so the next decision in this pass sees it; a lost race leaves the node
    // counted a little full until the next pass rebuilds the candidates from the log.
    const chosen = candidates.findIndex((c) => c.name === node);
    if (chosen !== -1) candidates[chosen] = withPod(candidates[chosen], pod.manifest.spec);
    await binds.run(
      async () => attempt((await this.bind(pod, node)) ? 'scheduled' : 'error'),
      (error) => {
        attempt('error');
        this.logger.error(`${podRef(pod)}: ${(error as Error).message}`);
      },
    );
  }

  /** Writes the binding, then the node's work: `PodScheduled` (compare-and-set), then `PodAssigned`. False when the pod changed meanwhile. */
  private async bind(pod: PodRecord, node: string): Promise<boolean> {
    const stopBind = phaseTimer('bind');
    try {
      const { seq, envelope } = await this.bus.publish(
        SUBJECTS.pod(pod.namespace, pod.name),
        'PodScheduled',
        { uid: pod.uid, nodeName: node },
        { correlationId: pod.uid, expectedLastSubjectSequence: pod.subjectSeq, ...(pod.eventId ? { causationId: pod.eventId } : {}) },
      );
      // Fold our own write now; the stream's copy of it arrives later.
      pod.nodeName = node;
      delete pod.unschedulable;
      pod.subjectSeq = Math.max(pod.subjectSeq, seq);
      pod.eventId = envelope.id;
      this.logger.log(`bound ${podRef(pod)} to ${node}`);
      await this.assign(pod, node);
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
  private async recordUnschedulable(pod: PodRecord, message: string): Promise<void> {
    if (pod.unschedulable === message) return;
    try {
      const { seq } = await this.bus.publish(
        SUBJECTS.pod(pod.namespace, pod.name),
        'PodUnschedulable',
        { uid: pod.uid, message },
        { correlationId: pod.uid, expectedLastSubjectSequence: pod.subjectSeq, ...(pod.eventId ? { causationId: pod.eventId } : {}) },
      );
      pod.unschedulable = message;
      pod.subjectSeq = Math.max(pod.subjectSeq, seq);
      this.logger.log(`${podRef(pod)} unschedulable: ${message}`);
    } catch (error) {
      if (!(error instanceof SequenceConflictError)) throw error;
      this.logger.log(`${podRef(pod)} changed while recording why it is unschedulable; deciding again`);
    }
  }

  private async assign(pod: PodRecord, node: string): Promise<void> {
    await this.bus.publish(
      SUBJECTS.assignment(node, pod.uid),
      'PodAssigned',
      { pod: { ...pod.manifest, spec: { ...pod.manifest.spec, nodeName: node } } },
      // A fixed id per generation: a retried assignment is stored once.
      {
        correlationId: pod.uid,
        id: `assign-${pod.uid}-${pod.manifest.metadata.generation ?? 1}`,
        // The binding (or the update) this assignment carries out.
        ...(pod.eventId ? { causationId: pod.eventId } : {}),
      },
    );
    this.assignments.assume(pod.uid, { kind: 'assigned', generation: pod.manifest.metadata.generation ?? 1 });
  }

  private async unassign(pod: PodRecord, node: string): Promise<void> {
    await this.bus.publish(
      SUBJECTS.assignment(node, pod.uid),
      'PodUnassigned',
      { uid: pod.uid, namespace: pod.namespace, name: pod.name, gracePeriodSeconds: pod.deletion?.gracePeriodSeconds ?? 30 },
      { correlationId: pod.uid, id: `unassign-${pod.uid}`, ...(pod.eventId ? { causationId: pod.eventId } : {}) },
    );
    this.assignments.assume(pod.uid, { kind: 'unassigned' });
    this.logger.log(`unassigned ${podRef(pod)} from ${node}`);
  }
}
