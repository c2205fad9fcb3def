import { systemClock, type Clock } from './clock.js';

export interface BackoffOptions {
  /** The first wait, ms. */
  initialMs: number;
  /** The longest wait, ms. */
  maxMs: number;
  /** Growth per failure (2). */
  factor?: number;
}

/** Capped exponential back-off, as client-go's `ItemExponentialFailureRateLimiter` for one item. */
export class Backoff {
  private current: number;

  constructor(private readonly options: BackoffOptions) {
    this.current = options.initialMs;
  }

  /** The wait before the next attempt; each call grows the one after it, up to the cap. */
  next(): number {
    const delay = this.current;
    this.current = Math.min(this.current * (this.options.factor ?? 2), this.options.maxMs);
    return delay;
  }

  /** After a success: the next failure waits the first delay again. */
  reset(): void {
    this.current = this.options.initialMs;
  }
}

export interface RetryOptions extends BackoffOptions {
  clock?: Clock;
  /** Stops retrying: the last error is thrown. */
  signal?: AbortSignal;
  /** Attempts in all, the first included, before the last error is thrown (no limit by default). */
  maxAttempts?: number;
  /** Whether an error is worth another attempt (every error by default); one that is not is thrown at once. */
  retryable?: (error: unknown) => boolean;
  /** Hears of each failed attempt and the wait before the next. */
  onRetry?: (error: unknown, attempt: number, delayMs: number) => void;
}

/** Runs `attempt` until it resolves, waiting a capped exponential back-off between failures. */
export async function retry<T>(attempt: (n: number) => Promise<T>, options: RetryOptions): Promise<T> {
  const clock = options.clock ?? systemClock;
  const backoff = new Backoff(options);
  for (let n = 1; ; n++) {
    try {
      return await attempt(n);
    } catch (error) {
      if (options.signal?.aborted || !(options.retryable?.(error) ?? true) || n >= (options.maxAttempts ?? Infinity)) throw error;
      const delay = backoff.next();
      options.onRetry?.(error, n, delay);
      await clock.sleep(delay, options.signal);
      if (options.signal?.aborted) throw error;
    }
  }
}
