import { goDuration } from '#domain/backoff';
import type { AgentMetrics } from '../agent.metrics.js';

/** The kubelet's PLEG health threshold: a relist must have completed within it. */
export const RELIST_THRESHOLD_MS = 3 * 60_000;
/** How long the runtime event stream may stay down before the PLEG is unhealthy; a daemon restart reconnects well within it. */
export const EVENT_STREAM_GRACE_MS = 5_000;

/** What the PLEG health check looks at. Times are ms since the epoch. */
export interface PlegState {
  /** When watching began: until the first relist the threshold counts from here. */
  startedMs: number;
  /** Completion of the last successful relist. */
  lastRelistMs?: number;
  /** Why the last relist failed; cleared by the next success. */
  relistError?: string;
  eventStream: {
    connected: boolean;
    /** Since when it is in that state. */
    sinceMs: number;
    /** Why it broke, while disconnected. */
    error?: string;
  };
}

/** How long the runtime may fail before the node says its container runtime is down. */
export const RUNTIME_DOWN_GRACE_MS = 10_000;

/**
 * Why the container runtime counts as down, or undefined: its event stream has been
 * disconnected, or every relist has failed, for longer than the grace (a daemon restart
 * reconnects well within it). The kubelet's "container runtime is down" Ready=False.
 */
export function runtimeDownReason(state: PlegState, nowMs: number): string | undefined {
  const stream = state.eventStream;
  if (!stream.connected && nowMs - stream.sinceMs > RUNTIME_DOWN_GRACE_MS) return stream.error ?? 'the runtime event stream is disconnected';
  const lastGood = state.lastRelistMs ?? state.startedMs;
  if (state.relistError !== undefined && nowMs - lastGood > RUNTIME_DOWN_GRACE_MS) return state.relistError;
  return undefined;
}

/**
 * Why the PLEG is unhealthy, or undefined when it is healthy: as the kubelet's check, the
 * last relist is older than the threshold; and, since jetlet's PLEG is the runtime's event
 * stream, that stream has been down for longer than a reconnect takes.
 */
export function plegProblem(state: PlegState, nowMs: number): string | undefined {
  const problems: string[] = [];
  const activeMs = state.lastRelistMs ?? state.startedMs;
  if (nowMs - activeMs > RELIST_THRESHOLD_MS)
    problems.push(`pleg was last seen active ${goDuration(nowMs - activeMs)} ago; threshold is ${goDuration(RELIST_THRESHOLD_MS)}`);
  const stream = state.eventStream;
  if (!stream.connected && nowMs - stream.sinceMs > EVENT_STREAM_GRACE_MS)
    problems.push(`runtime event stream disconnected for ${goDuration(nowMs - stream.sinceMs)}${stream.error ? `: ${stream.error}` : ''}`);
  if (problems.length === 0) return undefined;
  if (state.relistError) problems.push(`last relist failed: ${state.relistError}`);
  return problems.join('; ');
}

/**
 * The PLEG's health, kept where both of its halves report: the relist (the list of every
 * reconcile pass) and the runtime event stream. One per agent, like the metrics it feeds.
 */
export class PlegHealth {
  private readonly state: PlegState;
  private lastRelistStartMs?: number;

  constructor(
    private readonly metrics: AgentMetrics,
    private readonly now: () => number = Date.now,
  ) {
    const nowMs = now();
    this.state = { startedMs: nowMs, eventStream: { connected: false, sinceMs: nowMs } };
  }

  /** Times one relist: its duration, the interval since the previous one, and when the PLEG was last active. */
  async relist<T>(list: () => Promise<T>): Promise<T> {
    const startMs = this.now();
    if (this.lastRelistStartMs !== undefined) this.metrics.plegRelistInterval.observe((startMs - this.lastRelistStartMs) / 1000);
    this.lastRelistStartMs = startMs;
    try {
      const result = await list();
      const endMs = this.now();
      this.metrics.plegRelistDuration.observe((endMs - startMs) / 1000);
      this.metrics.plegLastSeen.set(endMs / 1000);
      this.state.lastRelistMs = endMs;
      delete this.state.relistError;
      return result;
    } catch (error) {
      this.state.relistError = error instanceof Error ? error.message : String(error);
      throw error;
    }
  }

  eventStreamUp(): void {
    if (this.state.eventStream.connected) return;
    this.state.eventStream = { connected: true, sinceMs: this.now() };
    this.metrics.eventStreamConnected.set(1);
  }

  eventStreamDown(error: string): void {
    const stream = this.state.eventStream;
    this.state.eventStream = { connected: false, sinceMs: stream.connected ? this.now() : stream.sinceMs, error };
    this.metrics.eventStreamConnected.set(0);
  }

  snapshot(): PlegState {
    return structuredClone(this.state);
  }

  problem(): string | undefined {
    return plegProblem(this.state, this.now());
  }

  /** Why the container runtime is down (past its grace), or undefined. */
  runtimeDown(): string | undefined {
    return runtimeDownReason(this.state, this.now());
  }
}
