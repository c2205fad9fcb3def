/**
 * Bounded pipelining of a pass's writes: up to `limit` tasks in flight at once, each
 * awaiting its own JetStream acknowledgements, instead of one round trip after another.
 * `run` waits only for a free slot; `drain` waits for every task started. A settled task
 * hands its slot to the longest waiting caller, so a full window costs nothing per task
 * (racing every task in flight for each slot did: hundreds of reactions per binding).
 */
/**
 * How many subjects a pass cleans up at once. Each is a walk over the subject and a delete
 * per message (see `Bus.purgeSubject`), a few round trips one after the other; a pass after
 * thousands of deletions would otherwise wait on them one subject at a time.
 */
export const CLEANUPS_IN_FLIGHT = 32;

export class BindWindow {
  private inFlight = 0;
  /** Callers waiting for a slot, oldest first. */
  private readonly slotWaiters: Array<() => void> = [];
  /** Callers of `drain`, told when nothing is in flight. */
  private drainWaiters: Array<() => void> = [];

  constructor(private readonly limit: number) {}

  /** Starts `task` once a slot is free; its failure goes to `onError`, never to the caller. */
  async run(task: () => Promise<unknown>, onError: (error: unknown) => void): Promise<void> {
    if (this.inFlight >= Math.max(1, this.limit)) await new Promise<void>((resolve) => this.slotWaiters.push(resolve));
    else this.inFlight++;
    let running: Promise<unknown>;
    try {
      running = task();
    } catch (error) {
      running = Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    void running
      .then(
        () => undefined,
        (error: unknown) => onError(error),
      )
      .finally(() => this.release());
  }

  /** Resolves once every task started has settled. */
  async drain(): Promise<void> {
    if (this.inFlight > 0) await new Promise<void>((resolve) => this.drainWaiters.push(resolve));
  }

  /** A task settled: its slot goes straight to the next waiter, or is freed. */
  private release(): void {
    const next = this.slotWaiters.shift();
    if (next) {
      next();
      return;
    }
    this.inFlight--;
    if (this.inFlight > 0) return;
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const resolve of waiters) resolve();
  }
}
