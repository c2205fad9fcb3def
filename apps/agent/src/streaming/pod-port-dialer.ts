import { connect, type Socket } from 'node:net';
import { Injectable } from '@nestjs/common';
import type { ProcessOutput, ProcessStream } from '#runtime';
import { dialFailure } from '../net/dial-failure.js';

/** How long a connection to a pod's port may take; the API waits 10 s for the stream to start. */
const CONNECT_TIMEOUT_MS = 5_000;

/** Errors after which the pod's side is simply over (it reset or stopped reading), not broken. */
const ENDED_CODES = new Set(['ECONNRESET', 'EPIPE']);

/**
 * Connects to a TCP port of a pod for port-forward, from the node: the pod's IP is on the
 * engine's bridge, which the node routes (the kubelet's TCP probes reach pods the same way).
 * The connection is handed over as a ProcessStream, so it rides the same agent stream as an
 * exec: the client's bytes are its stdin, the pod's answer its stdout, the client's end of
 * input a half-close.
 */
@Injectable()
export class PodPortDialer {
  /** Resolves once connected; rejects with the reason in Go's words (`dial tcp IP:PORT: ...`), as the kubelet reports it. */
  dial(ip: string, port: number, timeoutMs = CONNECT_TIMEOUT_MS): Promise<ProcessStream> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host: ip, port, noDelay: true });
      socket.setTimeout(timeoutMs, () => {
        socket.destroy();
        reject(new Error(`dial tcp ${ip}:${port}: i/o timeout`));
      });
      socket.once('error', (error: NodeJS.ErrnoException) => reject(new Error(dialFailure(error, `${ip}:${port}`))));
      socket.once('connect', () => {
        socket.setTimeout(0);
        socket.removeAllListeners('error');
        resolve(new TcpConnection(socket));
      });
    });
  }
}

/** A TCP connection as a ProcessStream: output on channel 1, no exit code. */
export class TcpConnection implements ProcessStream {
  readonly output: AsyncIterable<ProcessOutput>;

  constructor(private readonly socket: Socket) {
    // Errors surface through the iteration; this keeps a late one from being unhandled.
    socket.on('error', () => undefined);
    this.output = read(socket);
  }

  write(data: Buffer): Promise<void> {
    return new Promise((resolve, reject) => this.socket.write(data, (error) => (error ? reject(error) : resolve())));
  }

  closeStdin(): void {
    this.socket.end();
  }

  resize(): Promise<void> {
    return Promise.resolve();
  }

  exitCode(): Promise<number | undefined> {
    return Promise.resolve(undefined);
  }

  running(): Promise<boolean> {
    return Promise.resolve(false);
  }

  close(): Promise<void> {
    this.socket.destroy();
    return Promise.resolve();
  }
}

async function* read(socket: Socket): AsyncGenerator<ProcessOutput> {
  try {
    for await (const chunk of socket) yield { channel: 1, data: chunk as Buffer };
  } catch (error) {
    if (!ENDED_CODES.has((error as NodeJS.ErrnoException).code ?? '')) throw error;
  }
}
