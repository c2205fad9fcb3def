import 'reflect-metadata';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decodeStreamFrame, encodeStreamFrame, type PodStreamFrame } from '#contracts';
import type { ProcessOutput, ProcessStream } from '#runtime';
import { StreamSession } from './stream-session.js';

const PARAMS = { windowFrames: 4, frameBytes: 4, keepAliveMs: 60_000, timeoutMs: 120_000 };

/** A process whose output the test pushes and whose stdin it records. */
class FakeProcess implements ProcessStream {
  readonly written: Buffer[] = [];
  stdinClosed = false;
  closed = false;
  sizes: Array<[number, number]> = [];
  private queue: Array<ProcessOutput | undefined> = [];
  private wake?: () => void;
  constructor(private readonly code?: number) {}

  push(item: ProcessOutput | undefined): void {
    this.queue.push(item);
    this.wake?.();
  }

  readonly output: AsyncIterable<ProcessOutput> = {
    [Symbol.asyncIterator]: () => ({
      next: async (): Promise<IteratorResult<ProcessOutput>> => {
        while (this.queue.length === 0 && !this.closed) await new Promise<void>((r) => (this.wake = r));
        const item = this.closed ? undefined : this.queue.shift();
        return item ? { value: item, done: false } : { value: undefined, done: true };
      },
    }),
  };

  write(data: Buffer): Promise<void> {
    this.written.push(data);
    return Promise.resolve();
  }
  closeStdin(): void {
    this.stdinClosed = true;
  }
  resize(width: number, height: number): Promise<void> {
    this.sizes.push([width, height]);
    return Promise.resolve();
  }
  exitCode(): Promise<number | undefined> {
    return Promise.resolve(this.code);
  }
  running(): Promise<boolean> {
    return Promise.resolve(false);
  }
  close(): Promise<void> {
    this.closed = true;
    this.wake?.();
    return Promise.resolve();
  }
}

const settle = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('StreamSession', () => {
  it('sends output in frames within the window, ends with the exit code', async () => {
    const frames: PodStreamFrame[] = [];
    const sut = new StreamSession((f) => frames.push(decodeStreamFrame(f)), PARAMS);
    const process = new FakeProcess(3);
    const done = sut.run(process);
    process.push({ channel: 1, data: Buffer.from('abcdefghijklmnopqrstuvwxyz') });
    await settle();
    // 26 bytes in frames of 4: 7 frames, of which the window lets 4 go before an ack.
    assert.deepEqual(
      frames.map((f) => f.kind),
      ['start', 'stdout', 'stdout', 'stdout', 'stdout'],
    );
    sut.input({ kind: 'ack', seq: 4 });
    process.push({ channel: 2, data: Buffer.from('!') });
    process.push(undefined);
    const result = await done;
    assert.equal(result.outcome, 'completed');
    const data = frames.filter((f) => f.kind === 'stdout' || f.kind === 'stderr');
    assert.equal(Buffer.concat(data.map((f) => ('data' in f ? f.data : Buffer.alloc(0)))).toString(), 'abcdefghijklmnopqrstuvwxyz!');
    assert.deepEqual(
      data.map((f) => f.seq),
      [1, 2, 3, 4, 5, 6, 7, 8],
    );
    assert.equal(data.at(-1)?.kind, 'stderr');
    assert.deepEqual(JSON.parse(JSON.stringify(frames.at(-1))), { kind: 'end', seq: 8, body: { exitCode: 3 } });
    assert.ok(process.closed);
  });

  it('writes stdin in order, acks it, resizes, closes stdin after what came before', async () => {
    const frames: PodStreamFrame[] = [];
    const sut = new StreamSession((f) => frames.push(decodeStreamFrame(f)), PARAMS);
    const process = new FakeProcess(0);
    const done = sut.run(process);
    for (let seq = 1; seq <= 2; seq++) sut.input(decodeStreamFrame(encodeStreamFrame('stdin', seq, Buffer.from(`in${seq}`))));
    sut.input(decodeStreamFrame(encodeStreamFrame('resize', 0, { width: 80, height: 24 })));
    sut.input({ kind: 'stdinClose', seq: 2 });
    await settle();
    assert.deepEqual(
      process.written.map((b) => b.toString()),
      ['in1', 'in2'],
    );
    assert.ok(process.stdinClosed);
    assert.deepEqual(process.sizes, [[80, 24]]);
    // Half the window written: acked.
    assert.ok(frames.some((f) => f.kind === 'ack' && f.seq === 2));
    process.push(undefined);
    assert.equal((await done).outcome, 'completed');
  });

  it('stops and closes the process on cancel, and fails on a lost stdin frame', async () => {
    const sut = new StreamSession(() => undefined, PARAMS);
    const process = new FakeProcess();
    const done = sut.run(process);
    sut.input({ kind: 'cancel', seq: 0 });
    assert.equal((await done).outcome, 'cancelled');
    assert.ok(process.closed);

    const frames: PodStreamFrame[] = [];
    const lossy = new StreamSession((f) => frames.push(decodeStreamFrame(f)), PARAMS);
    const other = new FakeProcess();
    const running = lossy.run(other);
    lossy.input({ kind: 'stdin', seq: 2, data: Buffer.from('x') });
    const result = await running;
    assert.equal(result.outcome, 'failed');
    assert.match(result.error ?? '', /stdin frame 1 was lost/);
    assert.equal(frames.at(-1)?.kind, 'end');
    assert.ok(other.closed);
  });

  it('gives up on an API that went silent', async () => {
    let now = 0;
    const sut = new StreamSession(
      () => undefined,
      { ...PARAMS, keepAliveMs: 50, timeoutMs: 100 },
      () => now,
    );
    const process = new FakeProcess();
    const done = sut.run(process);
    now = 1_000;
    assert.equal((await done).outcome, 'timed out');
    assert.ok(process.closed);
  });
});
