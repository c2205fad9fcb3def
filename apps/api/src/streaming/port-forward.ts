import type { Duplex } from 'node:stream';
import { Gauge } from 'prom-client';
import { metricsRegistry } from '#observability';
import type { PodStream, PodStreamOutcome } from './pod-stream.js';
import { RST_STATUS } from './spdy/spdy-frames.js';
import { SpdySession, type SpdyStream } from './spdy/spdy-session.js';

/** The stream protocol of port-forward, as `X-Stream-Protocol-Version` names it. */
export const PORT_FORWARD_PROTOCOL = 'portforward.k8s.io';
/** The WebSocket subprotocol of kubectl 1.31+ (KEP-4006): SPDY/3.1 frames tunnelled in binary messages. */
export const PORT_FORWARD_TUNNEL_PROTOCOL = `SPDY/3.1+${PORT_FORWARD_PROTOCOL}`;
/** How long the second stream of a pair may be awaited (the kubelet's stream creation timeout). */
export const STREAM_PAIR_TIMEOUT_MS = 30_000;

/** Open port-forward connections of this API: zero once every client has gone. */
export const portForwardConnections = new Gauge({
  name: 'jetlet_api_port_forward_connections',
  help: 'kubectl port-forward connections (SPDY sessions) open on this API, by transport: websocket (tunnelled) or spdy',
  labelNames: ['transport'] as const,
  registers: [metricsRegistry],
});

/** How a port-forward connection reached the API. */
export type PortForwardTransport = 'websocket' | 'spdy';

/** Opens the stream to the pod's port through its node's agent; rejects with the reason it cannot. */
export type PortOpener = (port: number) => Promise<PodStream>;

/** The data and error streams of one forwarded connection, as kubectl opens them (headers `requestid`, `port`, `streamtype`). */
interface StreamPair {
  requestId: string;
  port: number;
  data?: SpdyStream;
  error?: SpdyStream;
  timer?: NodeJS.Timeout;
  forward?: PodStream;
}

/** A stream's headers, checked as the kubelet checks them; the reason when they are wrong. */
export function parsePortForwardHeaders(headers: Readonly<Record<string, string>>): { port: number; type: 'data' | 'error' } | string {
  const portText = headers['port'] ?? '';
  if (portText === '') return '"port" header is required';
  const port = /^\d{1,5}$/.test(portText) ? Number(portText) : NaN;
  if (!Number.isInteger(port) || port > 65535) return `unable to parse "${portText}" as a port`;
  if (port < 1) return `port "${portText}" must be > 0`;
  const type = headers['streamtype'] ?? '';
  if (type === '') return '"streamType" header is required';
  if (type !== 'data' && type !== 'error') return `invalid stream type "${type}"`;
  return { port, type };
}

/**
 * One `kubectl port-forward` connection: a SPDY session in which kubectl opens a pair of
 * streams (error, then data) for each local connection it accepts. Each complete pair is
 * forwarded to the pod's port through the node's agent over NATS; bytes pass both ways with
 * the agent stream's window, the client's FIN half-closes the pod's socket, and when the
 * pod's side ends, both streams end. A failure (nothing listening, say) is written on the
 * error stream in the kubelet's words, which kubectl prints. The client leaving ends every
 * forwarded connection.
 */
export class PortForwardConnection {
  private readonly pairs = new Map<string, StreamPair>();
  private readonly session: SpdySession;
  private readonly done: Promise<string>;
  private over = false;

  constructor(
    socket: Duplex,
    private readonly transport: PortForwardTransport,
    private readonly open: PortOpener,
    /** How the kubelet names the pod in its error messages. */
    private readonly podDescription: string,
    private readonly pairTimeoutMs = STREAM_PAIR_TIMEOUT_MS,
  ) {
    portForwardConnections.inc({ transport });
    let finished!: (why: string) => void;
    this.done = new Promise((resolve) => (finished = resolve));
    this.session = new SpdySession(socket, {
      stream: (stream) => this.stream(stream),
      close: (why) => {
        this.over = true;
        portForwardConnections.dec({ transport: this.transport });
        for (const pair of this.pairs.values()) this.drop(pair);
        finished(why);
      },
    });
  }

  /** Resolves, with why, when the connection is over. */
  closed(): Promise<string> {
    return this.done;
  }

  /** Ends the connection from the server's side (the API is stopping). */
  close(): void {
    this.session.close('the API is shutting down');
  }

  private stream(stream: SpdyStream): void {
    const parsed = parsePortForwardHeaders(stream.headers);
    if (typeof parsed === 'string') {
      stream.reset(RST_STATUS.protocolError);
      return;
    }
    // An old client without request ids: pair consecutive streams as the kubelet does.
    const requestId = stream.headers['requestid'] ?? String(parsed.type === 'error' ? stream.id : stream.id - 2);
    let pair = this.pairs.get(requestId);
    if (!pair) {
      pair = { requestId, port: parsed.port };
      const created = pair;
      pair.timer = setTimeout(() => this.fail(created, `(request=${requestId}) timed out waiting for streams`), this.pairTimeoutMs);
      this.pairs.set(requestId, pair);
    }
    if (pair[parsed.type]) {
      stream.reply();
      this.fail(pair, `error processing stream for request ${requestId}: ${parsed.type} stream already assigned`);
      stream.reset();
      return;
    }
    pair[parsed.type] = stream;
    stream.reply();
    stream.once('close', () => {
      if (pair.data?.destroyed && pair.error?.destroyed) this.drop(pair);
    });
    if (pair.data && pair.error) {
      clearTimeout(pair.timer);
      void this.forward(pair, pair.data, pair.error);
    }
  }

  private async forward(pair: StreamPair, data: SpdyStream, error: SpdyStream): Promise<void> {
    // Nothing is ever read from the error stream; kubectl closes its side at once.
    error.resume();
    let stream: PodStream;
    try {
      stream = await this.open(pair.port);
    } catch (failure) {
      this.fail(pair, (failure as Error).message);
      return;
    }
    if (this.over || data.destroyed) {
      stream.cancel();
      return;
    }
    pair.forward = stream;
    data.on('data', (chunk: Buffer) => {
      if (!stream.stdin(chunk)) data.pause();
    });
    data.once('end', () => stream.closeStdin());
    data.once('close', () => stream.cancel());
    stream.attach({
      output: (_channel, bytes) => {
        if (data.writableEnded || data.destroyed) return;
        data.write(bytes, (writeError) => {
          if (!writeError) stream.outputTaken();
        });
      },
      drain: () => data.resume(),
      end: (outcome) => this.ended(pair, outcome),
    });
  }

  /** The pod's side is over: its end reaches kubectl, or why it broke off on the error stream. */
  private ended(pair: StreamPair, outcome: PodStreamOutcome): void {
    if (outcome.kind === 'cancelled') return;
    const why = outcome.kind === 'failed' ? outcome.message : outcome.end.message;
    if (why !== undefined) {
      this.fail(pair, why);
      return;
    }
    pair.data?.end();
    pair.error?.end();
  }

  /** Writes the kubelet's message on the pair's error stream and ends both streams. */
  private fail(pair: StreamPair, why: string): void {
    clearTimeout(pair.timer);
    const { error, data } = pair;
    if (error && !error.destroyed && !error.writableEnded) error.end(`error forwarding port ${pair.port} to pod ${this.podDescription}: ${why}`);
    if (data && !data.destroyed && !data.writableEnded) data.end();
    if (!error && !data) this.pairs.delete(pair.requestId);
  }

  private drop(pair: StreamPair): void {
    clearTimeout(pair.timer);
    pair.forward?.cancel();
    pair.data?.destroy();
    pair.error?.destroy();
    this.pairs.delete(pair.requestId);
  }
}
