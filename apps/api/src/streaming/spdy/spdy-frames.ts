/**
 * SPDY/3.1 framing (draft-mbelshe-httpbis-spdy-00 and the 3.1 changes), as much as a
 * server of Kubernetes' stream protocols needs: kubectl's port-forward dials SPDY/3.1 (plain,
 * or tunnelled in a WebSocket) with the framer of Go's spdystream. Frames are read from any
 * byte stream in pieces, whatever the pieces' boundaries.
 */

/** Control frame types. */
export const SPDY_TYPE = {
  synStream: 1,
  synReply: 2,
  rstStream: 3,
  settings: 4,
  ping: 6,
  goAway: 7,
  headers: 8,
  windowUpdate: 9,
} as const;

/** RST_STREAM status codes. */
export const RST_STATUS = {
  protocolError: 1,
  invalidStream: 2,
  refusedStream: 3,
  cancel: 5,
  internalError: 6,
  streamInUse: 8,
  streamAlreadyClosed: 9,
} as const;

/** GOAWAY status codes. */
export const GOAWAY_STATUS = { ok: 0, protocolError: 1, internalError: 2 } as const;

const FLAG_FIN = 0x01;
const FLAG_UNIDIRECTIONAL = 0x02;
const VERSION = 3;
const HEADER_BYTES = 8;
/** A frame's length field has 24 bits. */
export const MAX_FRAME_PAYLOAD = 0xff_ffff;

export type SpdyFrame =
  | { type: 'data'; streamId: number; fin: boolean; data: Buffer }
  | { type: 'synStream'; streamId: number; associatedId: number; priority: number; fin: boolean; unidirectional: boolean; headerBlock: Buffer }
  | { type: 'synReply'; streamId: number; fin: boolean; headerBlock: Buffer }
  | { type: 'headers'; streamId: number; fin: boolean; headerBlock: Buffer }
  | { type: 'rstStream'; streamId: number; status: number }
  | { type: 'ping'; id: number }
  | { type: 'goAway'; lastGoodStreamId: number; status: number }
  | { type: 'windowUpdate'; streamId: number; delta: number }
  | { type: 'settings' }
  | { type: 'unknown'; frameType: number };

/** What breaks the framing itself: the session cannot go on after it. */
export class SpdyProtocolError extends Error {
  override readonly name = 'SpdyProtocolError';
}

/**
 * Reads frames out of a byte stream fed in arbitrary pieces. `push` returns the frames that
 * are complete; a frame's data is a view of the bytes pushed, valid until the next push.
 */
export class SpdyFrameReader {
  private buffer: Buffer = Buffer.alloc(0);

  constructor(private readonly maxPayload = MAX_FRAME_PAYLOAD) {}

  push(chunk: Buffer): SpdyFrame[] {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    const frames: SpdyFrame[] = [];
    while (this.buffer.length >= HEADER_BYTES) {
      const length = this.buffer.readUIntBE(5, 3);
      if (length > this.maxPayload) throw new SpdyProtocolError(`frame of ${length} bytes exceeds the limit of ${this.maxPayload}`);
      if (this.buffer.length < HEADER_BYTES + length) break;
      frames.push(parseFrame(this.buffer.subarray(0, HEADER_BYTES + length)));
      this.buffer = this.buffer.subarray(HEADER_BYTES + length);
    }
    return frames;
  }
}

function need(payload: Buffer, bytes: number, what: string): void {
  if (payload.length < bytes) throw new SpdyProtocolError(`${what} frame of ${payload.length} bytes is too short`);
}

function parseFrame(frame: Buffer): SpdyFrame {
  const flags = frame.readUInt8(4);
  const payload = frame.subarray(HEADER_BYTES);
  const fin = (flags & FLAG_FIN) !== 0;
  if ((frame.readUInt8(0) & 0x80) === 0) return { type: 'data', streamId: frame.readUInt32BE(0) & 0x7fff_ffff, fin, data: payload };
  const version = frame.readUInt16BE(0) & 0x7fff;
  if (version !== VERSION) throw new SpdyProtocolError(`SPDY version ${version} is not served (only ${VERSION})`);
  const type = frame.readUInt16BE(2);
  const streamId = (): number => payload.readUInt32BE(0) & 0x7fff_ffff;
  switch (type) {
    case SPDY_TYPE.synStream:
      need(payload, 10, 'SYN_STREAM');
      return {
        type: 'synStream',
        streamId: streamId(),
        associatedId: payload.readUInt32BE(4) & 0x7fff_ffff,
        priority: payload.readUInt8(8) >> 5,
        fin,
        unidirectional: (flags & FLAG_UNIDIRECTIONAL) !== 0,
        headerBlock: payload.subarray(10),
      };
    case SPDY_TYPE.synReply:
    case SPDY_TYPE.headers:
      need(payload, 4, type === SPDY_TYPE.synReply ? 'SYN_REPLY' : 'HEADERS');
      return type === SPDY_TYPE.synReply
        ? { type: 'synReply', streamId: streamId(), fin, headerBlock: payload.subarray(4) }
        : { type: 'headers', streamId: streamId(), fin, headerBlock: payload.subarray(4) };
    case SPDY_TYPE.rstStream:
      need(payload, 8, 'RST_STREAM');
      return { type: 'rstStream', streamId: streamId(), status: payload.readUInt32BE(4) };
    case SPDY_TYPE.ping:
      need(payload, 4, 'PING');
      return { type: 'ping', id: payload.readUInt32BE(0) };
    case SPDY_TYPE.goAway:
      need(payload, 8, 'GOAWAY');
      return { type: 'goAway', lastGoodStreamId: streamId(), status: payload.readUInt32BE(4) };
    case SPDY_TYPE.windowUpdate:
      need(payload, 8, 'WINDOW_UPDATE');
      return { type: 'windowUpdate', streamId: streamId(), delta: payload.readUInt32BE(4) & 0x7fff_ffff };
    case SPDY_TYPE.settings:
      return { type: 'settings' };
    default:
      // SPDY says to ignore control frames of unknown types.
      return { type: 'unknown', frameType: type };
  }
}

function controlFrame(type: number, flags: number, payload: Buffer): Buffer {
  const frame = Buffer.allocUnsafe(HEADER_BYTES + payload.length);
  frame.writeUInt16BE(0x8000 | VERSION, 0);
  frame.writeUInt16BE(type, 2);
  frame.writeUInt8(flags, 4);
  frame.writeUIntBE(payload.length, 5, 3);
  payload.copy(frame, HEADER_BYTES);
  return frame;
}

/** A DATA frame; `data` at most MAX_FRAME_PAYLOAD bytes. */
export function dataFrame(streamId: number, data: Buffer, fin: boolean): Buffer {
  const frame = Buffer.allocUnsafe(HEADER_BYTES + data.length);
  frame.writeUInt32BE(streamId & 0x7fff_ffff, 0);
  frame.writeUInt8(fin ? FLAG_FIN : 0, 4);
  frame.writeUIntBE(data.length, 5, 3);
  data.copy(frame, HEADER_BYTES);
  return frame;
}

/** A SYN_REPLY carrying an already compressed header block. */
export function synReplyFrame(streamId: number, compressedHeaders: Buffer, fin = false): Buffer {
  const id = Buffer.allocUnsafe(4);
  id.writeUInt32BE(streamId & 0x7fff_ffff, 0);
  return controlFrame(SPDY_TYPE.synReply, fin ? FLAG_FIN : 0, Buffer.concat([id, compressedHeaders]));
}

/** A SYN_STREAM carrying an already compressed header block (what a client sends; for tests). */
export function synStreamFrame(streamId: number, compressedHeaders: Buffer, fin = false): Buffer {
  const head = Buffer.alloc(10);
  head.writeUInt32BE(streamId & 0x7fff_ffff, 0);
  return controlFrame(SPDY_TYPE.synStream, fin ? FLAG_FIN : 0, Buffer.concat([head, compressedHeaders]));
}

export function rstStreamFrame(streamId: number, status: number): Buffer {
  const payload = Buffer.allocUnsafe(8);
  payload.writeUInt32BE(streamId & 0x7fff_ffff, 0);
  payload.writeUInt32BE(status, 4);
  return controlFrame(SPDY_TYPE.rstStream, 0, payload);
}

export function pingFrame(id: number): Buffer {
  const payload = Buffer.allocUnsafe(4);
  payload.writeUInt32BE(id, 0);
  return controlFrame(SPDY_TYPE.ping, 0, payload);
}

export function goAwayFrame(lastGoodStreamId: number, status: number): Buffer {
  const payload = Buffer.allocUnsafe(8);
  payload.writeUInt32BE(lastGoodStreamId & 0x7fff_ffff, 0);
  payload.writeUInt32BE(status, 4);
  return controlFrame(SPDY_TYPE.goAway, 0, payload);
}

/** An uncompressed SPDY/3 name/value header block: a count, then length-prefixed names and values (names lower case). */
export function encodeHeaderBlock(headers: Record<string, string>): Buffer {
  const parts: Buffer[] = [];
  const u32 = (n: number): Buffer => {
    const b = Buffer.allocUnsafe(4);
    b.writeUInt32BE(n, 0);
    return b;
  };
  const entries = Object.entries(headers);
  parts.push(u32(entries.length));
  for (const [name, value] of entries) {
    const n = Buffer.from(name.toLowerCase(), 'utf8');
    const v = Buffer.from(value, 'utf8');
    parts.push(u32(n.length), n, u32(v.length), v);
  }
  return Buffer.concat(parts);
}

/** Reads an uncompressed header block; several values of one name (NUL-separated) are joined with ", ". */
export function decodeHeaderBlock(block: Buffer): Record<string, string> {
  const headers: Record<string, string> = {};
  let offset = 0;
  const u32 = (): number => {
    if (offset + 4 > block.length) throw new SpdyProtocolError('header block ends early');
    const n = block.readUInt32BE(offset);
    offset += 4;
    return n;
  };
  const text = (length: number): string => {
    if (offset + length > block.length) throw new SpdyProtocolError('header block ends early');
    const s = block.toString('utf8', offset, offset + length);
    offset += length;
    return s;
  };
  const count = u32();
  for (let i = 0; i < count; i++) {
    const name = text(u32()).toLowerCase();
    const value = text(u32()).split('\0').join(', ');
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  return headers;
}
