import type { LeaseRenewedEvent } from '#contracts';

/** Where a lease is kept: its last record and that record's sequence, and a compare-and-set write. */
export interface LeaseStore {
  get(): Promise<{ lease: LeaseRenewedEvent; seq: number } | undefined>;
  /** Writes `lease` if the lease's last sequence is still `seq` (0: none yet); false when another wrote first. */
  put(lease: LeaseRenewedEvent, seq: number): Promise<boolean>;
}

export interface LeaderElectionTimings {
  /** How long the others wait, after they saw the lease change, before they may take it. */
  leaseDurationMs: number;
  /** How long the leader goes on leading without a renewal that was stored. Below leaseDurationMs. */
  renewDeadlineMs: number;
  /** How often the leader renews, and the others try. Below renewDeadlineMs. */
  retryPeriodMs: number;
}

/** Whether the timings can work: retry period < renew deadline < lease duration, as client-go requires. */
export function validTimings(t: LeaderElectionTimings): boolean {
  return t.retryPeriodMs < t.renewDeadlineMs && t.renewDeadlineMs < t.leaseDurationMs;
}

/** kube-scheduler's defaults: `--leader-elect-lease-duration=15s`, `-renew-deadline=10s`, `-retry-period=2s`. */
export const DEFAULT_TIMINGS: LeaderElectionTimings = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 };

/**
 * client-go's leader election over a compare-and-set lease. Expiry is judged by this
 * process's monotonic clock from when it saw the lease's sequence move, never by the times
 * written in it, so replicas' clocks need not agree. A leader leads until `renewDeadlineMs`
 * after it sent its last renewal that was stored; another may take the lease only
 * `leaseDurationMs` after it saw that renewal, which is later than it was sent: the two never
 * lead at once while their clocks run at the same rate.
 */
export class LeaderElector {
  /** The lease's sequence this process saw last, and when (its clock) it saw it change. */
  private observedSeq = -1;
  private observedAtMs = 0;
  private observed: LeaseRenewedEvent | undefined;
  /** When the last renewal that was stored had been sent; undefined while not leading. */
  private renewedAtMs: number | undefined;
  /** Why the last read or write failed, until one succeeds. */
  lastError: string | undefined;
  /**
   * Whether the last try that stored a write began a term: no leading before it, or the last
   * ran out while the try was under way. Whatever stopped at the deadline starts again.
   */
  startedTerm = false;

  constructor(
    private readonly name: string,
    readonly identity: string,
    private readonly store: LeaseStore,
    private readonly timings: LeaderElectionTimings,
    private readonly now: () => number,
    private readonly wallTime: () => string = () => new Date().toISOString(),
  ) {
    if (!validTimings(timings)) throw new RangeError('leader election needs retry period < renew deadline < lease duration');
  }

  /** Whether this process leads now: a renewal was stored less than renewDeadlineMs after it was sent. */
  isLeader(): boolean {
    return this.renewedAtMs !== undefined && this.now() - this.renewedAtMs < this.timings.renewDeadlineMs;
  }

  /** Who held the lease when this process last read or wrote it (empty: nobody). */
  holder(): string {
    return this.observed?.holderIdentity ?? '';
  }

  /**
   * One try: takes the lease if it is free, expired or this process's, else leaves it.
   * Returns whether this process leads afterwards. A failed read or write counts as not
   * renewed: the leader goes on leading only until its deadline.
   */
  async tryAcquireOrRenew(): Promise<boolean> {
    this.startedTerm = false;
    let current: { lease: LeaseRenewedEvent; seq: number } | undefined;
    try {
      current = await this.store.get();
    } catch (error) {
      this.lastError = `the lease was not read: ${(error as Error).message}`;
      return this.isLeader();
    }
    const seq = current?.seq ?? 0;
    if (seq !== this.observedSeq) {
      this.observedSeq = seq;
      // Seen once the answer is here: the record may have been written any time until then.
      this.observedAtMs = this.now();
      this.observed = current?.lease;
    }
    const lease = current?.lease;
    const mine = lease?.holderIdentity === this.identity;
    if (lease && !mine && lease.holderIdentity !== '' && this.now() - this.observedAtMs < lease.leaseDurationSeconds * 1000) {
      this.renewedAtMs = undefined;
      return false;
    }
    const time = this.wallTime();
    const next: LeaseRenewedEvent = {
      name: this.name,
      holderIdentity: this.identity,
      leaseDurationSeconds: Math.ceil(this.timings.leaseDurationMs / 1000),
      acquireTime: mine && lease ? lease.acquireTime : time,
      renewTime: time,
      leaseTransitions: lease === undefined ? 0 : mine ? lease.leaseTransitions : lease.leaseTransitions + 1,
    };
    let stored: boolean;
    // The deadline counts from here: the write is what the others see, never before it is sent.
    const sentAtMs = this.now();
    try {
      stored = await this.store.put(next, seq);
    } catch (error) {
      this.lastError = `the lease was not written: ${(error as Error).message}`;
      return this.isLeader();
    }
    this.lastError = undefined;
    if (!stored) {
      // Another wrote first: whoever it was, the next read says, and this process does not lead on a lost race.
      this.renewedAtMs = undefined;
      return false;
    }
    const previous = this.renewedAtMs;
    this.startedTerm = previous === undefined || this.now() - previous >= this.timings.renewDeadlineMs;
    this.renewedAtMs = sentAtMs;
    this.observed = next;
    // The sequence of this write is not known here: the next read sees it move, and starts its wait then.
    return this.isLeader();
  }

  /**
   * Lets the lease go, if this process leads: its successor need not wait out the lease
   * (client-go's ReleaseOnCancel). Best effort: a failed write leaves the lease to expire.
   * Returns whether the release was stored.
   */
  async release(): Promise<boolean> {
    if (!this.isLeader() || this.observed === undefined) return false;
    this.renewedAtMs = undefined;
    const current = await this.store.get().catch(() => undefined);
    if (current?.lease.holderIdentity !== this.identity) return false;
    const time = this.wallTime();
    return this.store
      .put({ ...current.lease, holderIdentity: '', leaseDurationSeconds: 1, acquireTime: time, renewTime: time }, current.seq)
      .catch(() => false);
  }
}
