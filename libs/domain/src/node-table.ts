import { unreachableTaints } from './node-lifecycle.js';
import type { AnyEnvelope, NodeObject, Taint } from '#contracts';
import { compareText } from './compare-text.js';

type NodeCondition = NonNullable<NodeObject['status']['conditions']>[number];

/** What the log says about one node. */
export interface NodeRecord {
  name: string;
  node: NodeObject;
  /** Sequence of the newest registration or heartbeat. */
  resourceVersion: number;
  /** ms since the epoch of the newest heartbeat (or registration). */
  lastHeartbeatMs: number;
  runningPods: number;
  /** ms since the epoch since when heartbeats have come without a gap longer than the grace: Ready's last transition. */
  readySinceMs: number;
  /** ms since the epoch of the cordon, while cordoned: when its taint was added. */
  cordonedAtMs?: number;
}

/** The taint the node controller puts on a cordoned node. */
export const UNSCHEDULABLE_TAINT_KEY = 'node.kubernetes.io/unschedulable';

/** Folds the nodes stream into the current nodes. Pure. */
export class NodeTable {
  private readonly nodes = new Map<string, NodeRecord>();
  /** Cordons by node (and since when), kept apart from registrations, which the agent rewrites. */
  private readonly cordoned = new Map<string, { unschedulable: boolean; atMs: number }>();

  /** `graceMs`: a longer silence between heartbeats means the node was not Ready in between. */
  constructor(private readonly graceMs = 40_000) {}

  apply(envelope: AnyEnvelope, seq: number): NodeRecord | undefined {
    switch (envelope.type) {
      case 'NodeRegistered': {
        const existing = this.nodes.get(envelope.data.nodeName);
        const cordon = this.cordoned.get(envelope.data.nodeName);
        const registeredMs = Date.parse(envelope.time);
        const record: NodeRecord = {
          name: envelope.data.nodeName,
          node:
            cordon === undefined ? envelope.data.node : { ...envelope.data.node, spec: { ...envelope.data.node.spec, unschedulable: cordon.unschedulable } },
          resourceVersion: seq,
          lastHeartbeatMs: Math.max(existing?.lastHeartbeatMs ?? 0, registeredMs),
          runningPods: existing?.runningPods ?? 0,
          readySinceMs: existing && registeredMs - existing.lastHeartbeatMs <= this.graceMs ? existing.readySinceMs : registeredMs,
          ...(cordon?.unschedulable ? { cordonedAtMs: cordon.atMs } : {}),
        };
        if (!this.nodes.has(record.name)) this.sorted = undefined;
        this.nodes.set(record.name, record);
        this.sorted &&= this.sorted.map((r) => (r.name === record.name ? record : r));
        return record;
      }
      case 'NodeHeartbeat': {
        const record = this.nodes.get(envelope.data.nodeName);
        if (!record) return undefined;
        const renewMs = Date.parse(envelope.data.renewTime);
        if (renewMs - record.lastHeartbeatMs > this.graceMs) record.readySinceMs = renewMs;
        record.lastHeartbeatMs = Math.max(record.lastHeartbeatMs, renewMs);
        record.runningPods = envelope.data.runningPods;
        record.resourceVersion = Math.max(record.resourceVersion, seq);
        return record;
      }
      case 'NodeSpecChanged': {
        const atMs = Date.parse(envelope.time);
        this.cordoned.set(envelope.data.nodeName, { unschedulable: envelope.data.unschedulable, atMs });
        const record = this.nodes.get(envelope.data.nodeName);
        if (!record) return undefined;
        record.node = { ...record.node, spec: { ...record.node.spec, unschedulable: envelope.data.unschedulable } };
        if (envelope.data.unschedulable) record.cordonedAtMs = atMs;
        else delete record.cordonedAtMs;
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

  /** The records by name, sorted once per new node rather than once per call (a scheduler pass reads them several times). */
  private sorted?: NodeRecord[];

  list(): NodeRecord[] {
    this.sorted ??= [...this.nodes.values()].sort((a, b) => compareText(a.name, b.name));
    return [...this.sorted];
  }
}

/** Ready while a heartbeat arrived within the grace period (the node-lifecycle controller's rule) and the agent itself does not say NotReady. */
export function isNodeReady(record: NodeRecord, nowMs: number, graceMs: number): boolean {
  return nowMs - record.lastHeartbeatMs <= graceMs && agentNotReady(record) === undefined;
}

/** The agent's own Ready=False condition (its container runtime is down), if it posted one. */
function agentNotReady(record: NodeRecord): NodeCondition | undefined {
  return record.node.status.conditions?.find((c) => c.type === 'Ready' && c.status === 'False');
}

/** The taints Kubernetes puts on a node whose kubelet posts NotReady. */
function notReadyTaints(sinceMs: number): Taint[] {
  const timeAdded = new Date(sinceMs).toISOString().replace(/\.\d+Z$/, 'Z');
  return [
    { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule', timeAdded },
    { key: 'node.kubernetes.io/not-ready', effect: 'NoExecute', timeAdded },
  ];
}

const rfc3339 = (ms: number): string => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');

/**
 * The Kubernetes Node view: the Ready condition derived from heartbeat age (with its last
 * transition), the node controller's taints for an unreachable or cordoned node.
 */
export function nodeView(record: NodeRecord, nowMs: number, graceMs: number): NodeObject & { apiVersion: 'v1'; kind: 'Node' } {
  const heard = nowMs - record.lastHeartbeatMs <= graceMs;
  // The agent's own Ready=False (its container runtime is down) while it is heard from.
  const notReady = heard ? agentNotReady(record) : undefined;
  const heartbeat = rfc3339(record.lastHeartbeatMs);
  const readyCondition = !heard
    ? {
        type: 'Ready',
        status: 'Unknown' as const,
        reason: 'NodeStatusUnknown',
        message: 'Kubelet stopped posting node status.',
        lastHeartbeatTime: heartbeat,
        lastTransitionTime: rfc3339(record.lastHeartbeatMs + graceMs),
      }
    : notReady
      ? { ...notReady, lastHeartbeatTime: heartbeat }
      : {
          type: 'Ready',
          status: 'True' as const,
          reason: 'KubeletReady',
          message: 'jetlet agent is posting ready status',
          lastHeartbeatTime: heartbeat,
          lastTransitionTime: rfc3339(record.readySinceMs),
        };
  const taints = [
    ...(record.node.spec.taints ?? []),
    // The node lifecycle controller's taints: unreachable while unheard-from, not-ready while its agent says so, unschedulable while cordoned.
    ...(!heard ? unreachableTaints(record.lastHeartbeatMs + graceMs) : []),
    ...(notReady ? notReadyTaints(Date.parse(notReady.lastTransitionTime ?? heartbeat)) : []),
    ...(record.node.spec.unschedulable
      ? [{ key: UNSCHEDULABLE_TAINT_KEY, effect: 'NoSchedule' as const, timeAdded: rfc3339(record.cordonedAtMs ?? nowMs) }]
      : []),
  ];
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { ...record.node.metadata, resourceVersion: String(record.resourceVersion) },
    spec: { ...record.node.spec, ...(taints.length > 0 ? { taints } : {}) },
    status: {
      ...record.node.status,
      conditions: [...(record.node.status.conditions ?? []).filter((c) => c.type !== 'Ready'), readyCondition],
    },
  };
}
