import type { Msg } from '@nats-io/transport-node';
import { Gauge } from 'prom-client';
import type { Subscription } from 'rxjs';
import { BusUnavailableError, type JetStreamClient } from '#bus';
import { decodeStreamFrame, encodeStreamFrame, POD_STREAM, SUBJECTS, type FrameKind, type PodStreamEnd, type PodStreamRequest } from '#contracts';
import { metricsRegistry } from '#observability';

/** Open stream subscriptions of this API: zero once every stream is over, whoever ended it. */
export const streamSubscriptions = new Gauge({
  name: 'jetlet_api_pod_stream_subscriptions',
  help: 'NATS subscriptions of open exec, attach and port-forward streams',
  registers: [metricsRegistry],
});

/** A stream request the agent (or its absence) refused, with the HTTP status it answers. */
export class PodStreamError extends Error {
  override readonly name = 'PodStreamError';
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

/** The protocol's parameters (POD_STREAM in libs/contracts). */
export type PodStreamParams = Pick<typeof POD_STREAM, 'windowFrames' | 'frameBytes' | 'keepAliveMs' | 'timeoutMs' | 'answerTimeoutMs'>;

/** How a stream ended, as the API's client is told: the agent's `end`, or why the API gave up on it. */
export type PodStreamOutcome = { kind: 'end'; end: PodStreamEnd } | { kind: 'failed'; message: string } | { kind: 'cancelled' };

/** What the API's side of a stream hands to its client (a WebSocket) and hears back from it. */
export interface PodStreamSink {
  /** Output to pass on; call `taken()` once the client has it, so the agent may send more. */
  output(channel: 1 | 2, data: Buffer): void;
  /** The stream is over; nothing more will come. */
  end(outcome: PodStreamOutcome): void;
  /** The agent has taken enough stdin for more to be sent (after `stdin()` returned false). */
  drain(): void;
}

/**
 * The API's side of one exec, attach or port-forward stream with a node's agent over core
 * NATS, through the transport's client (see POD_STREAM in libs/contracts). `open()` sends the request and waits for the
 * agent's first answer; output then goes to the sink in order, and stdin, resizes and the
 * client's acks go back on the stream's input subject. A lost frame or an agent silent for
 * `timeoutMs` ends the stream as failed; `cancel()` tells the agent to stop.
 */
export class PodStream {
  private subscription?: Subscription;
  private received = 0;
  private taken = 0;
  private acked = 0;
  private stdinSeq = 0;
  private stdinAcked = 0;
  private lastHeardMs = Date.now();
  private lastSentMs = Date.now();
  private keepAlive?: NodeJS.Timeout;
  private over = false;
  private answer?: (error?: PodStreamError) => void;
  private sink?: PodStreamSink;
  /** What came before the sink was attached (the agent sends at most a window of it). */
  private pending: Array<{ channel: 1 | 2; data: Buffer }> = [];
  private outcome?: PodStreamOutcome;
  private readonly closeListeners: Array<() => void> = [];

  constructor(
    private readonly client: JetStreamClient,
    readonly node: string,
    readonly request: PodStreamRequest,
    private readonly params: PodStreamParams = POD_STREAM,
  ) {}

  /** Sends the request; resolves on the agent's `start`, rejects with PodStreamError on its `error`, no responder or silence. */
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
          new PodStreamError(
            504,
            'Timeout',
            `the agent of node "${this.node}" did not answer the ${this.request.kind} request within ${this.params.answerTimeoutMs / 1000}s`,
          ),
        ),
      this.params.answerTimeoutMs,
    );
    try {
      // The request goes from a private inbox, where the agent's frames come back.
      this.subscription = this.client.send<Msg, PodStreamRequest>(SUBJECTS.streamRequests(this.node), this.request).subscribe({
        next: (msg) => this.receive(msg),
        error: (error: unknown) => {
          if (error instanceof BusUnavailableError)
            this.answer?.(
              new PodStreamError(
                503,
                'ServiceUnavailable',
                `the agent of node "${this.node}" is not connected: no responder for ${this.request.kind} requests`,
              ),
            );
          else if (this.answer) this.answer(new PodStreamError(500, 'InternalError', `${this.request.kind} request not sent: ${(error as Error).message}`));
          else this.finish({ kind: 'failed', message: `subscription failed: ${(error as Error).message}` });
        },
      });
      streamSubscriptions.inc();
      await answered;
    } catch (error) {
      // After a timeout the agent may still start the stream: tell it not to bother.
      this.cancel();
      throw error instanceof PodStreamError
        ? error
        : new PodStreamError(500, 'InternalError', `${this.request.kind} request not sent: ${(error as Error).message}`);
    } finally {
      clearTimeout(timer);
    }
    this.lastHeardMs = Date.now();
    this.keepAlive = setInterval(() => this.tick(), Math.max(10, this.params.keepAliveMs / 5));
  }

  /** Starts passing output to `sink`; frames that came before are not lost (the agent waits for acks). */
  attach(sink: PodStreamSink): void {
    this.sink = sink;
    for (const { channel, data } of this.pending.splice(0)) sink.output(channel, data);
    if (this.outcome) sink.end(this.outcome);
  }

  /** Calls `listener` once the stream is over, whatever ended it. */
  attachCloseListener(listener: () => void): void {
    if (this.over) listener();
    else this.closeListeners.push(listener);
  }

  /** The client has taken one more output frame. */
  outputTaken(): void {
    this.taken++;
    if (this.taken - this.acked >= this.params.windowFrames / 2) this.send('ack', this.taken);
  }

  /** Sends stdin; false when the window is full: stop reading the client until the sink's `drain()`. */
  stdin(data: Buffer): boolean {
    for (let offset = 0; offset < data.length; offset += this.params.frameBytes) {
      this.send('stdin', ++this.stdinSeq, data.subarray(offset, offset + this.params.frameBytes));
    }
    return this.stdinSeq - this.stdinAcked < this.params.windowFrames;
  }

  closeStdin(): void {
    this.send('stdinClose', this.stdinSeq);
  }

  resize(width: number, height: number): void {
    this.send('resize', 0, { width, height });
  }

  /** The client went away: the agent stops. Harmless after the end. */
  cancel(): void {
    if (!this.over) this.send('cancel', this.taken);
    this.finish({ kind: 'cancelled' });
  }

  private receive(msg: Msg): void {
    let frame;
    try {
      frame = decodeStreamFrame(msg.data);
    } catch (error) {
      const why = `invalid frame from the agent of node "${this.node}": ${(error as Error).message}`;
      this.answer?.(new PodStreamError(500, 'InternalError', why));
      this.fail(why);
      return;
    }
    this.lastHeardMs = Date.now();
    switch (frame.kind) {
      case 'start':
        this.answer?.();
        return;
      case 'error':
        this.answer?.(new PodStreamError(frame.body.code, frame.body.reason, frame.body.message));
        this.finish({ kind: 'failed', message: frame.body.message });
        return;
      case 'stdout':
      case 'stderr':
        if (frame.seq !== this.received + 1) {
          this.fail(`output frame ${this.received + 1} from node "${this.node}" was lost (frame ${frame.seq} came)`);
          return;
        }
        this.received = frame.seq;
        // NATS hands the payload in a buffer it may reuse: the sink gets its own copy.
        this.deliver(frame.kind === 'stderr' ? 2 : 1, Buffer.from(frame.data));
        return;
      case 'ack': {
        const full = this.stdinSeq - this.stdinAcked >= this.params.windowFrames;
        this.stdinAcked = Math.max(this.stdinAcked, frame.seq);
        if (full && this.stdinSeq - this.stdinAcked < this.params.windowFrames) this.sink?.drain();
        return;
      }
      case 'heartbeat':
        return;
      case 'end':
        if (frame.seq !== this.received) {
          this.fail(`output frames ${this.received + 1}..${frame.seq} from node "${this.node}" were lost`);
          return;
        }
        this.finish({ kind: 'end', end: frame.body });
        return;
      default:
        this.fail(`unexpected ${frame.kind} frame from the agent of node "${this.node}"`);
    }
  }

  private deliver(channel: 1 | 2, data: Buffer): void {
    if (this.sink) this.sink.output(channel, data);
    else this.pending.push({ channel, data });
  }

  private tick(): void {
    const now = Date.now();
    if (now - this.lastHeardMs > this.params.timeoutMs) this.fail(`the agent of node "${this.node}" went silent for ${this.params.timeoutMs / 1000}s`);
    else if (this.taken > this.acked) this.send('ack', this.taken);
    else if (now - this.lastSentMs >= this.params.keepAliveMs) this.send('heartbeat', this.taken);
  }

  /** Ends the stream on the API's side because of `why`; the agent is told to stop. */
  private fail(why: string): void {
    if (this.over) return;
    this.send('cancel', this.taken);
    this.finish({ kind: 'failed', message: why });
  }

  private send(kind: FrameKind, seq: number, payload?: Buffer | object): void {
    try {
      this.client.sendFrame(SUBJECTS.streamInput(this.node, this.request.streamId), encodeStreamFrame(kind, seq, payload));
      this.lastSentMs = Date.now();
      if (kind === 'ack') this.acked = seq;
    } catch {
      // The connection is closing: the agent's own timeout ends the stream.
    }
  }

  private finish(outcome: PodStreamOutcome): void {
    if (this.over) return;
    this.over = true;
    clearInterval(this.keepAlive);
    if (this.subscription) {
      this.subscription.unsubscribe();
      this.subscription = undefined;
      streamSubscriptions.dec();
    }
    this.outcome = outcome;
    this.sink?.end(outcome);
    for (const listener of this.closeListeners.splice(0)) listener();
  }
}
