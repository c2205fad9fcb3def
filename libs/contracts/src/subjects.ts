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
  /** PodAssigned / PodUnassigned (tombstone) for one pod on one node. Writer: scheduler. */
  assignment: (node: string, uid: string): string => `${PREFIX}.assign.${token(node)}.${uid}`,
  nodeAssignments: (node: string): string => `${PREFIX}.assign.${token(node)}.>`,
  allAssignments: `${PREFIX}.assign.>`,
  /** NodeRegistered, written only by that node's agent. */
  nodeRegistration: (node: string): string => `${PREFIX}.nodes.${token(node)}.registration`,
  /** NodeHeartbeat, written only by that node's agent. */
  nodeHeartbeat: (node: string): string => `${PREFIX}.nodes.${token(node)}.heartbeat`,
  allNodes: `${PREFIX}.nodes.>`,
  /** ContainerEvent and PodEvent for one pod, written only by the agent of `node`. */
  containerEvents: (node: string, uid: string): string => `${PREFIX}.events.${token(node)}.${uid}`,
  allContainerEvents: `${PREFIX}.events.>`,
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
  pods: { name: STREAMS.pods, subjects: [SUBJECTS.allPods, SUBJECTS.allPodStatus], maxMsgsPerSubject: -1, maxAgeSeconds: 0 },
  assign: { name: STREAMS.assign, subjects: [SUBJECTS.allAssignments], maxMsgsPerSubject: -1, maxAgeSeconds: 0 },
  // Heartbeats are a liveness signal, not history: keep a few per node.
  nodes: { name: STREAMS.nodes, subjects: [SUBJECTS.allNodes], maxMsgsPerSubject: 16, maxAgeSeconds: 0 },
  events: { name: STREAMS.events, subjects: [SUBJECTS.allContainerEvents], maxMsgsPerSubject: -1, maxAgeSeconds: 7 * 24 * 3600 },
};
