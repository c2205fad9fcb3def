import { STREAMS, type AnyEnvelope } from '#contracts';

/** One message as a stream holds it: where it sits, when the server stored it, and its envelope. */
export interface RecordedMessage {
  stream: string;
  subject: string;
  /** Its sequence in its stream. */
  seq: number;
  /** When the server stored it, ms since the epoch (one clock for every stream). */
  storedMs: number;
  /** The parsed envelope; absent when the message is invalid. */
  envelope?: AnyEnvelope;
  /** Why the message failed validation (a consumer would have terminated it). */
  invalid?: string;
  /** The message's bytes as text, when the reader kept them (for an export). */
  raw?: string;
}

const STREAM_ORDER: string[] = [STREAMS.pods, STREAMS.assign, STREAMS.nodes, STREAMS.events];

/** Every stream's messages in one order: by store time, then by stream, then by sequence. */
export function compareRecorded(a: RecordedMessage, b: RecordedMessage): number {
  return a.storedMs - b.storedMs || STREAM_ORDER.indexOf(a.stream) - STREAM_ORDER.indexOf(b.stream) || a.seq - b.seq;
}

/** A point in the log: a sequence of the pods stream (a resourceVersion), or a time. */
export type LogPoint = { seq: number } | { timeMs: number };

/**
 * Whether `m` happened at or before `point`. A pods-stream sequence is a point in that
 * stream's order; other streams count up to the time that sequence was stored (`seqTimeMs`).
 */
export function isAtOrBefore(m: RecordedMessage, point: LogPoint, seqTimeMs?: number): boolean {
  if ('timeMs' in point) return m.storedMs <= point.timeMs;
  if (m.stream === STREAMS.pods) return m.seq <= point.seq;
  return m.storedMs <= (seqTimeMs ?? Number.POSITIVE_INFINITY);
}

/** The time a pods-stream sequence was stored, from the messages at hand (the nearest one before it if it is missing). */
export function seqTime(messages: RecordedMessage[], seq: number): number | undefined {
  let best: RecordedMessage | undefined;
  for (const m of messages) if (m.stream === STREAMS.pods && m.seq <= seq && (!best || m.seq > best.seq)) best = m;
  return best?.storedMs;
}

/** Cuts the log at `point`, keeping the merged order. */
export function upTo(messages: RecordedMessage[], point: LogPoint): RecordedMessage[] {
  const at = 'seq' in point ? seqTime(messages, point.seq) : undefined;
  return messages.filter((m) => isAtOrBefore(m, point, at));
}

/** Clock time as timelines print it: 12:02:50.123 (UTC). */
export function clock(ms: number): string {
  return new Date(ms).toISOString().slice(11, 23);
}
