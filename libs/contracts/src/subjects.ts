/**
 * Every stream and subject jetlet uses, declared once. Subject tokens come from names
 * (namespaces, pod and node names, uids); `token()` escapes each name into exactly one
 * subject token, injectively, so two different names never share a subject.
 */

export const STREAMS = {
  /** Pod aggregates (`pods.<ns>.<name>`) and pod status reports from agents. One stream, so
   * a pod's resourceVersion is one sequence across its spec and its status. */
  pods: 'JETLET_PODS',
  /** Node-addressed work: what each node must run (`assign.<node>.<uid>`). */
  assign: 'JETLET_ASSIGN',
  /** Node registrations and heartbeats. */
  nodes: 'JETLET_NODES',
  /** Container events from each node's PLEG, Kubernetes Events about pods, and the API's audit records. */
  events: 'JETLET_EVENTS',
  /** ConfigMaps and Secrets (`configmaps.<ns>.<name>`, `secrets.<ns>.<name>`): each subject keeps its newest state. */
  config: 'JETLET_CONFIG',
  /** Leader-election leases (`leases.<name>`), Kubernetes' coordination.k8s.io Lease. */
  leases: 'JETLET_LEASES',
} as const;

export type StreamKey = keyof typeof STREAMS;

const PREFIX = 'jetlet';

/** Characters a token keeps as they are: what DNS-1123 names are made of, minus '.'. */
const PLAIN = /[a-z0-9-]/;
/** A name made of PLAIN characters only, its own token: most names (a DNS-1123 label, a uid) take this path. */
const ALL_PLAIN = /^[a-z0-9-]+$/;

/**
 * Escapes a name into one subject token, injectively: `[a-z0-9-]` stay, `.` becomes `_`,
 * and every other character becomes `~` and the two lowercase hex digits of each of its
 * UTF-8 bytes (`_` → `~5f`, `~` → `~7e`, `A` → `~41`); the empty name is `~`. `_` and `~`
 * each mean one thing, so the mapping can be read back (see `untoken`) and distinct names
 * never collide. A DNS-1123 name keeps the token it always had (`a.b` → `a_b`), and no
 * token holds NATS's separator, wildcards or white space.
 */
export function token(name: string): string {
  if (name === '') return '~';
  if (ALL_PLAIN.test(name)) return name;
  let out = '';
  for (const ch of name) {
    if (PLAIN.test(ch)) out += ch;
    else if (ch === '.') out += '_';
    else for (const byte of Buffer.from(ch, 'utf8')) out += `~${byte.toString(16).padStart(2, '0')}`;
  }
  return out;
}

/** The name a token came from: the inverse of `token()`. Throws RangeError on anything `token()` cannot produce. */
export function untoken(encoded: string): string {
  if (encoded === '~') return '';
  if (ALL_PLAIN.test(encoded)) return encoded;
  const bytes: number[] = [];
  for (let i = 0; i < encoded.length; i++) {
    const ch = encoded[i] ?? '';
    if (ch === '_') bytes.push(0x2e);
    else if (ch === '~') {
      const hex = encoded.slice(i + 1, i + 3);
      if (!/^[0-9a-f]{2}$/.test(hex)) throw new RangeError(`not a subject token: ${encoded}`);
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else if (PLAIN.test(ch)) bytes.push(ch.charCodeAt(0));
    else throw new RangeError(`not a subject token: ${encoded}`);
  }
  const name = new TextDecoder('utf-8', { fatal: true }).decode(new Uint8Array(bytes));
  if (token(name) !== encoded) throw new RangeError(`not a subject token: ${encoded}`);
  return name;
}

export const SUBJECTS = {
  /** The pod aggregate: PodCreated, PodUpdated, PodScheduled, PodDeletionRequested. Writers: api, scheduler. */
  pod: (namespace: string, name: string): string => `${PREFIX}.pods.${token(namespace)}.${token(name)}`,
  allPods: `${PREFIX}.pods.>`,
  /** The namespace aggregate: NamespaceCreated, NamespaceDeletionRequested, NamespaceRemoved. Writer: api. */
  namespace: (name: string): string => `${PREFIX}.namespaces.${token(name)}`,
  allNamespaces: `${PREFIX}.namespaces.>`,
  /** ConfigMapWritten / ConfigMapDeleted: the whole ConfigMap, newest only. Writer: api. */
  configMap: (namespace: string, name: string): string => `${PREFIX}.configmaps.${token(namespace)}.${token(name)}`,
  allConfigMaps: `${PREFIX}.configmaps.>`,
  /** SecretWritten / SecretDeleted: the whole Secret (values sealed when a key is configured), newest only. Writer: api. */
  secret: (namespace: string, name: string): string => `${PREFIX}.secrets.${token(namespace)}.${token(name)}`,
  allSecrets: `${PREFIX}.secrets.>`,
  /** PodStatusReported for one pod, written only by the agent of `node`. */
  podStatus: (node: string, uid: string): string => `${PREFIX}.podstatus.${token(node)}.${token(uid)}`,
  allPodStatus: `${PREFIX}.podstatus.>`,
  /** MirrorPodUpdated for one static pod, written only by the agent of `node`. */
  mirrorPod: (node: string, uid: string): string => `${PREFIX}.mirror.${token(node)}.${token(uid)}`,
  allMirrorPods: `${PREFIX}.mirror.>`,
  /** Core NATS: the API tells the agent of `node` that a mirror pod was deleted, so it shows it again. */
  mirrorDeleted: (node: string): string => `${PREFIX}.control.${token(node)}.mirror-deleted`,
  /** PodAssigned / PodUnassigned (tombstone) for one pod on one node. Writer: scheduler. */
  assignment: (node: string, uid: string): string => `${PREFIX}.assign.${token(node)}.${token(uid)}`,
  nodeAssignments: (node: string): string => `${PREFIX}.assign.${token(node)}.>`,
  allAssignments: `${PREFIX}.assign.>`,
  /** NodeRegistered, written only by that node's agent. */
  nodeRegistration: (node: string): string => `${PREFIX}.nodes.${token(node)}.registration`,
  /** NodeSpecChanged (cordon), written only by the api. */
  nodeSpec: (node: string): string => `${PREFIX}.nodes.${token(node)}.spec`,
  /** NodeHeartbeat, written only by that node's agent. */
  nodeHeartbeat: (node: string): string => `${PREFIX}.nodes.${token(node)}.heartbeat`,
  allNodes: `${PREFIX}.nodes.>`,
  /** LeaseRenewed: who leads among the replicas of a component (`kube-scheduler`). Writers: those replicas, each compare-and-set. */
  lease: (name: string): string => `${PREFIX}.leases.${token(name)}`,
  /** ContainerEvent, PodEvent, BackoffRecorded, ProbeResultChanged and ImagePullProgress for one pod, written only by the agent of `node`. */
  containerEvents: (node: string, uid: string): string => `${PREFIX}.events.${token(node)}.${token(uid)}`,
  /** NodeEvent about `node` itself, written only by its agent. */
  nodeEvents: (node: string): string => `${PREFIX}.events.${token(node)}.node`,
  /** NodeEvent about `node`'s life (NodeNotReady, NodeReady) and PodEvent TaintManagerEviction, written only by the scheduler. */
  nodeLifecycleEvents: (node: string): string => `${PREFIX}.events.${token(node)}.lifecycle`,
  allContainerEvents: `${PREFIX}.events.>`,
  /** RequestAudited for one object (`~` for no namespace or name), written only by the api. */
  audit: (resource: string, namespace: string, name: string): string => `${PREFIX}.audit.${token(resource)}.${token(namespace)}.${token(name)}`,
  allAudit: `${PREFIX}.audit.>`,
  /**
   * Log requests for the agent of `node` (core NATS request/reply; no stream captures
   * `jetlet.logs.>`, nothing is stored). Responder: that agent only. See LogRequest.
   */
  logRequests: (node: string): string => `${PREFIX}.logs.${token(node)}.request`,
  /** The API's acks and cancels of one log stream served by the agent of `node` (core NATS). */
  logStreamControl: (node: string, streamId: string): string => `${PREFIX}.logs.${token(node)}.control.${token(streamId)}`,
  /** Every log stream's control subject of `node`: what its agent subscribes to. */
  nodeLogStreamControl: (node: string): string => `${PREFIX}.logs.${token(node)}.control.*`,
  /**
   * Exec, attach and port-forward requests for the agent of `node` (core NATS request/reply,
   * nothing stored). Responder: that agent only; it sends the stream's frames to the reply
   * subject. See PodStreamRequest.
   */
  streamRequests: (node: string): string => `${PREFIX}.streams.${token(node)}.request`,
  /** The API's frames of one stream served by the agent of `node`: stdin, resize, acks, cancel (core NATS). */
  streamInput: (node: string, streamId: string): string => `${PREFIX}.streams.${token(node)}.input.${token(streamId)}`,
  /** Requests for the Summary API of `node`'s agent (core NATS request/reply; see StatsSummary). */
  statsRequests: (node: string): string => `${PREFIX}.stats.${token(node)}.request`,
  /** Every stream's input subject of `node`: what its agent subscribes to. */
  nodeStreamInput: (node: string): string => `${PREFIX}.streams.${token(node)}.input.*`,
} as const;

/** The pod whose aggregate subject this is (`SUBJECTS.pod`), or undefined for any other subject. */
export function podOfSubject(subject: string): { namespace: string; name: string } | undefined {
  const parts = subject.split('.');
  if (parts.length !== 4 || parts[0] !== PREFIX || parts[1] !== 'pods') return undefined;
  try {
    return { namespace: untoken(parts[2] ?? ''), name: untoken(parts[3] ?? '') };
  } catch {
    return undefined;
  }
}

/** The ConfigMap or Secret whose subject this is (`SUBJECTS.configMap`, `SUBJECTS.secret`), or undefined. */
export function configOfSubject(subject: string): { kind: 'ConfigMap' | 'Secret'; namespace: string; name: string } | undefined {
  const parts = subject.split('.');
  if (parts.length !== 4 || parts[0] !== PREFIX || (parts[1] !== 'configmaps' && parts[1] !== 'secrets')) return undefined;
  try {
    return { kind: parts[1] === 'configmaps' ? 'ConfigMap' : 'Secret', namespace: untoken(parts[2] ?? ''), name: untoken(parts[3] ?? '') };
  } catch {
    return undefined;
  }
}

export interface StreamDefinition {
  name: string;
  subjects: string[];
  /** How many messages each subject keeps; -1 = unlimited. */
  maxMsgsPerSubject: number;
  /** Seconds a message is kept; 0 = forever. */
  maxAgeSeconds: number;
}

/**
 * The leader-election leases, by what they elect: each the only subject its writers grow in
 * JETLET_LEASES, whose last sequence a lease write expects (see the scheduler's LeaseStore).
 */
export const LEASES = { scheduler: 'kube-scheduler' } as const;

/** The streams jetlet creates (or updates) at start. */
export const STREAM_DEFINITIONS: Record<StreamKey, StreamDefinition> = {
  pods: {
    name: STREAMS.pods,
    subjects: [SUBJECTS.allPods, SUBJECTS.allPodStatus, SUBJECTS.allMirrorPods, SUBJECTS.allNamespaces],
    maxMsgsPerSubject: -1,
    maxAgeSeconds: 0,
  },
  assign: { name: STREAMS.assign, subjects: [SUBJECTS.allAssignments], maxMsgsPerSubject: -1, maxAgeSeconds: 0 },
  // Heartbeats are a liveness signal, not history: keep a few per node.
  nodes: { name: STREAMS.nodes, subjects: [SUBJECTS.allNodes], maxMsgsPerSubject: 16, maxAgeSeconds: 0 },
  events: { name: STREAMS.events, subjects: [SUBJECTS.allContainerEvents, SUBJECTS.allAudit], maxMsgsPerSubject: -1, maxAgeSeconds: 7 * 24 * 3600 },
  // Each write carries the whole object, so a subject's newest message is all a reader needs;
  // a Secret's replaced values leave the stream with the write that replaces them.
  config: { name: STREAMS.config, subjects: [SUBJECTS.allConfigMaps, SUBJECTS.allSecrets], maxMsgsPerSubject: 1, maxAgeSeconds: 0 },
  // A lease is state, renewed every few seconds: its last renewals say who led when. Only the
  // leases named: a lease write expects the stream's last sequence (see LEASES), so no other subject may grow it.
  leases: { name: STREAMS.leases, subjects: Object.values(LEASES).map((name) => SUBJECTS.lease(name)), maxMsgsPerSubject: 16, maxAgeSeconds: 0 },
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
