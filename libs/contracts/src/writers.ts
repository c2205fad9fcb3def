import type { MessageType } from './message-map.js';

/** A component that appends to the streams. jetctl writes only through the API. */
export type Writer = 'agent' | 'scheduler' | 'api';

/**
 * Where one writer appends one message type. `subject` is a NATS subject pattern; the token
 * `{node}` stands for the writing agent's own node name (escaped as a subject token), so an
 * agent's permissions can be generated per node.
 */
export interface WriteRoute {
  writer: Writer;
  subject: string;
}

/**
 * The single writer of each message type, declared as data: docs/events.md is generated from
 * it, and NATS permissions can be. A type written by two components (PodEvent, NodeEvent) is
 * still single-writer per subject: the agent on its node's subjects, the scheduler on
 * `events.<node>.lifecycle`.
 */
export const WRITE_ROUTES: { readonly [T in MessageType]: readonly WriteRoute[] } = {
  PodCreated: [{ writer: 'api', subject: 'jetlet.pods.*.*' }],
  PodUpdated: [{ writer: 'api', subject: 'jetlet.pods.*.*' }],
  PodDeletionRequested: [{ writer: 'api', subject: 'jetlet.pods.*.*' }],
  PodScheduled: [{ writer: 'scheduler', subject: 'jetlet.pods.*.*' }],
  PodUnschedulable: [{ writer: 'scheduler', subject: 'jetlet.pods.*.*' }],
  PodEvicted: [{ writer: 'scheduler', subject: 'jetlet.pods.*.*' }],
  PodDeletionFinalized: [{ writer: 'scheduler', subject: 'jetlet.pods.*.*' }],
  PodAssigned: [{ writer: 'scheduler', subject: 'jetlet.assign.*.*' }],
  PodUnassigned: [{ writer: 'scheduler', subject: 'jetlet.assign.*.*' }],
  PodStatusReported: [{ writer: 'agent', subject: 'jetlet.podstatus.{node}.*' }],
  MirrorPodUpdated: [{ writer: 'agent', subject: 'jetlet.mirror.{node}.*' }],
  ContainerEvent: [{ writer: 'agent', subject: 'jetlet.events.{node}.*' }],
  BackoffRecorded: [{ writer: 'agent', subject: 'jetlet.events.{node}.*' }],
  ProbeResultChanged: [{ writer: 'agent', subject: 'jetlet.events.{node}.*' }],
  ImagePullProgress: [{ writer: 'agent', subject: 'jetlet.events.{node}.*' }],
  PodEvent: [
    { writer: 'agent', subject: 'jetlet.events.{node}.*' },
    { writer: 'scheduler', subject: 'jetlet.events.*.lifecycle' },
  ],
  NodeEvent: [
    { writer: 'agent', subject: 'jetlet.events.{node}.node' },
    { writer: 'scheduler', subject: 'jetlet.events.*.lifecycle' },
  ],
  NodeRegistered: [{ writer: 'agent', subject: 'jetlet.nodes.{node}.registration' }],
  NodeHeartbeat: [{ writer: 'agent', subject: 'jetlet.nodes.{node}.heartbeat' }],
  NodeSpecChanged: [{ writer: 'api', subject: 'jetlet.nodes.*.spec' }],
  NamespaceCreated: [{ writer: 'api', subject: 'jetlet.namespaces.*' }],
  NamespaceDeletionRequested: [{ writer: 'api', subject: 'jetlet.namespaces.*' }],
  NamespaceRemoved: [{ writer: 'api', subject: 'jetlet.namespaces.*' }],
  ConfigMapWritten: [{ writer: 'api', subject: 'jetlet.configmaps.*.*' }],
  ConfigMapDeleted: [{ writer: 'api', subject: 'jetlet.configmaps.*.*' }],
  SecretWritten: [{ writer: 'api', subject: 'jetlet.secrets.*.*' }],
  SecretDeleted: [{ writer: 'api', subject: 'jetlet.secrets.*.*' }],
  RequestAudited: [{ writer: 'api', subject: 'jetlet.audit.*.*.*' }],
  LeaseRenewed: [{ writer: 'scheduler', subject: 'jetlet.leases.kube-scheduler' }],
};

/**
 * The writer of each message type. For the two types the scheduler also writes on
 * `events.<node>.lifecycle` (NodeNotReady/NodeReady, TaintManagerEviction) this names the
 * agent, their main writer; WRITE_ROUTES has both.
 */
export const WRITERS: { readonly [T in MessageType]: Writer } = Object.fromEntries(
  Object.entries(WRITE_ROUTES).map(([type, routes]) => [type, routes[0].writer]),
) as { readonly [T in MessageType]: Writer };

/** True when `subject` matches the NATS pattern (`*` one token, `>` the rest; `{node}` = `node`). */
export function subjectMatches(pattern: string, subject: string, node?: string): boolean {
  const want = pattern.split('.');
  const have = subject.split('.');
  for (let i = 0; i < want.length; i++) {
    if (want[i] === '>') return have.length > i;
    if (i >= have.length) return false;
    if (want[i] === '*') continue;
    if (want[i] === '{node}' ? node === undefined || have[i] !== node : want[i] !== have[i]) return false;
  }
  return want.length === have.length;
}

/** The writer allowed to append `type` on `subject` (an agent only on its own `node`'s subjects), or undefined. */
export function writerOf(type: MessageType, subject: string, node?: string): Writer | undefined {
  const routes = WRITE_ROUTES[type];
  // The scheduler's lifecycle subject is more specific than the agent's `events.{node}.*`.
  const specific = routes.find((r) => !r.subject.includes('{node}') && subjectMatches(r.subject, subject));
  if (specific) return specific.writer;
  return routes.find((r) => subjectMatches(r.subject, subject, node ?? subject.split('.')[2]))?.writer;
}

/**
 * A core NATS subject (request/reply or a stream's input, never stored): who publishes on
 * it and who subscribes. `replies` says the subscriber answers on the request's reply
 * subject (an inbox of the publisher), possibly many times (a stream's frames).
 */
export interface CoreRoute {
  /** What travels on it, for docs and permissions. */
  protocol: 'logs' | 'streams' | 'stats' | 'control';
  subject: string;
  publisher: Writer;
  subscriber: Writer;
  replies: boolean;
}

/**
 * Every core NATS subject, as data beside WRITE_ROUTES, so NATS permissions can be generated
 * from both. `{node}` is the subscribing agent's own node.
 */
export const CORE_ROUTES: readonly CoreRoute[] = [
  { protocol: 'logs', subject: 'jetlet.logs.{node}.request', publisher: 'api', subscriber: 'agent', replies: true },
  { protocol: 'logs', subject: 'jetlet.logs.{node}.control.*', publisher: 'api', subscriber: 'agent', replies: false },
  { protocol: 'streams', subject: 'jetlet.streams.{node}.request', publisher: 'api', subscriber: 'agent', replies: true },
  { protocol: 'streams', subject: 'jetlet.streams.{node}.input.*', publisher: 'api', subscriber: 'agent', replies: false },
  { protocol: 'stats', subject: 'jetlet.stats.{node}.request', publisher: 'api', subscriber: 'agent', replies: true },
  { protocol: 'control', subject: 'jetlet.control.{node}.mirror-deleted', publisher: 'api', subscriber: 'agent', replies: false },
];
