import { unreachableTaints } from './node-lifecycle.js';
import type { AnyEnvelope, NodeObject } from '#contracts';

/** What the log says about one node. */
export interface NodeRecord {
  name: string;
  node: NodeObject;
  /** Sequence of the newest registration or heartbeat. */
  resourceVersion: number;
  /** ms since the epoch of the newest heartbeat (or registration). */
  lastHeartbeatMs: number;
  runningPods: number;
}

/** Folds the nodes stream into the current nodes. Pure. */
export class NodeTable {
  private readonly nodes = new Map<string, NodeRecord>();
  /** Cordons by node, kept apart from registrations, which the agent rewrites. */
  private readonly cordoned = new Map<string, boolean>();

  apply(envelope: AnyEnvelope, seq: number): NodeRecord | undefined {
    switch (envelope.type) {
      case 'NodeRegistered': {
        const existing = this.nodes.get(envelope.data.nodeName);
        const cordoned = this.cordoned.get(envelope.data.nodeName);
        const record: NodeRecord = {
          name: envelope.data.nodeName,
          node: cordoned === undefined ? envelope.data.node : { ...envelope.data.node, spec: { ...envelope.data.node.spec, unschedulable: cordoned } },
          resourceVersion: seq,
          lastHeartbeatMs: Math.max(existing?.lastHeartbeatMs ?? 0, Date.parse(envelope.time)),
          runningPods: existing?.runningPods ?? 0,
        };
        this.nodes.set(record.name, record);
        return record;
      }
      case 'NodeHeartbeat': {
        const record = this.nodes.get(envelope.data.nodeName);
        if (!record) return undefined;
        record.lastHeartbeatMs = Math.max(record.lastHeartbeatMs, Date.parse(envelope.data.renewTime));
        record.runningPods = envelope.data.runningPods;
        record.resourceVersion = Math.max(record.resourceVersion, seq);
        return record;
      }
      case 'NodeSpecChanged': {
        this.cordoned.set(envelope.data.nodeName, envelope.data.unschedulable);
        const record = this.nodes.get(envelope.data.nodeName);
        if (!record) return undefined;
        record.node = { ...record.node, spec: { ...record.node.spec, unschedulable: envelope.data.unschedulable } };
        record.resourceVersion = Math.max(record.resourceVersion, seq);
        return record;
      }
      default:
        return undefined;
    }
  }

  get(name: string): NodeRecord | undefined {
    return this.nodes.get(name);
  }

  list(): NodeRecord[] {
    return [...this.nodes.values()].sort((a, b) => a.name.localeCompare(b.name));
  }
}

/** Ready while a heartbeat arrived within the grace period (the node-lifecycle controller's rule). */
export function isNodeReady(record: NodeRecord, nowMs: number, graceMs: number): boolean {
  return nowMs - record.lastHeartbeatMs <= graceMs;
}

/** The Kubernetes Node view, with the Ready condition derived from heartbeat age. */
export function nodeView(record: NodeRecord, nowMs: number, graceMs: number): NodeObject & { apiVersion: 'v1'; kind: 'Node' } {
  const ready = isNodeReady(record, nowMs, graceMs);
  const heartbeat = new Date(record.lastHeartbeatMs).toISOString();
  const readyCondition = ready
    ? { type: 'Ready', status: 'True' as const, reason: 'KubeletReady', message: 'jetlet agent is posting ready status', lastHeartbeatTime: heartbeat }
    : { type: 'Ready', status: 'Unknown' as const, reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.', lastHeartbeatTime: heartbeat };
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { ...record.node.metadata, resourceVersion: String(record.resourceVersion) },
    // Unheard-from nodes carry the node lifecycle controller's unreachable taints.
    spec: ready
      ? record.node.spec
      : { ...record.node.spec, taints: [...(record.node.spec.taints ?? []), ...unreachableTaints(record.lastHeartbeatMs + graceMs)] },
    status: {
      ...record.node.status,
      conditions: [...(record.node.status.conditions ?? []).filter((c) => c.type !== 'Ready'), readyCondition],
    },
  };
}
