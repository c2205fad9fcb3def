import type { AnyEnvelope } from '#contracts';
import { compareText } from './compare-text.js';

/** What the log says about one ConfigMap or Secret. */
export interface ConfigRecord {
  kind: 'ConfigMap' | 'Secret';
  namespace: string;
  name: string;
  uid: string;
  creationTimestamp: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  /** ConfigMap: UTF-8 values. Secret: base64 values (opened when sealed). */
  data?: Record<string, string>;
  /** ConfigMap only: base64 values. */
  binaryData?: Record<string, string>;
  /** Secret only. */
  type?: string;
  immutable?: boolean;
  /** The Secret is sealed with a key this reader does not hold (its data is unknown). */
  unreadable?: string;
  /** Last sequence on its subject, for optimistic concurrency. */
  subjectSeq: number;
  resourceVersion: number;
  removed: boolean;
}

/** What a sealed Secret holds: its values and its annotations (kubectl's last-applied copy holds the values too). */
export interface SealedSecretContent {
  data?: Record<string, string>;
  annotations?: Record<string, string>;
}

/** Opens a sealed Secret (`name` is `<namespace>/<name>`); throws when it cannot. */
export type Unseal = (sealed: string, name: string) => unknown;

/** Folds ConfigMap or Secret facts into the current objects of that kind. Pure, given `unseal`. */
export class ConfigTable {
  private readonly byKey = new Map<string, ConfigRecord>();

  constructor(
    readonly kind: 'ConfigMap' | 'Secret',
    private readonly unseal?: Unseal,
  ) {}

  apply(envelope: AnyEnvelope, seq: number): ConfigRecord | undefined {
    switch (envelope.type) {
      case 'ConfigMapWritten':
      case 'SecretWritten': {
        if ((envelope.type === 'ConfigMapWritten') !== (this.kind === 'ConfigMap')) return undefined;
        const d = envelope.data;
        const key = `${d.namespace}/${d.name}`;
        const record: ConfigRecord = {
          kind: this.kind,
          namespace: d.namespace,
          name: d.name,
          uid: d.uid,
          creationTimestamp: d.creationTimestamp,
          ...(d.labels ? { labels: d.labels } : {}),
          ...(d.annotations ? { annotations: d.annotations } : {}),
          ...(d.immutable !== undefined ? { immutable: d.immutable } : {}),
          subjectSeq: seq,
          resourceVersion: seq,
          removed: false,
        };
        if (envelope.type === 'ConfigMapWritten') {
          const c = envelope.data;
          if (c.data) record.data = c.data;
          if (c.binaryData) record.binaryData = c.binaryData;
        } else {
          const s = envelope.data;
          record.type = s.type;
          if (s.data) record.data = s.data;
          if (s.sealed !== undefined) {
            try {
              if (!this.unseal) throw new Error('no secret encryption key is configured');
              const opened = this.unseal(s.sealed, key) as SealedSecretContent;
              if (opened.data) record.data = opened.data;
              if (opened.annotations) record.annotations = opened.annotations;
            } catch (error) {
              record.unreadable = (error as Error).message;
            }
          }
        }
        this.byKey.set(key, record);
        return record;
      }
      case 'ConfigMapDeleted':
      case 'SecretDeleted': {
        if ((envelope.type === 'ConfigMapDeleted') !== (this.kind === 'ConfigMap')) return undefined;
        const record = [...this.byKey.values()].find((r) => r.uid === envelope.data.uid && !r.removed);
        if (!record) return undefined;
        record.removed = true;
        record.subjectSeq = record.resourceVersion = seq;
        return record;
      }
      default:
        return undefined;
    }
  }

  /** Counts a message readers skipped on the subject of `namespace/name`, so the next write expects it. */
  skip(namespace: string, name: string, seq: number): void {
    const record = this.byKey.get(`${namespace}/${name}`);
    if (record) record.subjectSeq = seq;
    else
      this.byKey.set(`${namespace}/${name}`, {
        kind: this.kind,
        namespace,
        name,
        uid: '',
        creationTimestamp: '',
        subjectSeq: seq,
        resourceVersion: seq,
        removed: true,
      });
  }

  /** The record for a name, removed or not (its subjectSeq guards a re-create). */
  record(namespace: string, name: string): ConfigRecord | undefined {
    return this.byKey.get(`${namespace}/${name}`);
  }

  get(namespace: string, name: string): ConfigRecord | undefined {
    const record = this.byKey.get(`${namespace}/${name}`);
    return record && !record.removed ? record : undefined;
  }

  list(namespace?: string): ConfigRecord[] {
    return [...this.byKey.values()]
      .filter((r) => !r.removed && (namespace === undefined || r.namespace === namespace))
      .sort((a, b) => compareText(a.namespace, b.namespace) || compareText(a.name, b.name));
  }
}

/** Kubernetes core/v1 ConfigMap or Secret, as the API shows it. */
export interface ConfigObject {
  apiVersion: 'v1';
  kind: 'ConfigMap' | 'Secret';
  metadata: {
    name: string;
    namespace: string;
    uid: string;
    resourceVersion: string;
    creationTimestamp: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  data?: Record<string, string>;
  binaryData?: Record<string, string>;
  type?: string;
  immutable?: boolean;
}

/** The API object of a record. */
export function configView(record: ConfigRecord): ConfigObject {
  return {
    apiVersion: 'v1',
    kind: record.kind,
    metadata: {
      name: record.name,
      namespace: record.namespace,
      uid: record.uid,
      resourceVersion: String(record.resourceVersion),
      creationTimestamp: record.creationTimestamp,
      ...(record.labels ? { labels: record.labels } : {}),
      ...(record.annotations ? { annotations: record.annotations } : {}),
    },
    ...(record.data && Object.keys(record.data).length > 0 ? { data: record.data } : {}),
    ...(record.binaryData && Object.keys(record.binaryData).length > 0 ? { binaryData: record.binaryData } : {}),
    ...(record.type !== undefined ? { type: record.type } : {}),
    ...(record.immutable !== undefined ? { immutable: record.immutable } : {}),
  };
}

/** The field selector labels Kubernetes supports for ConfigMaps and Secrets. */
export const CONFIGMAP_SELECTABLE_FIELDS = ['metadata.name', 'metadata.namespace'] as const;
export const SECRET_SELECTABLE_FIELDS = ['metadata.name', 'metadata.namespace', 'type'] as const;

export function configFields(object: ConfigObject): Record<string, string> {
  return {
    'metadata.name': object.metadata.name,
    'metadata.namespace': object.metadata.namespace,
    ...(object.kind === 'Secret' ? { type: object.type ?? '' } : {}),
  };
}
