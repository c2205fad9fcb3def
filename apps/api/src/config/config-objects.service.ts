import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { BUS, SequenceConflictError, type Bus } from '#bus';
import {
  CONFIG_DATA_MAX_BYTES,
  ConfigMapManifest,
  ContractValidationError,
  parseContract,
  SecretManifest,
  STREAMS,
  SUBJECTS,
  type FieldCause,
  type MessageData,
} from '#contracts';
import { compareText, configView, type ConfigObject, type ConfigRecord, type ConfigTable } from '#domain';
import { API_CONFIG } from '../api.constants.js';
import type { ApiConfig } from '../api.config.js';
import { decodeFields } from '../errors/field-validation.context.js';
import { KubeStatusException } from '../errors/kube-status.exception.js';
import { ProjectionService } from '../projection/projection.service.js';

export type ConfigKind = 'ConfigMap' | 'Secret';

const RESOURCE: Record<ConfigKind, 'configmaps' | 'secrets'> = { ConfigMap: 'configmaps', Secret: 'secrets' };
const CONFLICT_RETRIES = 5;
const rfc3339 = (ms: number): string => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');

/** The keys each well-known Secret type must hold, as Kubernetes' `ValidateSecret`. */
const REQUIRED_KEYS: Record<string, string[]> = {
  'kubernetes.io/dockerconfigjson': ['.dockerconfigjson'],
  'kubernetes.io/dockercfg': ['.dockercfg'],
  'kubernetes.io/tls': ['tls.crt', 'tls.key'],
  'kubernetes.io/ssh-auth': ['ssh-privatekey'],
};

/** A validated object ready to be written: what the event carries besides identity. */
interface Accepted {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  data?: Record<string, string>;
  binaryData?: Record<string, string>;
  type?: string;
  immutable?: boolean;
  resourceVersion?: string;
}

type Fact =
  | { type: 'ConfigMapWritten'; data: MessageData<'ConfigMapWritten'> }
  | { type: 'ConfigMapDeleted'; data: MessageData<'ConfigMapDeleted'> }
  | { type: 'SecretWritten'; data: MessageData<'SecretWritten'> }
  | { type: 'SecretDeleted'; data: MessageData<'SecretDeleted'> };

/**
 * ConfigMaps and Secrets: validated as the API server validates them, appended to the
 * object's subject with optimistic concurrency, read back from the projection. A Secret's
 * values and annotations are sealed when a key is configured, and no value is ever logged.
 */
@Injectable()
export class ConfigObjectsService {
  private readonly logger = new Logger(ConfigObjectsService.name);

  constructor(
    @Inject(API_CONFIG) private readonly config: ApiConfig,
    @Inject(BUS) private readonly bus: Bus,
    private readonly projection: ProjectionService,
  ) {}

  private table(kind: ConfigKind): ConfigTable {
    return kind === 'ConfigMap' ? this.projection.configMaps : this.projection.secrets;
  }

  get(kind: ConfigKind, namespace: string, name: string): ConfigObject {
    const record = this.table(kind).get(namespace, name);
    if (!record) throw KubeStatusException.notFound(RESOURCE[kind], name);
    // As the API server when its encryption provider cannot open what it stored.
    if (record.unreadable !== undefined)
      throw new KubeStatusException(500, 'InternalError', `unable to open secret ${namespace}/${name}: ${record.unreadable}`);
    return configView(record);
  }

  list(kind: ConfigKind, namespace?: string): { items: ConfigObject[]; resourceVersion: string } {
    return { items: this.table(kind).list(namespace).map(configView), resourceVersion: String(this.projection.configLastSeq) };
  }

  async create(kind: ConfigKind, namespace: string, body: unknown, dryRun: boolean): Promise<ConfigObject> {
    const bodyName = (body as { metadata?: { name?: unknown } } | null)?.metadata?.name;
    this.admitToNamespace(kind, namespace, typeof bodyName === 'string' ? bodyName : '');
    const { name, accepted } = this.validate(kind, namespace, body);
    const object = (uid: string, creationTimestamp: string): Fact => this.written(kind, namespace, name, uid, creationTimestamp, accepted);
    if (dryRun) {
      if (this.table(kind).get(namespace, name)) throw KubeStatusException.alreadyExists(RESOURCE[kind], name);
      return this.preview(object(randomUUID(), rfc3339(Date.now())), accepted);
    }
    await this.append(kind, namespace, name, (record) => {
      if (record && !record.removed) throw KubeStatusException.alreadyExists(RESOURCE[kind], name);
      return object(randomUUID(), rfc3339(Date.now()));
    });
    this.logger.log(`${kind} ${namespace}/${name} created`);
    return this.get(kind, namespace, name);
  }

  /** PUT and PATCH: `next` turns the object as served into the object wanted. */
  async update(kind: ConfigKind, namespace: string, name: string, next: (current: ConfigObject) => unknown, dryRun: boolean): Promise<ConfigObject> {
    for (let attempt = 0; attempt < CONFLICT_RETRIES; attempt++) {
      const current = this.table(kind).get(namespace, name);
      if (!current) throw KubeStatusException.notFound(RESOURCE[kind], name);
      if (current.unreadable !== undefined)
        throw new KubeStatusException(500, 'InternalError', `unable to open secret ${namespace}/${name}: ${current.unreadable}`);
      const view = configView(current);
      const { name: newName, accepted } = this.validate(kind, namespace, next(view));
      if (newName !== name) {
        throw KubeStatusException.badRequest(`the name of the object (${newName}) does not match the name on the URL (${name})`);
      }
      if (accepted.resourceVersion !== undefined && accepted.resourceVersion !== view.metadata.resourceVersion) {
        throw KubeStatusException.conflict(RESOURCE[kind], name);
      }
      const causes = this.immutableCauses(current, accepted);
      if (causes.length > 0) throw KubeStatusException.invalid(RESOURCE[kind], name, causes);
      const fact = this.written(kind, namespace, name, current.uid, current.creationTimestamp, accepted);
      if (dryRun) return this.preview(fact, accepted, current.resourceVersion);
      try {
        await this.publish(kind, namespace, name, fact, current.subjectSeq);
        this.logger.log(`${kind} ${namespace}/${name} updated`);
        return this.get(kind, namespace, name);
      } catch (error) {
        if (!(error instanceof SequenceConflictError)) throw error;
        await this.catchUp(kind, namespace, name);
      }
    }
    throw new KubeStatusException(409, 'Conflict', `${RESOURCE[kind]} "${name}": too many concurrent writes, try again`);
  }

  /** Answers a Success Status naming the object, as the API server does for these kinds. */
  async delete(kind: ConfigKind, namespace: string, name: string, dryRun: boolean): Promise<object> {
    const existing = this.table(kind).get(namespace, name);
    if (!existing) throw KubeStatusException.notFound(RESOURCE[kind], name);
    if (!dryRun) {
      await this.append(kind, namespace, name, (record) => {
        if (!record || record.removed) throw KubeStatusException.notFound(RESOURCE[kind], name);
        return kind === 'ConfigMap' ? { type: 'ConfigMapDeleted', data: { uid: record.uid } } : { type: 'SecretDeleted', data: { uid: record.uid } };
      });
      this.logger.log(`${kind} ${namespace}/${name} deleted`);
    }
    return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name, kind: RESOURCE[kind], uid: existing.uid } };
  }

  /** Deletes every object of the namespace (the namespace controller's work). */
  async deleteAll(namespace: string): Promise<number> {
    let count = 0;
    for (const kind of ['ConfigMap', 'Secret'] as const) {
      for (const record of this.table(kind).list(namespace)) {
        await this.delete(kind, namespace, record.name, false);
        count++;
      }
    }
    return count;
  }

  private admitToNamespace(kind: ConfigKind, namespace: string, name: string): void {
    const record = this.projection.namespaces.get(namespace);
    if (!record) throw KubeStatusException.notFound('namespaces', namespace);
    if (record.deletionTimestamp !== undefined) {
      throw KubeStatusException.forbidden(RESOURCE[kind], name, `unable to create new content in namespace ${namespace} because it is being terminated`);
    }
  }

  /** Validates a manifest as the API server does, naming every bad field; never echoes a Secret's value. */
  private validate(kind: ConfigKind, namespace: string, body: unknown): { name: string; accepted: Accepted } {
    body = decodeFields(kind, kind === 'ConfigMap' ? 'V1ConfigMap' : 'V1Secret', body);
    const bodyName = (body as { metadata?: { name?: unknown } } | null)?.metadata?.name;
    const display = typeof bodyName === 'string' ? bodyName : '';
    let manifest: ConfigMapManifest | SecretManifest;
    try {
      manifest = kind === 'ConfigMap' ? parseContract(ConfigMapManifest, body, kind) : parseContract(SecretManifest, body, kind);
    } catch (error) {
      if (error instanceof ContractValidationError) throw KubeStatusException.invalid(RESOURCE[kind], display, error.causes);
      throw error;
    }
    const meta = manifest.metadata;
    if (meta.namespace !== undefined && meta.namespace !== namespace) {
      throw KubeStatusException.badRequest(
        `the namespace of the provided object (${meta.namespace}) does not match the namespace sent on the request (${namespace})`,
      );
    }
    const causes: FieldCause[] = [];
    const accepted: Accepted = {
      ...(meta.labels ? { labels: meta.labels } : {}),
      ...(meta.annotations ? { annotations: meta.annotations } : {}),
      ...(manifest.immutable !== undefined ? { immutable: manifest.immutable } : {}),
      ...(meta.resourceVersion ? { resourceVersion: meta.resourceVersion } : {}),
    };
    let bytes = 0;
    if (manifest instanceof ConfigMapManifest) {
      for (const key of Object.keys(manifest.data ?? {})) {
        if (manifest.binaryData && key in manifest.binaryData) {
          causes.push({
            field: `data[${key}]`,
            reason: 'FieldValueInvalid',
            message: `Invalid value: ${JSON.stringify(key)}: duplicate of key present in binaryData`,
          });
        }
      }
      for (const [k, v] of Object.entries(manifest.data ?? {})) bytes += k.length + Buffer.byteLength(v);
      for (const [k, v] of Object.entries(manifest.binaryData ?? {})) bytes += k.length + Buffer.from(v, 'base64').length;
      if (manifest.data) accepted.data = manifest.data;
      if (manifest.binaryData) accepted.binaryData = manifest.binaryData;
      if (bytes > CONFIG_DATA_MAX_BYTES)
        causes.push({ field: '[]', reason: 'FieldValueInvalid', message: `Too long: must have at most ${CONFIG_DATA_MAX_BYTES} bytes` });
    } else {
      // stringData is write-only: merged into data (winning over it), as Kubernetes does.
      const data: Record<string, string> = { ...manifest.data };
      for (const [k, v] of Object.entries(manifest.stringData ?? {})) data[k] = b64(v);
      const type = manifest.type || 'Opaque';
      for (const key of REQUIRED_KEYS[type] ?? []) {
        if (!(key in data)) causes.push({ field: `data[${key}]`, reason: 'FieldValueRequired', message: 'Required value' });
      }
      if (type === 'kubernetes.io/dockerconfigjson' && data['.dockerconfigjson'] !== undefined) {
        try {
          JSON.parse(Buffer.from(data['.dockerconfigjson'], 'base64').toString('utf8'));
        } catch {
          causes.push({ field: 'data[.dockerconfigjson]', reason: 'FieldValueInvalid', message: 'Invalid value: "<secret contents redacted>": invalid JSON' });
        }
      }
      if (type === 'kubernetes.io/basic-auth' && !('username' in data) && !('password' in data)) {
        causes.push({ field: 'data[username]', reason: 'FieldValueRequired', message: 'Required value' });
      }
      for (const [k, v] of Object.entries(data)) bytes += k.length + Buffer.from(v, 'base64').length;
      if (bytes > CONFIG_DATA_MAX_BYTES)
        causes.push({ field: 'data', reason: 'FieldValueInvalid', message: `Too long: must have at most ${CONFIG_DATA_MAX_BYTES} bytes` });
      accepted.data = data;
      accepted.type = type;
    }
    if (causes.length > 0) throw KubeStatusException.invalid(RESOURCE[kind], meta.name, causes);
    return { name: meta.name, accepted };
  }

  /** Kubernetes: an immutable object's data, and the flag itself, stay; a Secret's type never changes. */
  private immutableCauses(current: ConfigRecord, next: Accepted): FieldCause[] {
    const causes: FieldCause[] = [];
    const forbidden = 'Forbidden: field is immutable when `immutable` is set';
    if (current.immutable) {
      if (next.immutable !== true) causes.push({ field: 'immutable', reason: 'FieldValueForbidden', message: forbidden });
      if (JSON.stringify(sorted(current.data)) !== JSON.stringify(sorted(next.data)))
        causes.push({ field: 'data', reason: 'FieldValueForbidden', message: forbidden });
      if (current.kind === 'ConfigMap' && JSON.stringify(sorted(current.binaryData)) !== JSON.stringify(sorted(next.binaryData))) {
        causes.push({ field: 'binaryData', reason: 'FieldValueForbidden', message: forbidden });
      }
    }
    if (current.kind === 'Secret' && current.type !== next.type) {
      causes.push({ field: 'type', reason: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(next.type)}: field is immutable` });
    }
    return causes;
  }

  /** The fact that writes this object; a Secret's values and annotations are sealed when a key is configured. */
  private written(kind: ConfigKind, namespace: string, name: string, uid: string, creationTimestamp: string, a: Accepted): Fact {
    const base = {
      namespace,
      name,
      uid,
      creationTimestamp,
      ...(a.labels ? { labels: a.labels } : {}),
      ...(a.immutable !== undefined ? { immutable: a.immutable } : {}),
    };
    if (kind === 'ConfigMap') {
      return {
        type: 'ConfigMapWritten',
        data: {
          ...base,
          ...(a.annotations ? { annotations: a.annotations } : {}),
          ...(a.data ? { data: a.data } : {}),
          ...(a.binaryData ? { binaryData: a.binaryData } : {}),
        },
      };
    }
    const box = this.projection.secretBox;
    if (!box) {
      return {
        type: 'SecretWritten',
        data: { ...base, type: a.type ?? 'Opaque', ...(a.annotations ? { annotations: a.annotations } : {}), ...(a.data ? { data: a.data } : {}) },
      };
    }
    const sealed = box.seal({ ...(a.data ? { data: a.data } : {}), ...(a.annotations ? { annotations: a.annotations } : {}) }, `${namespace}/${name}`);
    return { type: 'SecretWritten', data: { ...base, type: a.type ?? 'Opaque', sealed } };
  }

  /** A dry run's answer: the object as it would be stored (a create has no resourceVersion, as Kubernetes). */
  private preview(fact: Fact, accepted: Accepted, resourceVersion?: number): ConfigObject {
    if (fact.type !== 'ConfigMapWritten' && fact.type !== 'SecretWritten') throw new Error('not a write');
    const d = fact.data;
    const view = configView({
      kind: fact.type === 'ConfigMapWritten' ? 'ConfigMap' : 'Secret',
      namespace: d.namespace,
      name: d.name,
      uid: d.uid,
      creationTimestamp: d.creationTimestamp,
      ...(d.labels ? { labels: d.labels } : {}),
      ...(accepted.annotations ? { annotations: accepted.annotations } : {}),
      ...(accepted.data ? { data: accepted.data } : {}),
      ...(accepted.binaryData ? { binaryData: accepted.binaryData } : {}),
      ...(accepted.type !== undefined ? { type: accepted.type } : {}),
      ...(accepted.immutable !== undefined ? { immutable: accepted.immutable } : {}),
      subjectSeq: 0,
      resourceVersion: resourceVersion ?? 0,
      removed: false,
    });
    if (resourceVersion === undefined) {
      const { resourceVersion: _none, ...metadata } = view.metadata;
      return { ...view, metadata: metadata as ConfigObject['metadata'] };
    }
    return view;
  }

  private async append(kind: ConfigKind, namespace: string, name: string, decide: (record: ConfigRecord | undefined) => Fact): Promise<void> {
    for (let attempt = 0; attempt < CONFLICT_RETRIES; attempt++) {
      const record = this.table(kind).record(namespace, name);
      const fact = decide(record);
      try {
        await this.publish(kind, namespace, name, fact, record?.subjectSeq ?? 0);
        return;
      } catch (error) {
        if (!(error instanceof SequenceConflictError)) throw error;
        await this.catchUp(kind, namespace, name);
      }
    }
    throw new KubeStatusException(409, 'Conflict', `${RESOURCE[kind]} "${name}": too many concurrent writes, try again`);
  }

  private async publish(kind: ConfigKind, namespace: string, name: string, fact: Fact, expected: number): Promise<void> {
    const subject = kind === 'ConfigMap' ? SUBJECTS.configMap(namespace, name) : SUBJECTS.secret(namespace, name);
    const options = { correlationId: fact.data.uid, expectedLastSubjectSequence: expected };
    let seq: number;
    switch (fact.type) {
      case 'ConfigMapWritten':
        ({ seq } = await this.bus.publish(subject, fact.type, fact.data, options));
        break;
      case 'ConfigMapDeleted':
        ({ seq } = await this.bus.publish(subject, fact.type, fact.data, options));
        break;
      case 'SecretWritten':
        ({ seq } = await this.bus.publish(subject, fact.type, fact.data, options));
        break;
      case 'SecretDeleted':
        ({ seq } = await this.bus.publish(subject, fact.type, fact.data, options));
        break;
    }
    await this.projection.waitForConfig(seq, this.config.WRITE_TIMEOUT_SECONDS * 1000);
  }

  private async catchUp(kind: ConfigKind, namespace: string, name: string): Promise<void> {
    const subject = kind === 'ConfigMap' ? SUBJECTS.configMap(namespace, name) : SUBJECTS.secret(namespace, name);
    const last = await this.bus.lastSubjectSequence(STREAMS.config, subject);
    await this.projection.waitForConfig(last, this.config.WRITE_TIMEOUT_SECONDS * 1000);
  }
}

function sorted(map: Record<string, string> | undefined): Array<[string, string]> {
  return Object.entries(map ?? {}).sort(([a], [b]) => compareText(a, b));
}
