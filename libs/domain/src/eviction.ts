import { parseQuantity, type PodQOSClass, type PodSpec } from '#contracts';
import { qosClass } from './qos.js';
import { compareText } from './compare-text.js';

/** The kubelet's eviction signals jetlet reads (`kubelet/eviction/api`). */
export const EVICTION_SIGNALS = ['memory.available', 'nodefs.available', 'nodefs.inodesFree', 'imagefs.available', 'pid.available'] as const;
export type EvictionSignal = (typeof EVICTION_SIGNALS)[number];

/** A threshold as `evictionHard`/`evictionSoft` give it: a signal below a quantity or a percentage of its capacity. */
export interface EvictionThreshold {
  signal: EvictionSignal;
  /** An absolute amount (bytes, inodes or process ids), or... */
  quantity?: number;
  /** ...a fraction of the signal's capacity, 0–1. */
  percentage?: number;
  /** How long the threshold must hold before pods are evicted for it; 0 for a hard threshold. */
  gracePeriodMs: number;
  hard: boolean;
}

/** One reading: what is available of a signal's resource, and its capacity. */
export interface SignalObservation {
  available: number;
  capacity: number;
}
export type SignalObservations = Partial<Record<EvictionSignal, SignalObservation>>;

export type PressureCondition = 'MemoryPressure' | 'DiskPressure' | 'PIDPressure';

/** The node condition each signal drives. */
export const SIGNAL_CONDITION: Record<EvictionSignal, PressureCondition> = {
  'memory.available': 'MemoryPressure',
  'nodefs.available': 'DiskPressure',
  'nodefs.inodesFree': 'DiskPressure',
  'imagefs.available': 'DiskPressure',
  'pid.available': 'PIDPressure',
};

/** The resource an eviction for a signal reclaims, as the kubelet names it in its message. */
export const SIGNAL_RESOURCE: Record<EvictionSignal, string> = {
  'memory.available': 'memory',
  'nodefs.available': 'ephemeral-storage',
  'nodefs.inodesFree': 'inodes',
  'imagefs.available': 'ephemeral-storage',
  'pid.available': 'pids',
};

/** The taint the node lifecycle controller puts on a node with a pressure condition (TaintNodesByCondition). */
export const PRESSURE_TAINTS: Record<PressureCondition, string> = {
  MemoryPressure: 'node.kubernetes.io/memory-pressure',
  DiskPressure: 'node.kubernetes.io/disk-pressure',
  PIDPressure: 'node.kubernetes.io/pid-pressure',
};

/** The kubelet's default `evictionHard`. */
export const DEFAULT_EVICTION_HARD = 'memory.available<100Mi,nodefs.available<10%,nodefs.inodesFree<5%,imagefs.available<15%';

/** One `signal<value` item; its value a quantity or a percentage. */
const ITEM =
  /^(memory\.available|nodefs\.available|nodefs\.inodesFree|imagefs\.available|pid\.available)<(\d+(?:\.\d+)?%|\d+(?:\.\d+)?(?:Ki|Mi|Gi|Ti|Pi|Ei|[kMGTPE])?)$/;
const GRACE = /^(memory\.available|nodefs\.available|nodefs\.inodesFree|imagefs\.available|pid\.available)=((?:\d+(?:\.\d+)?(?:h|m|s|ms))+)$/;

/** A list of thresholds, `memory.available<100Mi,nodefs.available<10%` (the kubelet's --eviction-hard syntax). */
export const EVICTION_THRESHOLDS_FORMAT = new RegExp(`^$|^(${ITEM.source.slice(1, -1)})(,(${ITEM.source.slice(1, -1)}))*$`);
/** Grace periods, `memory.available=1m30s,nodefs.available=90s` (the kubelet's --eviction-soft-grace-period syntax). */
export const EVICTION_GRACE_FORMAT = new RegExp(`^$|^(${GRACE.source.slice(1, -1)})(,(${GRACE.source.slice(1, -1)}))*$`);

/** A Go duration (`1m30s`, `90s`, `500ms`) in milliseconds. */
export function goDurationMs(text: string): number {
  const factor: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1 };
  let total = 0;
  for (const [, n, unit] of text.matchAll(/(\d+(?:\.\d+)?)(ms|h|m|s)/g)) total += Number(n) * (factor[unit ?? 's'] ?? 0);
  return total;
}

/**
 * Parses `evictionHard` or `evictionSoft` (with `evictionSoftGracePeriod`); throws a RangeError
 * naming each bad item, as the kubelet refuses to start on one. A soft threshold needs a grace period.
 */
export function parseThresholds(text: string, hard: boolean, gracePeriods = ''): EvictionThreshold[] {
  const graces = new Map<string, number>();
  const errors: string[] = [];
  for (const item of gracePeriods.split(',').filter(Boolean)) {
    const match = GRACE.exec(item.trim());
    if (match?.[1] && match[2]) graces.set(match[1], goDurationMs(match[2]));
    else errors.push(`invalid grace period ${JSON.stringify(item)}`);
  }
  const thresholds: EvictionThreshold[] = [];
  for (const item of text.split(',').filter(Boolean)) {
    const match = ITEM.exec(item.trim());
    const signal = match?.[1] as EvictionSignal | undefined;
    const value = match?.[2];
    if (!signal || !value) {
      errors.push(`invalid eviction threshold ${JSON.stringify(item)}`);
      continue;
    }
    const grace = hard ? 0 : graces.get(signal);
    if (grace === undefined || (!hard && grace <= 0)) {
      errors.push(`soft eviction threshold ${signal} needs a grace period`);
      continue;
    }
    if (value.endsWith('%')) {
      const percentage = Number(value.slice(0, -1)) / 100;
      if (percentage > 1) errors.push(`eviction percentage threshold ${signal} must be at most 100%`);
      else thresholds.push({ signal, percentage, gracePeriodMs: grace, hard });
    } else {
      thresholds.push({ signal, quantity: parseQuantity(value), gracePeriodMs: grace, hard });
    }
  }
  if (errors.length > 0) throw new RangeError(errors.join('; '));
  return thresholds;
}

/** A threshold's amount against its signal's capacity (the kubelet's GetThresholdQuantity). */
export function thresholdAmount(threshold: EvictionThreshold, capacity: number): number {
  return threshold.quantity ?? Math.round((threshold.percentage ?? 0) * capacity);
}

/** The thresholds the observations cross: available below the threshold's amount. A signal not read crosses nothing. */
export function thresholdsMet(thresholds: EvictionThreshold[], observations: SignalObservations): EvictionThreshold[] {
  return thresholds.filter((t) => {
    const seen = observations[t.signal];
    return seen !== undefined && seen.available < thresholdAmount(t, seen.capacity);
  });
}

/** What one look of the eviction manager decided. */
export interface EvictionDecision {
  /** Pressure conditions that are True now (held for the transition period after their last crossing). */
  pressure: Set<PressureCondition>;
  /** The threshold to reclaim for now (its grace period over), the most urgent first; none: evict nothing. */
  reclaim?: { threshold: EvictionThreshold; observation: SignalObservation };
}

const key = (t: EvictionThreshold): string => `${t.hard ? 'hard' : 'soft'}:${t.signal}`;

/**
 * The kubelet eviction manager's bookkeeping (`synchronize`), with time passed in: when each
 * crossed threshold was first seen (a soft one acts only after its grace period), and when each
 * pressure condition was last seen, so a condition stays True for the pressure transition period
 * and does not flap.
 */
export class EvictionTracker {
  private readonly firstObserved = new Map<string, number>();
  private readonly lastPressure = new Map<PressureCondition, number>();

  constructor(
    private readonly thresholds: EvictionThreshold[],
    private readonly transitionMs: number,
  ) {}

  observe(observations: SignalObservations, nowMs: number): EvictionDecision {
    const met = thresholdsMet(this.thresholds, observations);
    const metKeys = new Set(met.map(key));
    for (const k of this.firstObserved.keys()) if (!metKeys.has(k)) this.firstObserved.delete(k);
    for (const t of met) {
      if (!this.firstObserved.has(key(t))) this.firstObserved.set(key(t), nowMs);
      this.lastPressure.set(SIGNAL_CONDITION[t.signal], nowMs);
    }
    const pressure = new Set<PressureCondition>();
    for (const [condition, at] of this.lastPressure) {
      if (nowMs - at < this.transitionMs || met.some((t) => SIGNAL_CONDITION[t.signal] === condition)) pressure.add(condition);
      else this.lastPressure.delete(condition);
    }
    // Memory first, then disk, then PIDs, as the kubelet orders signals; a hard threshold before a soft one.
    const due = met
      .filter((t) => nowMs - (this.firstObserved.get(key(t)) ?? nowMs) >= t.gracePeriodMs)
      .sort((a, b) => EVICTION_SIGNALS.indexOf(a.signal) - EVICTION_SIGNALS.indexOf(b.signal) || Number(b.hard) - Number(a.hard));
    const threshold = due[0];
    const observation = threshold ? observations[threshold.signal] : undefined;
    return threshold && observation ? { pressure, reclaim: { threshold, observation } } : { pressure };
  }
}

/** What the ranking knows of a pod on the node. */
export interface EvictionCandidate {
  uid: string;
  spec: PodSpec;
  /** The pod's use of the resource being reclaimed (bytes, or process ids), when known. */
  usage?: number;
  /** Per container: name and use, for the message. */
  containers?: Array<{ name: string; usage: number }>;
}

const QOS_RANK: Record<PodQOSClass, number> = { BestEffort: 0, Burstable: 1, Guaranteed: 2 };

/** A pod's request of the resource a signal reclaims (bytes), init containers aside. */
export function podRequestOf(spec: PodSpec, signal: EvictionSignal, parse: (q: string) => number): number {
  const resource = signal === 'memory.available' ? 'memory' : signal === 'pid.available' ? undefined : 'ephemeral-storage';
  if (!resource) return 0;
  return spec.containers.reduce((sum, c) => {
    const q = c.resources?.requests?.[resource] ?? c.resources?.limits?.[resource];
    return sum + (q === undefined ? 0 : parse(q));
  }, 0);
}

/**
 * The kubelet's eviction order for a signal: pods whose use exceeds their requests first, then
 * lower priority, then lower QoS class (BestEffort, Burstable, Guaranteed), then the larger use
 * above requests. Static pods are critical and never ranked.
 */
export function rankForEviction(candidates: EvictionCandidate[], signal: EvictionSignal, parse: (q: string) => number): EvictionCandidate[] {
  const above = (c: EvictionCandidate): number => (c.usage ?? 0) - podRequestOf(c.spec, signal, parse);
  const exceeds = (c: EvictionCandidate): number => (signal !== 'pid.available' && above(c) > 0 ? 1 : 0);
  return [...candidates].sort(
    (a, b) =>
      exceeds(b) - exceeds(a) ||
      (a.spec.priority ?? 0) - (b.spec.priority ?? 0) ||
      QOS_RANK[qosClass(a.spec)] - QOS_RANK[qosClass(b.spec)] ||
      above(b) - above(a) ||
      compareText(a.uid, b.uid),
  );
}

/** A quantity as Kubernetes prints one: `Ki` multiples in Ki, others as they are. */
export function formatAmount(amount: number): string {
  const rounded = Math.round(amount);
  return rounded !== 0 && rounded % 1024 === 0 ? `${rounded / 1024}Ki` : String(rounded);
}

/**
 * The kubelet's eviction message: "The node was low on resource: memory. Threshold quantity:
 * 100Mi, available: 51200Ki. " and, per container using more than it requested, "Container c
 * was using 80Mi, request is 0, has larger consumption of memory. "
 */
export function evictionMessage(threshold: EvictionThreshold, observation: SignalObservation, pod: EvictionCandidate, parse: (q: string) => number): string {
  const resource = SIGNAL_RESOURCE[threshold.signal];
  let message = `The node was low on resource: ${resource}. Threshold quantity: ${formatAmount(thresholdAmount(threshold, observation.capacity))}, available: ${formatAmount(observation.available)}. `;
  if (threshold.signal === 'memory.available' || resource === 'ephemeral-storage') {
    for (const c of pod.containers ?? []) {
      const spec = pod.spec.containers.find((s) => s.name === c.name);
      const requested = spec?.resources?.requests?.[resource === 'memory' ? 'memory' : 'ephemeral-storage'];
      const request = requested === undefined ? 0 : parse(requested);
      if (c.usage > request)
        message += `Container ${c.name} was using ${formatAmount(c.usage)}, request is ${requested ?? '0'}, has larger consumption of ${resource}. `;
    }
  }
  return message;
}
