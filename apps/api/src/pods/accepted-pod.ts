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

/** The metadata a create's field set never holds (stripped by the server, see managed-fields.ts): scalars only, so no field below them can stay. */
const STRIPPED_SCALARS = ['name', 'namespace', 'uid', 'creationTimestamp', 'generation', 'resourceVersion'] as const;
/** How many pod shapes keep their create's fields (a few templates make most pods). */
const CREATED_FIELDS_KEPT = 64;
/** The fields `manager` owns after creating a pod of one shape, by that shape (see createdFieldsKey); null for none. */
const createdFields = new Map<string, Readonly<Record<string, unknown>> | null>();

/** The inputs a create's field set depends on, as text: the pod but for the stripped scalars and the manager's name; undefined when a stripped field is not a scalar. */
function createdFieldsKey(pod: PodManifest, manager: string): string | undefined {
  const metadata: Record<string, unknown> = { ...pod.metadata };
  for (const field of STRIPPED_SCALARS) {
    const value = metadata[field];
    if (value !== undefined && typeof value !== 'string' && typeof value !== 'number') return undefined;
    delete metadata[field];
  }
  return JSON.stringify([manager, { ...pod, metadata }]);
}

const deepFreeze = <T>(value: T): T => {
  if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
};

/**
 * Writes a create's managers into the pod, as `withManagedFields(pod, createdManagers(...))`.
 * Pods of one shape (a controller's replicas, differing by name) get the same fields, so
 * a create that brought no managers takes them from the last pod of its shape, stamped with
 * `now`: working out the field set was a tenth of a create's CPU. The fields are shared
 * between pods and frozen.
 */
export function withCreatedManagedFields(pod: PodManifest, requested: Managers | undefined, manager: string, now: string): PodManifest {
  const key = requested === undefined || requested.size === 0 ? createdFieldsKey(pod, manager) : undefined;
  if (key === undefined) return withManagedFields(pod, createdManagers(pod, requested ?? new Map<string, never>(), manager, now));
  let fieldsV1 = createdFields.get(key);
  if (fieldsV1 === undefined) {
    const entries = encodeManagedFields(createdManagers(pod, new Map(), manager, now));
    // One manager at most: the creator, on a pod that had none.
    fieldsV1 = entries?.[0] ? deepFreeze(entries[0].fieldsV1) : null;
    if (createdFields.size >= CREATED_FIELDS_KEPT) createdFields.delete(createdFields.keys().next().value as string);
    createdFields.set(key, fieldsV1);
  }
  if (fieldsV1 === null) delete pod.metadata.managedFields;
  else pod.metadata.managedFields = [{ manager, operation: 'Update', apiVersion: 'v1', time: now, fieldsType: 'FieldsV1', fieldsV1 }];
  return pod;
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
