import { cliBusCredentials, cliBusTls } from './streams/stream-reader.js';
import { Document } from 'yaml';
import { Bus } from '#bus';
import { STREAMS, SUBJECTS, type AnyEnvelope } from '#contracts';
import { pullProgressText } from '#domain/history';
import { renderTable } from './table.js';

/** What `jetctl events` shows and how. */
export interface EventsOptions {
  natsUrl: string;
  follow: boolean;
  node?: string;
  /** `namespace/name`, or a name in the default namespace. */
  pod?: string;
  type?: string;
  reason?: string;
  /** Only events newer than this many milliseconds. */
  sinceMs?: number;
  output?: 'json' | 'yaml' | 'wide';
}

/** The reason of any message on the events stream, in the words of its type. */
export function eventReason(e: AnyEnvelope): string {
  switch (e.type) {
    case 'BackoffRecorded':
      return `${e.data.kind}BackOff`;
    case 'ImagePullProgress':
      return 'Pulling';
    case 'ProbeResultChanged':
      return `${e.data.probe[0]?.toUpperCase() ?? ''}${e.data.probe.slice(1)}${e.data.result === 'failure' ? 'Failed' : 'Succeeded'}`;
    case 'ContainerEvent':
    case 'PodEvent':
    case 'NodeEvent':
      return e.data.reason;
    default:
      return '';
  }
}

/** One event as a table row: TIME TYPE REASON OBJECT MESSAGE (wide: NODE, SUBJECT, SEQ). */
export function eventRow(e: AnyEnvelope, subject: string, seq: number, wide: boolean): string[] {
  const data = e.data as { namespace?: string; name?: string; nodeName?: string; containerName?: string; fieldPath?: string; message?: string };
  let object = data.name ? `pod/${data.namespace ?? 'default'}/${data.name}` : `node/${data.nodeName ?? ''}`;
  if (data.containerName) object += `/${data.containerName}`;
  let message = data.message ?? '';
  if (e.type === 'ContainerEvent')
    message = e.data.exitCode === undefined ? '' : `exit code ${e.data.exitCode}${e.data.exitReason ? ` (${e.data.exitReason})` : ''}`;
  if (e.type === 'BackoffRecorded') message = `next try in ${Math.round(e.data.delayMs / 1000)}s${e.data.image ? ` for ${e.data.image}` : ''}`;
  if (e.type === 'ProbeResultChanged') message = `${e.data.probe} probe ${e.data.result}`;
  if (e.type === 'ImagePullProgress') message = pullProgressText(e.data);
  const row = [e.time, e.type, eventReason(e), object, message.replace(/\s+/g, ' ')];
  return wide ? [...row.slice(0, 4), data.nodeName ?? '', subject, String(seq), row[4] ?? ''] : row;
}

export const EVENT_HEADERS = (wide: boolean): string[] =>
  wide ? ['TIME', 'TYPE', 'REASON', 'OBJECT', 'NODE', 'SUBJECT', 'SEQ', 'MESSAGE'] : ['TIME', 'TYPE', 'REASON', 'OBJECT', 'MESSAGE'];

/** Whether an event passes the filters (the node is already the subject filter). */
export function eventMatches(e: AnyEnvelope, options: Pick<EventsOptions, 'pod' | 'type' | 'reason'>): boolean {
  if (options.type && e.type !== options.type) return false;
  if (options.reason && eventReason(e) !== options.reason) return false;
  if (options.pod) {
    const [namespace, name] = options.pod.includes('/') ? options.pod.split('/', 2) : ['default', options.pod];
    const data = e.data as { namespace?: string; name?: string };
    if (data.namespace !== namespace || data.name !== name) return false;
  }
  return true;
}

/**
 * Reads the events stream (JETLET_EVENTS) directly, read-only, with an ordered consumer:
 * container deaths, Kubernetes Events, back-off and probe facts, node events. Without
 * --follow it prints what the stream holds and exits; with it, it goes on until interrupted.
 */
export async function runEvents(options: EventsOptions, write: (text: string) => void): Promise<void> {
  const bus = await Bus.connect(
    { servers: options.natsUrl, name: 'jetctl-events', source: { component: 'jetctl' }, maxRetryDelayMs: 1000, ...cliBusCredentials(), ...cliBusTls() },
    AbortSignal.timeout(5000),
  );
  const wide = options.output === 'wide';
  const table = !options.output || wide;
  const rows: string[][] = [];
  let printedHeader = false;
  const emit = (e: AnyEnvelope, subject: string, seq: number): void => {
    if (options.output === 'json') write(`${JSON.stringify(e)}\n`);
    else if (options.output === 'yaml') write(`---\n${new Document(e).toString()}`);
    else if (!options.follow) rows.push(eventRow(e, subject, seq, wide));
    else {
      // Following, rows cannot be measured in advance: tab-separated after a header.
      if (!printedHeader) write(`${EVENT_HEADERS(wide).join('\t')}\n`);
      printedHeader = true;
      write(`${eventRow(e, subject, seq, wide).join('\t')}\n`);
    }
  };
  try {
    const from = options.sinceMs === undefined ? ('all' as const) : { startTime: new Date(Date.now() - options.sinceMs).toISOString() };
    // Every subject of one node's events: its own `.node` subject with the last token a wildcard.
    const filterSubject = options.node ? SUBJECTS.nodeEvents(options.node).replace(/\.node$/, '.>') : SUBJECTS.allContainerEvents;
    const subscription = await bus.follow(STREAMS.events, { filterSubject, from }, (e, delivery) => {
      if (eventMatches(e, options)) emit(e, delivery.subject, delivery.seq);
    });
    await subscription.caughtUp;
    if (options.follow) {
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
    } else if (table) {
      write(rows.length === 0 ? 'No events found.\n' : `${renderTable(EVENT_HEADERS(wide), rows)}\n`);
    }
    await subscription.stop();
  } finally {
    await bus.close();
  }
}
