/** Crash and pull back-off settings (Kubernetes: 10 s doubling to 300 s). */
export interface BackoffPolicy {
  baseMs: number;
  capMs: number;
}

export const KUBERNETES_BACKOFF: BackoffPolicy = { baseMs: 10_000, capMs: 300_000 };

interface Entry {
  delayMs: number;
  /** When the last `next` happened (client-go's lastUpdate), ms since the epoch. */
  lastMs: number;
}

/**
 * The kubelet's back-off bookkeeping (client-go flowcontrol.Backoff), with every time
 * passed in: `next` doubles an entry's delay up to the cap, and an entry untouched for
 * twice the cap starts again from the base — the "reset after 10 minutes of clean
 * running" of the defaults. In memory only, as in the kubelet: a restarted agent starts
 * every container's back-off afresh.
 */
export class BackoffBook {
  private readonly entries = new Map<string, Entry>();

  constructor(readonly policy: BackoffPolicy) {}

  /** client-go's hasExpired: the event came more than twice the cap after the entry's last update. */
  private expired(entry: Entry, eventMs: number): boolean {
    return eventMs - entry.lastMs > 2 * this.policy.capMs;
  }

  /**
   * Records a restart (or a retry) after the failure at `eventMs`, made at `nowMs` (the
   * failure time itself when not given), and returns the delay now in force.
   */
  next(key: string, eventMs: number, nowMs = eventMs): number {
    const entry = this.entries.get(key);
    const delayMs = !entry || this.expired(entry, eventMs) ? this.policy.baseMs : Math.min(entry.delayMs * 2, this.policy.capMs);
    this.entries.set(key, { delayMs, lastMs: nowMs });
    return delayMs;
  }

  /** True while `nowMs` is within the current delay after the failure at `eventMs`. */
  inBackoffSince(key: string, eventMs: number, nowMs: number): boolean {
    const entry = this.entries.get(key);
    if (!entry || this.expired(entry, eventMs)) return false;
    return nowMs - eventMs < entry.delayMs;
  }

  /** client-go's IsInBackOffSinceUpdate: within the current delay after the last `next` (how image pulls back off). */
  inBackoffSinceUpdate(key: string, nowMs: number): boolean {
    const entry = this.entries.get(key);
    return entry !== undefined && nowMs - entry.lastMs < entry.delayMs;
  }

  /** When the delay after the last `next` ends (0 when there is no entry). */
  updatedUntil(key: string): number {
    const entry = this.entries.get(key);
    return entry === undefined ? 0 : entry.lastMs + entry.delayMs;
  }

  reset(key: string): void {
    this.entries.delete(key);
  }

  /** The delay in force for `key` (0 when it has none). */
  delay(key: string): number {
    return this.entries.get(key)?.delayMs ?? 0;
  }

  /** When the back-off that started at `eventMs` ends. */
  until(key: string, eventMs: number): number {
    return eventMs + this.delay(key);
  }

  forget(prefix: string): void {
    for (const key of this.entries.keys()) if (key.startsWith(prefix)) this.entries.delete(key);
  }

  /** Drops entries that have expired by `nowMs`, so the book does not grow without bound. */
  gc(nowMs: number): void {
    for (const [key, entry] of this.entries) if (this.expired(entry, nowMs)) this.entries.delete(key);
  }
}

/** The key of a container's crash back-off. */
export const crashKey = (uid: string, container: string): string => `${uid}/${container}`;
/** The key of an image pull's back-off for one pod (the kubelet keys it by pod and image). */
export const pullKey = (uid: string, image: string): string => `${uid}/image:${image}`;

/** A duration as Go prints it, which is how the kubelet's messages show it: 10s, 1m20s, 5m0s. */
export function goDuration(ms: number): string {
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m${seconds % 60}s`;
  return `${Math.floor(minutes / 60)}h${minutes % 60}m${seconds % 60}s`;
}
