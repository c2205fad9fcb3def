import assert from 'node:assert/strict';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { describe, it } from 'node:test';
import { dataFrame, decodeHeaderBlock, encodeHeaderBlock, pingFrame, rstStreamFrame, SpdyFrameReader, synStreamFrame, type SpdyFrame } from './spdy-frames.js';
import { SPDY3_DICTIONARY, SpdyHeaderCodec } from './spdy-header-codec.js';
import { SpdySession, type SpdyStream } from './spdy-session.js';

/** What kubectl 1.32 sends first on a port-forward connection: SYN_STREAM 1 (the error stream of request 0, port 80), then PING 1. */
const KUBECTL_FIRST_BYTES = Buffer.from(
  '800300010000003d0000000100000000000078f9e3c6a7c202253a703a2b294a4dcc851625aca9a0808614cb45a024cc6461c0c0c0c0590489c44c50e2663400000000ffff800300060000000400000001',
  'hex',
);

function adler32(bytes: Buffer): number {
  let a = 1;
  let b = 0;
  for (const byte of bytes) {
    a = (a + byte) % 65521;
    b = (b + a) % 65521;
  }
  return ((b << 16) | a) >>> 0;
}

/** Two ends of a loopback TCP connection. */
async function socketPair(): Promise<[Socket, Socket]> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const accepted = new Promise<Socket>((resolve) => server.once('connection', resolve));
  const client = connect((server.address() as AddressInfo).port, '127.0.0.1');
  const serverSide = await accepted;
  server.close();
  client.on('error', () => undefined);
  return [serverSide, client];
}

/** A SPDY client as kubectl's framer would act, for driving the session. */
class Client {
  readonly frames: SpdyFrame[] = [];
  private readonly reader = new SpdyFrameReader();
  private readonly compressor = SpdyHeaderCodec.compressor();
  private readonly decompressor = SpdyHeaderCodec.decompressor();
  private waiters: Array<() => void> = [];

  constructor(readonly socket: Duplex) {
    socket.on('data', (chunk: Buffer) => {
      for (const frame of this.reader.push(chunk)) {
        // Copies: a frame is a view of the chunk.
        this.frames.push('data' in frame ? { ...frame, data: Buffer.from(frame.data) } : frame);
      }
      for (const wake of this.waiters.splice(0)) wake();
    });
  }

  async open(id: number, headers: Record<string, string>): Promise<void> {
    this.socket.write(synStreamFrame(id, await this.compressor.transform(encodeHeaderBlock(headers))));
  }

  /** Waits for the frames that arrive until `find` is satisfied, or fails after 10 s with what did arrive. */
  async until<T>(what: string, find: () => T | undefined): Promise<T> {
    const deadline = Date.now() + 10_000;
    for (let found = find(); ; found = find()) {
      if (found !== undefined) return found;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no ${what}: ${JSON.stringify(this.frames.map((f) => f.type))}`);
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        timer = setTimeout(resolve, left);
      });
      clearTimeout(timer);
    }
  }

  async replyHeaders(id: number): Promise<Record<string, string>> {
    const reply = await this.until(`SYN_REPLY ${id}`, () => this.frames.find((f) => f.type === 'synReply' && f.streamId === id));
    return decodeHeaderBlock(await this.decompressor.transform((reply as Extract<SpdyFrame, { type: 'synReply' }>).headerBlock));
  }

  dataOf(id: number): { bytes: Buffer; fin: boolean } {
    const frames = this.frames.filter((f): f is Extract<SpdyFrame, { type: 'data' }> => f.type === 'data' && f.streamId === id);
    return { bytes: Buffer.concat(frames.map((f) => f.data)), fin: frames.some((f) => f.fin) };
  }
}

describe('SPDY/3.1 server session', () => {
  it('has the SPDY/3 header dictionary', () => {
    assert.equal(SPDY3_DICTIONARY.length, 1423);
    // The dictionary id in the zlib header of every block kubectl compresses.
    assert.equal(adler32(SPDY3_DICTIONARY), KUBECTL_FIRST_BYTES.readUInt32BE(20));
  });

  it('reads the frames kubectl sends, in pieces of any size', async () => {
    const reader = new SpdyFrameReader();
    const frames = [...KUBECTL_FIRST_BYTES].flatMap((byte) => reader.push(Buffer.of(byte)));
    assert.deepEqual(
      frames.map((f) => f.type),
      ['synStream', 'ping'],
    );
    const syn = frames[0] as Extract<SpdyFrame, { type: 'synStream' }>;
    assert.equal(syn.streamId, 1);
    const headers = decodeHeaderBlock(await SpdyHeaderCodec.decompressor().transform(syn.headerBlock));
    assert.deepEqual(headers, { port: '80', requestid: '0', streamtype: 'error' });
  });

  it('answers the first stream kubectl opens, and its ping', async () => {
    const [serverSide, clientSide] = await socketPair();
    const opened: SpdyStream[] = [];
    const sut = new SpdySession(serverSide, { stream: (s) => (opened.push(s), s.reply()), close: () => undefined });
    const client = new Client(clientSide);
    clientSide.write(KUBECTL_FIRST_BYTES);
    await client.replyHeaders(1);
    await client.until('PING echo', () => client.frames.find((f) => f.type === 'ping' && f.id === 1));
    assert.deepEqual(opened[0]?.headers, { port: '80', requestid: '0', streamtype: 'error' });
    sut.close('done');
  });

  it('hands streams over with their headers, replies, relays data both ways with FIN, and echoes pings', async () => {
    const [serverSide, clientSide] = await socketPair();
    const opened: SpdyStream[] = [];
    let sessionClosed: (why: string) => void = () => undefined;
    const closed = new Promise<string>((resolve) => (sessionClosed = resolve));
    const sut = new SpdySession(serverSide, {
      stream: (stream) => {
        opened.push(stream);
        stream.reply();
      },
      close: (why) => sessionClosed(why),
    });
    const client = new Client(clientSide);
    await client.open(1, { port: '80', requestid: '0', streamtype: 'error' });
    assert.deepEqual(await client.replyHeaders(1), {});
    clientSide.write(pingFrame(1));
    await client.until('PING echo', () => client.frames.find((f) => f.type === 'ping' && f.id === 1));
    assert.deepEqual(opened[0]?.headers, { port: '80', requestid: '0', streamtype: 'error' });

    await client.open(3, { port: '80', requestid: '0', streamtype: 'data' });
    await client.replyHeaders(3);
    const data = opened[1];
    assert.ok(data);
    const received: Buffer[] = [];
    data.on('data', (chunk: Buffer) => received.push(chunk));
    const ended = new Promise((resolve) => data.once('end', resolve));
    clientSide.write(dataFrame(3, Buffer.from('hello '), false));
    clientSide.write(dataFrame(3, Buffer.from('world'), true));
    await ended;
    assert.equal(Buffer.concat(received).toString(), 'hello world');
    assert.ok(!serverSide.isPaused(), 'a stream at its end does not hold the connection');

    const big = Buffer.alloc(200 * 1024, 7);
    data.end(big);
    await client.until('FIN on stream 3', () => (client.dataOf(3).fin ? true : undefined));
    assert.ok(client.dataOf(3).bytes.equals(big));
    assert.equal(sut.openStreams, 1, 'stream 3 is closed both ways; stream 1 is open');

    clientSide.write(pingFrame(2));
    clientSide.end();
    await closed;
    assert.ok(!client.frames.some((f) => f.type === 'ping' && f.id === 2), 'even pings are answers, not echoed');
    assert.ok(opened[0]?.destroyed);
  });

  it('resets a stream the client reset, refuses bad stream ids, and goes away on a broken frame', async () => {
    const [serverSide, clientSide] = await socketPair();
    const opened: SpdyStream[] = [];
    const closed: string[] = [];
    const sut = new SpdySession(serverSide, { stream: (s) => (opened.push(s), s.reply()), close: (why) => closed.push(why) });
    const client = new Client(clientSide);
    await client.open(1, { streamtype: 'data', port: '1' });
    await client.replyHeaders(1);
    const reset = new Promise((resolve) => opened[0]?.once('reset', resolve));
    clientSide.write(rstStreamFrame(1, 5));
    await reset;
    assert.equal(sut.openStreams, 0);

    await client.open(4, { port: '1' });
    await client.until('RST of an even stream id', () => client.frames.find((f) => f.type === 'rstStream' && f.streamId === 4));
    assert.equal(opened.length, 1);

    // A control frame of SPDY version 2.
    clientSide.write(Buffer.from('8002000600000004000000ff', 'hex'));
    await client.until('GOAWAY', () => client.frames.find((f) => f.type === 'goAway'));
    assert.match(closed[0] ?? '', /SPDY version 2 is not served/);
  });

  it('stops reading the connection while a stream reader is full, and resumes when it is read', async () => {
    const [serverSide, clientSide] = await socketPair();
    const opened: SpdyStream[] = [];
    new SpdySession(serverSide, { stream: (s) => (opened.push(s), s.reply()), close: () => undefined });
    const client = new Client(clientSide);
    await client.open(1, { streamtype: 'data', port: '1' });
    await client.replyHeaders(1);
    const stream = opened[0];
    assert.ok(stream);
    const chunk = Buffer.alloc(32 * 1024, 1);
    for (let i = 0; i < 8; i++) clientSide.write(dataFrame(1, chunk, false));
    await client.until('the reader to fill', () => (stream.readableLength >= stream.readableHighWaterMark ? true : undefined));
    assert.ok(serverSide.isPaused(), 'the connection is paused');
    let read = 0;
    stream.on('data', (c: Buffer) => (read += c.length));
    await client.until('every byte read', () => (read === 8 * chunk.length ? true : undefined));
    assert.ok(!serverSide.isPaused());
    clientSide.destroy();
  });
});
