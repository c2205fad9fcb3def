import type { MessageType } from '../message-map.js';
import { STREAM_DEFINITIONS, type StreamKey } from '../subjects.js';
import { CORE_ROUTES, subjectMatches, WRITE_ROUTES, type Writer } from '../writers.js';

/** A markdown table with its columns padded as prettier pads them. */
export function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(3, h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string => `| ${widths.map((w, i) => (cells[i] ?? '').padEnd(w)).join(' | ')} |`;
  return [line(header), `| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`, ...rows.map(line)].join('\n');
}

const code = (text: string): string => `\`${text}\``;

/** What a stream keeps, in words. */
function limits(key: StreamKey): string {
  const { maxMsgsPerSubject, maxAgeSeconds } = STREAM_DEFINITIONS[key];
  const parts: string[] = [];
  if (maxMsgsPerSubject === 1) parts.push('newest per subject');
  else if (maxMsgsPerSubject > 0) parts.push(`${maxMsgsPerSubject} per subject`);
  if (maxAgeSeconds > 0) parts.push(maxAgeSeconds % 86_400 === 0 ? `${maxAgeSeconds / 86_400} days` : `${maxAgeSeconds} s`);
  return parts.length > 0 ? parts.join(', ') : 'no limit';
}

/** One writer's routes grouped by subject, in the order WRITE_ROUTES declares them. */
function routesBySubject(): Array<{ subject: string; writer: Writer; types: MessageType[] }> {
  const rows: Array<{ subject: string; writer: Writer; types: MessageType[] }> = [];
  for (const [type, routes] of Object.entries(WRITE_ROUTES) as Array<[MessageType, (typeof WRITE_ROUTES)[MessageType]]>) {
    for (const { subject, writer } of routes) {
      const row = rows.find((r) => r.subject === subject && r.writer === writer);
      if (row) row.types.push(type);
      else rows.push({ subject, writer, types: [type] });
    }
  }
  return rows;
}

/** The stream that stores `subject` (a route's pattern), if any. */
function streamOf(subject: string): StreamKey | undefined {
  const concrete = subject.split('{node}').join('node');
  return (Object.keys(STREAM_DEFINITIONS) as StreamKey[]).find((key) => STREAM_DEFINITIONS[key].subjects.some((filter) => subjectMatches(filter, concrete)));
}

/** Every stream, the subjects stored in it, their single writer and the message types each carries (from STREAM_DEFINITIONS and WRITE_ROUTES). */
export function renderStreamsTable(): string {
  const routes = routesBySubject();
  const rows: string[][] = [];
  for (const key of Object.keys(STREAM_DEFINITIONS) as StreamKey[]) {
    const mine = routes.filter((r) => streamOf(r.subject) === key);
    mine.forEach((r, i) =>
      rows.push([i === 0 ? code(STREAM_DEFINITIONS[key].name) : '', i === 0 ? limits(key) : '', code(r.subject), r.writer, r.types.join(', ')]),
    );
  }
  const unstored = routes.filter((r) => streamOf(r.subject) === undefined);
  if (unstored.length > 0) throw new Error(`no stream stores ${unstored.map((r) => r.subject).join(', ')}`);
  return markdownTable(['stream', 'keeps', 'subject', 'writer', 'messages'], rows);
}

/** What each component writes: its message types and their subjects (from WRITE_ROUTES). */
export function renderWritersTable(): string {
  const writers: Writer[] = ['api', 'scheduler', 'agent'];
  const routes = routesBySubject();
  return markdownTable(
    ['writer', 'messages', 'subjects'],
    writers.map((writer) => {
      const mine = routes.filter((r) => r.writer === writer);
      return [writer, [...new Set(mine.flatMap((r) => r.types))].join(', '), [...new Set(mine.map((r) => code(r.subject)))].join(', ')];
    }),
  );
}

/** Every core NATS subject (never stored): who publishes, who subscribes, and whether answers go back (from CORE_ROUTES). */
export function renderCoreSubjectsTable(): string {
  return markdownTable(
    ['subject', 'protocol', 'publisher', 'subscriber', 'answers'],
    CORE_ROUTES.map((r) => [code(r.subject), r.protocol, r.publisher, r.subscriber, r.replies ? "on the publisher's inbox" : 'none']),
  );
}

/** The sections of docs/architecture.md that are generated, by name. */
export const ARCHITECTURE_SECTIONS: Readonly<Record<string, () => string>> = {
  writers: renderWritersTable,
  streams: renderStreamsTable,
  'core-subjects': renderCoreSubjectsTable,
};

const begin = (name: string): string => `<!-- generated:${name} (npm run docs; edit libs/contracts, not this table) -->`;
const end = (name: string): string => `<!-- end generated:${name} -->`;

/**
 * `text` with every generated section between its markers rendered anew. Throws when a
 * section's markers are missing, so a doc that lost one fails rather than going stale.
 */
export function rewriteGeneratedSections(text: string, sections: Readonly<Record<string, () => string>> = ARCHITECTURE_SECTIONS): string {
  let out = text;
  for (const [name, render] of Object.entries(sections)) {
    const from = out.indexOf(begin(name));
    const to = out.indexOf(end(name));
    if (from < 0 || to < from) throw new Error(`the generated section "${name}" has lost its markers: ${begin(name)} ... ${end(name)}`);
    out = `${out.slice(0, from)}${begin(name)}\n\n${render()}\n\n${out.slice(to)}`;
  }
  return out;
}
