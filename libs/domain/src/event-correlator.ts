/** One occurrence of an event, as a recorder is asked to record it. */
export interface EventOccurrence {
  /** The involved object (a pod): its uid tells series apart, namespace and name go with it. */
  uid: string;
  namespace: string;
  name: string;
  /** The part of the object it is about (`spec.containers{main}`), or none. */
  fieldPath?: string;
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

/** What to publish for a series: its latest occurrence with the count so far. */
export interface EventEmission extends EventOccurrence {
  /** Identifies the series: every emission of it carries the same value. */
  series: string;
  /** Occurrences so far, this one included. */
  count: number;
  /** When the series began, and its latest occurrence (ms since the epoch). */
  firstMs: number;
  lastMs: number;
}

export interface EventCorrelatorOptions {
  /** Series remembered at most; the least recently seen is forgotten first (client-go: 4096). */
  maxSeries: number;
  /** A repeat after this long idle starts a new series (a new Event object). */
  idleMs: number;
  /** Gap between publications of one series: doubles from `minIntervalMs` up to `maxIntervalMs`. */
  minIntervalMs: number;
  maxIntervalMs: number;
  /** More distinct messages than this for one object and reason within `similarWindowMs` are combined (client-go: 10 in 10 minutes). */
  maxSimilar: number;
  similarWindowMs: number;
}

export const DEFAULT_EVENT_CORRELATOR_OPTIONS: EventCorrelatorOptions = {
  maxSeries: 4096,
  idleMs: 60 * 60_000,
  minIntervalMs: 1_000,
  maxIntervalMs: 5 * 60_000,
  maxSimilar: 10,
  similarWindowMs: 10 * 60_000,
};

/** The prefix client-go's aggregator puts before a combined message. */
export const COMBINED_PREFIX = '(combined from similar events): ';

interface Series {
  emission: EventEmission;
  /** Not yet published occurrences are folded into `emission`. */
  pending: boolean;
  nextPublishMs: number;
  intervalMs: number;
}

interface Similar {
  messages: Set<string>;
  sinceMs: number;
}

/**
 * Aggregates repeated events as client-go's EventCorrelator does for the kubelet, and bounds
 * what reaches the log. An identical repeat (same object, field, type, reason, message) joins
 * its series: the count and last time grow, and the series is published at once only if its
 * publication interval has passed (it doubles from 1 s to 5 min), else on `due()` — so a
 * crash-looping pod costs a few messages per series per hour, not one per repeat. Many
 * distinct messages for one object and reason are combined into one series, as client-go's
 * aggregator does. Pure: every call is given the time.
 */
export class EventCorrelator {
  private readonly series = new Map<string, Series>();
  private readonly similar = new Map<string, Similar>();
  private made = 0;

  constructor(private readonly options: EventCorrelatorOptions = DEFAULT_EVENT_CORRELATOR_OPTIONS) {}

  /** Folds one occurrence in; returns what to publish now, if anything. */
  observe(occurrence: EventOccurrence, nowMs: number): EventEmission | undefined {
    const { message, combined } = this.aggregate(occurrence, nowMs);
    // A combined series is one per object and reason, whatever its latest message.
    const key = [occurrence.uid, occurrence.fieldPath ?? '', occurrence.type, occurrence.reason, combined ? COMBINED_PREFIX : message].join('\u0000');
    const known = this.series.get(key);
    this.series.delete(key);
    if (known && nowMs - known.emission.lastMs <= this.options.idleMs) {
      known.emission = { ...known.emission, message, count: known.emission.count + 1, lastMs: nowMs };
      this.series.set(key, known);
      if (nowMs < known.nextPublishMs) {
        known.pending = true;
        return undefined;
      }
      return this.published(known, nowMs);
    }
    const emission: EventEmission = { ...occurrence, message, series: `${occurrence.uid}.${(this.made++).toString(16)}`, count: 1, firstMs: nowMs, lastMs: nowMs };
    const fresh: Series = { emission, pending: false, nextPublishMs: 0, intervalMs: this.options.minIntervalMs / 2 };
    this.series.set(key, fresh);
    this.forgetOldest();
    return this.published(fresh, nowMs);
  }

  /** The pending repeats whose publication time has come, to publish now. */
  due(nowMs: number): EventEmission[] {
    const out: EventEmission[] = [];
    for (const s of this.series.values()) if (s.pending && s.nextPublishMs <= nowMs) out.push(this.published(s, nowMs));
    return out;
  }

  /** When the next pending repeat is due, if any. */
  nextDueMs(): number | undefined {
    let next: number | undefined;
    for (const s of this.series.values()) if (s.pending && (next === undefined || s.nextPublishMs < next)) next = s.nextPublishMs;
    return next;
  }

  /** Forgets every series of an object (a pod that is gone). */
  forget(uid: string): void {
    for (const [key, s] of this.series) if (s.emission.uid === uid) this.series.delete(key);
    for (const key of this.similar.keys()) if (key.startsWith(`${uid}\u0000`)) this.similar.delete(key);
  }

  private published(s: Series, nowMs: number): EventEmission {
    s.pending = false;
    s.intervalMs = Math.min(this.options.maxIntervalMs, s.intervalMs * 2);
    s.nextPublishMs = nowMs + s.intervalMs;
    return s.emission;
  }

  /** client-go's EventAggregator: past `maxSimilar` distinct messages in the window, the message is combined. */
  private aggregate(o: EventOccurrence, nowMs: number): { message: string; combined: boolean } {
    const key = [o.uid, o.fieldPath ?? '', o.type, o.reason].join('\u0000');
    let similar = this.similar.get(key);
    if (!similar || nowMs - similar.sinceMs > this.options.similarWindowMs) {
      similar = { messages: new Set(), sinceMs: nowMs };
      this.similar.set(key, similar);
    }
    if (similar.messages.has(o.message)) return { message: o.message, combined: false };
    if (similar.messages.size >= this.options.maxSimilar) return { message: `${COMBINED_PREFIX}${o.message}`, combined: true };
    similar.messages.add(o.message);
    if (this.similar.size > this.options.maxSeries) this.similar.delete(this.similar.keys().next().value as string);
    return { message: o.message, combined: false };
  }

  private forgetOldest(): void {
    while (this.series.size > this.options.maxSeries) this.series.delete(this.series.keys().next().value as string);
  }
}
