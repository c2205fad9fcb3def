import { STREAMS, SUBJECTS, token, type AnyEnvelope } from '#contracts';
import type { RecordedMessage } from './recorded.js';
import { compareRecorded } from './recorded.js';
import { summarize } from './summary.js';

/** One line of a timeline: a message, or a gap in what the log can tell (a silent node, an invalid message). */
export interface TimelineEntry {
  kind: 'message' | 'gap' | 'invalid';
  atMs: number;
  /** Depth in the causation tree (0 = no known cause among these messages). */
  depth: number;
  /** Who wrote it: api, scheduler, agent; for a gap, what went quiet. */
  component: string;
  node?: string;
  /** Message type, or GAP / INVALID. */
  type: string;
  summary: string;
  message?: RecordedMessage;
  /** Consecutive heartbeats folded into this line. */
  count?: number;
}

/** What a timeline is about. */
export type TimelineTarget = { kind: 'pod'; namespace: string; name: string } | { kind: 'node'; name: string };

const dataUid = (e: AnyEnvelope): string | undefined => {
  const d = e.data as { uid?: unknown; pod?: { metadata?: { uid?: unknown } } };
  if (typeof d.uid === 'string') return d.uid;
  const uid = d.pod?.metadata?.uid;
  return typeof uid === 'string' ? uid : undefined;
};

const dataNode = (e: AnyEnvelope): string | undefined => {
  const d = e.data as { nodeName?: unknown };
  return typeof d.nodeName === 'string' ? d.nodeName : undefined;
};

/** The uids every incarnation of the pod name had, in the order they were created. */
export function podUids(messages: RecordedMessage[], namespace: string, name: string): string[] {
  const subject = SUBJECTS.pod(namespace, name);
  const uids: string[] = [];
  for (const m of messages) {
    const e = m.envelope;
    if (!e) continue;
    const created =
      (e.type === 'PodCreated' && m.subject === subject) ||
      (e.type === 'MirrorPodUpdated' && e.data.pod.metadata.name === name && (e.data.pod.metadata.namespace ?? 'default') === namespace);
    const uid = created ? (e.data.pod.metadata.uid ?? e.correlationId) : undefined;
    if (uid && !uids.includes(uid)) uids.push(uid);
  }
  return uids;
}

/** The nodes a pod's incarnations were bound to. */
export function podNodes(messages: RecordedMessage[], uids: string[]): string[] {
  const nodes = new Set<string>();
  for (const m of messages) {
    const e = m.envelope;
    if (!e || !uids.includes(dataUid(e) ?? e.correlationId)) continue;
    if (e.type === 'PodScheduled') nodes.add(e.data.nodeName);
    if (e.type === 'PodAssigned' || e.type === 'PodCreated' || e.type === 'MirrorPodUpdated') {
      if (e.data.pod.spec.nodeName) nodes.add(e.data.pod.spec.nodeName);
    }
  }
  return [...nodes];
}

/** The subject's node token for subjects that name a node (`jetlet.<kind>.<node>.…`), else undefined. */
function subjectNode(subject: string): string | undefined {
  const [, kind, node] = subject.split('.');
  return ['podstatus', 'mirror', 'assign', 'nodes', 'events'].includes(kind ?? '') ? node : undefined;
}

/** Every message about the target, in the log's order. */
export function selectMessages(messages: RecordedMessage[], target: TimelineTarget): RecordedMessage[] {
  if (target.kind === 'node') {
    const nodeToken = token(target.name);
    return messages
      .filter((m) => subjectNode(m.subject) === nodeToken || (m.envelope?.type === 'PodScheduled' && m.envelope.data.nodeName === target.name))
      .sort(compareRecorded);
  }
  const subject = SUBJECTS.pod(target.namespace, target.name);
  // Who asked the API for what about this name, refused requests (with no uid) included.
  const audit = SUBJECTS.audit('pods', target.namespace, target.name);
  const uids = podUids(messages, target.namespace, target.name);
  const nodes = new Set(podNodes(messages, uids).map(token));
  const about = messages.filter((m) => {
    if (m.subject === subject || m.subject === audit) return true;
    const e = m.envelope;
    if (!e) return uids.some((uid) => m.subject.endsWith(`.${uid}`));
    if (uids.includes(dataUid(e) ?? '') || uids.includes(e.correlationId)) return true;
    return false;
  });
  if (about.length === 0) return [];
  const first = Math.min(...about.map((m) => m.storedMs));
  const last = Math.max(...about.map((m) => m.storedMs));
  // The life of its nodes while the pod was there: NotReady and Ready, from the node lifecycle.
  const nodeLife = messages.filter((m) => {
    const e = m.envelope;
    return (
      e?.type === 'NodeEvent' &&
      m.stream === STREAMS.events &&
      nodes.has(subjectNode(m.subject) ?? '') &&
      m.storedMs >= first &&
      m.storedMs <= last &&
      m.subject.endsWith('.lifecycle')
    );
  });
  return [...about, ...nodeLife].sort(compareRecorded);
}

function entryOf(m: RecordedMessage): TimelineEntry {
  const e = m.envelope;
  if (!e) {
    return {
      kind: 'invalid',
      atMs: m.storedMs,
      depth: 0,
      component: m.stream,
      type: 'INVALID',
      summary: `invalid message on ${m.subject} (consumers terminate it): ${m.invalid ?? 'unknown'}`,
      message: m,
    };
  }
  // A scheduler's message names the node it is about in its data, not the node it ran on.
  const node = e.source.node ?? (e.source.component === 'agent' ? dataNode(e) : undefined);
  return {
    kind: 'message',
    atMs: m.storedMs,
    depth: 0,
    component: e.source.component,
    ...(node ? { node } : {}),
    type: e.type,
    summary: summarize(e),
    message: m,
  };
}

/**
 * Heartbeat silences of the given nodes between `fromMs` and `toMs`: any pause of more
 * than three times the node's usual heartbeat interval (and at least `minGapMs`), from the
 * heartbeats the nodes stream still holds.
 */
export function heartbeatGaps(messages: RecordedMessage[], nodes: string[], fromMs: number, toMs: number, minGapMs = 2000): TimelineEntry[] {
  const gaps: TimelineEntry[] = [];
  for (const node of nodes) {
    const beats = messages
      .filter((m) => m.envelope?.type === 'NodeHeartbeat' && m.subject === SUBJECTS.nodeHeartbeat(node))
      .map((m) => m.storedMs)
      .sort((a, b) => a - b);
    if (beats.length < 3) continue;
    const intervals = beats
      .slice(1)
      .map((b, i) => b - beats[i])
      .sort((a, b) => a - b);
    const usual = intervals[Math.floor(intervals.length / 2)];
    const threshold = Math.max(minGapMs, 3 * usual);
    // After the last heartbeat the node is silent until the end of what is shown.
    const ends = [...beats, Math.max(toMs, beats[beats.length - 1])];
    for (let i = 1; i < ends.length; i++) {
      const [a, b] = [ends[i - 1], ends[i]];
      if (b - a <= threshold || b < fromMs || a > toMs) continue;
      const last = i === ends.length - 1;
      gaps.push({
        kind: 'gap',
        atMs: a,
        depth: 0,
        component: 'agent',
        node,
        type: 'GAP',
        summary: last
          ? `node ${node} silent for ${((b - a) / 1000).toFixed(1)}s (no heartbeat after this, to the end of this timeline)`
          : `node ${node} silent for ${((b - a) / 1000).toFixed(1)}s (no heartbeat until ${new Date(b).toISOString()})`,
      });
    }
  }
  return gaps;
}

/**
 * The target's timeline: its messages in order, each under the message that caused it
 * (by `causationId`), with heartbeat silences of the nodes involved and invalid messages
 * marked, and runs of heartbeats folded into one line.
 */
export function buildTimeline(all: RecordedMessage[], target: TimelineTarget): TimelineEntry[] {
  const selected = selectMessages(all, target);
  if (selected.length === 0) return [];
  const entries = selected.map(entryOf);
  const fromMs = entries[0].atMs;
  const toMs = entries[entries.length - 1].atMs;
  const nodes = target.kind === 'node' ? [target.name] : podNodes(all, podUids(all, target.namespace, target.name));
  const gaps = heartbeatGaps(all, nodes, fromMs, toMs);
  const chronological = [...entries, ...gaps].sort((a, b) => a.atMs - b.atMs);
  return foldHeartbeats(causalOrder(chronological));
}

/** Children right after their cause (chronologically among siblings), one level deeper. */
function causalOrder(entries: TimelineEntry[]): TimelineEntry[] {
  const byId = new Map<string, TimelineEntry>();
  for (const e of entries) if (e.message?.envelope) byId.set(e.message.envelope.id, e);
  const children = new Map<TimelineEntry, TimelineEntry[]>();
  const roots: TimelineEntry[] = [];
  for (const e of entries) {
    const cause = e.message?.envelope?.causationId;
    const parent = cause === undefined ? undefined : byId.get(cause);
    if (parent && parent !== e) children.set(parent, [...(children.get(parent) ?? []), e]);
    else roots.push(e);
  }
  const out: TimelineEntry[] = [];
  const visit = (e: TimelineEntry, depth: number): void => {
    out.push({ ...e, depth });
    for (const child of children.get(e) ?? []) visit(child, depth + 1);
  };
  for (const root of roots) visit(root, 0);
  return out;
}

function foldHeartbeats(entries: TimelineEntry[]): TimelineEntry[] {
  const out: TimelineEntry[] = [];
  for (const e of entries) {
    const prev = out[out.length - 1];
    if (prev && e.type === 'NodeHeartbeat' && prev.type === 'NodeHeartbeat' && prev.node === e.node && prev.depth === e.depth) {
      prev.count = (prev.count ?? 1) + 1;
      prev.summary = `${prev.count} heartbeats, last ${e.summary.replace('heartbeat ', '')}`;
      continue;
    }
    out.push({ ...e });
  }
  return out;
}
