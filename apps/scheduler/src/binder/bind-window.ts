/**
 * Bounded pipelining of a pass's writes: up to `limit` tasks in flight at once, each
 * awaiting its own JetStream acknowledgements, instead of one round trip after another.
 * `run` waits only for a free slot; `drain` waits for every task started.
 */
export class BindWindow {
  private readonly inFlight = new Set<Promise<void>>();

  constructor(private readonly limit: number) {}

  /** Starts `task` once a slot is free; its failure goes to `onError`, never to the caller. */
  async run(task: () => Promise<unknown>, onError: (error: unknown) => void): Promise<void> {
    while (this.inFlight.size >= Math.max(1, this.limit)) await Promise.race(this.inFlight);
    const running: Promise<void> = task().then(
      () => undefined,
      (error: unknown) => onError(error),
    );
    const tracked = running.finally(() => this.inFlight.delete(tracked));
    this.inFlight.add(tracked);
  }

  /** Resolves once every task started has settled. */
  async drain(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all(this.inFlight);
  }
}
