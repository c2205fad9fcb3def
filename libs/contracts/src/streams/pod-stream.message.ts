import { ArrayMaxSize, ArrayMinSize, Equals, IsBoolean, IsIn, IsInt, IsOptional, IsString, IsUUID, Matches, Max, MaxLength, Min } from '../class-validator.js';
import { DNS1123_LABEL, DNS1123_SUBDOMAIN } from '../pod/object-meta.model.js';
import { parseContract } from '../validation.js';

/**
 * The byte-stream protocol between the API and a node's agent, on core NATS (nothing is
 * stored), for `pods/exec`, `pods/attach` and `pods/portforward`. It is the log protocol
 * (LOG_STREAM) with a window in each direction and binary frames:
 *
 * 1. The API subscribes to a fresh inbox and publishes a PodStreamRequest (JSON) on
 *    `SUBJECTS.streamRequests(node)` with that inbox as the reply subject.
 * 2. The agent answers on the inbox with frames (see `encodeStreamFrame`): `start` or
 *    `error`, then numbered `stdout`/`stderr` data, `ack`s of the input it has written,
 *    `heartbeat`s while quiet, and last `end` (the exit code, or why it broke off).
 * 3. The API sends frames on `SUBJECTS.streamInput(node, streamId)`: numbered `stdin` data,
 *    `stdin-close`, `resize`, `ack`s of the output its client has taken, `heartbeat`s, and
 *    `cancel` when its client goes away.
 *
 * Each side sends at most `windowFrames` data frames beyond the other's last ack, so a slow
 * reader slows the writer (the container's output, the client's upload) instead of filling
 * memory. Each side ends the stream when it has heard nothing for `timeoutMs`.
 */
export const POD_STREAM = {
  /** Data frames a side may send beyond the other's last ack. */
  windowFrames: 32,
  /** Largest data payload of one frame, in bytes (NATS' payload limit is 1 MiB). */
  frameBytes: 64 * 1024,
  /** How often each side speaks while it has nothing else to say. */
  keepAliveMs: 5_000,
  /** Silence after which a side gives the stream up. */
  timeoutMs: 15_000,
  /** How long the API waits for the agent's first answer. */
  answerTimeoutMs: 10_000,
} as const;

export const POD_STREAM_KINDS = ['exec', 'attach', 'portforward'] as const;
export type PodStreamKind = (typeof POD_STREAM_KINDS)[number];

/**
 * Opens one stream. Writer: the API, to the agent of the pod's node; the reply subject of
 * the NATS message is where the agent sends its frames.
 */
export class PodStreamRequest {
  @Equals(1, { message: 'version must be 1' })
  version: 1;

  /** Names this stream in every frame about it, both ways. */
  @IsUUID()
  streamId: string;

  /** What to connect to: a new process (exec), the container's main process (attach), or a TCP port of the pod (portforward). */
  @IsIn(POD_STREAM_KINDS)
  kind: PodStreamKind;

  @Matches(DNS1123_LABEL, { message: 'namespace must be an RFC 1123 label' })
  namespace: string;

  @Matches(DNS1123_SUBDOMAIN, { message: 'name must be an RFC 1123 subdomain' })
  name: string;

  /** The pod incarnation the API means; a pod of the same name with another uid is not it. */
  @IsUUID()
  uid: string;

  /** The container (exec, attach); the API has resolved the default. */
  @IsOptional()
  @Matches(DNS1123_LABEL, { message: 'must be a container name (an RFC 1123 label)' })
  container?: string;

  /** exec: the command and its arguments, run without a shell. */
  @IsOptional()
  @ArrayMinSize(1)
  @ArrayMaxSize(1024)
  @IsString({ each: true })
  @MaxLength(128 * 1024, { each: true })
  command?: string[];

  /** exec, attach: which standard streams the client takes part in. */
  @IsOptional()
  @IsBoolean()
  stdin?: boolean;

  @IsOptional()
  @IsBoolean()
  stdout?: boolean;

  @IsOptional()
  @IsBoolean()
  stderr?: boolean;

  /** exec, attach: a pseudo-terminal (stdout and stderr come as one stream, on stdout). */
  @IsOptional()
  @IsBoolean()
  tty?: boolean;

  /** portforward: the pod's TCP port. */
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(65535)
  port?: number;
}

/** Why a stream could not open or broke off, as the HTTP answer or Status the API turns it into. */
export class PodStreamFailure {
  /** HTTP status: 400 for what cannot be served, 404 for an unknown pod, 500 for runtime failures. */
  @IsInt()
  code: number;

  /** Kubernetes Status reason: BadRequest, NotFound, InternalError. */
  @IsString()
  reason: string;

  @IsString()
  message: string;
}

/** The body of an `end` frame. */
export class PodStreamEnd {
  /** exec: the process's exit code, when it ran to its end. */
  @IsOptional()
  @IsInt()
  exitCode?: number;

  /** Why the stream broke off, if it did. */
  @IsOptional()
  @IsInt()
  code?: number;

  @IsOptional()
  @IsString()
  reason?: string;

  @IsOptional()
  @IsString()
  message?: string;
}

/** The body of a `resize` frame: the client's terminal size, in character cells. */
export class TerminalSize {
  @IsInt()
  @Min(0)
  @Max(65535)
  width: number;

  @IsInt()
  @Min(0)
  @Max(65535)
  height: number;
}

/**
 * Frame kinds. The data kinds have the numbers of Kubernetes' remote command channels
 * (0 stdin, 1 stdout, 2 stderr), so a data frame maps onto a WebSocket message one to one.
 */
export const FRAME = {
  stdin: 0,
  stdout: 1,
  stderr: 2,
  start: 16,
  error: 17,
  end: 18,
  ack: 32,
  heartbeat: 33,
  cancel: 34,
  stdinClose: 35,
  resize: 36,
} as const;

export type FrameKind = keyof typeof FRAME;
const KIND_OF_CODE = new Map<number, FrameKind>(Object.entries(FRAME).map(([kind, code]) => [code, kind as FrameKind]));

/** Frames with a JSON body, and the contract it must meet. */
const BODY_OF: Partial<Record<FrameKind, new () => object>> = { error: PodStreamFailure, end: PodStreamEnd, resize: TerminalSize };

/** A frame as read: `seq` numbers data frames from 1; on the other kinds it is a count (ack: frames taken; end: the last data frame sent). */
export type PodStreamFrame =
  | { kind: 'stdin' | 'stdout' | 'stderr'; seq: number; data: Buffer }
  | { kind: 'error'; seq: number; body: PodStreamFailure }
  | { kind: 'end'; seq: number; body: PodStreamEnd }
  | { kind: 'resize'; seq: number; body: TerminalSize }
  | { kind: 'start' | 'ack' | 'heartbeat' | 'cancel' | 'stdinClose'; seq: number };

const HEADER_BYTES = 5;

/** A frame on the wire: one byte of kind, the sequence as uint32 big-endian, then the payload (data bytes, or a JSON body). */
export function encodeStreamFrame(kind: FrameKind, seq: number, payload?: Buffer | object): Buffer {
  const body = payload === undefined ? Buffer.alloc(0) : Buffer.isBuffer(payload) ? payload : Buffer.from(JSON.stringify(payload));
  const frame = Buffer.allocUnsafe(HEADER_BYTES + body.length);
  frame.writeUInt8(FRAME[kind], 0);
  frame.writeUInt32BE(seq, 1);
  body.copy(frame, HEADER_BYTES);
  return frame;
}

/** A frame that is not one: unknown kind, too short, or a body that breaks its contract. */
export class StreamFrameError extends Error {
  override readonly name = 'StreamFrameError';
}

/** Reads one frame, validating its JSON body; throws StreamFrameError. The data of a data frame is a view of `bytes`. */
export function decodeStreamFrame(bytes: Uint8Array): PodStreamFrame {
  if (bytes.length < HEADER_BYTES) throw new StreamFrameError(`stream frame of ${bytes.length} bytes is shorter than its header`);
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  const kind = KIND_OF_CODE.get(buffer.readUInt8(0));
  if (kind === undefined) throw new StreamFrameError(`unknown stream frame kind ${buffer.readUInt8(0)}`);
  const seq = buffer.readUInt32BE(1);
  const payload = buffer.subarray(HEADER_BYTES);
  if (kind === 'stdin' || kind === 'stdout' || kind === 'stderr') return { kind, seq, data: payload };
  const contract = BODY_OF[kind];
  if (contract === undefined) return { kind, seq } as PodStreamFrame;
  let plain: unknown;
  try {
    plain = JSON.parse(payload.toString('utf8'));
  } catch {
    throw new StreamFrameError(`${kind} frame body is not JSON`);
  }
  try {
    return { kind, seq, body: parseContract(contract, plain, `${kind} frame`) } as PodStreamFrame;
  } catch (error) {
    throw new StreamFrameError((error as Error).message, { cause: error });
  }
}
