import { isUUID } from 'class-validator';
import type { PublishOptions } from '#bus';
import { dns1123SubdomainErrors, SUBJECTS, type MessageData, type MessageType } from '#contracts';
import type { PodRecord } from '#domain';

/** One message the scheduler writes: where, what, and how (its options, `prevalidated` included). */
export interface SchedulerMessage<T extends MessageType> {
  subject: string;
  type: T;
  data: MessageData<T>;
  options: PublishOptions;
}

/**
 * Whether a node name fits where a binding writes it (PodScheduled's `nodeName`, the pod's
 * `spec.nodeName`): a DNS-1123 subdomain. A registration's contract takes any subject token,
 * so this is the one thing a binding adds that the contracts it was built from never checked.
 */
const isNodeName = (node: string): boolean => dns1123SubdomainErrors(node).length === 0;

/** The binding's facts and tombstones name the pod by a uid: a UUID, as the API assigns. */
const isPodUid = (uid: string): boolean => isUUID(uid);

/** The causation of what is decided from the pod: its newest message on its own subject. */
const causedBy = (pod: PodRecord): { causationId?: string } => (pod.eventId ? { causationId: pod.eventId } : {});

/**
 * The scheduler's own messages, built in one place from the cache's records, which hold only
 * what the contracts let in (every pod and node message is validated as it is read). Each is
 * `prevalidated` (the bus skips running the classes over it again) exactly when it is valid by
 * construction: a spec reads every message these build, over the fixtures and generated pods,
 * back through the full contract check. The few fields a binding adds that no contract it was
 * built from checked (the node's name in a pod, the uid as a UUID) are checked here; a message
 * that fails one takes the full check, which refuses it naming the field.
 */
export const schedulerMessages = {
  /**
   * The binding, on the pod's subject, with compare-and-set against the sequence the decision
   * was made at (the pod's last, by default): two schedulers never both bind it.
   */
  podScheduled(pod: PodRecord, node: string, decidedAt = pod.subjectSeq): SchedulerMessage<'PodScheduled'> {
    return {
      subject: SUBJECTS.pod(pod.namespace, pod.name),
      type: 'PodScheduled',
      data: { uid: pod.uid, nodeName: node },
      options: { correlationId: pod.uid, expectedLastSubjectSequence: decidedAt, ...causedBy(pod), prevalidated: isPodUid(pod.uid) && isNodeName(node) },
    };
  },

  /** Why no node fits, on the pod's subject, with compare-and-set against the sequence it was decided at. */
  podUnschedulable(pod: PodRecord, message: string, decidedAt = pod.subjectSeq): SchedulerMessage<'PodUnschedulable'> {
    return {
      subject: SUBJECTS.pod(pod.namespace, pod.name),
      type: 'PodUnschedulable',
      data: { uid: pod.uid, message },
      options: { correlationId: pod.uid, expectedLastSubjectSequence: decidedAt, ...causedBy(pod), prevalidated: isPodUid(pod.uid) && message.length > 0 },
    };
  },

  /**
   * The node's work: the pod with `spec.nodeName` set, on the node's subject for it, under a
   * fixed id per generation, so a retried assignment is stored once.
   */
  podAssigned(pod: PodRecord, node: string): SchedulerMessage<'PodAssigned'> {
    const generation = pod.manifest.metadata.generation ?? 1;
    return {
      subject: SUBJECTS.assignment(node, pod.uid),
      type: 'PodAssigned',
      data: { pod: { ...pod.manifest, spec: { ...pod.manifest.spec, nodeName: node } } },
      options: { correlationId: pod.uid, id: `assign-${pod.uid}-${generation}`, ...causedBy(pod), prevalidated: pod.uid.length > 0 && isNodeName(node) },
    };
  },

  /** The tombstone: the node must let the deleted pod go; a fixed id, so a retry is stored once. */
  podUnassigned(pod: PodRecord, node: string): SchedulerMessage<'PodUnassigned'> {
    return {
      subject: SUBJECTS.assignment(node, pod.uid),
      type: 'PodUnassigned',
      data: { uid: pod.uid, namespace: pod.namespace, name: pod.name, gracePeriodSeconds: pod.deletion?.gracePeriodSeconds ?? 30 },
      options: { correlationId: pod.uid, id: `unassign-${pod.uid}`, ...causedBy(pod), prevalidated: isPodUid(pod.uid) },
    };
  },
};
