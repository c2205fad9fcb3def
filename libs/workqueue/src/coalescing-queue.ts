/**
 * One piece of work that never runs twice at once: `add()` asks for a run; asks made while
 * it runs coalesce into one run right after (client-go's workqueue with a single key: a key
 * added while processing is processed once more after `Done`). Nothing runs before
 * `start()` or after `stop()`.
 */
export class CoalescingQueue {
  private dirty = false;
  private running?: Promise<void>;
  private started = false;
  private stopped = false;

  constructor(
    private readonly work: () => Promise<void>,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** From now on, `add()` runs the work; `runNow` asks for a first run at once. */
  start(runNow = true): void {
    this.started = true;
    if (runNow) this.add();
  }

  /** Asks for a run: at once when idle, else once right after the run under way. */
  add(): void {
    if (!this.started || this.stopped) return;
    this.dirty = true;
    if (this.running) return;
    this.running = this.drain().finally(() => {
      this.running = undefined;
      // An ask that came after the loop's last check must not wait for the next one.
      if (this.dirty) this.add();
    });
  }

  /** Resolves when no run is under way (and none is asked for). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  /** No more runs; resolves once the run under way has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
  }

  private async drain(): Promise<void> {
    while (this.dirty && !this.stopped) {
      this.dirty = false;
      try {
        await this.work();
      } catch (error) {
        this.onError(error);
      }
    }
  }
}
