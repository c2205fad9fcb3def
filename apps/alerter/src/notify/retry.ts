/** Waits `ms`; injectable so a test drives retries with fake time. */
export type Sleep = (ms: number) => Promise<void>;

export const realSleep: Sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Thrown when a target answered with an error status; 4xx other than 429 is not retried. */
export class NotifyError extends Error {
  override readonly name = 'NotifyError';
  constructor(
    message: string,
    readonly status?: number,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }

  get retryable(): boolean {
    return this.status === undefined || this.status === 429 || this.status >= 500;
  }
}

/**
 * POSTs JSON, retrying a failed attempt (no answer, 429, 5xx) with capped exponential
 * back-off: `baseMs`, doubling, at most `capMs`, `attempts` tries in all.
 */
export async function postJson(
  url: string,
  body: unknown,
  options: { attempts: number; baseMs: number; capMs: number; timeoutMs: number; sleep?: Sleep; fetchFn?: typeof fetch },
): Promise<void> {
  const sleep = options.sleep ?? realSleep;
  const fetchFn = options.fetchFn ?? fetch;
  let delay = options.baseMs;
  for (let attempt = 1; ; attempt++) {
    try {
      const response = await fetchFn(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(options.timeoutMs),
      });
      if (response.ok) {
        await response.body?.cancel();
        return;
      }
      throw new NotifyError(`${url} answered ${response.status}: ${(await response.text()).slice(0, 200)}`, response.status);
    } catch (error) {
      const notifyError = error instanceof NotifyError ? error : new NotifyError(`${url}: ${(error as Error).message}`, undefined, { cause: error });
      if (!notifyError.retryable || attempt >= options.attempts) throw notifyError;
      await sleep(delay);
      delay = Math.min(delay * 2, options.capMs);
    }
  }
}
