import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { Document } from 'yaml';
import { headers } from '@nats-io/transport-node';
import { STREAMS } from '#contracts';
import { buildTimeline, explainPod, podSwimlanes, replayTo, type LogPoint, type RecordedMessage } from '#domain/history';
import { bundleLine, readBundle, writeBundle, BundleError } from './export/bundle.js';
import { explainText } from './explain/explain-text.js';
import { diffText } from './replay/replay-diff.js';
import { readExplainInputs } from './streams/explain-inputs.js';
import { parseDuration, parsePoint } from './streams/point.js';
import { parseTarget, readNode, readPod, readStreams } from './streams/queries.js';
import { cliBusTls, ORIGIN_HEADERS, StreamReader, toRecorded } from './streams/stream-reader.js';
import { swimlaneHtml, swimlaneSvg } from './timeline/swimlane-svg.js';
import { timelineJson, timelineText } from './timeline/timeline-text.js';
import { runEvents } from './events.command.js';
import { eventTable, nodeTable, podTable } from './views.js';

/** Commands that read the streams themselves (read-only), with a NATS URL instead of the API. */
export const STREAM_COMMANDS = new Set(['timeline', 'replay', 'explain', 'export', 'import', 'events']);

const duration = (text: string): number => {
  const ms = parseDuration(text);
  if (ms === undefined) throw new InvalidArgumentError(`"${text}" is not a duration (examples: 40s, 5m, 1h30m)`);
  return ms;
};

/** A mistake on the command line found while running a command (commander reports its own before). */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

function sinceDuration(text: string): number {
  const ms = parseDuration(text);
  if (ms === undefined) throw new UsageError(`--since "${text}" is not a duration (examples: 40s, 5m, 1h30m)`);
  return ms;
}

const natsOption = (): Option => new Option('--nats <url>', 'the NATS server holding the streams').env('NATS_URL').default('nats://127.0.0.1:4222');
const graceOption = (): Option =>
  new Option('--node-grace <duration>', "the scheduler's NODE_GRACE_SECONDS: how long a silent node stays Ready").argParser(duration).default(40_000, '40s');

async function withReader<T>(url: string, work: (reader: StreamReader) => Promise<T>): Promise<T> {
  const reader = await StreamReader.connect(url);
  try {
    return await work(reader);
  } finally {
    await reader.close();
  }
}

function print(objects: unknown, output: string | undefined, table: () => string): void {
  if (output === 'json') console.log(JSON.stringify(objects, null, 2));
  else if (output === 'yaml') process.stdout.write(new Document(objects).toString());
  else console.log(table());
}

/** The state-changing lines of `replay`: pods, nodes or events, as `jetctl get` prints them. */
function printReplay(
  messages: RecordedMessage[],
  point: LogPoint,
  kinds: string[],
  opts: { namespace: string; allNamespaces?: boolean; output?: string; nodeGrace: number },
): void {
  const { state, atMs } = replayTo(messages, point);
  const namespace = opts.allNamespaces ? undefined : opts.namespace;
  const wide = opts.output === 'wide';
  kinds.forEach((kind, i) => {
    if (i > 0 && !opts.output) console.log('');
    switch (kind) {
      case 'pods':
      case 'pod':
      case 'po': {
        const pods = state.podList(namespace);
        print({ kind: 'PodList', apiVersion: 'v1', items: pods }, opts.output, () =>
          pods.length === 0 ? `No resources found${namespace ? ` in ${namespace} namespace` : ''}.` : podTable(pods, namespace === undefined, wide, atMs),
        );
        break;
      }
      case 'nodes':
      case 'node':
      case 'no': {
        const nodes = state.nodeList(atMs, opts.nodeGrace);
        print({ kind: 'NodeList', apiVersion: 'v1', items: nodes }, opts.output, () => (nodes.length === 0 ? 'No resources found.' : nodeTable(nodes, wide)));
        break;
      }
      case 'events':
      case 'event':
      case 'ev': {
        const events = state.eventList(namespace);
        print({ kind: 'EventList', apiVersion: 'v1', items: events }, opts.output, () => (events.length === 0 ? 'No events found.' : eventTable(events, atMs)));
        break;
      }
      default:
        throw new UsageError(`replay can show pods, nodes and events, not "${kind}"`);
    }
  });
}

/** The commander program for the stream commands. */
export function streamProgram(): Command {
  const program = new Command('jetctl').exitOverride().showHelpAfterError();

  program
    .command('timeline')
    .description('every message about one pod (NS/NAME, pod/NAME) or node (node/NAME), in order, causes above effects')
    .argument('<target>', 'NS/NAME, pod/NAME or node/NAME')
    .option('-n, --namespace <ns>', 'namespace of a pod/NAME', 'default')
    .addOption(new Option('-o, --output <format>', 'text, json (envelopes), svg or html (swimlanes)').choices(['text', 'json', 'svg', 'html']).default('text'))
    .addOption(natsOption())
    .action(async (text: string, opts: { namespace: string; output: string; nats: string }) => {
      const target = parseTarget(text, opts.namespace);
      const messages = await withReader(opts.nats, (r) => (target.kind === 'pod' ? readPod(r, target.namespace, target.name) : readNode(r, target.name)));
      const entries = buildTimeline(messages, target);
      const title = target.kind === 'pod' ? `pod ${target.namespace}/${target.name}` : `node ${target.name}`;
      if (entries.length === 0) throw new Error(`the streams hold nothing about ${title}`);
      const endMs = entries[entries.length - 1].atMs;
      switch (opts.output) {
        case 'json':
          return console.log(timelineJson(entries));
        case 'svg':
          return console.log(swimlaneSvg(title, podSwimlanes(entries, endMs)));
        case 'html':
          return console.log(swimlaneHtml(title, podSwimlanes(entries, endMs), entries));
        default:
          return console.log(timelineText(entries));
      }
    });

  program
    .command('replay')
    .description("the cluster as it was at a point of the log, rebuilt by the API's projections: replay --at 5m get pods")
    .argument('[get]', 'the word get')
    .argument('[kinds...]', 'pods, nodes, events', ['pods'])
    .option('--at <point>', 'a pods-stream sequence (resourceVersion), a time (RFC 3339) or a duration ago (5m)')
    .option('--diff <a..b>', 'what changed between two points')
    .option('-n, --namespace <ns>', 'namespace', 'default')
    .option('-A, --all-namespaces', 'every namespace')
    .option('-o, --output <format>', 'wide, json or yaml')
    .addOption(graceOption())
    .addOption(natsOption())
    .action(
      async (
        get: string | undefined,
        kinds: string[],
        opts: { at?: string; diff?: string; namespace: string; allNamespaces?: boolean; output?: string; nats: string; nodeGrace: number },
      ) => {
        if (get !== undefined && get !== 'get') kinds = [get, ...kinds];
        const now = Date.now();
        if (opts.diff) {
          const [a, b] = opts.diff.split('..');
          if (!a || !b) throw new UsageError('--diff takes A..B, each a sequence, a time or a duration ago');
          const [from, to] = [parsePoint(a, now), parsePoint(b, now)];
          const messages = await withReader(opts.nats, (r) => readStreams(r, [STREAMS.pods, STREAMS.nodes, STREAMS.events]));
          return console.log(diffText(messages, from, to, opts.nodeGrace));
        }
        if (!opts.at) throw new UsageError('replay needs --at SEQ|TIME|DURATION-AGO (or --diff A..B)');
        const point = parsePoint(opts.at, now);
        const streams = [STREAMS.pods, ...(kinds.some((k) => k.startsWith('no')) ? [STREAMS.nodes] : []), STREAMS.events];
        // A point in time bounds every stream's read; a sequence bounds the pods stream (the others need its time).
        const until = 'seq' in point ? { seq: point.seq } : { ms: point.timeMs };
        const messages = await withReader(opts.nats, (r) => readStreams(r, streams, until));
        printReplay(messages, point, kinds, opts);
      },
    );

  program
    .command('explain')
    .description('why a pod is where it is: scheduling re-run on the recorded node table, restarts and back-off, probes, pulls, evictions')
    .argument('<target>', 'NS/NAME or pod/NAME')
    .option('--at <point>', 'a pods-stream sequence, a time or a duration ago (default: now)')
    .option('-n, --namespace <ns>', 'namespace of a pod/NAME', 'default')
    .addOption(new Option('-o, --output <format>', 'text or json').choices(['text', 'json']).default('text'))
    .addOption(graceOption())
    .addOption(natsOption())
    .action(async (text: string, opts: { at?: string; namespace: string; output: string; nats: string; nodeGrace: number }) => {
      const target = parseTarget(text, opts.namespace);
      if (target.kind !== 'pod') throw new UsageError('explain explains pods: NS/NAME or pod/NAME');
      const messages = await withReader(opts.nats, (r) => readExplainInputs(r, target.namespace, target.name));
      const point: LogPoint = opts.at ? parsePoint(opts.at, Date.now()) : { timeMs: Math.max(...messages.map((m) => m.storedMs), 0) };
      const explanation = explainPod(messages, target.namespace, target.name, point, { graceMs: opts.nodeGrace });
      if (opts.output === 'json') console.log(JSON.stringify(explanation, null, 2));
      else console.log(explainText(explanation));
    });

  program
    .command('export')
    .description('write messages with their stream, subject and sequence to a JSON-lines bundle for a bug report')
    .option('--pod <NS/NAME>', "one pod's messages and what explain needs about it")
    .option('--node <name>', "one node's messages")
    .option('--since <duration>', 'only messages stored in this last while (30m)')
    .requiredOption('-o, --output <file>', 'the bundle to write (- for stdout)')
    .addOption(natsOption())
    .action(async (opts: { pod?: string; node?: string; since?: string; output: string; nats: string }) => {
      const sinceMs = opts.since === undefined ? undefined : Date.now() - sinceDuration(opts.since);
      const messages = await withReader(opts.nats, async (r) => {
        r.keepRaw = true;
        if (opts.pod) {
          const t = parseTarget(opts.pod);
          if (t.kind !== 'pod') throw new UsageError('--pod takes NS/NAME');
          return readExplainInputs(r, t.namespace, t.name);
        }
        if (opts.node) return readNode(r, opts.node);
        return r.readAll(Object.values(STREAMS).map((stream) => ({ stream, ...(sinceMs === undefined ? {} : { sinceMs }) })));
      });
      const kept = sinceMs === undefined ? messages : messages.filter((m) => m.storedMs >= sinceMs);
      await writeBundle(opts.output, kept.map(bundleLine), { exportedAt: new Date().toISOString(), messages: kept.length });
      if (opts.output !== '-') console.error(`${kept.length} messages written to ${opts.output}`);
    });

  program
    .command('import')
    .description('load a bundle into a scratch NATS server, where timeline, replay and explain work as on the cluster it came from')
    .argument('<bundle>', 'a file written by jetctl export')
    .addOption(natsOption())
    .action(async (file: string, opts: { nats: string }) => {
      const lines = readBundle(file);
      for (const l of lines) {
        const m = toRecorded(l.stream, l.subject, l.seq, l.storedMs, new TextEncoder().encode(l.data));
        if (!(Object.values(STREAMS) as string[]).includes(m.stream)) throw new BundleError(`${file}: unknown stream ${m.stream}`);
      }
      const existing = await withReader(opts.nats, (r) => r.streams());
      const busy = Object.values(STREAMS).filter((s) => (existing.get(s)?.messages ?? 0) > 0);
      if (busy.length > 0) throw new BundleError(`${opts.nats} already holds messages in ${busy.join(', ')}: import goes into a scratch NATS server`);
      // The bus adapter (and NestJS behind it) only for writing: reading commands start faster without it.
      const { Bus } = await import('#bus');
      const bus = await Bus.connect({ servers: opts.nats, name: 'jetctl-import', source: { component: 'jetctl' }, ...cliBusTls() }, AbortSignal.timeout(5000));
      try {
        await bus.ensureStreams();
        // In order, each with the sequence and store time it had where it was exported from.
        for (const l of lines) {
          const h = headers();
          h.set(ORIGIN_HEADERS.seq, String(l.seq));
          h.set(ORIGIN_HEADERS.storedMs, String(l.storedMs));
          await bus.js.publish(l.subject, l.data, { headers: h });
        }
      } finally {
        await bus.close();
      }
      console.log(`${lines.length} messages imported into ${opts.nats}`);
    });

  program
    .command('events')
    .description('container, pod and node events from the events stream: deaths, Kubernetes Events, back-off and probe facts')
    .option('--follow', 'keep printing new events until interrupted')
    .option('-f', 'same as --follow')
    .option('--node <node>', 'only events of this node')
    .option('--pod <pod>', 'only events of this pod (NS/NAME, or NAME in default)')
    .option('--type <type>', 'only this message type (ContainerEvent, PodEvent, NodeEvent, BackoffRecorded, ProbeResultChanged, ImagePullProgress)')
    .option('--reason <reason>', 'only this reason (Died, OOMKilled, BackOff, NodeNotReady, ...)')
    .option('--since <duration>', 'only events newer than this (10m, 1h)')
    .addOption(new Option('-o, --output <format>', 'a table (default), wide, json (one envelope a line) or yaml').choices(['wide', 'json', 'yaml']))
    .addOption(natsOption())
    .action(
      async (opts: {
        follow?: boolean;
        f?: boolean;
        node?: string;
        pod?: string;
        type?: string;
        reason?: string;
        since?: string;
        output?: 'wide' | 'json' | 'yaml';
        nats: string;
      }) => {
        await runEvents(
          {
            natsUrl: opts.nats,
            follow: opts.follow === true || opts.f === true,
            ...(opts.node ? { node: opts.node } : {}),
            ...(opts.pod ? { pod: opts.pod } : {}),
            ...(opts.type ? { type: opts.type } : {}),
            ...(opts.reason ? { reason: opts.reason } : {}),
            ...(opts.since ? { sinceMs: sinceDuration(opts.since) } : {}),
            ...(opts.output ? { output: opts.output } : {}),
          },
          (text) => process.stdout.write(text),
        );
      },
    );

  return program;
}

/** Runs one stream command; the exit code. */
export async function runStreamCommand(argv: string[]): Promise<number> {
  try {
    await streamProgram().parseAsync(argv, { from: 'user' });
    return 0;
  } catch (error) {
    // Commander has printed its usage error or the help already.
    if (error instanceof CommanderError) return error.exitCode;
    throw error;
  }
}
