import type { AnyEnvelope, PodStatus } from '#contracts';
import { compareText } from './compare-text.js';

/** The conditions an alert rule can watch, each read from facts on the bus. */
export const ALERT_CONDITIONS = [
  'OOMKilled',
  'CrashLoopBackOff',
  'ImagePullBackOff',
  'LivenessProbeFailing',
  'FailedScheduling',
  'NodeNotReady',
  'PodEvicted',
  'NodePressure',
] as const;
export type AlertCondition = (typeof ALERT_CONDITIONS)[number];

export const NODE_PRESSURES = ['MemoryPressure', 'DiskPressure', 'PIDPressure'] as const;
export type NodePressure = (typeof NODE_PRESSURES)[number];

/** One alerting rule, its durations already in milliseconds. */
export interface AlertRule {
  alert: string;
  condition: AlertCondition;
  severity: string;
  /** How long the condition must hold before the alert fires. */
  forMs: number;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  /** CrashLoopBackOff: deaths of one container within `windowMs` that make it fire. */
  restarts: number;
  windowMs: number;
  /** OOMKilled: a container started after the kill and running this long clears it. */
  clearAfterMs: number;
  /** NodePressure: which condition. */
  pressure: NodePressure;
}

/** One alert as Alertmanager takes it: identity is the label set. */
export interface AlertInstance {
  /** The labels, serialised in sorted order: the alert's identity. */
  key: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  /** When it began firing (the condition's start plus `for`), ms. */
  startsAt: number;
  /** When it stopped firing, ms; undefined while it fires. */
  endsAt?: number;
}

interface ContainerFacts {
  /** When each run of the container died, by runtime container id: one death per run, however often it is reported. */
  deaths: Map<string, number>;
  oomAt?: number;
  livenessFailedAt?: number;
  livenessClearedAt?: number;
  lastStartedAt?: number;
  /** Current state, from the newest status report. */
  runningSince?: number;
  pullWaitingSince?: number;
  pullClearedAt?: number;
}

interface PodFacts {
  uid: string;
  namespace: string;
  name: string;
  nodeName?: string;
  goneAt?: number;
  unschedulableSince?: number;
  unschedulableUntil?: number;
  evictedAt?: number;
  statusAt: number;
  containers: Map<string, ContainerFacts>;
}

interface NodeFacts {
  name: string;
  notReadySince?: number;
  readyAt?: number;
  pressure: Map<string, { since?: number; until?: number }>;
}

/** Parses a Prometheus-style duration: `90s`, `10m`, `1h30m`, `500ms`, `0`. */
export function parseDuration(text: string): number {
  if (text === '0') return 0;
  const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
  let total = 0;
  let rest = text.trim();
  if (!/^(\d+(\.\d+)?(ms|s|m|h|d))+$/.test(rest)) throw new Error(`not a duration: ${JSON.stringify(text)} (use 30s, 10m, 1h)`);
  while (rest.length > 0) {
    const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)/.exec(rest);
    if (!match?.[1] || !match[2]) break;
    total += Number(match[1]) * (units[match[2]] ?? 0);
    rest = rest.slice(match[0].length);
  }
  return total;
}

const ms = (iso: string | undefined): number | undefined => {
  if (!iso) return undefined;
  const t = Date.parse(iso);
  return Number.isNaN(t) ? undefined : t;
};

/**
 * What the alerter knows, folded from the log: pods, their containers' deaths, probe and
 * pull troubles, scheduling, evictions; nodes' readiness and pressure. Times are the facts'
 * own (observedAt, or the envelope's time), never the time of folding, so folding the same
 * log again (a restart, a redelivery) gives the same alerts with the same start times.
 */
export class AlertFacts {
  private readonly pods = new Map<string, PodFacts>();
  private readonly nodes = new Map<string, NodeFacts>();
  /** The newest sequence folded per stream: a redelivered message changes nothing. */
  private readonly applied = new Map<string, number>();

  /** Folds one message; returns false when it was folded before. */
  apply(envelope: AnyEnvelope, stream: string, seq: number): boolean {
    if ((this.applied.get(stream) ?? 0) >= seq) return false;
    this.applied.set(stream, seq);
    const at = ms(envelope.time) ?? 0;
    switch (envelope.type) {
      case 'PodCreated': {
        const m = envelope.data.pod.metadata;
        const uid = m.uid ?? envelope.correlationId;
        const nodeName = envelope.data.pod.spec.nodeName;
        this.pods.set(uid, { uid, namespace: m.namespace ?? 'default', name: m.name, ...(nodeName ? { nodeName } : {}), statusAt: 0, containers: new Map() });
        break;
      }
      case 'PodScheduled': {
        const pod = this.pods.get(envelope.data.uid);
        if (!pod) break;
        pod.nodeName = envelope.data.nodeName;
        if (pod.unschedulableSince !== undefined) pod.unschedulableUntil ??= at;
        break;
      }
      case 'PodUnschedulable': {
        const pod = this.pods.get(envelope.data.uid);
        if (pod && pod.unschedulableSince === undefined) pod.unschedulableSince = at;
        break;
      }
      case 'PodDeletionRequested': {
        const pod = this.pods.get(envelope.data.uid);
        if (!pod) break;
        if (pod.unschedulableSince !== undefined) pod.unschedulableUntil ??= at;
        // A pod never bound is gone at once; a bound one when its node reports it removed.
        if (!pod.nodeName) pod.goneAt ??= at;
        break;
      }
      case 'PodDeletionFinalized': {
        const pod = this.pods.get(envelope.data.uid);
        if (pod) pod.goneAt ??= at;
        break;
      }
      case 'PodEvicted': {
        const pod = this.pods.get(envelope.data.uid);
        if (pod) pod.evictedAt ??= ms(envelope.data.deletionTimestamp) ?? at;
        break;
      }
      case 'PodStatusReported':
        this.bound(envelope.data.uid, envelope.data.nodeName);
        this.applyStatus(envelope.data.uid, envelope.data.status, envelope.data.removed, at);
        break;
      case 'ContainerEvent': {
        this.bound(envelope.data.uid, envelope.data.nodeName);
        const c = this.container(envelope.data.uid, envelope.data.containerName);
        if (!c) break;
        const t = ms(envelope.data.observedAt) ?? at;
        if (envelope.data.reason === 'Started') c.lastStartedAt = Math.max(c.lastStartedAt ?? 0, t);
        if (envelope.data.reason === 'Died' || envelope.data.reason === 'OOMKilled') {
          // The PLEG may report one death twice (Docker's oom and die events, a relist): a run dies once.
          c.deaths.set(envelope.data.containerID, Math.min(c.deaths.get(envelope.data.containerID) ?? t, t));
          if (envelope.data.reason === 'OOMKilled' || envelope.data.exitReason === 'OOMKilled') c.oomAt = Math.max(c.oomAt ?? 0, t);
        }
        break;
      }
      case 'ProbeResultChanged': {
        if (envelope.data.probe !== 'liveness') break;
        const c = this.container(envelope.data.uid, envelope.data.containerName);
        if (!c) break;
        const t = ms(envelope.data.observedAt) ?? at;
        if (envelope.data.result === 'failure') {
          c.livenessFailedAt = t;
          delete c.livenessClearedAt;
        } else if (c.livenessFailedAt !== undefined) c.livenessClearedAt ??= t;
        break;
      }
      case 'NodeEvent': {
        const node = this.node(envelope.data.nodeName);
        const t = ms(envelope.data.observedAt) ?? at;
        if (envelope.data.reason === 'NodeNotReady') {
          node.notReadySince = t;
          delete node.readyAt;
        } else if (envelope.data.reason === 'NodeReady' && node.notReadySince !== undefined) node.readyAt ??= t;
        break;
      }
      case 'NodeRegistered': {
        const node = this.node(envelope.data.nodeName);
        for (const type of NODE_PRESSURES) {
          const condition = envelope.data.node.status.conditions?.find((c) => c.type === type);
          if (!condition) continue;
          const state = node.pressure.get(type) ?? {};
          if (condition.status === 'True') {
            if (state.since === undefined || state.until !== undefined) node.pressure.set(type, { since: ms(condition.lastTransitionTime) ?? at });
          } else if (state.since !== undefined && state.until === undefined) state.until = ms(condition.lastTransitionTime) ?? at;
        }
        break;
      }
      default:
        break;
    }
    return true;
  }

  /** A pod's node, from any fact about it that names one (a pod created with spec.nodeName has no PodScheduled). */
  private bound(uid: string, nodeName: string): void {
    const pod = this.pods.get(uid);
    if (pod && !pod.nodeName) pod.nodeName = nodeName;
  }

  private container(uid: string, name: string): ContainerFacts | undefined {
    const pod = this.pods.get(uid);
    if (!pod) return undefined;
    let c = pod.containers.get(name);
    if (!c) pod.containers.set(name, (c = { deaths: new Map() }));
    return c;
  }

  private node(name: string): NodeFacts {
    let node = this.nodes.get(name);
    if (!node) this.nodes.set(name, (node = { name, pressure: new Map() }));
    return node;
  }

  private applyStatus(uid: string, status: PodStatus, removed: boolean, at: number): void {
    const pod = this.pods.get(uid);
    if (!pod || at < pod.statusAt) return;
    pod.statusAt = at;
    if (removed) pod.goneAt ??= at;
    for (const s of status.containerStatuses ?? []) {
      const c = this.container(uid, s.name);
      if (!c) continue;
      c.runningSince = s.state.running ? (ms(s.state.running.startedAt) ?? at) : undefined;
      const pulling = s.state.waiting?.reason === 'ImagePullBackOff' || s.state.waiting?.reason === 'ErrImagePull';
      if (pulling && (c.pullWaitingSince === undefined || c.pullClearedAt !== undefined)) {
        c.pullWaitingSince = at;
        delete c.pullClearedAt;
      } else if (!pulling && c.pullWaitingSince !== undefined) c.pullClearedAt ??= at;
    }
  }

  /** Forgets pods gone and episodes ended before `beforeMs`, so memory follows what can still alert. */
  prune(beforeMs: number): void {
    for (const [uid, pod] of this.pods) {
      if (pod.goneAt !== undefined && pod.goneAt < beforeMs) this.pods.delete(uid);
      else for (const c of pod.containers.values()) for (const [id, at] of c.deaths) if (at < beforeMs) c.deaths.delete(id);
    }
  }

  /** Every episode of every condition: its labels, start and (when over) end. */
  episodes(rule: AlertRule, now: number): Array<{ labels: Record<string, string>; since: number; until?: number; reason: string }> {
    const out: Array<{ labels: Record<string, string>; since: number; until?: number; reason: string }> = [];
    const podLabels = (pod: PodFacts, container?: string): Record<string, string> => ({
      namespace: pod.namespace,
      pod: pod.name,
      ...(container ? { container } : {}),
      ...(pod.nodeName ? { node: pod.nodeName } : {}),
    });
    const end = (...times: Array<number | undefined>): number | undefined => {
      const known = times.filter((t): t is number => t !== undefined);
      return known.length ? Math.min(...known) : undefined;
    };
    switch (rule.condition) {
      case 'OOMKilled':
        for (const pod of this.pods.values())
          for (const [name, c] of pod.containers) {
            if (c.oomAt === undefined) continue;
            const cleared = c.runningSince !== undefined && c.runningSince > c.oomAt ? c.runningSince + rule.clearAfterMs : undefined;
            out.push({
              labels: podLabels(pod, name),
              since: c.oomAt,
              until: end(cleared !== undefined && cleared <= now ? cleared : undefined, pod.goneAt),
              reason: 'OOMKilled',
            });
          }
        break;
      case 'CrashLoopBackOff':
        for (const pod of this.pods.values())
          for (const [name, c] of pod.containers) {
            const episode = crashEpisode(
              [...c.deaths.values()].sort((a, b) => a - b),
              rule.restarts,
              rule.windowMs,
            );
            if (!episode) continue;
            out.push({
              labels: podLabels(pod, name),
              since: episode.since,
              until: end(episode.until <= now ? episode.until : undefined, pod.goneAt),
              reason: 'CrashLoopBackOff',
            });
          }
        break;
      case 'ImagePullBackOff':
        for (const pod of this.pods.values())
          for (const [name, c] of pod.containers)
            if (c.pullWaitingSince !== undefined)
              out.push({ labels: podLabels(pod, name), since: c.pullWaitingSince, until: end(c.pullClearedAt, pod.goneAt), reason: 'ImagePullBackOff' });
        break;
      case 'LivenessProbeFailing':
        for (const pod of this.pods.values())
          for (const [name, c] of pod.containers) {
            if (c.livenessFailedAt === undefined) continue;
            const restarted = c.lastStartedAt !== undefined && c.lastStartedAt > c.livenessFailedAt ? c.lastStartedAt : undefined;
            out.push({ labels: podLabels(pod, name), since: c.livenessFailedAt, until: end(c.livenessClearedAt, restarted, pod.goneAt), reason: 'Unhealthy' });
          }
        break;
      case 'FailedScheduling':
        for (const pod of this.pods.values())
          if (pod.unschedulableSince !== undefined)
            out.push({ labels: podLabels(pod), since: pod.unschedulableSince, until: end(pod.unschedulableUntil, pod.goneAt), reason: 'FailedScheduling' });
        break;
      case 'PodEvicted':
        for (const pod of this.pods.values())
          if (pod.evictedAt !== undefined) out.push({ labels: podLabels(pod), since: pod.evictedAt, until: pod.goneAt, reason: 'Evicted' });
        break;
      case 'NodeNotReady':
        for (const node of this.nodes.values())
          if (node.notReadySince !== undefined)
            out.push({ labels: { node: node.name }, since: node.notReadySince, until: node.readyAt, reason: 'NodeNotReady' });
        break;
      case 'NodePressure':
        for (const node of this.nodes.values()) {
          const state = node.pressure.get(rule.pressure);
          if (state?.since !== undefined) out.push({ labels: { node: node.name }, since: state.since, until: state.until, reason: rule.pressure });
        }
        break;
    }
    return out;
  }
}

/**
 * The newest stretch of time in which a container died at least `restarts` times within
 * `windowMs`: it starts at the death that completes the count and ends when the oldest
 * death of the count leaves the window (extended by later deaths that keep the count).
 */
export function crashEpisode(deaths: readonly number[], restarts: number, windowMs: number): { since: number; until: number } | undefined {
  let episode: { since: number; until: number } | undefined;
  const n = Math.max(1, restarts);
  for (let i = n - 1; i < deaths.length; i++) {
    const first = deaths[i - n + 1];
    const death = deaths[i];
    if (first === undefined || death === undefined || death - first >= windowMs) continue;
    const until = first + windowMs;
    if (episode && death <= episode.until) episode.until = Math.max(episode.until, until);
    else episode = { since: death, until };
  }
  return episode;
}

/** Replaces `{{ $labels.name }}` with the alert's label values, as Prometheus templates do. */
export function expandTemplate(text: string, labels: Record<string, string>, values: Record<string, string> = {}): string {
  return text.replace(/\{\{\s*\$(labels|value)(?:\.(\w+))?\s*\}\}/g, (_, kind: string, name: string | undefined) =>
    kind === 'labels' ? (labels[name ?? ''] ?? '') : (values[name ?? 'reason'] ?? ''),
  );
}

const keyOf = (labels: Record<string, string>): string => JSON.stringify(Object.entries(labels).sort(([a], [b]) => compareText(a, b)));

/**
 * Every alert that fires now or stopped firing within `retentionMs`, per rule: an episode
 * fires once it has held for the rule's `for`, from its start plus `for`; it ends when the
 * condition clears (the pod Running again, the node Ready, the pod gone). Pure: the same
 * facts and time give the same alerts.
 */
export function evaluateAlerts(rules: readonly AlertRule[], facts: AlertFacts, now: number, retentionMs: number): AlertInstance[] {
  const alerts = new Map<string, AlertInstance>();
  for (const rule of rules) {
    for (const episode of facts.episodes(rule, now)) {
      const startsAt = episode.since + rule.forMs;
      if ((episode.until ?? now) < startsAt || startsAt > now) continue;
      if (episode.until !== undefined && episode.until < now - retentionMs) continue;
      const labels = { ...rule.labels, ...episode.labels, alertname: rule.alert, severity: rule.severity };
      const annotations = Object.fromEntries(Object.entries(rule.annotations).map(([k, v]) => [k, expandTemplate(v, labels, { reason: episode.reason })]));
      const alert: AlertInstance = { key: keyOf(labels), labels, annotations, startsAt, ...(episode.until !== undefined ? { endsAt: episode.until } : {}) };
      // One alert per label set: a firing episode wins over an ended one, a newer over an older.
      const existing = alerts.get(alert.key);
      if (!existing || (existing.endsAt !== undefined && (alert.endsAt === undefined || alert.startsAt > existing.startsAt))) alerts.set(alert.key, alert);
    }
  }
  return [...alerts.values()];
}
