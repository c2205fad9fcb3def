import type { Msg } from '@nats-io/transport-node';
import type { Subscription } from 'rxjs';
import { BusUnavailableError, type JetStreamClient } from '#bus';
import { LOG_STREAM, LogStreamMessage, parseContract, SUBJECTS, type LogRequest, type LogStreamControlKind } from '#contracts';

/** A log request the agent (or its absence) refused, with the HTTP status it answers. */
export class PodLogStreamError extends Error {
  override readonly name = 'PodLogStreamError';
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

/** The protocol's parameters (LOG_STREAM in libs/contracts). */
export type PodLogStreamParams = Pick<typeof LOG_STREAM, 'windowChunks' | 'keepAliveMs' | 'timeoutMs' | 'answerTimeoutMs'>;

/**
 * The API's side of one log stream with a node's agent over core NATS (see LOG_STREAM in
 * libs/contracts for the protocol). `open()` sends the request and waits for the agent's
 * first answer; iterating then yields the log's chunks in order. The chunks taken by the
 * iterator are acknowledged in batches and at every keep-alive period, so the agent never
 * runs more than a window ahead of the HTTP client. `cancel()` (or leaving the loop early)
 * tells the agent to stop. A lost chunk or an agent silent for `timeoutMs` ends the stream
 * with `failure` set.
 */
export class PodLogStream implements AsyncIterable<string> {
  /** Why the stream broke off before the log's end, if it did. */
  failure?: string;
  private subscription?: Subscription;
  private readonly queue: string[] = [];
  private received = 0;
  private delivered = 0;
  private acked = 0;
  private lastHeardMs = Date.now();
  private keepAlive?: NodeJS.Timeout;
  private wake?: () => void;
  /** The agent will send nothing more (end, error, failure, or cancelled). */
  private over = false;
  private answer?: (error?: PodLogStreamError) => void;
  private readonly closeListeners: Array<() => void> = [];

  constructor(
    private readonly client: JetStreamClient,
    readonly node: string,
    readonly request: LogRequest,
    private readonly params: PodLogStreamParams = LOG_STREAM,
  ) {}

  /** Sends the request; resolves on the agent's `start`, rejects with PodLogStreamError on its `error`, no responder or silence. */
  async open(): Promise<void> {
    const answered = new Promise<void>((resolve, reject) => {
      this.answer = (error) => {
        this.answer = undefined;
        if (error) reject(error);
        else resolve();
      };
    });
    const timer = setTimeout(
      () =>
        this.answer?.(
          new PodLogStreamError(
            504,
            'Timeout',
            `the agent of node "${this.node}" did not answer the log request within ${this.params.answerTimeoutMs / 1000}s`,
          ),
        ),
      this.params.answerTimeoutMs,
    );
    try {
      this.subscription = this.client.send<Msg, LogRequest>(SUBJECTS.logRequests(this.node), this.request).subscribe({
        next: (msg) => this.receive(msg),
        error: (error: unknown) => {
          if (error instanceof BusUnavailableError)
            this.answer?.(new PodLogStreamError(503, 'ServiceUnavailable', `the agent of node "${this.node}" is not connected: no responder for log requests`));
          else if (this.answer) this.answer(new PodLogStreamError(500, 'InternalError', `log request not sent: ${(error as Error).message}`));
          else this.stop(`subscription failed: ${(error as Error).message}`);
        },
      });
      await answered;
    } catch (error) {
      // After a timeout the agent may still start the stream: tell it not to bother.
      this.cancel();
      throw error instanceof PodLogStreamError ? error : new PodLogStreamError(500, 'InternalError', `log request not sent: ${(error as Error).message}`);
    } finally {
      clearTimeout(timer);
    }
    this.lastHeardMs = Date.now();
    this.keepAlive = setInterval(() => this.tick(), this.params.keepAliveMs);
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<string> {
    try {
      for (;;) {
        const chunk = this.queue.shift();
        if (chunk !== undefined) {
          yield chunk;
          // The consumer asked for more: the chunk is written.
          this.delivered++;
          if (this.delivered - this.acked >= this.params.windowChunks / 2) this.control('ack');
          continue;
        }
        if (this.over) return;
        await new Promise<void>((resolve) => (this.wake = resolve));
      }
    } finally {
      this.cancel();
    }
  }

  /** Calls `listener` once the stream is over, whatever ended it. */
  onClose(listener: () => void): void {
    if (this.over && !this.subscription) listener();
    else this.closeListeners.push(listener);
  }

  /** The HTTP client went away: the agent stops reading. Harmless after the end. */
  cancel(): void {
    if (!this.over) this.control('cancel');
    this.close();
  }

  private receive(msg: Msg): void {
    let message: LogStreamMessage;
    try {
      message = parseContract(LogStreamMessage, msg.json(), 'LogStreamMessage');
    } catch (error) {
      const why = `invalid message from the agent of node "${this.node}": ${(error as Error).message}`;
      this.answer?.(new PodLogStreamError(500, 'InternalError', why));
      this.stop(why);
      return;
    }
    this.lastHeardMs = Date.now();
    switch (message.kind) {
      case 'start':
        this.answer?.();
        return;
      case 'error': {
        const error = message.error;
        this.answer?.(new PodLogStreamError(error?.code ?? 500, error?.reason ?? 'InternalError', error?.message ?? 'the agent could not serve the log'));
        this.close();
        return;
      }
      case 'data':
        if (message.seq !== this.received + 1) {
          this.stop(`log chunk ${this.received + 1} from node "${this.node}" was lost (chunk ${message.seq} came)`);
          return;
        }
        this.received = message.seq;
        this.queue.push(message.data ?? '');
        this.wakeUp();
        return;
      case 'heartbeat':
        return;
      case 'end':
        this.over = true;
        if (message.seq !== this.received) this.failure = `log chunks ${this.received + 1}..${message.seq} from node "${this.node}" were lost`;
        else if (message.error) this.failure = message.error.message;
        this.close();
        return;
    }
  }

  private tick(): void {
    if (Date.now() - this.lastHeardMs > this.params.timeoutMs) this.stop(`the agent of node "${this.node}" went silent for ${this.params.timeoutMs / 1000}s`);
    else this.control('ack');
  }

  /** Ends the stream on the API's side because of `failure`; the agent is told to stop. */
  private stop(failure: string): void {
    if (this.over) return;
    this.failure = failure;
    this.control('cancel');
    this.over = true;
    this.close();
  }

  private control(kind: LogStreamControlKind): void {
    const { streamId } = this.request;
    // A control lost to a closing connection needs no retry: the agent's own timeout ends the stream.
    this.client
      .emit(SUBJECTS.logStreamControl(this.node, streamId), { version: 1, streamId, kind, delivered: this.delivered })
      .subscribe({ error: () => undefined });
    this.acked = this.delivered;
  }

  private close(): void {
    this.over = true;
    clearInterval(this.keepAlive);
    this.subscription?.unsubscribe();
    this.subscription = undefined;
    this.wakeUp();
    for (const listener of this.closeListeners.splice(0)) listener();
  }

  private wakeUp(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}
