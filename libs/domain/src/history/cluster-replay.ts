import { STREAMS, SUBJECTS, type NodeObject, type Pod } from '#contracts';
import { EventLog, type KubeEvent } from '../event-log.js';
import { nodeView, NodeTable, type NodeRecord } from '../node-table.js';
import { podView, PodProjection } from '../pod-projection.js';
import { type LogPoint, type RecordedMessage, seqTime, isAtOrBefore } from './recorded.js';

/** How a node's readiness at a past moment is known. */
export type ReadinessSource = 'heartbeats' | 'lifecycle-events' | 'assumed';

export interface NodeReadiness {
  ready: boolean;
  source: ReadinessSource;
}

/** The earliest heartbeat each node's subject still holds (the nodes stream keeps a few per subject). */
export function earliestHeartbeats(messages: RecordedMessage[]): Map<string, number> {
  const earliest = new Map<string, number>();
  for (const m of messages) {
    if (m.envelope?.type !== 'NodeHeartbeat') continue;
    const at = Date.parse(m.envelope.data.renewTime);
    const node = m.envelope.data.nodeName;
    if (at < (earliest.get(node) ?? Number.POSITIVE_INFINITY)) earliest.set(node, at);
  }
  return earliest;
}

/**
 * The cluster as the log shows it at one point, folded by the projections the API and the
 * scheduler use (PodProjection, NodeTable, EventLog). Node readiness follows heartbeats as
 * the node lifecycle controller does; where the nodes stream no longer holds the heartbeats
 * of that moment, it follows the scheduler's recorded NodeNotReady/NodeReady events.
 */
export class ClusterReplay {
  readonly pods = new PodProjection();
  readonly nodes = new NodeTable();
  readonly events = new EventLog(Number.MAX_SAFE_INTEGER);
  /** The newest NodeNotReady/NodeReady per node. */
  private readonly lifecycle = new Map<string, { ready: boolean; atMs: number }>();
  /** Store time of the newest message applied. */
  lastMs = 0;
  /** Messages applied, per stream. */
  readonly applied = new Map<string, number>();

  constructor(private readonly earliestBeat: Map<string, number> = new Map()) {}

  apply(m: RecordedMessage): void {
    this.lastMs = Math.max(this.lastMs, m.storedMs);
    this.applied.set(m.stream, (this.applied.get(m.stream) ?? 0) + 1);
    const e = m.envelope;
    if (!e) return;
    switch (m.stream) {
      case STREAMS.pods:
        this.pods.apply(e, m.seq);
        return;
      case STREAMS.nodes:
        this.nodes.apply(e, m.seq);
        return;
      case STREAMS.events:
        this.events.apply(e, m.seq);
        if (e.type === 'NodeEvent' && m.subject === SUBJECTS.nodeLifecycleEvents(e.data.nodeName)) {
          if (e.data.reason === 'NodeNotReady' || e.data.reason === 'NodeReady')
            this.lifecycle.set(e.data.nodeName, { ready: e.data.reason === 'NodeReady', atMs: Date.parse(e.data.observedAt) });
        }
        return;
      default:
        return;
    }
  }

  /** Whether the node was Ready at `atMs`, and how that is known. */
  readiness(record: NodeRecord, atMs: number, graceMs: number): NodeReadiness {
    if (atMs - record.lastHeartbeatMs <= graceMs) return { ready: true, source: 'heartbeats' };
    const earliest = this.earliestBeat.get(record.name);
    // The stream holds every heartbeat since its earliest one: a silence after that is real.
    if (earliest !== undefined && earliest <= record.lastHeartbeatMs) return { ready: false, source: 'heartbeats' };
    const life = this.lifecycle.get(record.name);
    if (life) return { ready: life.ready, source: 'lifecycle-events' };
    return { ready: earliest === undefined || earliest > atMs, source: 'assumed' };
  }

  /** The pods as the API showed them. */
  podList(namespace?: string): Pod[] {
    return this.pods.list(namespace).map(podView);
  }

  /** The nodes as the API showed them at `atMs` (Ready from heartbeat age, as `nodeView` derives it). */
  nodeList(atMs: number, graceMs: number): Array<NodeObject & { apiVersion: 'v1'; kind: 'Node' }> {
    return this.nodes.list().map((record) => {
      const { ready } = this.readiness(record, atMs, graceMs);
      // nodeView derives Ready from heartbeat age; a readiness known otherwise is given as a heartbeat of that moment.
      const seen = ready && atMs - record.lastHeartbeatMs > graceMs ? { ...record, lastHeartbeatMs: atMs } : record;
      return nodeView(seen, atMs, graceMs);
    });
  }

  eventList(namespace?: string): KubeEvent[] {
    return this.events.list(namespace);
  }
}

/** The cluster at `point`: every message up to it folded in the log's order. */
export function replayTo(messages: RecordedMessage[], point: LogPoint): { state: ClusterReplay; atMs: number } {
  const seqMs = 'seq' in point ? seqTime(messages, point.seq) : undefined;
  const state = new ClusterReplay(earliestHeartbeats(messages));
  for (const m of messages) if (isAtOrBefore(m, point, seqMs)) state.apply(m);
  const atMs = 'timeMs' in point ? point.timeMs : (seqMs ?? state.lastMs);
  return { state, atMs };
}
