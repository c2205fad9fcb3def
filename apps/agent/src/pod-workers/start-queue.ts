import PQueue from 'p-queue';

/** The kubelet's --runtime-request-timeout default. */
const RUNTIME_REQUEST_TIMEOUT_MS = 120_000;

/**
 * Bounds how many container starts (a sandbox's run, a container's create and start) the
 * engine is given at once, and hands the next free slot to the pod the node saw first.
 *
 * An engine does not start containers faster for being asked more at once: Docker on two
 * cores starts about as many pods a second with two under way as with sixty, but with sixty
 * each one waits for all the others, so every pod comes up at the end, together. Started
 * oldest pod first, a pod's containers go ahead of the sandboxes of pods that came after it,
 * and pods come up one after another.
 *
 * Kills and removals never wait here: they free the engine and keep a grace period's timing.
 * A start that takes longer than `timeoutMs` (the kubelet's runtime request timeout) gives
 * its slot up and fails; the call goes on in the engine, and the next try adopts what it made.
 */
export class StartQueue {
  private queue?: PQueue;
  /** The order in which pods first asked, by uid: an older pod's start goes first. */
  private readonly order = new Map<string, number>();
  private asked = 0;

  /** `limit` starts at once; 0 lets every start through as it comes. */
  constructor(
    private readonly limit: number,
    private readonly timeoutMs = RUNTIME_REQUEST_TIMEOUT_MS,
  ) {}

  /**
   * Runs `start` for pod `uid` once a slot is free. A start must not wait inside for another
   * start that has not yet got a slot (a container asks after its sandbox was created), or
   * the slots could all be held by starts waiting on queued ones.
   */
  run<T>(uid: string, start: () => Promise<T>): Promise<T> {
    if (this.limit === 0) return start();
    let seq = this.order.get(uid);
    if (seq === undefined) {
      seq = this.asked++;
      this.order.set(uid, seq);
    }
    // Made on first use: a node that starts nothing (or a hollow one) carries no queue.
    this.queue ??= new PQueue({ concurrency: this.limit, timeout: this.timeoutMs });
    return this.queue.add(start, { priority: -seq });
  }

  /** The pod is gone: its place in the order goes too. */
  forget(uid: string): void {
    this.order.delete(uid);
  }
}
