import { Duplex } from 'node:stream';
import {
  dataFrame,
  decodeHeaderBlock,
  encodeHeaderBlock,
  GOAWAY_STATUS,
  goAwayFrame,
  MAX_FRAME_PAYLOAD,
  pingFrame,
  RST_STATUS,
  rstStreamFrame,
  SpdyFrameReader,
  SpdyProtocolError,
  synReplyFrame,
  type SpdyFrame,
} from './spdy-frames.js';
import { SpdyHeaderCodec } from './spdy-header-codec.js';

/** Largest DATA frame this side sends; kubectl's own frames are at most 32 KiB. */
const MAX_DATA_FRAME = 64 * 1024;

/**
 * One stream a client opened: its headers, a readable side (the client's DATA, ending at
 * its FIN) and a writable side (DATA to the client; `end()` sends FIN). The server answers
 * the stream with `reply()` or refuses it with `reset()`. Destroying a stream that is not
 * closed both ways resets it. `reset` is emitted when the client reset it.
 */
export class SpdyStream extends Duplex {
  private replied?: Promise<void>;
  private remoteFin = false;
  private localFin = false;
  /** The client reset the stream: nothing more is sent on it. */
  resetByPeer = false;

  constructor(
    private readonly session: SpdySession,
    readonly id: number,
    readonly headers: Readonly<Record<string, string>>,
  ) {
    super({ allowHalfOpen: true });
  }

  /** Accepts the stream (SYN_REPLY); data written before is sent after it. */
  reply(): void {
    this.replied ??= this.session.sendReply(this.id);
  }

  /** Refuses or abandons the stream (RST_STREAM) and destroys it. */
  reset(status: number = RST_STATUS.cancel): void {
    if (!this.resetByPeer && !(this.localFin && this.remoteFin) && !this.destroyed)
      void this.afterReply(() => this.session.sendFrame(rstStreamFrame(this.id, status)));
    this.localFin = this.remoteFin = true;
    this.destroy();
  }

  /** @internal DATA from the client. False when the reader has enough: the session stops reading until `_read`. */
  receive(data: Buffer, fin: boolean): boolean {
    if (this.remoteFin) return true;
    const more = data.length === 0 || this.push(Buffer.from(data));
    if (fin) {
      this.remoteFin = true;
      // push(null) answers false whatever the buffer holds: the end is no reason to stop reading.
      this.push(null);
    }
    return more;
  }

  /** @internal The client reset the stream. */
  peerReset(): void {
    this.resetByPeer = true;
    this.remoteFin = this.localFin = true;
    this.emit('reset');
    this.destroy();
  }

  override _read(): void {
    this.session.readable(this);
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    if (this.resetByPeer) {
      callback();
      return;
    }
    this.afterReply(async () => {
      for (let offset = 0; offset < chunk.length; offset += MAX_DATA_FRAME) {
        await this.session.sendFrame(dataFrame(this.id, chunk.subarray(offset, offset + MAX_DATA_FRAME), false));
      }
    }).then(() => callback(), callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    if (this.resetByPeer || this.localFin) {
      callback();
      return;
    }
    this.localFin = true;
    this.afterReply(() => this.session.sendFrame(dataFrame(this.id, Buffer.alloc(0), true))).then(() => callback(), callback);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (!this.resetByPeer && !(this.localFin && this.remoteFin)) {
      this.localFin = this.remoteFin = true;
      void this.afterReply(() => this.session.sendFrame(rstStreamFrame(this.id, RST_STATUS.cancel)));
    }
    this.session.forget(this);
    callback(error);
  }

  private async afterReply(send: () => Promise<void>): Promise<void> {
    await this.replied;
    await send();
  }
}

/** What a session tells its owner. */
export interface SpdySessionHandler {
  /** A client opened a stream: call `reply()` or `reset()` on it. */
  stream(stream: SpdyStream): void;
  /** The session is over (the client left, went away, or broke the protocol); every stream has been destroyed. */
  close(why: string): void;
}

/**
 * The server's side of a SPDY/3.1 session over a byte stream (an upgraded HTTP connection,
 * or a WebSocket tunnel), for Kubernetes' stream protocols: the client opens every stream,
 * the server replies, resets, answers pings, and sends data. Flow control is the byte
 * stream's own: SPDY's windows are not kept, as Go's spdystream (kubectl's framer) neither
 * sends nor obeys WINDOW_UPDATE. A stream whose reader is full pauses the whole connection
 * until it is read, so memory stays bounded.
 */
export class SpdySession {
  private readonly reader = new SpdyFrameReader();
  private readonly decompressor = SpdyHeaderCodec.decompressor();
  private readonly compressor = SpdyHeaderCodec.compressor();
  private readonly streams = new Map<number, SpdyStream>();
  private readonly full = new Set<SpdyStream>();
  private lastStreamId = 0;
  private queue: SpdyFrame[] = [];
  private working = false;
  private closed = false;

  constructor(
    private readonly socket: Duplex,
    private readonly handler: SpdySessionHandler,
  ) {
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.once('end', () => this.close('the client closed the connection'));
    socket.once('close', () => this.close('the connection closed'));
    socket.on('error', (error: Error) => this.close(`connection error: ${error.message}`));
  }

  /** Streams open now. */
  get openStreams(): number {
    return this.streams.size;
  }

  /** Ends the session: GOAWAY, every stream destroyed, the connection closed. */
  close(why: string, status: number = GOAWAY_STATUS.ok): void {
    if (this.closed) return;
    this.closed = true;
    if (this.socket.writable) this.socket.write(goAwayFrame(this.lastStreamId, status));
    for (const stream of [...this.streams.values()]) stream.destroy();
    this.socket.end();
    this.socket.destroy();
    this.decompressor.close();
    this.compressor.close();
    this.handler.close(why);
  }

  /** @internal Writes a frame; resolves once the connection has taken it. */
  sendFrame(frame: Buffer): Promise<void> {
    if (this.closed || this.socket.destroyed) return Promise.resolve();
    return new Promise((resolve) => {
      // A connection that fails closes the session; the writer need not hear about it.
      this.socket.write(frame, () => resolve());
    });
  }

  /** @internal A SYN_REPLY with no headers (what the kubelet's server sends). */
  async sendReply(streamId: number): Promise<void> {
    const block = await this.compressor.transform(encodeHeaderBlock({})).catch(() => undefined);
    if (block) await this.sendFrame(synReplyFrame(streamId, block));
  }

  /** @internal A stream that was full has been read from. */
  readable(stream: SpdyStream): void {
    if (this.full.delete(stream) && this.full.size === 0) this.socket.resume();
  }

  /** @internal A stream is over. */
  forget(stream: SpdyStream): void {
    this.streams.delete(stream.id);
    this.readable(stream);
  }

  private onData(chunk: Buffer): void {
    if (this.closed) return;
    try {
      // Data frames are views of the chunk; a stream's reader gets its own copy.
      this.queue.push(...this.reader.push(chunk));
    } catch (error) {
      this.close((error as Error).message, GOAWAY_STATUS.protocolError);
      return;
    }
    void this.work();
  }

  /** Handles frames in order; a SYN_STREAM's headers are decompressed before anything after it is handled. */
  private async work(): Promise<void> {
    if (this.working) return;
    this.working = true;
    try {
      while (!this.closed && this.queue.length > 0) {
        const frame = this.queue.shift() as SpdyFrame;
        if (frame.type === 'synStream') await this.open(frame);
        // Ignored, but their blocks are part of the one zlib stream of the client's headers.
        else if (frame.type === 'synReply' || frame.type === 'headers') await this.decompressor.transform(frame.headerBlock);
        else this.handle(frame);
      }
    } catch (error) {
      this.close((error as Error).message, error instanceof SpdyProtocolError ? GOAWAY_STATUS.protocolError : GOAWAY_STATUS.internalError);
    } finally {
      this.working = false;
    }
  }

  private async open(frame: Extract<SpdyFrame, { type: 'synStream' }>): Promise<void> {
    // Decompressed even for a stream refused below: the zlib stream spans every header block.
    const headers = decodeHeaderBlock(await this.decompressor.transform(frame.headerBlock));
    if (this.closed) return;
    if (frame.streamId % 2 === 0 || frame.streamId <= this.lastStreamId) {
      void this.sendFrame(rstStreamFrame(frame.streamId, RST_STATUS.protocolError));
      return;
    }
    this.lastStreamId = frame.streamId;
    const stream = new SpdyStream(this, frame.streamId, headers);
    this.streams.set(stream.id, stream);
    if (frame.fin) stream.receive(Buffer.alloc(0), true);
    this.handler.stream(stream);
  }

  private handle(frame: Exclude<SpdyFrame, { type: 'synStream' | 'synReply' | 'headers' }>): void {
    switch (frame.type) {
      case 'data': {
        const stream = this.streams.get(frame.streamId);
        if (!stream) {
          if (frame.streamId > this.lastStreamId) void this.sendFrame(rstStreamFrame(frame.streamId, RST_STATUS.invalidStream));
          return;
        }
        if (frame.data.length > MAX_FRAME_PAYLOAD) return;
        if (!stream.receive(frame.data, frame.fin) && !this.full.has(stream)) {
          this.full.add(stream);
          this.socket.pause();
        }
        return;
      }
      case 'rstStream':
        this.streams.get(frame.streamId)?.peerReset();
        return;
      case 'ping':
        // Odd ids are the client's pings: echoed. Even ones would answer ours; this side sends none.
        if (frame.id % 2 === 1) void this.sendFrame(pingFrame(frame.id));
        return;
      case 'goAway':
        this.close('the client went away');
        return;
      case 'windowUpdate':
      case 'settings':
      case 'unknown':
        return;
    }
  }
}
