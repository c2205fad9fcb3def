import { podOfSubject, type AnyEnvelope, type PodCondition, type PodManifest, type PodStatus, type Pod } from '#contracts';
import { compareText } from './compare-text.js';

/** What the log says about one pod name: the current incarnation and its facts. */
export interface PodRecord {
  namespace: string;
  name: string;
  uid: string;
  manifest: PodManifest;
  /** Last sequence on the pod's own subject, for optimistic concurrency (messages skipped as invalid included). */
  subjectSeq: number;
  /** Envelope id of the newest message on the pod's own subject: the cause of what is decided from it. */
  eventId?: string;
  /** Sequence of the newest fact about this pod (its resourceVersion). */
  resourceVersion: number;
  nodeName?: string;
  deletion?: { timestamp: string; gracePeriodSeconds: number };
  /** Why the pod was evicted, when it was. */
  eviction?: string;
  /** Kubernetes' DisruptionTarget condition: an eviction by the taint manager or through the Eviction API. */
  disruption?: { reason: 'DeletionByTaintManager' | 'EvictionByEvictionAPI'; message: string; at: string };
  status?: PodStatus;
  /** True once the pod is gone: deleted before binding, or its node confirmed removal. */
  removed: boolean;
  /** Why the scheduler found no node for it, while unbound: its last PodUnschedulable message. */
  unschedulable?: string;
  /** A static pod's mirror: written by its node's agent, read-only through the API. */
  mirror?: boolean;
  /** RFC 3339 time of the binding (PodScheduled's last transition). */
  scheduledAt?: string;
}

const rfc3339 = (iso: string): string => iso.replace(/\.\d+Z$/, 'Z');

/** Conditions with lastTransitionTime: kept from the previous report while the status holds, else the time of this report. */
function withTransitions(conditions: PodCondition[] | undefined, previous: PodCondition[] | undefined, at: string): PodCondition[] | undefined {
  return conditions?.map((c) => {
    const before = previous?.find((p) => p.type === c.type);
    const since = before?.status === c.status ? before.lastTransitionTime : undefined;
    return { ...c, lastTransitionTime: since ?? c.lastTransitionTime ?? rfc3339(at) };
  });
}

const key = (namespace: string, name: string): string => `${namespace}/${name}`;

/**
 * Folds the pods stream (aggregates and status reports) into the current pods. Pure:
 * feeding the same messages in the same order always gives the same state.
 */
export class PodProjection {
  private readonly byKey = new Map<string, PodRecord>();
  private readonly keyByUid = new Map<string, string>();
  /** Last sequence on each pod subject, whether or not its message was valid. */
  private readonly subjectSeqs = new Map<string, number>();
  /** Last sequence applied or skipped. */
  lastSeq = 0;

  /**
   * Counts a message at `seq` on `subject` without folding it: what a consumer does with a
   * message it skipped as invalid. The next write on that subject expects this sequence, so
   * a message nobody can read never makes its pod's name unusable.
   */
  skip(subject: string, seq: number): void {
    this.lastSeq = Math.max(this.lastSeq, seq);
    const pod = podOfSubject(subject);
    if (!pod) return;
    const k = key(pod.namespace, pod.name);
    this.subjectSeqs.set(k, Math.max(this.subjectSeqs.get(k) ?? 0, seq));
    const record = this.byKey.get(k);
    if (record) record.subjectSeq = Math.max(record.subjectSeq, seq);
  }

  /** The sequence the next write on a pod's subject must expect (0 when the subject is empty). */
  subjectSeq(namespace: string, name: string): number {
    const k = key(namespace, name);
    return Math.max(this.subjectSeqs.get(k) ?? 0, this.byKey.get(k)?.subjectSeq ?? 0);
  }

  /** Folds one message; with its `subject`, a fact the fold ignores still counts for that subject's sequence. */
  apply(envelope: AnyEnvelope, seq: number, subject?: string): PodRecord | undefined {
    const record = this.fold(envelope, seq);
    if (subject !== undefined) this.skip(subject, seq);
    return record;
  }

  private fold(envelope: AnyEnvelope, seq: number): PodRecord | undefined {
    this.lastSeq = Math.max(this.lastSeq, seq);
    switch (envelope.type) {
      case 'PodCreated': {
        const pod = envelope.data.pod;
        const namespace = pod.metadata.namespace ?? 'default';
        const uid = pod.metadata.uid ?? envelope.correlationId;
        const record: PodRecord = {
          namespace,
          name: pod.metadata.name,
          uid,
          manifest: pod,
          subjectSeq: seq,
          eventId: envelope.id,
          resourceVersion: seq,
          ...(pod.spec.nodeName ? { nodeName: pod.spec.nodeName } : {}),
          removed: false,
        };
        this.byKey.set(key(namespace, record.name), record);
        this.keyByUid.set(uid, key(namespace, record.name));
        return record;
      }
      case 'MirrorPodUpdated': {
        const pod = envelope.data.pod;
        const namespace = pod.metadata.namespace ?? 'default';
        const uid = pod.metadata.uid ?? envelope.correlationId;
        const existing = this.byKey.get(key(namespace, pod.metadata.name));
        // A pod of the API's own holds the name: the mirror cannot take it, as in Kubernetes.
        if (existing && !existing.removed && !existing.mirror) return undefined;
        const record: PodRecord = {
          namespace,
          name: pod.metadata.name,
          uid,
          manifest: pod,
          subjectSeq: this.subjectSeq(namespace, pod.metadata.name),
          resourceVersion: seq,
          ...(pod.spec.nodeName ? { nodeName: pod.spec.nodeName } : {}),
          ...(existing?.uid === uid && existing.status ? { status: existing.status } : {}),
          removed: false,
          mirror: true,
        };
        this.byKey.set(key(namespace, record.name), record);
        this.keyByUid.set(uid, key(namespace, record.name));
        return record;
      }
      case 'PodUpdated': {
        const record = this.byUid(envelope.data.uid);
        if (!record) return undefined;
        record.manifest = envelope.data.pod;
        record.subjectSeq = record.resourceVersion = seq;
        record.eventId = envelope.id;
        return record;
      }
      case 'PodScheduled': {
        const record = this.byUid(envelope.data.uid);
        if (!record) return undefined;
        record.nodeName = envelope.data.nodeName;
        record.scheduledAt = rfc3339(envelope.time);
        delete record.unschedulable;
        record.subjectSeq = record.resourceVersion = seq;
        record.eventId = envelope.id;
        return record;
      }
      case 'PodUnschedulable': {
        const record = this.byUid(envelope.data.uid);
        if (!record) return undefined;
        record.unschedulable = envelope.data.message;
        // Not a cause of anything: the next decision still follows from the pod's spec message.
        record.subjectSeq = record.resourceVersion = seq;
        return record;
      }
      case 'PodDeletionRequested': {
        const record = this.byUid(envelope.data.uid);
        if (!record) return undefined;
        record.deletion = { timestamp: envelope.data.deletionTimestamp, gracePeriodSeconds: envelope.data.gracePeriodSeconds };
        if (envelope.data.disruption)
          record.disruption = { reason: envelope.data.disruption, message: 'Eviction API: evicting', at: envelope.data.deletionTimestamp };
        record.subjectSeq = record.resourceVersion = seq;
        record.eventId = envelope.id;
        // A pod no node ever took has nothing to stop: it is gone at once, as in Kubernetes.
        // A deleted mirror goes too; its static pod runs on, and its agent shows it again.
        if (!record.nodeName || record.mirror) record.removed = true;
        return record;
      }
      case 'PodEvicted': {
        const record = this.byUid(envelope.data.uid);
        if (!record || record.deletion) return undefined;
        record.deletion = { timestamp: envelope.data.deletionTimestamp, gracePeriodSeconds: envelope.data.gracePeriodSeconds };
        record.eviction = envelope.data.message;
        record.disruption = { reason: 'DeletionByTaintManager', message: envelope.data.message, at: envelope.data.deletionTimestamp };
        record.subjectSeq = record.resourceVersion = seq;
        record.eventId = envelope.id;
        return record;
      }
      case 'PodDeletionFinalized': {
        const record = this.byUid(envelope.data.uid);
        if (!record || record.removed || !record.deletion) return undefined;
        record.removed = true;
        record.subjectSeq = record.resourceVersion = seq;
        record.eventId = envelope.id;
        return record;
      }
      case 'PodStatusReported': {
        const record = this.byUid(envelope.data.uid);
        // Only the node the pod is bound to speaks for it.
        if (!record || record.removed || (record.nodeName !== undefined && record.nodeName !== envelope.data.nodeName)) return undefined;
        const conditions = withTransitions(envelope.data.status.conditions, record.status?.conditions, envelope.time);
        record.status = { ...envelope.data.status, ...(conditions ? { conditions } : {}) };
        record.resourceVersion = seq;
        if (envelope.data.removed) record.removed = true;
        return record;
      }
      default:
        return undefined;
    }
  }

  /** The record of this exact incarnation: a late fact about an earlier pod of the same name finds nothing. */
  byUid(uid: string): PodRecord | undefined {
    const k = this.keyByUid.get(uid);
    const record = k === undefined ? undefined : this.byKey.get(k);
    return record?.uid === uid ? record : undefined;
  }

  /** The record for a name, removed or not (its subjectSeq guards a re-create). */
  record(namespace: string, name: string): PodRecord | undefined {
    return this.byKey.get(key(namespace, name));
  }

  /** The pod as the API shows it, or undefined when it does not exist. */
  get(namespace: string, name: string): PodRecord | undefined {
    const record = this.byKey.get(key(namespace, name));
    return record && !record.removed ? record : undefined;
  }

  /** Existing pods, optionally in one namespace, ordered by namespace then name. */
  list(namespace?: string): PodRecord[] {
    return [...this.byKey.values()]
      .filter((r) => !r.removed && (namespace === undefined || r.namespace === namespace))
      .sort((a, b) => compareText(a.namespace, b.namespace) || compareText(a.name, b.name));
  }
}

/** The Kubernetes Pod view of a record. */
export function podView(record: PodRecord): Pod {
  const created = record.manifest.metadata.creationTimestamp;
  const scheduled: PodCondition = record.nodeName
    ? { type: 'PodScheduled', status: 'True', ...((record.scheduledAt ?? created) ? { lastTransitionTime: record.scheduledAt ?? created } : {}) }
    : {
        type: 'PodScheduled',
        status: 'False',
        reason: 'Unschedulable',
        message: record.unschedulable ?? 'no nodes available to schedule pods',
        ...(created ? { lastTransitionTime: created } : {}),
      };
  const reported = record.status;
  // An evicted pod says so, as Kubernetes' DisruptionTarget condition does.
  const disruption: PodCondition[] = record.disruption
    ? [
        {
          type: 'DisruptionTarget',
          status: 'True',
          reason: record.disruption.reason,
          message: record.disruption.message,
          lastTransitionTime: record.disruption.at,
        },
      ]
    : [];
  const status: PodStatus = reported
    ? { ...reported, conditions: [scheduled, ...disruption, ...(reported.conditions ?? []).filter((c) => c.type !== 'PodScheduled')] }
    : { phase: 'Pending', conditions: [scheduled, ...disruption] };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      ...record.manifest.metadata,
      namespace: record.namespace,
      uid: record.uid,
      resourceVersion: String(record.resourceVersion),
      ...(record.deletion ? { deletionTimestamp: record.deletion.timestamp, deletionGracePeriodSeconds: record.deletion.gracePeriodSeconds } : {}),
    },
    spec: { ...record.manifest.spec, ...(record.nodeName ? { nodeName: record.nodeName } : {}) },
    status,
  };
}
