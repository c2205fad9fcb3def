import { Inject, Injectable } from '@nestjs/common';
import { ListWatch, type Delivery } from '#bus';
import type { AnyEnvelope } from '#contracts';
import { compareText, NodeTable, PodProjection, type NodeRecord, type PodRecord } from '#domain';
import { CLOCK, type Clock } from '#workqueue';

/** A pod that is gone, as its history's purge needs it. */
export interface GonePod {
  namespace: string;
  name: string;
  nodeName?: string;
  /** The last sequence of its aggregate's subject: the purge stops there. */
  subjectSeq: number;
  /** When the scheduler saw it go (ms since the epoch). */
  seenMs: number;
}

/**
 * The scheduler's view of the cluster, kube-scheduler's cache: the pods (with their status
 * reports) and the nodes, folded from the streams, and what those facts say can be purged.
 */
@Injectable()
export class SchedulerCache {
  /** The fold behind the pods cache (removed pods included, with their subjects' sequences). */
  private readonly podFold = new PodProjection();
  private readonly nodeFold = new NodeTable();
  /** Live pods by namespace/name, in that order: the records of the fold, so a binding folded here is seen at once. */
  readonly pods = new ListWatch<PodRecord>({
    fold: (envelope, delivery) => {
      const record = this.podFold.apply(envelope, delivery.seq, delivery.subject);
      // The node let the pod go: its assignment subject can go too.
      if (envelope.type === 'PodStatusReported' && envelope.data.removed && record?.removed) this.purgeable.set(record.uid, envelope.data.nodeName);
      return record && { key: `${record.namespace}/${record.name}`, object: record, exists: !record.removed };
    },
    skip: (delivery) => this.podFold.skip(delivery.subject, delivery.seq),
    identity: (p) => p.uid,
    compare: (a, b) => compareText(a.namespace, b.namespace) || compareText(a.name, b.name),
  });
  readonly nodes = new ListWatch<NodeRecord>({
    fold: (envelope, delivery) => {
      const record = this.nodeFold.apply(envelope, delivery.seq);
      return record && { key: record.name, object: record, exists: true };
    },
    compare: (a, b) => compareText(a.name, b.name),
  });
  /** Pods their node let go of, by uid, with the node: their assignment subjects can go. */
  readonly purgeable = new Map<string, string>();
  /** Pods that are gone, by uid: their history leaves the pods stream once HISTORY_RETENTION_SECONDS have passed. */
  readonly gone = new Map<string, GonePod>();

  constructor(@Inject(CLOCK) private readonly clock: Clock) {
    // A pod that is gone leaves the pods stream later (see purgeHistory); a mirror's history is its agent's.
    this.pods.on('delete', (record) => {
      if (!record.removed || record.mirror || this.gone.has(record.uid)) return;
      this.gone.set(record.uid, {
        namespace: record.namespace,
        name: record.name,
        ...(record.nodeName ? { nodeName: record.nodeName } : {}),
        subjectSeq: record.subjectSeq,
        seenMs: this.clock.now(),
      });
    });
  }

  /** Hears every message folded in, after the fold (what the scheduler decides to run a pass on). */
  private readonly folded = new Set<(envelope: AnyEnvelope) => void>();

  onFolded(listener: (envelope: AnyEnvelope) => void): void {
    this.folded.add(listener);
  }

  /** A fact from the pods stream: status reports say when a node let a pod go, mirrors take room on their node. */
  applyPod(e: AnyEnvelope, delivery: Delivery): void {
    const before = this.pods.latestResourceVersion;
    this.pods.apply(e, delivery);
    if (this.pods.latestResourceVersion > before) for (const listener of this.folded) listener(e);
  }

  /** A skipped (invalid) message of the pods stream still counts for its subject's sequence. */
  skipPod(delivery: Delivery): void {
    this.pods.skip(delivery);
  }

  applyNode(e: AnyEnvelope, delivery: Delivery): void {
    const before = this.nodes.latestResourceVersion;
    this.nodes.apply(e, delivery);
    if (this.nodes.latestResourceVersion > before) for (const listener of this.folded) listener(e);
  }

  /** The live pods by the node they are bound to. */
  podsByNode(): Map<string, PodRecord[]> {
    const byNode = new Map<string, PodRecord[]>();
    for (const pod of this.pods.list()) {
      if (pod.nodeName === undefined) continue;
      const list = byNode.get(pod.nodeName);
      if (list) list.push(pod);
      else byNode.set(pod.nodeName, [pod]);
    }
    return byNode;
  }
}
