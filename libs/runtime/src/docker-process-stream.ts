import type { Duplex } from 'node:stream';
import type { ProcessOutput, ProcessStream } from './container-runtime.port.js';

const HEADER_BYTES = 8;

/**
 * Docker's multiplexed stdout/stderr of a non-TTY exec or attach, as bytes: each frame is an
 * 8-byte header ([stream, 0, 0, 0, size as uint32 BE]) and its payload, cut anywhere by the
 * transport. Unlike LogFrameDemuxer it keeps bytes (a tar stream is not text) and which
 * stream each came from.
 */
export class OutputFrameDemuxer {
  private header = Buffer.alloc(0);
  private remaining = 0;
  private stream: 1 | 2 = 1;

  /** Feeds one chunk; returns the payload pieces it holds, in order (views of `chunk`). */
  push(chunk: Buffer): ProcessOutput[] {
    const out: ProcessOutput[] = [];
    let offset = 0;
    while (offset < chunk.length) {
      if (this.remaining > 0) {
        const end = Math.min(chunk.length, offset + this.remaining);
        out.push({ channel: this.stream, data: chunk.subarray(offset, end) });
        this.remaining -= end - offset;
        offset = end;
        continue;
      }
      const end = Math.min(chunk.length, offset + HEADER_BYTES - this.header.length);
      this.header = Buffer.concat([this.header, chunk.subarray(offset, end)]);
      offset = end;
      if (this.header.length === HEADER_BYTES) {
        // 0 is stdin echoed back (never sent for exec); anything but stderr counts as stdout.
        this.stream = this.header.readUInt8(0) === 2 ? 2 : 1;
        this.remaining = this.header.readUInt32BE(4);
        this.header = Buffer.alloc(0);
      }
    }
    return out;
  }
}

/** What a DockerProcessStream needs of the engine besides the hijacked connection. */
export interface DockerProcessControl {
  resize(width: number, height: number): Promise<void>;
  /** exec: the process's state; attach: undefined. */
  inspect?: () => Promise<{ running: boolean; exitCode?: number; pid?: number }>;
  /** Kills the exec'd process (by its pid on the engine's host). */
  kill?: (pid: number) => void;
}

/** A Docker exec or attach over its hijacked connection (see ProcessStream). */
export class DockerProcessStream implements ProcessStream {
  readonly output: AsyncIterable<ProcessOutput>;
  private closed = false;

  constructor(
    private readonly socket: Duplex,
    tty: boolean,
    private readonly control: DockerProcessControl,
  ) {
    // An engine that hangs up on us is the end of the output, not an exception for the reader.
    socket.on('error', () => undefined);
    this.output = readOutput(socket, tty);
  }

  write(data: Buffer): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.socket.destroyed || this.socket.writableEnded) {
        reject(new Error('stdin is closed'));
        return;
      }
      this.socket.write(data, (error) => (error ? reject(error) : resolve()));
    });
  }

  closeStdin(): void {
    // Half-close: the engine closes the process's stdin and keeps sending its output.
    if (!this.socket.writableEnded) this.socket.end();
  }

  resize(width: number, height: number): Promise<void> {
    return this.control.resize(width, height);
  }

  async exitCode(): Promise<number | undefined> {
    if (!this.control.inspect) return undefined;
    const state = await this.control.inspect();
    return state.running ? undefined : state.exitCode;
  }

  async running(): Promise<boolean> {
    if (!this.control.inspect) return false;
    return (await this.control.inspect()).running;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.socket.destroy();
    if (!this.control.inspect || !this.control.kill) return;
    // Docker has no call to end an exec: a process whose client went away is killed by pid.
    const state = await this.control.inspect();
    if (state.running && state.pid) this.control.kill(state.pid);
  }
}

async function* readOutput(socket: Duplex, tty: boolean): AsyncGenerator<ProcessOutput> {
  const demuxer = tty ? undefined : new OutputFrameDemuxer();
  try {
    for await (const chunk of socket) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
      if (demuxer) yield* demuxer.push(bytes);
      else yield { channel: 1, data: bytes };
    }
  } catch (error) {
    // A connection we destroyed ends the output quietly; anything else is the engine's failure.
    if (!socket.destroyed) throw error;
  }
}
