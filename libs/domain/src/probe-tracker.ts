/** A probe's outcome, as the kubelet keeps it. */
export type ProbeResult = 'success' | 'failure';

export type ProbeType = 'liveness' | 'readiness' | 'startup';

/**
 * Counts consecutive outcomes and flips the result only past a threshold, as the kubelet's
 * prober worker does: `successThreshold` successes in a row to succeed, `failureThreshold`
 * failures in a row to fail. Starts from the kubelet's initial result: liveness is a
 * success until proven otherwise, readiness a failure until it succeeds, and startup
 * unknown — so `failureThreshold` startup failures in a row are a change (the container is
 * killed) as much as one success is.
 */
export class ProbeTracker {
  private streak = 0;
  private lastOutcome?: ProbeResult;
  result: ProbeResult | 'unknown';

  constructor(
    readonly type: ProbeType,
    private readonly successThreshold: number,
    private readonly failureThreshold: number,
  ) {
    this.result = type === 'liveness' ? 'success' : type === 'readiness' ? 'failure' : 'unknown';
  }

  /** Records one probe outcome; returns true when the result changed (to `outcome`). */
  record(outcome: ProbeResult): boolean {
    this.streak = outcome === this.lastOutcome ? this.streak + 1 : 1;
    this.lastOutcome = outcome;
    const threshold = outcome === 'success' ? this.successThreshold : this.failureThreshold;
    if (this.result === outcome || this.streak < threshold) return false;
    this.result = outcome;
    return true;
  }
}
