import { Inject, Injectable, Logger } from '@nestjs/common';
import { BUS, SequenceConflictError, type Bus } from '#bus';
import { SUBJECTS } from '#contracts';
import { deletionFinalizeTimeMs, evictionTimeMs, heldEvictions, inZone, isNodeReady, type PodRecord } from '#domain';
import { podRef } from '#observability';
import { SchedulerCache } from '../cache/scheduler-cache.service.js';
import { SCHEDULER_CONFIG } from '../scheduler.constants.js';
import type { SchedulerConfig } from '../scheduler.config.js';

/**
 * kube-controller-manager's node lifecycle controller (node readiness, the taint manager's
 * evictions) and the pod garbage collector's part for pods on lost nodes. Each step takes
 * the pass's one clock reading, so what it records is the readiness the pass schedules with.
 */
@Injectable()
export class NodeLifecycleService {
  private readonly logger = new Logger(NodeLifecycleService.name);
  /** Each node's readiness at the last step, to record its transitions. */
  private readonly readiness = new Map<string, boolean>();
  /**
   * Transitions seen while this scheduler could not write (a standby, a lapsed lease), by
   * node: the readiness they went to. Recorded once it writes again, unless the node went
   * back meanwhile: across a change of leader a transition is recorded at least once.
   */
  private readonly unrecorded = new Map<string, boolean>();
  /** The step under way: a standby's resync and a pass never interleave their steps. */
  private stepping: Promise<void> = Promise.resolve();
  /** Whether the last step held every eviction (no node Ready), and when the last such time ended. */
  private disrupted = false;
  private resumedAtMs = 0;

  constructor(
    @Inject(SCHEDULER_CONFIG) private readonly config: SchedulerConfig,
    @Inject(BUS) private readonly bus: Bus,
    private readonly cache: SchedulerCache,
  ) {}

  /** Whether the node was Ready at the last step: a heartbeat of such a node changes no decision. */
  wasReady(name: string): boolean {
    return this.readiness.get(name) === true;
  }

  /**
   * The node lifecycle controller's part: a node turns NotReady (and unreachable-tainted)
   * once its heartbeats stop for the grace period, with a NodeNotReady event, and NodeReady
   * when they return; the pods of an unreachable node are evicted once they stop tolerating
   * it. Everything follows from heartbeat times in the log, so a restarted scheduler decides
   * the same, except after a time with no node Ready (see heldEvictions): when that ended is
   * the process's own memory, as it is kube-controller-manager's.
   */
  monitorNodes(now: number, mayWrite: () => boolean = () => true): Promise<void> {
    const step = this.stepping.then(() => this.monitorOnce(now, mayWrite));
    this.stepping = step.catch(() => undefined);
    return step;
  }

  private async monitorOnce(now: number, mayWrite: () => boolean): Promise<void> {
    const graceMs = this.config.NODE_GRACE_SECONDS * 1000;
    let podsByNode: Map<string, PodRecord[]> | undefined;
    const nodes = this.cache.nodes.list().map((record) => ({ record, labels: record.node.metadata.labels, ready: isNodeReady(record, now, graceMs) }));
    const held = heldEvictions(nodes);
    if (held.all !== this.disrupted) {
      this.disrupted = held.all;
      // Out of it, a node still NotReady is tainted afresh, as Kubernetes taints it again: its pods' tolerations count from now.
      if (!held.all) this.resumedAtMs = now;
      this.logger.warn(
        held.all
          ? 'no node is Ready: holding every eviction, as the likelier cause is the bus, not every node (master disruption mode)'
          : 'a node is Ready again: the pods of nodes still NotReady are evicted once they stop tolerating it from now',
      );
    }
    for (const { record: node, labels, ready } of nodes) {
      const before = this.readiness.get(node.name);
      this.readiness.set(node.name, ready);
      let record = false;
      if (before !== undefined && before !== ready) {
        // Back to where it was before a transition never recorded: nothing to record.
        if (!this.unrecorded.delete(node.name)) {
          if (mayWrite()) record = true;
          else this.unrecorded.set(node.name, ready);
        }
      } else if (this.unrecorded.get(node.name) === ready && mayWrite()) {
        this.unrecorded.delete(node.name);
        record = true;
      }
      if (record) {
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
      if (ready || held.all || inZone(held.zones, labels)) continue;
      const taintedSince = Math.max(node.lastHeartbeatMs + graceMs, this.resumedAtMs);
      podsByNode ??= this.cache.podsByNode();
      for (const pod of podsByNode.get(node.name) ?? []) {
        if (pod.mirror || pod.deletion) continue;
        const due = evictionTimeMs(pod.manifest.spec, taintedSince, this.config.EVICTION_TOLERATION_SECONDS);
        if (due === undefined || now < due) continue;
        // A standby keeps the memory above, so that it decides as the leader does once it leads; it writes nothing.
        if (!mayWrite()) break;
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

  /**
   * The pod garbage collector's part: a deleted pod whose node does not exist, or has not been
   * heard from for the node grace period since the deletion, will never be confirmed gone by
   * it. Its deletion is finalised with `PodDeletionFinalized`, and its assignment subject
   * purged like any other whose pod is gone. Decided from the log and the clock alone.
   */
  async finalizeDeletions(now: number, mayWrite: () => boolean = () => true): Promise<void> {
    const graceMs = this.config.NODE_GRACE_SECONDS * 1000;
    for (const pod of this.cache.pods.list()) {
      if (!pod.deletion || !pod.nodeName || pod.mirror) continue;
      const record = this.cache.nodes.get(pod.nodeName);
      // While no node is Ready, the silence of a node that exists proves nothing; after it, the node has a whole grace again.
      if (record && this.disrupted) continue;
      const node = record ? { ready: isNodeReady(record, now, graceMs), lastHeartbeatMs: Math.max(record.lastHeartbeatMs, this.resumedAtMs) } : undefined;
      const due = deletionFinalizeTimeMs(Date.parse(pod.deletion.timestamp), node, graceMs, pod.eviction !== undefined);
      if (due === undefined || now < due) continue;
      const message = record
        ? `node ${pod.nodeName} has not been heard from since ${new Date(record.lastHeartbeatMs).toISOString()}`
        : `node ${pod.nodeName} does not exist`;
      if (!mayWrite()) return;
      try {
        await this.bus.publish(
          SUBJECTS.pod(pod.namespace, pod.name),
          'PodDeletionFinalized',
          { uid: pod.uid, message },
          { correlationId: pod.uid, expectedLastSubjectSequence: pod.subjectSeq },
        );
        this.logger.log(`finalised the deletion of ${podRef(pod)}: ${message}`);
        this.cache.purgeable.set(pod.uid, pod.nodeName);
      } catch (error) {
        if (!(error instanceof SequenceConflictError)) throw error;
      }
    }
  }
}
