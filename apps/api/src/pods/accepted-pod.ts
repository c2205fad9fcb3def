import { MAX_MANAGED_FIELDS, type PodManifest } from '#contracts';
import { applyPodDefaults, encodeManagedFields, POD_APPLY_SCHEMA, podView, updateManagedFields, type Managers } from '#domain';

/** A pod as an empty Pod decodes in Kubernetes: what a create's fields are compared with. */
export const EMPTY_POD = { metadata: {}, spec: { containers: null }, status: {} };

/** What the server sets on a pod it creates. */
export interface CreateStamp {
  namespace: string;
  uid: string;
  /** Whole seconds, as Kubernetes writes it. */
  creationTimestamp: string;
}

/**
 * The pod a create stores, built from a manifest the contract has validated: its defaults,
 * and the metadata the server owns (never taken from the client, as in Kubernetes).
 */
export function acceptedPod(manifest: PodManifest, stamp: CreateStamp): PodManifest {
  const { status: _ignored, ...accepted } = applyPodDefaults(manifest);
  const { resourceVersion: _rv, deletionTimestamp: _dt, deletionGracePeriodSeconds: _dg, generation: _g, ...clientMeta } = manifest.metadata;
  return { ...accepted, metadata: { ...clientMeta, namespace: stamp.namespace, uid: stamp.uid, creationTimestamp: stamp.creationTimestamp, generation: 1 } };
}

/** A create's managers: those the request brought, plus `manager` owning every field the pod has (defaults included). */
export function createdManagers(pod: PodManifest, requested: Managers, manager: string, now: string): Managers {
  const { status: _status, ...created } = podView({
    namespace: pod.metadata.namespace ?? '',
    name: pod.metadata.name,
    uid: pod.metadata.uid ?? '',
    manifest: pod,
    subjectSeq: 0,
    resourceVersion: 0,
    removed: false,
  });
  return updateManagedFields(EMPTY_POD, created, POD_APPLY_SCHEMA, requested, manager, now);
}

/** Writes `managers` into the pod's metadata (none: no managedFields). */
export function withManagedFields(pod: PodManifest, managers: Managers): PodManifest {
  const managedFields = encodeManagedFields(managers);
  if (managedFields) pod.metadata.managedFields = managedFields;
  else delete pod.metadata.managedFields;
  return pod;
}

/**
 * Whether an accepted pod is valid by construction, so its PodCreated need not be read back
 * through the contract classes before it is published (the bus's `prevalidated`). It holds
 * for every pod `acceptedPod` and `withManagedFields` build from a validated manifest (a spec
 * checks that on the contract), except past the one limit the server's own additions can
 * cross: one manager more than the request brought. Such a pod takes the full check, which
 * refuses it naming the field.
 */
export function validByConstruction(pod: PodManifest): boolean {
  return (pod.metadata.managedFields?.length ?? 0) <= MAX_MANAGED_FIELDS;
}
