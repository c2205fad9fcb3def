import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { BUS, SequenceConflictError, type Bus } from '#bus';
import { DNS1123_LABEL, STREAMS, SUBJECTS, type MessageData } from '#contracts';
import { namespaceView, SYSTEM_NAMESPACES, UNDELETABLE_NAMESPACES, type NamespaceObject, type NamespaceRecord } from '#domain';
import { API_CONFIG } from '../api.constants.js';
import type { ApiConfig } from '../api.config.js';
import { decodeFields } from '../errors/field-validation.context.js';
import { KubeStatusException } from '../errors/kube-status.exception.js';
import { ConfigObjectsService } from '../config/config-objects.service.js';
import { PodsService } from '../pods/pods.service.js';
import { ProjectionService } from '../projection/projection.service.js';

const rfc3339 = (ms: number): string => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
const isStringMap = (v: unknown): v is Record<string, string> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every((x) => typeof x === 'string');

/**
 * Namespaces as event-sourced objects on `namespaces.<name>`, and the namespace controller's
 * work: the system namespaces exist, and a terminating namespace's pods are deleted before the
 * namespace is removed. Everything follows from the log, so a restarted API carries on.
 */
@Injectable()
export class NamespacesService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(NamespacesService.name);
  private timer?: NodeJS.Timeout;
  private finalizing = false;

  constructor(
    @Inject(API_CONFIG) private readonly config: ApiConfig,
    @Inject(BUS) private readonly bus: Bus,
    private readonly projection: ProjectionService,
    private readonly pods: PodsService,
    private readonly configObjects: ConfigObjectsService,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    for (const name of SYSTEM_NAMESPACES) {
      if (this.projection.namespaces.get(name)) continue;
      try {
        await this.append(name, (previous) =>
          previous && !previous.removed ? undefined : { type: 'NamespaceCreated', data: { name, uid: randomUUID(), creationTimestamp: rfc3339(Date.now()) } },
        );
      } catch (error) {
        // Another API created it first, or NATS is away: the next start (or that API) has it.
        this.logger.warn(`could not create namespace ${name}: ${(error as Error).message}`);
      }
    }
    this.timer = setInterval(() => void this.finalize(), 1000);
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
  }

  get(name: string): NamespaceObject {
    const record = this.projection.namespaces.get(name);
    if (!record) throw KubeStatusException.notFound('namespaces', name);
    return namespaceView(record);
  }

  list(): NamespaceObject[] {
    return this.projection.namespaces.list().map(namespaceView);
  }

  async create(body: unknown): Promise<NamespaceObject> {
    body = decodeFields('Namespace', 'V1Namespace', body);
    const object = (typeof body === 'object' && body !== null ? body : {}) as { apiVersion?: unknown; kind?: unknown; metadata?: Record<string, unknown> };
    const name = object.metadata?.name;
    const labels = object.metadata?.labels;
    const annotations = object.metadata?.annotations;
    const display = typeof name === 'string' ? name : '';
    const causes: Array<{ field: string; reason: 'FieldValueRequired' | 'FieldValueInvalid'; message: string }> = [];
    if (typeof name !== 'string' || name === '')
      causes.push({ field: 'metadata.name', reason: 'FieldValueRequired', message: 'Required value: name or generateName is required' });
    else if (name.length > 63 || !DNS1123_LABEL.test(name))
      causes.push({
        field: 'metadata.name',
        reason: 'FieldValueInvalid',
        message: `Invalid value: ${JSON.stringify(name)}: a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character`,
      });
    if (labels !== undefined && !isStringMap(labels))
      causes.push({ field: 'metadata.labels', reason: 'FieldValueInvalid', message: 'Invalid value: labels must map strings to strings' });
    if (annotations !== undefined && !isStringMap(annotations))
      causes.push({ field: 'metadata.annotations', reason: 'FieldValueInvalid', message: 'Invalid value: annotations must map strings to strings' });
    if (object.kind !== undefined && object.kind !== 'Namespace')
      causes.push({ field: 'kind', reason: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(object.kind)}: must be Namespace` });
    if (causes.length > 0) throw KubeStatusException.invalid('namespaces', display, causes);
    const valid = name as string;
    await this.append(valid, (previous) => {
      if (previous && !previous.removed) throw KubeStatusException.alreadyExists('namespaces', valid);
      return {
        type: 'NamespaceCreated',
        data: {
          name: valid,
          uid: randomUUID(),
          creationTimestamp: rfc3339(Date.now()),
          ...(labels ? { labels: labels as Record<string, string> } : {}),
          ...(annotations ? { annotations: annotations as Record<string, string> } : {}),
        },
      };
    });
    return this.get(valid);
  }

  /** Marks the namespace Terminating; the controller loop deletes its pods, then removes it. */
  async delete(name: string): Promise<NamespaceObject> {
    if (UNDELETABLE_NAMESPACES.includes(name)) throw KubeStatusException.forbidden('namespaces', name, 'this namespace may not be deleted');
    await this.append(name, (record) => {
      if (!record || record.removed) throw KubeStatusException.notFound('namespaces', name);
      if (record.deletionTimestamp) return undefined;
      return { type: 'NamespaceDeletionRequested', data: { uid: record.uid, deletionTimestamp: rfc3339(Date.now()) } };
    });
    this.logger.log(`namespace ${name} is terminating`);
    void this.finalize();
    return this.get(name);
  }

  /** The namespace controller's pass: delete each terminating namespace's pods, remove it once they are gone. */
  private async finalize(): Promise<void> {
    if (this.finalizing) return;
    this.finalizing = true;
    try {
      for (const ns of this.projection.namespaces.terminating()) {
        const pods = this.projection.pods.list(ns.name);
        for (const pod of pods.filter((p) => !p.deletion)) {
          await this.pods.delete(ns.name, pod.name).catch((error: unknown) => this.logger.warn(`deleting ${ns.name}/${pod.name}: ${(error as Error).message}`));
        }
        if (pods.length > 0) continue;
        await this.configObjects.deleteAll(ns.name);
        await this.append(ns.name, (record) => (record?.uid === ns.uid && !record.removed ? { type: 'NamespaceRemoved', data: { uid: ns.uid } } : undefined));
        this.logger.log(`namespace ${ns.name} removed`);
      }
    } catch (error) {
      this.logger.warn(`namespace finalization: ${(error as Error).message}`);
    } finally {
      this.finalizing = false;
    }
  }

  /**
   * Appends the fact `decide` chooses from the namespace's current record, with optimistic
   * concurrency on its subject, and waits until the projection shows it.
   */
  private async append(
    name: string,
    decide: (
      record: NamespaceRecord | undefined,
    ) =>
      | { type: 'NamespaceCreated'; data: MessageData<'NamespaceCreated'> }
      | { type: 'NamespaceDeletionRequested'; data: MessageData<'NamespaceDeletionRequested'> }
      | { type: 'NamespaceRemoved'; data: MessageData<'NamespaceRemoved'> }
      | undefined,
  ): Promise<void> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const record = this.projection.namespaces.record(name);
      const fact = decide(record);
      if (!fact) return;
      const correlationId = 'uid' in fact.data ? fact.data.uid : name;
      try {
        const options = { correlationId, expectedLastSubjectSequence: record?.subjectSeq ?? 0 };
        const { seq } =
          fact.type === 'NamespaceCreated'
            ? await this.bus.publish(SUBJECTS.namespace(name), fact.type, fact.data, options)
            : fact.type === 'NamespaceDeletionRequested'
              ? await this.bus.publish(SUBJECTS.namespace(name), fact.type, fact.data, options)
              : await this.bus.publish(SUBJECTS.namespace(name), fact.type, fact.data, options);
        await this.projection.waitForPods(seq, this.config.WRITE_TIMEOUT_SECONDS * 1000);
        return;
      } catch (error) {
        if (!(error instanceof SequenceConflictError)) throw error;
        const last = await this.bus.lastSubjectSequence(STREAMS.pods, SUBJECTS.namespace(name));
        await this.projection.waitForPods(last, this.config.WRITE_TIMEOUT_SECONDS * 1000);
      }
    }
    throw new KubeStatusException(409, 'Conflict', `namespaces "${name}": too many concurrent writes, try again`);
  }
}
