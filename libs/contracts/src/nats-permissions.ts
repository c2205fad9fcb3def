import { STREAMS, token } from './subjects.js';
import { CORE_ROUTES, subjectMatches, WRITE_ROUTES, type Writer } from './writers.js';

/**
 * NATS permissions per component identity, generated from the writer tables (WRITE_ROUTES,
 * CORE_ROUTES) and the read table below; never written by hand. `authorizationConfig` renders
 * them as nats-server 2.9's `authorization { users: [...] }` block, one nkey user each.
 */

/** Who connects: the control plane's components, the read-only tools, the operator, one per node. */
export type Identity =
  { kind: 'api' } | { kind: 'scheduler' } | { kind: 'alerter' } | { kind: 'jetctl' } | { kind: 'admin' } | { kind: 'node'; node: string } | HollowIdentity;

/**
 * One process of hollow nodes (`apps/agent` hollow mode): every agent in it connects as this
 * identity, whose permissions are those of its nodes `${prefix}-${first}` ..
 * `${prefix}-${first + count - 1}` together, and of no other node.
 */
export interface HollowIdentity {
  kind: 'hollow';
  prefix: string;
  first: number;
  count: number;
}

/** The node names a hollow identity covers, in order. */
export function hollowNodes(id: HollowIdentity): string[] {
  return Array.from({ length: id.count }, (_, i) => `${id.prefix}-${id.first + i}`);
}

export interface Permissions {
  publish: { allow: string[]; deny: string[] };
  subscribe: { allow: string[]; deny: string[] };
}

const JS = '$JS.API';
const STREAM_NAMES = Object.values(STREAMS);

/** `api`, `scheduler`, …, `node:<name>`: how an identity is named in files, logs and the server's config. */
export function identityName(id: Identity): string {
  if (id.kind === 'hollow') return `hollow:${id.prefix}-${id.first}..${id.first + id.count - 1}`;
  return id.kind === 'node' ? `node:${id.node}` : id.kind;
}

/** Parses `api`, `node:<name>`, `hollow:<prefix>-<first>..<last>`, …; undefined for anything else. */
export function parseIdentity(name: string): Identity | undefined {
  if (name.startsWith('node:') && name.length > 5) return { kind: 'node', node: name.slice(5) };
  const hollow = /^hollow:(.+)-(\d+)\.\.(\d+)$/.exec(name);
  if (hollow) {
    const first = Number(hollow[2]);
    const last = Number(hollow[3]);
    return last >= first ? { kind: 'hollow', prefix: hollow[1] ?? '', first, count: last - first + 1 } : undefined;
  }
  if (name === 'api' || name === 'scheduler' || name === 'alerter' || name === 'jetctl' || name === 'admin') return { kind: name };
  return undefined;
}

/**
 * The identity's own reply subjects (the connection's `inboxPrefix`): only it may subscribe
 * there, so nobody reads another client's replies (logs, exec frames, JetStream acks).
 */
export function inboxPrefix(id: Identity): string {
  if (id.kind === 'hollow') return `_INBOX_hollow_${token(id.prefix)}_${id.first}_${id.count}`;
  return id.kind === 'node' ? `_INBOX_node_${token(id.node)}` : `_INBOX_${id.kind}`;
}

/**
 * What each component reads, as data beside the writer tables: per stream, whether it reads
 * single messages (`STREAM.MSG.GET`), its ordered consumers' filters (`ordered`, `'>'` for
 * any) and its durable consumers (name and filter). `{node}` is the agent's own node.
 */
interface StreamRead {
  stream: string;
  get?: boolean;
  ordered?: string[];
  durables?: { name: string; filter: string }[];
}
type Reader = Writer | 'alerter' | 'jetctl';

export const READ_ROUTES: { readonly [R in Reader]: readonly StreamRead[] } = {
  agent: [
    { stream: STREAMS.assign, durables: [{ name: 'agent-{node}', filter: 'jetlet.assign.{node}.>' }] },
    { stream: STREAMS.pods, get: true },
    { stream: STREAMS.nodes, get: true },
    { stream: STREAMS.config, get: true },
  ],
  scheduler: [
    { stream: STREAMS.pods, get: true, ordered: ['>'] },
    { stream: STREAMS.nodes, get: true, ordered: ['>'] },
    { stream: STREAMS.assign, get: true, ordered: ['>'] },
    { stream: STREAMS.leases, get: true },
  ],
  api: STREAM_NAMES.map((stream) => ({ stream, get: true, ordered: ['>'] })),
  alerter: [
    { stream: STREAMS.pods, durables: [{ name: 'alerter-pods', filter: '>' }] },
    { stream: STREAMS.events, durables: [{ name: 'alerter-events', filter: '>' }] },
    { stream: STREAMS.nodes, durables: [{ name: 'alerter-nodes', filter: '>' }] },
  ],
  jetctl: STREAM_NAMES.map((stream) => ({ stream, get: true, ordered: ['>'] })),
};

/**
 * Stream management beside the writes: the API creates and updates the streams at start (it
 * is the control plane's owner of the log, as kube-apiserver is of etcd); the scheduler
 * deletes, message by message, the subjects it cleans up (a finalized pod's aggregate, status
 * and assignment). NATS 2.9 cannot limit a delete to a subject, so the permission covers the
 * whole stream: it is given to the scheduler only. Nobody but `admin` may purge a stream
 * (a purge moves consumers past it; see `Bus.purgeSubject`) or delete one.
 */
const STREAM_MANAGEMENT: { readonly [W in Writer]: readonly string[] } = {
  api: STREAM_NAMES.flatMap((s) => [`${JS}.STREAM.CREATE.${s}`, `${JS}.STREAM.UPDATE.${s}`]),
  scheduler: [`${JS}.STREAM.MSG.DELETE.${STREAMS.pods}`, `${JS}.STREAM.MSG.DELETE.${STREAMS.assign}`],
  agent: [],
};

/** `{node}` replaced by the node's token, or by `*` for a component that serves every node. */
function forNode(pattern: string, node: string | undefined): string {
  return pattern.split('{node}').join(node === undefined ? '*' : token(node));
}

function writerOfIdentity(id: Identity): Writer | undefined {
  if (id.kind === 'node') return 'agent';
  if (id.kind === 'api' || id.kind === 'scheduler') return id.kind;
  return undefined;
}

function readerOfIdentity(id: Identity): Reader | undefined {
  if (id.kind === 'admin' || id.kind === 'hollow') return undefined;
  return id.kind === 'node' ? 'agent' : id.kind;
}

/** The JetStream API subjects of the reads declared for `reader`. */
function readPermissions(reader: Reader, node: string | undefined): string[] {
  // Every component checks at start that every stream exists (metadata only, no messages).
  const out = [`${JS}.INFO`, ...STREAM_NAMES.map((s) => `${JS}.STREAM.INFO.${s}`)];
  for (const read of READ_ROUTES[reader]) {
    const s = read.stream;
    if (read.get) out.push(`${JS}.STREAM.MSG.GET.${s}`, `${JS}.DIRECT.GET.${s}`, `${JS}.DIRECT.GET.${s}.>`);
    for (const filter of read.ordered ?? []) {
      // nats.js names ordered consumers `<random>_<serial>`: the name cannot be scoped, the
      // stream and (with the 2.9 create subject) the filter can.
      out.push(filter === '>' ? `${JS}.CONSUMER.CREATE.${s}.>` : `${JS}.CONSUMER.CREATE.${s}.*.${forNode(filter, node)}`);
      out.push(`${JS}.CONSUMER.INFO.${s}.*`, `${JS}.CONSUMER.DELETE.${s}.*`, `${JS}.CONSUMER.MSG.NEXT.${s}.*`);
    }
    for (const durable of read.durables ?? []) {
      const name = forNode(durable.name, node);
      const filter = forNode(durable.filter, node);
      out.push(filter === '>' ? `${JS}.CONSUMER.CREATE.${s}.${name}` : `${JS}.CONSUMER.CREATE.${s}.${name}.${filter}`);
      if (filter === '>') out.push(`${JS}.CONSUMER.CREATE.${s}.${name}.>`);
      out.push(`${JS}.CONSUMER.INFO.${s}.${name}`, `${JS}.CONSUMER.DELETE.${s}.${name}`, `${JS}.CONSUMER.MSG.NEXT.${s}.${name}`, `$JS.ACK.${s}.${name}.>`);
      // A last-per-subject start reads each subject's last message by its name (Bus.open).
      out.push(`${JS}.DIRECT.GET.${s}.${filter}`);
    }
  }
  if (reader === 'jetctl' || reader === 'api') out.push(`${JS}.STREAM.LIST`, `${JS}.STREAM.NAMES`);
  return out;
}

const unique = (xs: string[]): string[] => [...new Set(xs)];

/** The permissions of one identity, from the tables. */
export function permissionsFor(id: Identity): Permissions {
  const inbox = `${inboxPrefix(id)}.>`;
  if (id.kind === 'hollow') {
    // Its nodes' permissions together, with one inbox for the process instead of one per node.
    const inbox = `${inboxPrefix(id)}.>`;
    const each = hollowNodes(id).map((node) => permissionsFor({ kind: 'node', node }));
    const nodeInboxes = new Set(hollowNodes(id).map((node) => `${inboxPrefix({ kind: 'node', node })}.>`));
    return {
      publish: { allow: unique(each.flatMap((p) => p.publish.allow)), deny: unique(each.flatMap((p) => p.publish.deny)) },
      subscribe: { allow: unique([inbox, ...each.flatMap((p) => p.subscribe.allow).filter((s) => !nodeInboxes.has(s))]), deny: [] },
    };
  }
  if (id.kind === 'admin') {
    // Stream management and reading, with its own inbox; it writes no facts.
    return { publish: { allow: [`${JS}.>`, '$JS.ACK.>'], deny: [] }, subscribe: { allow: [inbox], deny: [] } };
  }
  const node = id.kind === 'node' ? id.node : undefined;
  const writer = writerOfIdentity(id);
  const reader = readerOfIdentity(id);
  const publish: string[] = [];
  const deny: string[] = [];
  const subscribe: string[] = [inbox];
  if (writer) {
    const mine = Object.values(WRITE_ROUTES)
      .flat()
      .filter((r) => r.writer === writer);
    publish.push(...mine.map((r) => forNode(r.subject, node)));
    // A subject of another writer that this identity's patterns also cover (the scheduler's
    // `events.<node>.lifecycle` inside an agent's `events.<node>.*`) is denied by name.
    if (node !== undefined) {
      const others = Object.values(WRITE_ROUTES)
        .flat()
        .filter((r) => r.writer !== writer);
      for (const other of others) {
        const parts = other.subject.split('.');
        if (parts[2] === '*') parts[2] = token(node);
        const concrete = parts.join('.');
        if (publish.some((p) => subjectMatches(p, concrete))) deny.push(concrete);
      }
    }
    for (const route of CORE_ROUTES) {
      if (route.publisher === writer) publish.push(forNode(route.subject, node));
      if (route.subscriber === writer) {
        subscribe.push(forNode(route.subject, node));
        // Answers go to the requester's inbox, and only there.
        if (route.replies) publish.push(`${inboxPrefix({ kind: route.publisher } as Identity)}.>`);
      }
    }
    publish.push(...STREAM_MANAGEMENT[writer]);
  }
  if (reader) publish.push(...readPermissions(reader, node));
  return {
    publish: { allow: unique(publish), deny: unique(deny) },
    subscribe: { allow: unique(subscribe), deny: [] },
  };
}

/** Whether `perms` let the identity publish (or subscribe to) `subject`, as nats-server decides it. */
export function permits(perms: Permissions, operation: 'publish' | 'subscribe', subject: string): boolean {
  const p = perms[operation];
  return p.allow.some((a) => natsMatch(a, subject)) && !p.deny.some((d) => natsMatch(d, subject));
}

/** NATS subject matching (`*` one token, `>` one or more), literal otherwise. */
function natsMatch(pattern: string, subject: string): boolean {
  const want = pattern.split('.');
  const have = subject.split('.');
  for (let i = 0; i < want.length; i++) {
    if (want[i] === '>') return have.length > i;
    if (i >= have.length) return false;
    if (want[i] !== '*' && want[i] !== have[i]) return false;
  }
  return want.length === have.length;
}

/** The identities of a cluster with these nodes. */
export function clusterIdentities(nodes: readonly string[]): Identity[] {
  return [
    { kind: 'api' },
    { kind: 'scheduler' },
    { kind: 'alerter' },
    { kind: 'jetctl' },
    { kind: 'admin' },
    ...nodes.map((node): Identity => ({ kind: 'node', node })),
  ];
}

const quote = (s: string): string => JSON.stringify(s);
const list = (xs: string[]): string => `[${xs.map(quote).join(', ')}]`;

/**
 * nats-server's `authorization { users: [...] }` block for these identities and their nkeys'
 * public keys (`U…`), to `include` from the server's configuration.
 */
export function authorizationConfig(users: readonly { identity: Identity; nkey: string }[]): string {
  const lines = ['# Generated by `jetctl nats-config` from the writer tables; do not edit.', 'authorization {', '  users: ['];
  for (const { identity, nkey } of users) {
    const p = permissionsFor(identity);
    lines.push(`    # ${identityName(identity)}`);
    lines.push(`    { nkey: ${quote(nkey)}, permissions: {`);
    lines.push(`        publish: { allow: ${list(p.publish.allow)}${p.publish.deny.length > 0 ? `, deny: ${list(p.publish.deny)}` : ''} }`);
    lines.push(`        subscribe: { allow: ${list(p.subscribe.allow)} }`);
    lines.push('    } }');
  }
  lines.push('  ]', '}', '');
  return lines.join('\n');
}
