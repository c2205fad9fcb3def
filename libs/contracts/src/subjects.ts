/**
 * Every stream and subject jetlet uses, declared once. Subject tokens come from
 * Kubernetes names (DNS-1123: lowercase alphanumerics, '-' and '.'), so a name with a
 * '.' would split into two tokens; `token()` escapes it so a subject always has the
 * same number of tokens.
 */

export const STREAMS = {
  /** Pod aggregates (`pods.<ns>.<name>`) and pod status reports from agents. One stream, so
   * a pod's resourceVersion is one sequence across its spec and its status. */
  pods: 'JETLET_PODS',
  /** Node-addressed work: what each node must run (`assign.<node>.<uid>`). */
  assign: 'JETLET_ASSIGN',
  /** Node registrations and heartbeats. */
  nodes: 'JETLET_NODES',
  /** Container events from each node's PLEG, and Kubernetes Events about pods. */
  events: 'JETLET_EVENTS',
} as const;

export type StreamKey = keyof typeof STREAMS;

const PREFIX = 'jetlet';

/** Escapes a name into a single subject token ('.' is a separator in NATS). */
export function token(name: string): string {
  return name.replaceAll('.', '_');
}

export const SUBJECTS = {
  /** The pod aggregate: PodCreated, PodUpdated, PodScheduled, PodDeletionRequested. Writers: api, scheduler. */
  pod: (namespace: string, name: string): string => `${PREFIX}.pods.${token(namespace)}.${token(name)}`,
  allPods: `${PREFIX}.pods.>`,
  /** PodStatusReported for one pod, written only by the agent of `node`. */
  podStatus: (node: string, uid: string): string => `${PREFIX}.podstatus.${token(node)}.${uid}`,
  allPodStatus: `${PREFIX}.podstatus.>`,
  /** MirrorPodUpdated for one static pod, written only by the agent of `node`. */
  mirrorPod: (node: string, uid: string): string => `${PREFIX}.mirror.${token(node)}.${uid}`,
  allMirrorPods: `${PREFIX}.mirror.>`,
  /** Core NATS: the API tells the agent of `node` that a mirror pod was deleted, so it shows it again. */
  mirrorDeleted: (node: string): string => `${PREFIX}.control.${token(node)}.mirror-deleted`,
  /** PodAssigned / PodUnassigned (tombstone) for one pod on one node. Writer: scheduler. */
  assignment: (node: string, uid: string): string => `${PREFIX}.assign.${token(node)}.${uid}`,
  nodeAssignments: (node: string): string => `${PREFIX}.assign.${token(node)}.>`,
  allAssignments: `${PREFIX}.assign.>`,
  /** NodeRegistered, written only by that node's agent. */
  nodeRegistration: (node: string): string => `${PREFIX}.nodes.${token(node)}.registration`,
  /** NodeSpecChanged (cordon), written only by the api. */
  nodeSpec: (node: string): string => `${PREFIX}.nodes.${token(node)}.spec`,
  /** NodeHeartbeat, written only by that node's agent. */
  nodeHeartbeat: (node: string): string => `${PREFIX}.nodes.${token(node)}.heartbeat`,
  allNodes: `${PREFIX}.nodes.>`,
  /** ContainerEvent, PodEvent, BackoffRecorded and ProbeResultChanged for one pod, written only by the agent of `node`. */
  containerEvents: (node: string, uid: string): string => `${PREFIX}.events.${token(node)}.${uid}`,
  /** NodeEvent about `node` itself, written only by its agent. */
  nodeEvents: (node: string): string => `${PREFIX}.events.${token(node)}.node`,
  /** NodeEvent about `node`'s life (NodeNotReady, NodeReady) and PodEvent TaintManagerEviction, written only by the scheduler. */
  nodeLifecycleEvents: (node: string): string => `${PREFIX}.events.${token(node)}.lifecycle`,
  allContainerEvents: `${PREFIX}.events.>`,
  /**
   * Log requests for the agent of `node` (core NATS request/reply; no stream captures
   * `jetlet.logs.>`, nothing is stored). Responder: that agent only. See LogRequest.
   */
  logRequests: (node: string): string => `${PREFIX}.logs.${token(node)}.request`,
  /** The API's acks and cancels of one log stream served by the agent of `node` (core NATS). */
  logStreamControl: (node: string, streamId: string): string => `${PREFIX}.logs.${token(node)}.control.${streamId}`,
  /** Every log stream's control subject of `node`: what its agent subscribes to. */
  nodeLogStreamControl: (node: string): string => `${PREFIX}.logs.${token(node)}.control.*`,
} as const;

export interface StreamDefinition {
  name: string;
  subjects: string[];
  /** How many messages each subject keeps; -1 = unlimited. */
  maxMsgsPerSubject: number;
  /** Seconds a message is kept; 0 = forever. */
  maxAgeSeconds: number;
}

/** The streams jetlet creates (or updates) at start. */
export const STREAM_DEFINITIONS: Record<StreamKey, StreamDefinition> = {
  pods: { name: STREAMS.pods, subjects: [SUBJECTS.allPods, SUBJECTS.allPodStatus, SUBJECTS.allMirrorPods], maxMsgsPerSubject: -1, maxAgeSeconds: 0 },
  assign: { name: STREAMS.assign, subjects: [SUBJECTS.allAssignments], maxMsgsPerSubject: -1, maxAgeSeconds: 0 },
  // Heartbeats are a liveness signal, not history: keep a few per node.
  nodes: { name: STREAMS.nodes, subjects: [SUBJECTS.allNodes], maxMsgsPerSubject: 16, maxAgeSeconds: 0 },
  events: { name: STREAMS.events, subjects: [SUBJECTS.allContainerEvents], maxMsgsPerSubject: -1, maxAgeSeconds: 7 * 24 * 3600 },
};

/**
 * Subjects that carry a node name promise that their message is about that node: its
 * writer is that node's agent (or, for assignments, work for that node). Returns why a
 * message breaks that promise, or undefined. Consumers treat a mismatch as invalid.
 */
export function subjectNodeMismatch(subject: string, envelope: { type: string; data: unknown }): string | undefined {
  const [prefix, kind, node] = subject.split('.');
  if (prefix !== PREFIX || node === undefined) return undefined;
  const data = envelope.data as { nodeName?: unknown; pod?: { spec?: { nodeName?: unknown } } };
  let claimed: unknown;
  switch (kind) {
    case 'podstatus':
    case 'events':
    case 'nodes':
      claimed = data.nodeName;
      break;
    case 'mirror':
      claimed = data.pod?.spec?.nodeName;
      break;
    case 'assign':
      if (envelope.type !== 'PodAssigned') return undefined;
      claimed = data.pod?.spec?.nodeName;
      break;
    default:
      return undefined;
  }
  if (typeof claimed !== 'string' || token(claimed) !== node) return `subject names node ${node} but the message is about ${String(claimed)}`;
  return undefined;
}
