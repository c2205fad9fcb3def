import type { TimelineEntry } from './timeline.js';

export type LaneState = 'pending' | 'unschedulable' | 'pulling' | 'running' | 'back-off' | 'ready' | 'not-ready' | 'silent';

export interface LaneSegment {
  fromMs: number;
  toMs: number;
  state: LaneState;
  label?: string;
}

export interface LaneMark {
  atMs: number;
  label: string;
  /** crashed, scheduled, evicted, failed, deleted: how a picture draws it. */
  kind: 'crashed' | 'scheduled' | 'evicted' | 'failed' | 'deleted' | 'started';
}

export interface Lane {
  name: string;
  segments: LaneSegment[];
  marks: LaneMark[];
}

export interface Swimlanes {
  startMs: number;
  endMs: number;
  lanes: Lane[];
}

const containerOf = (fieldPath: string | undefined): string | undefined => /^spec\.containers\{(.+)\}$/.exec(fieldPath ?? '')?.[1];

/**
 * A pod's life as lanes (one for scheduling, one per container, one for its nodes): the
 * intervals it spent pending, pulling, running, in back-off, ready, and the moments it
 * crashed, was scheduled or evicted. Pure: built from a timeline's entries.
 */
export function podSwimlanes(entries: TimelineEntry[], endMs: number): Swimlanes {
  const ordered = [...entries].sort((a, b) => a.atMs - b.atMs);
  const startMs = ordered[0]?.atMs ?? endMs;
  const scheduler: Lane = { name: 'scheduling', segments: [], marks: [] };
  const node: Lane = { name: 'node', segments: [], marks: [] };
  const containers = new Map<string, Lane>();
  const ready = new Map<string, Lane>();
  const lane = (name: string): Lane => {
    let l = containers.get(name);
    if (!l) containers.set(name, (l = { name, segments: [], marks: [] }));
    return l;
  };
  const open = new Map<Lane, LaneSegment>();
  const begin = (l: Lane, state: LaneState, atMs: number, label?: string): void => {
    end(l, atMs);
    const s: LaneSegment = { fromMs: atMs, toMs: endMs, state, ...(label ? { label } : {}) };
    l.segments.push(s);
    open.set(l, s);
  };
  const end = (l: Lane, atMs: number, state?: LaneState): void => {
    const s = open.get(l);
    if (!s || (state && s.state !== state)) return;
    s.toMs = atMs;
    open.delete(l);
  };
  let finished: number | undefined;
  for (const e of ordered) {
    const env = e.message?.envelope;
    if (e.kind === 'gap') {
      node.segments.push({ fromMs: e.atMs, toMs: e.atMs + Number(/silent for ([\d.]+)s/.exec(e.summary)?.[1] ?? 0) * 1000, state: 'silent', label: e.summary });
      continue;
    }
    if (!env) continue;
    const at = e.atMs;
    switch (env.type) {
      case 'PodCreated':
        begin(scheduler, 'pending', at);
        break;
      case 'PodUnschedulable':
        begin(scheduler, 'unschedulable', at, env.data.message);
        break;
      case 'PodScheduled':
        end(scheduler, at);
        scheduler.marks.push({ atMs: at, label: `→ ${env.data.nodeName}`, kind: 'scheduled' });
        break;
      case 'PodEvicted':
        scheduler.marks.push({ atMs: at, label: 'evicted', kind: 'evicted' });
        break;
      case 'PodDeletionRequested':
        scheduler.marks.push({ atMs: at, label: 'deleted', kind: 'deleted' });
        break;
      case 'PodEvent': {
        const c = containerOf(env.data.fieldPath);
        if (!c) break;
        if (env.data.reason === 'Pulling') begin(lane(c), 'pulling', at);
        else if (env.data.reason === 'Pulled') end(lane(c), at, 'pulling');
        else if (env.data.reason === 'Failed') {
          end(lane(c), at, 'pulling');
          lane(c).marks.push({ atMs: at, label: env.data.message.slice(0, 40), kind: 'failed' });
        }
        break;
      }
      case 'ContainerEvent': {
        const l = lane(env.data.containerName);
        if (env.data.reason === 'Started') begin(l, 'running', at);
        else if (env.data.reason === 'Died') {
          end(l, at, 'running');
          const bad = env.data.exitCode !== 0;
          l.marks.push({
            atMs: at,
            label: `exit ${env.data.exitCode ?? '?'}${env.data.exitReason ? ` ${env.data.exitReason}` : ''}`,
            kind: bad ? 'crashed' : 'started',
          });
        }
        break;
      }
      case 'BackoffRecorded':
        if (env.data.kind === 'CrashLoop') {
          // The restart follows a back-off that ran from the death until now.
          const l = lane(env.data.containerName);
          const died = Date.parse(env.data.failedAt);
          if (at - died > 50) l.segments.push({ fromMs: died, toMs: at, state: 'back-off' });
        }
        break;
      case 'PodStatusReported': {
        if (env.data.removed) finished = at;
        for (const s of env.data.status.containerStatuses ?? []) {
          let r = ready.get(s.name);
          if (!r) ready.set(s.name, (r = { name: `${s.name} ready`, segments: [], marks: [] }));
          const wasReady = open.has(r);
          if (s.ready && !wasReady) begin(r, 'ready', at);
          else if (!s.ready && wasReady) end(r, at);
          // Waiting in CrashLoopBackOff until the next start: the back-off the picture should show.
          if (s.state.waiting?.reason === 'CrashLoopBackOff' && open.get(lane(s.name))?.state !== 'back-off') begin(lane(s.name), 'back-off', at);
          if (s.state.running && open.get(lane(s.name))?.state === 'back-off') end(lane(s.name), at);
        }
        break;
      }
      case 'NodeEvent':
        if (env.data.reason === 'NodeNotReady') begin(node, 'not-ready', at, env.data.nodeName);
        else if (env.data.reason === 'NodeReady') end(node, at, 'not-ready');
        break;
      default:
        break;
    }
  }
  const stop = finished ?? endMs;
  for (const [l, s] of open) {
    s.toMs = stop;
    open.delete(l);
  }
  const lanes = [scheduler, ...[...containers.values()].flatMap((c) => [c, ...(ready.has(c.name) ? [ready.get(c.name) as Lane] : [])]), node];
  return { startMs, endMs: Math.max(stop, startMs + 1), lanes: lanes.filter((l) => l.segments.length > 0 || l.marks.length > 0) };
}
