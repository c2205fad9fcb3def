import { clock, type TimelineEntry } from '#domain/history';
import { renderTable } from '../table.js';

/** `JETLET_PODS` → `pods`. */
export const shortStream = (stream: string): string => stream.replace(/^JETLET_/, '').toLowerCase();

/** The timeline as a table: where each message sits, when, who wrote it, and what it says, causes above their effects. */
export function timelineText(entries: TimelineEntry[]): string {
  return renderTable(
    ['SEQ', 'TIME', 'SOURCE', 'TYPE', 'SUMMARY'],
    entries.map((e) => [
      e.message ? `${shortStream(e.message.stream)}/${e.message.seq}` : '-',
      clock(e.atMs),
      `${e.component}${e.node ? `/${e.node}` : ''}`,
      e.kind === 'message' ? e.type : `!! ${e.type}`,
      `${e.depth > 0 ? `${'   '.repeat(e.depth - 1)}└─ ` : ''}${e.summary}`,
    ]),
  );
}

/** The timeline's messages as JSON lines of envelopes with their place in the streams. */
export function timelineJson(entries: TimelineEntry[]): string {
  return JSON.stringify(
    entries.map((e) => ({
      ...(e.message ? { stream: e.message.stream, subject: e.message.subject, seq: e.message.seq } : {}),
      time: new Date(e.atMs).toISOString(),
      kind: e.kind,
      depth: e.depth,
      summary: e.summary,
      ...(e.count ? { count: e.count } : {}),
      ...(e.message?.envelope ? { envelope: e.message.envelope } : {}),
      ...(e.message?.invalid ? { invalid: e.message.invalid } : {}),
    })),
    null,
    2,
  );
}
