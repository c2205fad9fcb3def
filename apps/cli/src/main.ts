#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { Document, parseAllDocuments } from 'yaml';
import type { Pod } from '#contracts';
import { ApiClient, ApiError } from './api-client.js';
import { kubeconfigFor, resolveConnection } from './kubeconfig.js';
import { runLab } from './lab/lab-command.js';
import { isNatsConfigCommand, runNatsConfigCommand } from './nats-config.command.js';
import { runStreamCommand, STREAM_COMMANDS } from './stream-commands.js';
import { StreamReader } from './streams/stream-reader.js';
import { doneOf, failureOf, followPod, PodProgressError } from './watch/pod-progress.js';
import { watchPods } from './watch/pod-watch.js';
import { nodeTable, podTable, type NodeView } from './views.js';

const USAGE = `jetctl controls a jetlet cluster through its API.

Usage:
  jetctl apply -f FILE            create the pods in a YAML or JSON manifest (- for stdin)
         [--wait [--timeout 5m]]  ...and follow each to Ready; exit 1 with the reason if it fails
  jetctl get pods [-n NS | -A] [-o wide|json|yaml] [-w]   -w: then a row per change, as it happens
  jetctl get pod NAME [-n NS] [-o json|yaml]
  jetctl get nodes [-o wide|json|yaml]
  jetctl delete pod NAME [-n NS] [--grace-period N]
  jetctl cordon NODE | uncordon NODE   stop or resume scheduling new pods onto a node
  jetctl logs POD [-c CONTAINER] [-f] [-p|--previous] [--tail N] [--timestamps] [--since 5m] [-n NS]
  jetctl kubeconfig [--token T] [--certificate-authority FILE]
                                  print a kubeconfig for this API, with its token and CA (kubectl and jetctl read it from $KUBECONFIG)
  jetctl lab DRILL [TARGET]       fault drills on the compose lab (jetctl lab help)

Reading the streams (read-only, with --nats URL or $NATS_URL; each takes --help):
  jetctl timeline NS/NAME | pod/NAME | node/NAME [-o text|json|svg|html]
  jetctl replay --at SEQ|TIME|5m [get] pods|nodes|events [-A] [-o wide|json|yaml]   or --diff A..B
  jetctl explain NS/NAME [--at SEQ|TIME|5m] [-o json]
  jetctl events [--follow] [--node N] [--pod NS/NAME] [--type T] [--reason R] [--since 10m] [-o json|yaml|wide]
  jetctl export [--pod NS/NAME | --node N | --since 30m] -o bundle.jsonl
  (with $NATS_NKEY_SEED_FILE: as that identity, $NATS_IDENTITY, jetctl by default;
   with $NATS_TLS_CA_FILE: over TLS, and $NATS_TLS_CERT_FILE/$NATS_TLS_KEY_FILE for mutual TLS)

NATS identities (files, no server needed):
  jetctl nats-config --nodes a,b --out DIR   the server's auth.conf and a seed per component and node
  jetctl node credentials NODE --dir DIR     add one node (then reload the server)
  jetctl hollow credentials PREFIX --count N [--first I] --dir DIR
                                             one process of hollow nodes PREFIX-I .. (then reload)
  jetctl nats-tls --out DIR [--host NAME]... [--verify]
                                             a CA, the server's certificate and its tls.conf (openssl)
  jetctl import bundle.jsonl --nats URL-OF-A-SCRATCH-SERVER

Flags:
  --server URL   the API (default $JETLET_SERVER, else the current context of $KUBECONFIG or
                 ~/.kube/config, else http://127.0.0.1:8001)
  --nats URL     NATS, for --wait and -w (default $NATS_URL or nats://127.0.0.1:4222)
  --token T      bearer token (default $JETLET_TOKEN, else the kubeconfig's user)
  -n NS          namespace (default "default")`;

interface Args {
  positional: string[];
  flags: Map<string, string | true>;
}

const VALUE_FLAGS = new Set([
  '-f',
  '--filename',
  '-n',
  '--namespace',
  '-o',
  '--output',
  '--server',
  '--token',
  '--certificate-authority',
  '--grace-period',
  '-c',
  '--container',
  '--tail',
  '--since',
  '--project',
  '--timeout',
  '--nats',
]);
/** Flags that take no value for some commands: `-f` is apply's file but logs' --follow, as in kubectl. */
const BOOLEAN_FOR: Record<string, Set<string>> = { logs: new Set(['-f']) };

function parseArgs(argv: string[]): Args {
  const positional: string[] = [];
  const flags = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const eq = arg.indexOf('=');
    if (arg.startsWith('-') && eq > 0) flags.set(arg.slice(0, eq), arg.slice(eq + 1));
    else if (VALUE_FLAGS.has(arg) && !BOOLEAN_FOR[positional[0] ?? '']?.has(arg)) {
      const value = argv[++i];
      if (value === undefined) throw new UsageError(`flag ${arg} needs a value`);
      flags.set(arg, value);
    } else if (arg.startsWith('-') && arg !== '-') flags.set(arg, true);
    else positional.push(arg);
  }
  return { positional, flags };
}

class UsageError extends Error {}

function flag(args: Args, ...names: string[]): string | undefined {
  for (const n of names) {
    const v = args.flags.get(n);
    if (typeof v === 'string') return v;
  }
  return undefined;
}

function print(objects: unknown, output: string | undefined, table: () => string): void {
  if (output === 'json') console.log(JSON.stringify(objects, null, 2));
  else if (output === 'yaml') process.stdout.write(new Document(objects).toString());
  else console.log(table());
}

async function apply(client: ApiClient, args: Args): Promise<void> {
  const file = flag(args, '-f', '--filename');
  if (!file) throw new UsageError('apply needs -f FILE');
  const text = readFileSync(file === '-' ? 0 : file, 'utf8');
  const docs = parseAllDocuments(text);
  const applied: Pod[] = [];
  for (const doc of docs) {
    if (doc.errors.length > 0) throw new UsageError(`${file}: ${doc.errors[0].message}`);
    const object = doc.toJS() as { kind?: string; metadata?: { name?: string; namespace?: string } } | null;
    if (!object) continue;
    if (object.kind !== 'Pod') throw new UsageError(`${file}: jetctl applies kind Pod, got ${object.kind ?? 'no kind'}`);
    const namespace = object.metadata?.namespace ?? flag(args, '-n', '--namespace') ?? 'default';
    const name = object.metadata?.name ?? '';
    const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods`;
    try {
      applied.push(await client.request<Pod>('POST', path, object));
      console.log(`pod/${name} created`);
    } catch (error) {
      if (!(error instanceof ApiError && error.code === 409 && error.reason === 'AlreadyExists')) throw error;
      // As kubectl apply does: the manifest as a strategic merge patch of the live pod.
      const before = await client.request<Pod>('GET', `${path}/${encodeURIComponent(name)}`);
      const after = await client.request<Pod>('PATCH', `${path}/${encodeURIComponent(name)}`, object, 'application/strategic-merge-patch+json');
      applied.push(after);
      console.log(`pod/${name} ${after.metadata.resourceVersion === before.metadata.resourceVersion ? 'unchanged' : 'configured'}`);
    }
  }
  if (on(args, '--wait')) await waitForPods(applied, args);
}

/** `apply --wait`: each pod's progress from the streams until it is Ready; the first failure's reason is the error. */
async function waitForPods(pods: Pod[], args: Args): Promise<void> {
  const timeout = flag(args, '--timeout');
  const timeoutMs = timeout === undefined ? 300_000 : durationSeconds(timeout, '--timeout') * 1000;
  const reader = await StreamReader.connect(flag(args, '--nats') ?? process.env.NATS_URL ?? 'nats://127.0.0.1:4222');
  try {
    await Promise.all(
      pods.map(async (pod) => {
        const failure = failureOf(pod.status);
        if (failure) throw new PodProgressError(`pod/${pod.metadata.name}: ${failure}`);
        if (doneOf(pod.status)) return console.log(`pod/${pod.metadata.name}: Ready`);
        await followPod(reader, pod, Number(pod.metadata.resourceVersion ?? 0), (line) => console.log(line), timeoutMs).catch((error: unknown) => {
          throw error instanceof PodProgressError ? new PodProgressError(`pod/${pod.metadata.name}: ${error.message}`) : error;
        });
      }),
    );
  } finally {
    await reader.close();
  }
}

async function get(client: ApiClient, args: Args): Promise<void> {
  const [, kind, name] = args.positional;
  const output = flag(args, '-o', '--output');
  const now = Date.now();
  const namespace = flag(args, '-n', '--namespace') ?? 'default';
  switch (kind) {
    case 'pod':
    case 'pods':
    case 'po': {
      if (name) {
        const pod = await client.request<Pod>('GET', `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}`);
        return print(pod, output, () => podTable([pod], false, output === 'wide', now));
      }
      const all = args.flags.has('-A') || args.flags.has('--all-namespaces');
      const list = await client.request<{ items: Pod[]; metadata?: { resourceVersion?: string } }>(
        'GET',
        all ? '/api/v1/pods' : `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods`,
      );
      if (on(args, '-w', '--watch')) return watch(list, all ? undefined : namespace, all, output === 'wide', args);
      if (list.items.length === 0 && !output) {
        console.error(all ? 'No resources found' : `No resources found in ${namespace} namespace.`);
        return;
      }
      return print(list, output, () => podTable(list.items, all, output === 'wide', now));
    }
    case 'node':
    case 'nodes':
    case 'no': {
      const nodes = name
        ? [await client.request<NodeView>('GET', `/api/v1/nodes/${encodeURIComponent(name)}`)]
        : (await client.request<{ items: NodeView[] }>('GET', '/api/v1/nodes')).items;
      return print(name ? nodes[0] : { kind: 'NodeList', items: nodes }, output, () => nodeTable(nodes, output === 'wide'));
    }
    default:
      throw new UsageError(`jetctl get knows pods and nodes, not "${kind ?? ''}"`);
  }
}

/**
 * `get pods -w`: the table, then a row for every change as it is stored, followed on the pods
 * stream from the list's resourceVersion; until interrupted.
 */
async function watch(
  list: { items: Pod[]; metadata?: { resourceVersion?: string } },
  namespace: string | undefined,
  all: boolean,
  wide: boolean,
  args: Args,
): Promise<void> {
  console.log(podTable(list.items, all, wide, Date.now()));
  const reader = await StreamReader.connect(flag(args, '--nats') ?? process.env.NATS_URL ?? 'nats://127.0.0.1:4222');
  const stop = await watchPods(reader, Number(list.metadata?.resourceVersion ?? 0), namespace, (pod) => {
    console.log(podTable([pod], all, wide, Date.now()).split('\n')[1]);
  });
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await stop();
  await reader.close();
}

async function remove(client: ApiClient, args: Args): Promise<void> {
  const [, kind, name] = args.positional;
  if (!['pod', 'pods', 'po'].includes(kind ?? '') || !name) throw new UsageError('usage: jetctl delete pod NAME [-n NS]');
  const namespace = flag(args, '-n', '--namespace') ?? 'default';
  const grace = flag(args, '--grace-period');
  const query = grace === undefined ? '' : `?gracePeriodSeconds=${encodeURIComponent(grace)}`;
  await client.request('DELETE', `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}${query}`);
  console.log(`pod "${name}" deleted`);
}

/** A boolean flag: set bare, or `--flag=true`; `--flag=false` is off. */
function on(args: Args, ...names: string[]): boolean {
  return names.some((n) => {
    const v = args.flags.get(n);
    return v === true || (typeof v === 'string' && v !== 'false' && v !== '0');
  });
}

/** A Go duration as kubectl's --since takes it (1h30m, 5m, 20s) in whole seconds. */
function durationSeconds(text: string, name = '--since'): number {
  const match = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/.exec(text);
  if (!match || text === '') throw new UsageError(`invalid duration "${text}" for ${name} (examples: 20s, 5m, 1h30m)`);
  return Number(match[1] ?? 0) * 3600 + Number(match[2] ?? 0) * 60 + Number(match[3] ?? 0);
}

/** Prints a container's log through the API; with -f it follows until the container stops or jetctl is interrupted. */
async function logs(client: ApiClient, args: Args): Promise<void> {
  const [, name] = args.positional;
  if (!name) throw new UsageError('usage: jetctl logs POD [-c CONTAINER] [-f] [-p|--previous] [--tail N] [--timestamps] [--since 5m] [-n NS]');
  const namespace = flag(args, '-n', '--namespace') ?? 'default';
  const query = new URLSearchParams();
  const container = flag(args, '-c', '--container');
  if (container) query.set('container', container);
  if (on(args, '-f', '--follow')) query.set('follow', 'true');
  if (on(args, '-p', '--previous')) query.set('previous', 'true');
  if (on(args, '--timestamps')) query.set('timestamps', 'true');
  const tail = flag(args, '--tail');
  if (tail !== undefined) {
    const lines = Number(tail);
    if (!Number.isInteger(lines)) throw new UsageError(`--tail needs a whole number, got "${tail}"`);
    // As kubectl: a negative --tail means the whole log.
    if (lines >= 0) query.set('tailLines', String(lines));
  }
  const since = flag(args, '--since');
  if (since !== undefined) query.set('sinceSeconds', String(Math.max(1, durationSeconds(since))));
  const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}/log`;
  await client.stream(query.size > 0 ? `${path}?${query.toString()}` : path, process.stdout);
}

async function main(argv: string[]): Promise<number> {
  if (STREAM_COMMANDS.has(argv[0] ?? '')) return runStreamCommand(argv);
  if (isNatsConfigCommand(argv)) return runNatsConfigCommand(argv);
  const args = parseArgs(argv);
  const command = args.positional[0];
  if (!command || args.flags.has('-h') || args.flags.has('--help')) {
    console.log(USAGE);
    return command ? 0 : 1;
  }
  const connection = resolveConnection({ server: flag(args, '--server'), token: flag(args, '--token') });
  const client = new ApiClient(connection);
  switch (command) {
    case 'kubeconfig': {
      const caFile = flag(args, '--certificate-authority');
      const ca = caFile ? readFileSync(caFile, 'utf8') : connection.ca;
      process.stdout.write(kubeconfigFor(connection.server, 'jetlet', { ...(connection.token ? { token: connection.token } : {}), ...(ca ? { ca } : {}) }));
      return 0;
    }
    case 'lab':
      return runLab(args.positional.slice(1), flag(args, '--project'));
    case 'apply':
      await apply(client, args);
      return 0;
    case 'get':
      await get(client, args);
      return 0;
    case 'cordon':
    case 'uncordon': {
      const node = args.positional[1];
      if (!node) throw new UsageError(`usage: jetctl ${command} NODE`);
      await client.request(
        'PATCH',
        `/api/v1/nodes/${encodeURIComponent(node)}`,
        { spec: { unschedulable: command === 'cordon' } },
        'application/strategic-merge-patch+json',
      );
      console.log(`node/${node} ${command}ed`);
      return 0;
    }
    case 'delete':
      await remove(client, args);
      return 0;
    case 'logs':
      await logs(client, args);
      return 0;
    default:
      throw new UsageError(`unknown command "${command}"\n\n${USAGE}`);
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof ApiError) {
      console.error(`Error from server (${error.reason}): ${error.message}`);
      for (const c of error.causes) console.error(`  ${c.field}: ${c.message}`);
    } else console.error(`error: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
