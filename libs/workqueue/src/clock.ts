/** A timer handle as the clock gives it out. */
export type TimerHandle = ReturnType<typeof setTimeout>;

/**
 * Time and timers, behind one narrow interface, so a test swaps the clock, never the
 * logic (`node:test`'s `mock.timers` drives `systemClock` too, since it reads the globals
 * at each call).
 */
export interface Clock {
  /** ms since the epoch. */
  now(): number;
  setTimeout(callback: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle | undefined): void;
  /** Resolves after `ms`, or at once when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** The real clock. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle),
  sleep: (ms, signal) =>
    new Promise<void>((resolve) => {
      if (signal?.aborted) return resolve();
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        resolve();
      }
      signal?.addEventListener('abort', done, { once: true });
    }),
};

/** Injection token of the Clock (`{ provide: CLOCK, useValue: systemClock }`): a test swaps it, never the logic. */
export const CLOCK = Symbol('CLOCK');
