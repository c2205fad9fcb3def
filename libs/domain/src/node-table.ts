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

  apply(envelope: AnyEnvelope, seq: number): NodeRecord | undefined {
    switch (envelope.type) {
      case 'NodeRegistered': {
        const existing = this.nodes.get(envelope.data.nodeName);
        const record: NodeRecord = {
          name: envelope.data.nodeName,
          node: envelope.data.node,
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
    spec: record.node.spec,
    status: {
      ...record.node.status,
      conditions: [...(record.node.status.conditions ?? []).filter((c) => c.type !== 'Ready'), readyCondition],
    },
  };
}

/** A candidate for one pod: a node and how many pods it already has. */
export interface NodeCandidate {
  name: string;
  labels: Record<string, string>;
  ready: boolean;
  unschedulable: boolean;
  pods: number;
  maxPods: number;
}

export type Placement = { node: string } | { node?: undefined; message: string };

/**
 * Filters nodes (Ready, schedulable, nodeSelector, pod count) and picks the least loaded,
 * ties broken by name so the choice is deterministic.
 */
export function pickNode(nodeSelector: Record<string, string> | undefined, candidates: NodeCandidate[]): Placement {
  const reasons = new Map<string, number>();
  const note = (reason: string): void => void reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
  const fit = candidates.filter((n) => {
    if (!n.ready) return (note('node(s) had untolerated taint {node.kubernetes.io/not-ready: }'), false);
    if (n.unschedulable) return (note('node(s) were unschedulable'), false);
    if (nodeSelector && !Object.entries(nodeSelector).every(([k, v]) => n.labels[k] === v))
      return (note("node(s) didn't match Pod's node affinity/selector"), false);
    if (n.pods >= n.maxPods) return (note('Too many pods'), false);
    return true;
  });
  if (fit.length === 0) {
    // kube-scheduler's FitError sorts the "count reason" strings, so the message does not depend on node order.
    const detail = [...reasons]
      .map(([reason, count]) => `${count} ${reason}`)
      .sort()
      .join(', ');
    return { message: `0/${candidates.length} nodes are available${detail ? `: ${detail}` : ''}.` };
  }
  fit.sort((a, b) => a.pods - b.pods || a.name.localeCompare(b.name));
  return { node: fit[0].name };
}
