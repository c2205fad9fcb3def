import { isUnavailable } from '#bus';
import { retry, type Clock } from '#workqueue';

/** What an application needs for a failed start to be undone: Nest's `close()`. */
export interface Closable {
  close(): Promise<void>;
}

export interface AgentStartOptions {
  /** The node whose agent starts, named in the error. */
  node: string;
  /** Attempts in all, the first included. */
  attempts: number;
  /** First and longest wait between attempts, ms (by default START_BACKOFF's). */
  initialMs?: number;
  maxMs?: number;
  clock?: Clock;
  /** Stops retrying (the process is stopping): the last error is thrown. */
  signal?: AbortSignal;
  /** Hears of each failed attempt that will be tried again, and the wait before it. */
  onRetry?: (error: unknown, attempt: number, delayMs: number) => void;
  /** Hears of each failed attempt as it fails, before its application is closed. */
  onFailed?: (error: unknown, attempt: number) => void;
}

/** The wait before an agent's start is tried again: from 1 s, doubling, up to 16 s. */
export const START_BACKOFF = { initialMs: 1000, maxMs: 16_000 } as const;

/** An agent that did not start: the bus did not answer its start-up requests in `attempts` tries, or refused one. */
export class AgentStartError extends Error {
  override readonly name = 'AgentStartError';
  constructor(
    readonly node: string,
    readonly attempts: number,
    options: ErrorOptions,
  ) {
    super(
      `the agent of node ${node} did not start after ${attempts} attempt${attempts === 1 ? '' : 's'}: ${String((options.cause as Error)?.message ?? options.cause)}`,
      options,
    );
  }
}

/**
 * Starts one agent, retried as the kubelet retries its start-up: while the bus is slow or
 * away (a JetStream API request or the registration's acknowledgement times out, JetStream
 * is not ready), the half-started application is closed, which stops whatever consumers it
 * had opened, and the agent is started again after a capped exponential back-off, at most
 * `attempts` times in all. An error that says something other than "not now" (a refusal, a
 * bug) is not retried. Either way the error that ends it is an AgentStartError naming the node.
 *
 * `start` builds the application, hands it to `track` as soon as it exists, and runs it.
 */
export async function startAgent<T extends Closable>(start: (track: (app: T) => void) => Promise<T>, options: AgentStartOptions): Promise<T> {
  let attempts = 0;
  try {
    return await retry(
      async (n) => {
        attempts = n;
        let app: T | undefined;
        try {
          return await start((built) => (app = built));
        } catch (error) {
          options.onFailed?.(error, n);
          await app?.close().catch(() => undefined);
          throw error;
        }
      },
      {
        initialMs: options.initialMs ?? START_BACKOFF.initialMs,
        maxMs: options.maxMs ?? START_BACKOFF.maxMs,
        maxAttempts: options.attempts,
        retryable: isUnavailable,
        ...(options.clock ? { clock: options.clock } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
        ...(options.onRetry ? { onRetry: options.onRetry } : {}),
      },
    );
  } catch (error) {
    throw new AgentStartError(options.node, attempts, { cause: error });
  }
}
