import { encodeStreamFrame, POD_STREAM, type FrameKind, type PodStreamFrame } from '#contracts';
import type { ProcessStream } from '#runtime';

/** How a stream ended: the process ended, the API cancelled or went silent, something failed, or the agent is stopping. */
export type StreamSessionOutcome = 'completed' | 'cancelled' | 'timed out' | 'failed' | 'stopped';

/** The protocol's parameters (POD_STREAM); tests shrink them. */
export interface StreamSessionParams {
  windowFrames: number;
  frameBytes: number;
  keepAliveMs: number;
  timeoutMs: number;
}

/** How long the agent waits for the engine to report an exec's exit code once its output has ended. */
const EXIT_CODE_POLLS = 40;
const EXIT_CODE_POLL_MS = 50;

/**
 * The agent's side of one exec, attach or port-forward stream (see POD_STREAM in
 * libs/contracts): `start`, the process's output as numbered data frames while the API's
 * acks leave room in the window, input written in order with acks back, `heartbeat`s when
 * quiet, and `end` with the exit code. A cancel, the API's silence or the agent stopping
 * closes the process's connection (an exec'd process still running is killed).
 */
export class StreamSession {
  private seq = 0;
  private delivered = 0;
  private stdinSeq = 0;
  private written = 0;
  private ackedInput = 0;
  private lastHeardMs = 0;
  private lastSentMs = 0;
  private inputChain: Promise<void> = Promise.resolve();
  private wake?: () => void;
  private outcome?: StreamSessionOutcome;
  private failure?: string;
  private process?: ProcessStream;

  constructor(
    private readonly send: (frame: Buffer) => void,
    private readonly params: StreamSessionParams = POD_STREAM,
    private readonly now: () => number = Date.now,
  ) {}

  /** Serves `process` until one side ends the stream; never throws. Closes the process. */
  async run(process: ProcessStream): Promise<{ outcome: StreamSessionOutcome; frames: number; error?: string }> {
    this.process = process;
    this.lastHeardMs = this.now();
    this.emit('start', 0);
    const tick = setInterval(() => this.tick(), Math.max(10, Math.min(this.params.keepAliveMs, this.params.timeoutMs) / 5));
    try {
      for await (const { channel, data } of process.output) {
        for (let offset = 0; offset < data.length && this.outcome === undefined; offset += this.params.frameBytes) {
          await this.windowOpen();
          if (this.outcome !== undefined) break;
          this.emit(channel === 2 ? 'stderr' : 'stdout', ++this.seq, data.subarray(offset, offset + this.params.frameBytes));
        }
        if (this.outcome !== undefined) break;
      }
      if (this.outcome === undefined) {
        const exitCode = await this.exitCode(process);
        if (this.outcome === undefined) {
          this.outcome = 'completed';
          this.emit('end', this.seq, exitCode === undefined ? {} : { exitCode });
        }
      }
    } catch (error) {
      this.fail((error as Error).message);
    } finally {
      clearInterval(tick);
      await process.close().catch((error: unknown) => (this.failure ??= `closing: ${(error as Error).message}`));
    }
    if (this.outcome === 'stopped') this.emit('end', this.seq, { code: 503, reason: 'ServiceUnavailable', message: 'the agent is shutting down' });
    const outcome = this.outcome ?? 'completed';
    return { outcome, frames: this.seq, ...(this.failure !== undefined ? { error: this.failure } : {}) };
  }

  /** A frame from the API on the stream's input subject. */
  input(frame: PodStreamFrame): void {
    this.lastHeardMs = this.now();
    switch (frame.kind) {
      case 'ack':
        this.delivered = Math.max(this.delivered, frame.seq);
        this.wakeUp();
        return;
      case 'cancel':
        this.stop('cancelled');
        return;
      case 'stdin': {
        if (frame.seq !== this.stdinSeq + 1) {
          this.fail(`stdin frame ${this.stdinSeq + 1} was lost (frame ${frame.seq} came)`);
          return;
        }
        this.stdinSeq = frame.seq;
        const data = Buffer.from(frame.data);
        this.inputChain = this.inputChain.then(async () => {
          if (this.outcome !== undefined || !this.process) return;
          try {
            await this.process.write(data);
          } catch {
            // The process closed its stdin (it exited, say): what it does not read is dropped, as with a pipe.
          }
          this.written++;
          if (this.written - this.ackedInput >= this.params.windowFrames / 2) this.ackInput();
        });
        return;
      }
      case 'stdinClose':
        this.inputChain = this.inputChain.then(() => this.process?.closeStdin());
        return;
      case 'resize': {
        const { width, height } = frame.body;
        this.inputChain = this.inputChain.then(() => this.process?.resize(width, height).catch(() => undefined));
        return;
      }
      case 'heartbeat':
        return;
      default:
        this.fail(`unexpected ${frame.kind} frame from the API`);
    }
  }

  /** Ends the stream from the agent's side (`stopped`: shutting down) or on the API's behalf. */
  stop(outcome: Exclude<StreamSessionOutcome, 'completed' | 'failed'>): void {
    if (this.outcome !== undefined) return;
    this.outcome = outcome;
    this.wakeUp();
    // Closing the connection ends the output the run loop is waiting on.
    void this.process?.close().catch(() => undefined);
  }

  private fail(why: string): void {
    if (this.outcome !== undefined) return;
    this.outcome = 'failed';
    this.failure = why;
    this.emit('end', this.seq, { code: 500, reason: 'InternalError', message: why });
    this.wakeUp();
    void this.process?.close().catch(() => undefined);
  }

  private async exitCode(process: ProcessStream): Promise<number | undefined> {
    // The engine may report the exec running for a moment after its output closed.
    for (let poll = 0; poll < EXIT_CODE_POLLS && this.outcome === undefined; poll++) {
      const code = await process.exitCode();
      if (code !== undefined || !(await process.running())) return code;
      await new Promise((resolve) => setTimeout(resolve, EXIT_CODE_POLL_MS));
    }
    return undefined;
  }

  private ackInput(): void {
    this.ackedInput = this.written;
    this.emit('ack', this.written);
  }

  private async windowOpen(): Promise<void> {
    while (this.outcome === undefined && this.seq - this.delivered >= this.params.windowFrames) {
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
    if (this.written > this.ackedInput) this.ackInput();
    else if (this.outcome === undefined && nowMs - this.lastSentMs >= this.params.keepAliveMs) this.emit('heartbeat', this.seq);
  }

  private emit(kind: FrameKind, seq: number, payload?: Buffer | object): void {
    this.lastSentMs = this.now();
    try {
      this.send(encodeStreamFrame(kind, seq, payload));
    } catch {
      // The connection is closing or closed: nobody hears this stream any more.
      if (this.outcome === undefined) this.outcome = 'stopped';
      this.wakeUp();
    }
  }
}
