import { STREAMS, SUBJECTS, type BackoffRecordedEvent, type ContainerEventEvent, type Pod, type RestartPolicy } from '#contracts';
import { BackoffBook, crashKey, goDuration } from '../backoff.js';
import { podView } from '../pod-projection.js';
import { shouldRestart } from '../restart-policy.js';
import { buildCandidates, filterReasons, schedule, scoreNodes, type NodeScore } from '../scheduling.js';
import { ClusterReplay, earliestHeartbeats, type ReadinessSource } from './cluster-replay.js';
import { clock, isAtOrBefore, seqTime, type LogPoint, type RecordedMessage } from './recorded.js';
import { podNodes, podUids } from './timeline.js';

/** One node in a re-run scheduling decision. */
export interface NodeVerdict {
  name: string;
  ready: boolean;
  readiness: ReadinessSource;
  /** Why the filters rejected it (empty when it fits). */
  reasons: string[];
  score?: NodeScore;
}

/** A recorded scheduling decision beside the scheduler's code re-run on the inputs of that moment. */
export interface SchedulingDecision {
  seq: number;
  atMs: number;
  kind: 'PodScheduled' | 'PodUnschedulable';
  /** The node chosen, or the FailedScheduling message, as recorded. */
  recorded: string;
  /** The same, as the re-run decides. */
  recomputed: string;
  matches: boolean;
  nodes: NodeVerdict[];
}

/** One restart of a container, from the agent's BackoffRecorded fact and its death's ContainerEvent. */
export interface RestartStep {
  restartCount: number;
  diedMs: number;
  exitCode?: number;
  exitReason?: string;
  /** The back-off that held the restart, by the agent's own back-off code. */
  waitMs: number;
  nextStartMs: number;
  startedMs?: number;
  /** The delay the agent recorded, and the one its code computes from the facts before. */
  recordedDelayMs?: number;
  computedDelayMs?: number;
  fresh?: boolean;
  /** The restart policy does not restart this death (Never; OnFailure after exit 0). */
  final?: boolean;
}

export interface ContainerHistory {
  name: string;
  restarts: RestartStep[];
  /** The last death, not (yet) followed by a restart. */
  pending?: RestartStep;
}

export interface Happening {
  atMs: number;
  text: string;
}

export interface PodExplanation {
  namespace: string;
  name: string;
  uid?: string;
  atMs: number;
  atSeq?: number;
  pod?: Pod;
  nodes: string[];
  scheduling: SchedulingDecision[];
  containers: ContainerHistory[];
  probes: Happening[];
  pulls: Happening[];
  evictions: Happening[];
  /** Where the log and the re-run disagree, or where the log cannot tell. */
  findings: string[];
}

export interface ExplainOptions {
  /** The scheduler's NODE_GRACE_SECONDS, in ms: how long a silent node stays Ready. */
  graceMs: number;
}

/** Re-runs the scheduler's filters and scores on the state the decision `m` was made from. */
function redecide(state: ClusterReplay, m: RecordedMessage, uid: string, graceMs: number): SchedulingDecision | undefined {
  const e = m.envelope;
  if (!e || (e.type !== 'PodScheduled' && e.type !== 'PodUnschedulable')) return undefined;
  const record = state.pods.byUid(uid);
  if (!record) return undefined;
  const nowMs = Date.parse(e.time);
  const readiness = new Map(state.nodes.list().map((n) => [n.name, state.readiness(n, nowMs, graceMs)]));
  const candidates = buildCandidates(
    state.nodes.list().map((n) => ({ node: n.node, ready: readiness.get(n.name)?.ready ?? false })),
    state.pods.list(),
  );
  const spec = record.manifest.spec;
  const placement = schedule(spec, candidates);
  const feasible = candidates.filter((c) => filterReasons(spec, c).length === 0);
  const scores = new Map(scoreNodes(spec, feasible).map((s) => [s.name, s]));
  const recorded = e.type === 'PodScheduled' ? e.data.nodeName : e.data.message;
  const recomputed = placement.node ?? placement.message;
  return {
    seq: m.seq,
    atMs: m.storedMs,
    kind: e.type,
    recorded,
    recomputed,
    matches: recorded === recomputed,
    nodes: candidates.map((c) => {
      const score = scores.get(c.name);
      const r = readiness.get(c.name);
      return { name: c.name, ready: r?.ready ?? false, readiness: r?.source ?? 'assumed', reasons: filterReasons(spec, c), ...(score ? { score } : {}) };
    }),
  };
}

/** Replays the container's restarts through the agent's own BackoffBook and checks each recorded delay. */
function containerHistory(
  uid: string,
  name: string,
  policy: RestartPolicy,
  facts: BackoffRecordedEvent[],
  deaths: ContainerEventEvent[],
  findings: string[],
): ContainerHistory {
  const key = crashKey(uid, name);
  const first = facts[0];
  const book = new BackoffBook(first ? { baseMs: first.baseMs, capMs: first.capMs } : { baseMs: 10_000, capMs: 300_000 });
  const deathNear = (ms: number): ContainerEventEvent | undefined =>
    deaths
      .filter((d) => Math.abs(Date.parse(d.observedAt) - ms) < 5000)
      .sort((a, b) => Math.abs(Date.parse(a.observedAt) - ms) - Math.abs(Date.parse(b.observedAt) - ms))[0];
  const waitAfter = (diedMs: number): number => (book.inBackoffSince(key, diedMs, diedMs) ? book.delay(key) : 0);
  const restarts: RestartStep[] = [];
  for (const f of facts) {
    if (f.fresh) book.reset(key);
    const diedMs = Date.parse(f.failedAt);
    const startedMs = Date.parse(f.recordedAt);
    const waitMs = waitAfter(diedMs);
    const death = deathNear(diedMs);
    // A few ms of slack: the death time is Docker's, the start time the agent's clock.
    if (startedMs + 5 < diedMs + waitMs)
      findings.push(`${name} restart ${f.restartCount ?? '?'} started at ${clock(startedMs)}, before its back-off ended at ${clock(diedMs + waitMs)}`);
    const computedDelayMs = book.next(key, diedMs, startedMs);
    if (computedDelayMs !== f.delayMs)
      findings.push(
        `${name} restart ${f.restartCount ?? '?'}: the agent recorded a back-off of ${goDuration(f.delayMs)}, its back-off code gives ${goDuration(computedDelayMs)}`,
      );
    restarts.push({
      restartCount: f.restartCount ?? restarts.length + 1,
      diedMs,
      ...(death?.exitCode !== undefined ? { exitCode: death.exitCode } : {}),
      ...(death?.exitReason ? { exitReason: death.exitReason } : {}),
      waitMs,
      nextStartMs: diedMs + waitMs,
      startedMs,
      recordedDelayMs: f.delayMs,
      computedDelayMs,
      ...(f.fresh ? { fresh: true } : {}),
    });
  }
  const lastStart = restarts.length > 0 ? Math.max(...restarts.map((r) => r.startedMs ?? 0)) : 0;
  const later = deaths.filter((d) => Date.parse(d.observedAt) > lastStart + 5000 || (restarts.length === 0 && Date.parse(d.observedAt) > lastStart));
  const last = later[later.length - 1];
  if (!last || restarts.some((r) => Math.abs(r.diedMs - Date.parse(last.observedAt)) < 5000)) return { name, restarts };
  const diedMs = Date.parse(last.observedAt);
  if (!shouldRestart(policy, last.exitCode ?? 1)) {
    const exit = { ...(last.exitCode !== undefined ? { exitCode: last.exitCode } : {}), ...(last.exitReason ? { exitReason: last.exitReason } : {}) };
    return { name, restarts, pending: { restartCount: restarts.length, diedMs, ...exit, waitMs: 0, nextStartMs: diedMs, final: true } };
  }
  const waitMs = waitAfter(diedMs);
  return {
    name,
    restarts,
    pending: {
      restartCount: (restarts[restarts.length - 1]?.restartCount ?? 0) + 1,
      diedMs,
      ...(last.exitCode !== undefined ? { exitCode: last.exitCode } : {}),
      ...(last.exitReason ? { exitReason: last.exitReason } : {}),
      waitMs,
      nextStartMs: diedMs + waitMs,
    },
  };
}

/**
 * Why a pod is where it is at `point`, from recorded inputs only: every scheduling
 * decision re-run through the scheduler's filter and score code on the node table and pods
 * of that moment, each container restart re-run through the agent's back-off code, and the
 * probe failures, pull failures and evictions the log holds.
 */
export function explainPod(messages: RecordedMessage[], namespace: string, name: string, point: LogPoint, options: ExplainOptions): PodExplanation {
  const seqMs = 'seq' in point ? seqTime(messages, point.seq) : undefined;
  const upToPoint = messages.filter((m) => isAtOrBefore(m, point, seqMs));
  const uids = podUids(upToPoint, namespace, name);
  const uid = uids[uids.length - 1];
  const atMs = 'timeMs' in point ? point.timeMs : (seqMs ?? Date.now());
  const findings: string[] = [];
  const explanation: PodExplanation = {
    namespace,
    name,
    ...(uid ? { uid } : {}),
    atMs,
    ...('seq' in point ? { atSeq: point.seq } : {}),
    nodes: [],
    scheduling: [],
    containers: [],
    probes: [],
    pulls: [],
    evictions: [],
    findings,
  };
  if (!uid) {
    findings.push(`the log holds no pod ${namespace}/${name} up to this point`);
    return explanation;
  }
  const state = new ClusterReplay(earliestHeartbeats(messages));
  const facts: BackoffRecordedEvent[] = [];
  const deaths: ContainerEventEvent[] = [];
  const pod = SUBJECTS.pod(namespace, name);
  for (const m of upToPoint) {
    const e = m.envelope;
    if (m.stream === STREAMS.pods && m.subject === pod && e && (e.type === 'PodScheduled' || e.type === 'PodUnschedulable') && e.data.uid === uid) {
      const decision = redecide(state, m, uid, options.graceMs);
      if (decision) {
        explanation.scheduling.push(decision);
        if (!decision.matches)
          findings.push(
            `seq ${decision.seq}: the scheduler recorded ${decision.kind === 'PodScheduled' ? `node ${decision.recorded}` : `"${decision.recorded}"`}, its code re-run on the log gives ${decision.kind === 'PodScheduled' && !decision.recomputed.startsWith('0/') ? `node ${decision.recomputed}` : `"${decision.recomputed}"`}`,
          );
      }
    }
    state.apply(m);
    if (!e) continue;
    const about = (e.data as { uid?: string }).uid === uid || e.correlationId === uid;
    if (!about && !(e.type === 'NodeEvent' && m.subject.endsWith('.lifecycle'))) continue;
    const at = m.storedMs;
    switch (e.type) {
      case 'BackoffRecorded':
        if (e.data.kind === 'CrashLoop') facts.push(e.data);
        else
          explanation.pulls.push({
            atMs: at,
            text: `pull of ${e.data.image ?? '?'} for ${e.data.containerName} failed at ${clock(Date.parse(e.data.failedAt))}; back-off ${goDuration(e.data.delayMs)} → next pull no sooner than ${clock(Date.parse(e.data.recordedAt) + e.data.delayMs)}`,
          });
        break;
      case 'ContainerEvent': {
        if (e.data.reason === 'Died') deaths.push(e.data);
        // The engine may announce an OOM kill after the death it caused: that death was the OOM kill.
        const died =
          e.data.reason === 'OOMKilled'
            ? deaths
                .map((d, i) => [d, i] as const)
                .filter(([d]) => d.containerID === e.data.containerID)
                .pop()
            : undefined;
        if (died && died[0].exitReason !== 'OOMKilled') deaths[died[1]] = { ...died[0], exitReason: 'OOMKilled' };
        break;
      }
      case 'ProbeResultChanged':
        explanation.probes.push({ atMs: at, text: `${e.data.containerName}: ${e.data.probe} probe now ${e.data.result}` });
        break;
      case 'PodEvent': {
        const r = e.data.reason;
        if (r === 'Unhealthy' || (r === 'Killing' && e.data.message.includes('probe'))) explanation.probes.push({ atMs: at, text: `${r}: ${e.data.message}` });
        else if (
          r === 'Pulling' ||
          (r === 'Failed' && e.data.message.includes('pull')) ||
          (r === 'BackOff' && e.data.message.includes('pulling')) ||
          r === 'ErrImageNeverPull'
        )
          explanation.pulls.push({ atMs: at, text: `${r}: ${e.data.message}` });
        else if (r === 'TaintManagerEviction') explanation.evictions.push({ atMs: at, text: `${r}: ${e.data.message}` });
        break;
      }
      case 'PodEvicted':
        explanation.evictions.push({ atMs: at, text: `evicted: ${e.data.message}` });
        break;
      case 'PodDeletionFinalized':
        explanation.evictions.push({ atMs: at, text: `gone without its node's confirmation: ${e.data.message}` });
        break;
      case 'NodeEvent':
        if (explanation.nodes.length === 0) explanation.nodes = podNodes(upToPoint, [uid]);
        if (explanation.nodes.includes(e.data.nodeName) && (e.data.reason === 'NodeNotReady' || e.data.reason === 'NodeReady'))
          explanation.evictions.push({ atMs: at, text: `${e.data.reason}: ${e.data.message}` });
        break;
      default:
        break;
    }
  }
  explanation.nodes = podNodes(upToPoint, [uid]);
  const record = state.pods.byUid(uid);
  if (record) explanation.pod = podView(record);
  const containers = record?.manifest.spec.containers.map((c) => c.name) ?? [...new Set(deaths.map((d) => d.containerName))];
  for (const c of containers) {
    const history = containerHistory(
      uid,
      c,
      record?.manifest.spec.restartPolicy ?? 'Always',
      facts.filter((f) => f.containerName === c),
      deaths.filter((d) => d.containerName === c),
      findings,
    );
    if (history.restarts.length > 0 || history.pending) explanation.containers.push(history);
  }
  if (facts.length === 0 && explanation.containers.some((c) => c.pending && !c.pending.final && c.pending.restartCount > 1))
    findings.push('containers were restarted but the log holds no BackoffRecorded facts: their back-off cannot be checked');
  return explanation;
}
