import type { AnyEnvelope } from '#contracts';
import { compareText } from './compare-text.js';

/** What the log says about one namespace. */
export interface NamespaceRecord {
  name: string;
  uid: string;
  creationTimestamp: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  /** Set once deletion was requested: the namespace is Terminating. */
  deletionTimestamp?: string;
  /** Last sequence on the namespace's subject, for optimistic concurrency. */
  subjectSeq: number;
  /** Sequence of the newest fact about it (its resourceVersion). */
  resourceVersion: number;
  removed: boolean;
}

/** The namespaces every cluster has, created by the API at start as Kubernetes' system namespaces controller does. */
export const SYSTEM_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'] as const;
/** Namespaces the API server refuses to delete. */
export const UNDELETABLE_NAMESPACES: readonly string[] = ['default', 'kube-system', 'kube-public'];

/** Folds namespace facts into the current namespaces. Pure. */
export class NamespaceTable {
  private readonly byName = new Map<string, NamespaceRecord>();

  apply(envelope: AnyEnvelope, seq: number): NamespaceRecord | undefined {
    switch (envelope.type) {
      case 'NamespaceCreated': {
        const d = envelope.data;
        const record: NamespaceRecord = {
          name: d.name,
          uid: d.uid,
          creationTimestamp: d.creationTimestamp,
          ...(d.labels ? { labels: d.labels } : {}),
          ...(d.annotations ? { annotations: d.annotations } : {}),
          subjectSeq: seq,
          resourceVersion: seq,
          removed: false,
        };
        this.byName.set(d.name, record);
        return record;
      }
      case 'NamespaceDeletionRequested':
      case 'NamespaceRemoved': {
        const record = [...this.byName.values()].find((r) => r.uid === envelope.data.uid);
        if (!record) return undefined;
        if (envelope.type === 'NamespaceDeletionRequested') record.deletionTimestamp = envelope.data.deletionTimestamp;
        else record.removed = true;
        record.subjectSeq = record.resourceVersion = seq;
        return record;
      }
      default:
        return undefined;
    }
  }

  /** The record for a name, removed or not (its subjectSeq guards a re-create). */
  record(name: string): NamespaceRecord | undefined {
    return this.byName.get(name);
  }

  get(name: string): NamespaceRecord | undefined {
    const record = this.byName.get(name);
    return record && !record.removed ? record : undefined;
  }

  list(): NamespaceRecord[] {
    return [...this.byName.values()].filter((r) => !r.removed).sort((a, b) => compareText(a.name, b.name));
  }

  /** Namespaces being deleted, whose pods must go before they can be removed. */
  terminating(): NamespaceRecord[] {
    return this.list().filter((r) => r.deletionTimestamp !== undefined);
  }
}

/** Kubernetes core/v1 Namespace, as the API shows it. */
export interface NamespaceObject {
  apiVersion: 'v1';
  kind: 'Namespace';
  metadata: {
    name: string;
    uid: string;
    resourceVersion: string;
    creationTimestamp: string;
    deletionTimestamp?: string;
    labels: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec: { finalizers: string[] };
  status: { phase: 'Active' | 'Terminating' };
}

/** The Kubernetes core/v1 Namespace view of a record. */
export function namespaceView(record: NamespaceRecord): NamespaceObject {
  const terminating = record.deletionTimestamp !== undefined;
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: {
      name: record.name,
      uid: record.uid,
      resourceVersion: String(record.resourceVersion),
      creationTimestamp: record.creationTimestamp,
      ...(terminating ? { deletionTimestamp: record.deletionTimestamp } : {}),
      labels: { ...record.labels, 'kubernetes.io/metadata.name': record.name },
      ...(record.annotations ? { annotations: record.annotations } : {}),
    },
    spec: { finalizers: ['kubernetes'] },
    status: { phase: terminating ? 'Terminating' : 'Active' },
  };
}
