import { LOG_STREAM, type LogStreamControl, type LogStreamError, type LogStreamKind } from '#contracts';

/** How a log stream ended: the log ended, the API cancelled or went silent, the runtime failed, or the agent is stopping. */
export type LogSessionOutcome = 'completed' | 'cancelled' | 'timed out' | 'failed' | 'stopped';

/** The protocol's parameters (LOG_STREAM); tests shrink the times. */
export interface LogSessionParams {
  windowChunks: number;
  chunkChars: number;
  keepAliveMs: number;
  timeoutMs: number;
}

/** A LogStreamMessage without the fields the sender adds (version, streamId). */
export interface LogSessionMessage {
  kind: LogStreamKind;
  seq: number;
  data?: string;
  error?: LogStreamError;
}

/** Cuts text into pieces of at most `max` UTF-16 units without splitting a surrogate pair. */
export function splitChunks(text: string, max: number): string[] {
  const chunks: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + max);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && end - start > 1 && last >= 0xd800 && last <= 0xdbff) end--;
    chunks.push(text.slice(start, end));
    start = end;
  }
  return chunks;
}

/**
 * The agent's side of one log stream (see LOG_STREAM in libs/contracts): sends `start`, the
 * log as numbered `data` chunks while the API's acks leave room in the window, a
 * `heartbeat` when it has been quiet for a keep-alive period, and `end`. It stops reading
 * when the API cancels or has been silent for `timeoutMs` (it is gone: nobody to tell).
 */
export class LogSession {
  private readonly abort = new AbortController();
  private seq = 0;
  private delivered = 0;
  private lastHeardMs = 0;
  private lastSentMs = 0;
  private wake?: () => void;
  private outcome?: LogSessionOutcome;

  constructor(
    private readonly send: (message: LogSessionMessage) => void,
    private readonly params: LogSessionParams = LOG_STREAM,
    private readonly now: () => number = Date.now,
  ) {}

  /** Serves the log `source` gives until one side ends it; never throws. */
  async run(source: (signal: AbortSignal) => AsyncIterable<string>): Promise<{ outcome: LogSessionOutcome; chunks: number; error?: string }> {
    this.lastHeardMs = this.now();
    this.emit({ kind: 'start', seq: 0 });
    const tick = setInterval(() => this.tick(), Math.max(10, Math.min(this.params.keepAliveMs, this.params.timeoutMs) / 5));
    let error: string | undefined;
    try {
      for await (const text of source(this.abort.signal)) {
        for (const data of splitChunks(text, this.params.chunkChars)) {
          await this.windowOpen();
          if (this.outcome !== undefined) break;
          this.emit({ kind: 'data', seq: ++this.seq, data });
        }
        if (this.outcome !== undefined) break;
      }
      if (this.outcome === undefined) {
        this.outcome = 'completed';
        this.emit({ kind: 'end', seq: this.seq });
      }
    } catch (failure) {
      error = failure instanceof Error ? failure.message : String(failure);
      if (this.outcome === undefined) {
        this.outcome = 'failed';
        this.emit({ kind: 'end', seq: this.seq, error: { code: 500, reason: 'InternalError', message: error } });
      }
    } finally {
      clearInterval(tick);
      this.abort.abort();
    }
    if (this.outcome === 'stopped')
      this.emit({ kind: 'end', seq: this.seq, error: { code: 503, reason: 'ServiceUnavailable', message: 'the agent is shutting down' } });
    return { outcome: this.outcome, chunks: this.seq, ...(error !== undefined ? { error } : {}) };
  }

  /** An ack or a cancel from the API. */
  control(message: Pick<LogStreamControl, 'kind' | 'delivered'>): void {
    this.lastHeardMs = this.now();
    if (message.kind === 'cancel') {
      this.stop('cancelled');
      return;
    }
    this.delivered = Math.max(this.delivered, message.delivered);
    this.wakeUp();
  }

  /** Ends the stream from the agent's side (`stopped`: shutting down) or on the API's behalf. */
  stop(outcome: Exclude<LogSessionOutcome, 'completed' | 'failed'>): void {
    if (this.outcome !== undefined) return;
    this.outcome = outcome;
    this.abort.abort();
    this.wakeUp();
  }

  private async windowOpen(): Promise<void> {
    while (this.outcome === undefined && this.seq - this.delivered >= this.params.windowChunks) {
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  private wakeUp(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  private tick(): void {
    const nowMs = this.now();
    if (nowMs - this.lastHeardMs > this.params.timeoutMs) {
      this.stop('timed out');
      return;
    }
    if (this.outcome === undefined && nowMs - this.lastSentMs >= this.params.keepAliveMs) this.emit({ kind: 'heartbeat', seq: this.seq });
  }

  private emit(message: LogSessionMessage): void {
    this.lastSentMs = this.now();
    try {
      this.send(message);
    } catch {
      // The connection is closing or closed: nobody hears this stream any more.
      this.stop('stopped');
    }
  }
}
