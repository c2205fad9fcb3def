import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { BUS, JetStreamClient, SequenceConflictError, type Bus } from '#bus';
import { ContractValidationError, MirrorPodDeleted, parseContract, PodManifest, STREAMS, SUBJECTS, UNSUPPORTED_FIELD_MESSAGE, type Pod } from '#contracts';
import {
  ApplyConflictError,
  applyManagedFields,
  ApplySchemaError,
  applyPodDefaults,
  checkPodSecurity,
  enforcedLevel,
  podSecurityMessage,
  decodeManagedFields,
  describeManager,
  ephemeralContainerChanges,
  encodeManagedFields,
  FieldSetError,
  forbiddenSpecChange,
  managerKey,
  podSpecCauses,
  podView,
  POD_APPLY_SCHEMA,
  toFieldSet,
  updateManagedFields,
  type Managers,
  type PodRecord,
} from '#domain';
import { podRef } from '#observability';
import { API_CONFIG } from '../api.constants.js';
import type { ApiConfig } from '../api.config.js';
import { decodeFields } from '../errors/field-validation.context.js';
import { KubeStatusException } from '../errors/kube-status.exception.js';
import type { FieldManagement } from '../options/field-manager.js';
import { ProjectionService } from '../projection/projection.service.js';
import { acceptedPod, EMPTY_POD, validByConstruction, withCreatedManagedFields, withManagedFields } from './accepted-pod.js';

/** How many times a write re-reads and decides again after losing a concurrency race. */
const CONFLICT_RETRIES = 5;

/** The manager of writes whose request named none (jetctl, curl). */
const DEFAULT_MANAGEMENT: FieldManagement = { manager: 'unknown', force: false };

/** Now, as managedFields times are written: whole seconds. */
const nowSeconds = (): string => new Date().toISOString().replace(/\.\d+Z$/, 'Z');

/** managedFields the request set, when they can be read and are not empty (else the live ones stand, as in Kubernetes). */
function requestedManagers(object: unknown): Managers | undefined {
  const entries = (object as { metadata?: { managedFields?: unknown } } | null)?.metadata?.managedFields;
  if (!Array.isArray(entries) || entries.length === 0) return undefined;
  try {
    return decodeManagedFields(entries);
  } catch (error) {
    if (error instanceof FieldSetError) return undefined;
    throw error;
  }
}

/** The live object's managers; one that cannot be read is dropped rather than failing every write. */
function liveManagers(object: { metadata?: { managedFields?: unknown } }): Managers {
  try {
    return decodeManagedFields(object.metadata?.managedFields);
  } catch (error) {
    if (error instanceof FieldSetError) return new Map();
    throw error;
  }
}

/** An apply's conflicts as the API server answers them: 409 naming each field and its manager. */
function conflictStatus(error: ApplyConflictError): KubeStatusException {
  return new KubeStatusException(409, 'Conflict', error.message, {
    causes: error.conflicts.map((c) => ({ reason: 'FieldManagerConflict', message: `conflict with ${describeManager(c)}`, field: c.path })),
  });
}

/** Runs a server-side apply's field-ownership step, turning its errors into Statuses. */
function serverSideApply(live: unknown, config: unknown, managers: Managers, management: FieldManagement) {
  try {
    return applyManagedFields(live, config, POD_APPLY_SCHEMA, managers, management.manager, management.force, nowSeconds());
  } catch (error) {
    if (error instanceof ApplyConflictError) throw conflictStatus(error);
    if (error instanceof ApplySchemaError) throw new KubeStatusException(422, 'Invalid', error.message);
    throw error;
  }
}

/** Pod writes: validate, append to the pod's subject with optimistic concurrency, read back. */
/**
 * Whether the error is a 422 whose every cause is a limit of jetlet's, not of Kubernetes: a
 * field jetlet does not know, or a value of one it supports only in part (their messages say
 * "by jetlet" / "jetlet supports only").
 */
function onlyUnsupportedFields(error: unknown): boolean {
  if (!(error instanceof KubeStatusException) || error.getStatus() !== 422) return false;
  const causes = (error.getResponse() as { details?: { causes?: Array<{ message?: string }> } }).details?.causes ?? [];
  return causes.length > 0 && causes.every((c) => c.message === UNSUPPORTED_FIELD_MESSAGE || (c.message ?? '').includes('jetlet supports only'));
}

@Injectable()
export class PodsService {
  private readonly logger = new Logger(PodsService.name);

  constructor(
    @Inject(API_CONFIG) private readonly config: ApiConfig,
    @Inject(BUS) private readonly bus: Bus,
    private readonly client: JetStreamClient,
    private readonly projection: ProjectionService,
  ) {}

  get(namespace: string, name: string): Pod {
    const record = this.projection.pods.get(namespace, name);
    if (!record) throw KubeStatusException.notFound('pods', name);
    return podView(record);
  }

  list(namespace?: string): { items: Pod[]; resourceVersion: string } {
    return { items: this.projection.pods.list(namespace).map(podView), resourceVersion: String(this.projection.podsSeq) };
  }

  /** As the NamespaceLifecycle admission plugin: no pod in a namespace that does not exist or is being deleted. */
  private admitToNamespace(namespace: string, name: string): void {
    const record = this.projection.namespaces.get(namespace);
    if (!record) throw KubeStatusException.notFound('namespaces', namespace);
    if (record.deletionTimestamp !== undefined) {
      throw KubeStatusException.forbidden('pods', name, `unable to create new content in namespace ${namespace} because it is being terminated`);
    }
  }

  /**
   * Pod Security admission: the pod's spec, read with Kubernetes' field names before the
   * contract (so fields jetlet does not run yet are judged too), against the level its
   * namespace enforces (`pod-security.kubernetes.io/enforce`, else POD_SECURITY_DEFAULT; a
   * label naming no level enforces restricted, the safe reading).
   */
  private admitPodSecurity(namespace: string, name: string, body: unknown): void {
    const labels = this.projection.namespaces.get(namespace)?.labels;
    const level = enforcedLevel(labels, this.config.POD_SECURITY_DEFAULT) ?? 'restricted';
    const violations = checkPodSecurity(level, (body as { spec?: unknown } | null)?.spec);
    if (violations.length > 0) throw KubeStatusException.forbidden('pods', name, podSecurityMessage(level, violations));
  }

  /** Validates the whole manifest, naming every bad field, before anything is written. */
  validate(namespace: string, body: unknown): PodManifest {
    const name = (body as { metadata?: { name?: unknown } } | null)?.metadata?.name;
    const displayName = typeof name === 'string' ? name : '';
    let manifest: PodManifest;
    try {
      manifest = parseContract(PodManifest, body, 'Pod');
    } catch (error) {
      if (error instanceof ContractValidationError) throw KubeStatusException.invalid('pods', displayName, error.causes);
      throw error;
    }
    if (manifest.metadata.namespace !== undefined && manifest.metadata.namespace !== namespace) {
      throw KubeStatusException.badRequest(
        `the namespace of the provided object (${manifest.metadata.namespace}) does not match the namespace sent on the request (${namespace})`,
      );
    }
    const causes = podSpecCauses(manifest);
    if (causes.length > 0) throw KubeStatusException.invalid('pods', displayName, causes);
    return manifest;
  }

  /** With `dryRun`, everything but the write: validated, defaulted and answered as if stored (no resourceVersion, as Kubernetes). */
  async create(namespace: string, body: unknown, dryRun = false, management: FieldManagement = DEFAULT_MANAGEMENT, applied?: Managers): Promise<Pod> {
    body = decodeFields('Pod', 'V1Pod', body);
    const podName = (body as { metadata?: { name?: unknown } } | null)?.metadata?.name;
    this.admitToNamespace(namespace, typeof podName === 'string' ? podName : '');
    let manifest: PodManifest;
    try {
      manifest = this.validate(namespace, body);
    } catch (error) {
      // Kubernetes validates the object before its validating admission (Pod Security): a bad
      // field is a 422 first. A spec whose only faults are fields jetlet does not run yet is
      // judged by Pod Security first, so a pod Kubernetes would forbid is told so (403).
      if (onlyUnsupportedFields(error)) this.admitPodSecurity(namespace, typeof podName === 'string' ? podName : '', body);
      throw error;
    }
    if (manifest.spec.ephemeralContainers !== undefined && manifest.spec.ephemeralContainers.length > 0)
      throw KubeStatusException.invalid('pods', manifest.metadata.name, [
        { field: 'spec.ephemeralContainers', reason: 'FieldValueForbidden', message: 'Forbidden: cannot be set on create' },
      ]);
    this.admitPodSecurity(namespace, manifest.metadata.name, body);
    const name = manifest.metadata.name;
    for (let attempt = 0; attempt < CONFLICT_RETRIES; attempt++) {
      const previous = this.projection.pods.record(namespace, name);
      if (previous && !previous.removed) throw KubeStatusException.alreadyExists('pods', name);
      const uid = randomUUID();
      const now = nowSeconds();
      const pod = acceptedPod(manifest, { namespace, uid, creationTimestamp: now });
      if (applied) withManagedFields(pod, applied);
      else withCreatedManagedFields(pod, requestedManagers(body), management.manager, now);
      if (dryRun) {
        const view = podView({ namespace, name, uid, manifest: pod, subjectSeq: 0, resourceVersion: 0, removed: false });
        const { resourceVersion: _none, ...metadata } = view.metadata;
        return { ...view, metadata };
      }
      try {
        const { seq } = await this.bus.publish(
          SUBJECTS.pod(namespace, name),
          'PodCreated',
          { pod },
          {
            correlationId: uid,
            expectedLastSubjectSequence: await this.expectedForCreate(namespace, name),
            // Built here from the manifest validated above: see validByConstruction.
            prevalidated: validByConstruction(pod),
          },
        );
        // Debug only: every create is recorded by its RequestAudited fact, and a line each at thousands a second cost a fiftieth of the API's CPU.
        this.logger.debug(`created ${podRef({ namespace, name, uid })} at sequence ${seq}`);
        return podView(await this.readBack(seq, namespace, name));
      } catch (error) {
        if (!(error instanceof SequenceConflictError)) throw error;
        await this.catchUp(namespace, name);
      }
    }
    throw new KubeStatusException(409, 'Conflict', `pods "${name}": too many concurrent writes, try again`);
  }

  /**
   * Server-side apply (`application/apply-patch+yaml`): the configuration merged into the
   * live pod with field ownership (conflicts are a 409 naming each field and its manager,
   * unless forced), or a new pod when none exists. Returns whether it created.
   */
  async apply(
    namespace: string,
    name: string,
    config: Record<string, unknown>,
    management: FieldManagement,
    dryRun = false,
  ): Promise<{ pod: Pod; created: boolean }> {
    // Fields the field validation drops (Warn, Ignore) are dropped before ownership is worked out, so no manager owns them.
    config = decodeFields('Pod', 'V1Pod', config);
    const configName = (config.metadata as { name?: unknown } | undefined)?.name;
    if (configName !== name)
      throw KubeStatusException.badRequest(`the name of the object (${String(configName)}) does not match the name on the URL (${name})`);
    if (!this.projection.pods.get(namespace, name)) {
      const { object, managers } = serverSideApply(EMPTY_POD, config, new Map(), management);
      const { status: _status, ...body } = object as Record<string, unknown>;
      try {
        return { pod: await this.create(namespace, body, dryRun, management, managers), created: true };
      } catch (error) {
        // Created meanwhile: apply to it.
        if (!(error instanceof KubeStatusException && error.getStatus() === 409 && (error.getResponse() as { reason?: string }).reason === 'AlreadyExists'))
          throw error;
      }
    }
    return { pod: await this.update(namespace, name, () => config, dryRun, management, config), created: false };
  }

  /**
   * Replaces (PUT) or patches (PATCH) a pod. As in Kubernetes only the containers' images
   * may change in the spec, plus labels and annotations; an image change bumps the
   * generation and restarts just that container on its node.
   */
  async update(
    namespace: string,
    name: string,
    change: (current: Omit<Pod, 'status'>) => unknown,
    dryRun = false,
    management: FieldManagement = DEFAULT_MANAGEMENT,
    applyConfig?: Record<string, unknown>,
  ): Promise<Pod> {
    for (let attempt = 0; attempt < CONFLICT_RETRIES; attempt++) {
      const record = this.projection.pods.get(namespace, name);
      if (!record) throw KubeStatusException.notFound('pods', name);
      if (record.mirror)
        throw new KubeStatusException(
          403,
          'Forbidden',
          `pods "${name}" is forbidden: a mirror pod shows a static pod of node ${record.nodeName ?? ''}; change its manifest on the node`,
          { name, kind: 'pods' },
        );
      const current = podView(record);
      const { status: _status, ...currentObject } = current;
      let proposed: unknown;
      let applied: Managers | undefined;
      if (applyConfig) {
        // A pod no apply has touched yet: everything in it belongs to whoever wrote it before, as Kubernetes' before-first-apply.
        const managers = liveManagers(currentObject);
        if (managers.size === 0) {
          const { status: _s, ...owned } = currentObject as Record<string, unknown>;
          managers.set(managerKey('before-first-apply', 'Update'), {
            manager: 'before-first-apply',
            operation: 'Update',
            apiVersion: 'v1',
            set: toFieldSet(owned, POD_APPLY_SCHEMA),
          });
        }
        ({ object: proposed, managers: applied } = serverSideApply(currentObject, applyConfig, managers, management));
      } else proposed = change(currentObject);
      KubeStatusException.checkResourceVersion('pods', name, proposed, current.metadata.resourceVersion);
      const { status: _ignored, ...manifest } = this.validate(namespace, decodeFields('Pod', 'V1Pod', proposed));
      if (manifest.metadata.name !== name)
        throw KubeStatusException.badRequest(`the name of the object (${manifest.metadata.name}) does not match the name on the URL (${name})`);
      if (manifest.metadata.uid !== undefined && manifest.metadata.uid !== record.uid) {
        throw KubeStatusException.invalid('pods', name, [{ field: 'metadata.uid', reason: 'FieldValueInvalid', message: 'field is immutable' }]);
      }
      if (manifest.spec.nodeName !== undefined && manifest.spec.nodeName !== record.nodeName) {
        throw KubeStatusException.invalid('pods', name, [
          { field: 'spec.nodeName', reason: 'FieldValueForbidden', message: 'field is immutable once the pod is bound' },
        ]);
      }
      // Defaults on both sides: a pod written before a default existed is not "changed" by it.
      const before = { ...applyPodDefaults(record.manifest).spec, nodeName: record.nodeName };
      const after = applyPodDefaults(manifest).spec;
      // Ephemeral containers change only through their own subresource; here they stay as stored.
      const forbidden = forbiddenSpecChange(
        { ...before, nodeName: undefined, ephemeralContainers: undefined },
        { ...after, nodeName: undefined, ephemeralContainers: undefined },
      );
      if (forbidden) throw KubeStatusException.invalid('pods', name, [{ field: 'spec', reason: 'FieldValueForbidden', message: `Forbidden: ${forbidden}` }]);
      const specChanged = JSON.stringify(record.manifest.spec.containers.map((c) => c.image)) !== JSON.stringify(after.containers.map((c) => c.image));
      const metadata = {
        ...record.manifest.metadata,
        labels: manifest.metadata.labels,
        annotations: manifest.metadata.annotations,
        generation: (record.manifest.metadata.generation ?? 1) + (specChanged ? 1 : 0),
      };
      // Only the images change: the rest of each container stays as written, so no other container restarts.
      const containers = record.manifest.spec.containers.map((c, i) => ({ ...c, image: after.containers[i]?.image ?? c.image }));
      const pod: PodManifest = { ...record.manifest, metadata, spec: { ...record.manifest.spec, containers } };
      const { status: _after, ...next } = podView({ ...record, manifest: pod });
      const managers =
        applied ??
        updateManagedFields(
          currentObject,
          next,
          POD_APPLY_SCHEMA,
          requestedManagers(proposed) ?? liveManagers(currentObject),
          management.manager,
          nowSeconds(),
        );
      const managedFields = encodeManagedFields(managers);
      if (managedFields) metadata.managedFields = managedFields;
      else delete metadata.managedFields;
      const metaChanged =
        JSON.stringify([metadata.labels, metadata.annotations, metadata.managedFields]) !==
        JSON.stringify([record.manifest.metadata.labels, record.manifest.metadata.annotations, record.manifest.metadata.managedFields]);
      if (!specChanged && !metaChanged) return current;
      if (dryRun) return podView({ ...record, manifest: pod });
      try {
        const { seq } = await this.bus.publish(
          SUBJECTS.pod(namespace, name),
          'PodUpdated',
          { uid: record.uid, pod },
          {
            correlationId: record.uid,
            expectedLastSubjectSequence: record.subjectSeq,
          },
        );
        this.logger.log(`updated ${podRef(record)} to generation ${metadata.generation}`);
        return podView(await this.readBack(seq, namespace, name));
      } catch (error) {
        if (!(error instanceof SequenceConflictError)) throw error;
        await this.catchUp(namespace, name);
      }
    }
    throw new KubeStatusException(409, 'Conflict', `pods "${name}": too many concurrent writes, try again`);
  }

  /**
   * The `ephemeralcontainers` subresource (`kubectl debug`): only `spec.ephemeralContainers`
   * is taken from the proposed pod, and only additions are allowed, as Kubernetes'
   * ephemeral container strategy. The generation goes up, so the pod's node is told again.
   */
  async updateEphemeralContainers(namespace: string, name: string, change: (current: Omit<Pod, 'status'>) => unknown, dryRun = false): Promise<Pod> {
    for (let attempt = 0; attempt < CONFLICT_RETRIES; attempt++) {
      const record = this.projection.pods.get(namespace, name);
      if (!record) throw KubeStatusException.notFound('pods', name);
      if (record.mirror)
        throw KubeStatusException.forbidden(
          'pods',
          name,
          `a mirror pod shows a static pod of node ${record.nodeName ?? ''}; ephemeral containers cannot be added to it`,
        );
      const current = podView(record);
      const { status: _status, ...currentObject } = current;
      const proposed = change(currentObject);
      KubeStatusException.checkResourceVersion('pods', name, proposed, current.metadata.resourceVersion);
      const manifest = this.validate(namespace, decodeFields('Pod', 'V1Pod', proposed));
      if (manifest.metadata.name !== name)
        throw KubeStatusException.badRequest(`the name of the object (${manifest.metadata.name}) does not match the name on the URL (${name})`);
      const before = record.manifest.spec.ephemeralContainers ?? [];
      const after = applyPodDefaults(manifest).spec.ephemeralContainers ?? [];
      const pod: PodManifest = {
        ...record.manifest,
        metadata: { ...record.manifest.metadata, generation: (record.manifest.metadata.generation ?? 1) + 1 },
        spec: { ...record.manifest.spec, ephemeralContainers: after },
      };
      // The stored pod with the new list: a target is checked against the pod's own containers, not the proposal's.
      const causes = [...ephemeralContainerChanges(before, after), ...podSpecCauses(pod)];
      if (causes.length > 0) throw KubeStatusException.invalid('pods', name, causes);
      if (after.length === before.length) return current;
      this.admitPodSecurity(namespace, name, pod);
      if (dryRun) return podView({ ...record, manifest: pod });
      try {
        const { seq } = await this.bus.publish(
          SUBJECTS.pod(namespace, name),
          'PodUpdated',
          { uid: record.uid, pod },
          { correlationId: record.uid, expectedLastSubjectSequence: record.subjectSeq },
        );
        const added = after.filter((c) => !before.some((b) => b.name === c.name)).map((c) => c.name);
        this.logger.log(`added ephemeral container(s) ${added.join(', ')} to ${podRef(record)}`);
        return podView(await this.readBack(seq, namespace, name));
      } catch (error) {
        if (!(error instanceof SequenceConflictError)) throw error;
        await this.catchUp(namespace, name);
      }
    }
    throw new KubeStatusException(409, 'Conflict', `pods "${name}": too many concurrent writes, try again`);
  }

  /** `evicted`: through the Eviction API, so the pod gets the DisruptionTarget condition, as in Kubernetes. */
  async delete(namespace: string, name: string, gracePeriodSeconds?: number, dryRun = false, evicted = false): Promise<Pod> {
    for (let attempt = 0; attempt < CONFLICT_RETRIES; attempt++) {
      const record = this.projection.pods.get(namespace, name);
      if (!record) throw KubeStatusException.notFound('pods', name);
      if (record.deletion) return podView(record);
      const grace = gracePeriodSeconds ?? record.manifest.spec.terminationGracePeriodSeconds ?? 30;
      const deletionTimestamp = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
      const disruption = evicted ? { reason: 'EvictionByEvictionAPI' as const, message: 'Eviction API: evicting', at: deletionTimestamp } : undefined;
      if (dryRun) return podView({ ...record, deletion: { timestamp: deletionTimestamp, gracePeriodSeconds: grace }, ...(disruption ? { disruption } : {}) });
      try {
        const { seq } = await this.bus.publish(
          SUBJECTS.pod(namespace, name),
          'PodDeletionRequested',
          { uid: record.uid, gracePeriodSeconds: grace, deletionTimestamp, ...(evicted ? { disruption: 'EvictionByEvictionAPI' as const } : {}) },
          { correlationId: record.uid, expectedLastSubjectSequence: record.subjectSeq },
        );
        this.logger.log(`deletion of ${podRef(record)} requested (grace ${grace}s)`);
        // A static pod runs on: tell its agent, which shows the mirror again.
        if (record.mirror && record.nodeName)
          this.client
            .emit(SUBJECTS.mirrorDeleted(record.nodeName), parseContract(MirrorPodDeleted, { uid: record.uid }, MirrorPodDeleted.name))
            .subscribe({ error: () => undefined });
        await this.projection.waitForPods(seq, this.config.WRITE_TIMEOUT_SECONDS * 1000);
        return podView(record);
      } catch (error) {
        if (!(error instanceof SequenceConflictError)) throw error;
        await this.catchUp(namespace, name);
      }
    }
    throw new KubeStatusException(409, 'Conflict', `pods "${name}": too many concurrent writes, try again`);
  }

  private async readBack(seq: number, namespace: string, name: string): Promise<PodRecord> {
    const applied = await this.projection.waitForPods(seq, this.config.WRITE_TIMEOUT_SECONDS * 1000);
    const record = this.projection.pods.record(namespace, name);
    if (!applied || !record) throw new KubeStatusException(504, 'Timeout', `pods "${name}" was written at sequence ${seq} but is not visible yet`);
    return record;
  }

  /** After a lost race: wait until the projection holds the subject's newest fact. */
  /**
   * The subject sequence a create expects: 0 for a new name; for a name whose pod is gone,
   * its last fact, unless the scheduler already purged that pod's history (the subject is
   * empty again, which a projection cannot see).
   */
  private async expectedForCreate(namespace: string, name: string): Promise<number> {
    const known = this.projection.pods.subjectSeq(namespace, name);
    if (known === 0) return 0;
    const last = await this.bus.lastSubjectSequence(STREAMS.pods, SUBJECTS.pod(namespace, name));
    return last === 0 ? 0 : known;
  }

  private async catchUp(namespace: string, name: string): Promise<void> {
    const last = await this.bus.lastSubjectSequence(STREAMS.pods, SUBJECTS.pod(namespace, name));
    await this.projection.waitForPods(last, this.config.WRITE_TIMEOUT_SECONDS * 1000);
  }
}
