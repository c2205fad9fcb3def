import { execFile, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { Cluster, uniqueName } from '../test/harness/cluster.js';
import { sleep } from '../test/harness/processes.js';
import { fmt, printTable, summary } from './bench-util.js';

const run = promisify(execFile);
const PODS = Number(process.env.BENCH_PODS ?? 20);
const IMAGE = 'jetlet/busybox:1.35';

/** Milestones of one pod start, in ms after the POST (wall clock, so Docker's event times compare). */
type Timeline = Map<string, number>;

type Watch = Awaited<ReturnType<typeof watchTimelines>>;

/** The stages a start goes through, in order, as the breakdown prints them. */
const STAGES = [
  'PodCreated stored',
  'PodScheduled stored',
  'PodAssigned stored',
  'sandbox created',
  'sandbox started',
  'container created',
  'container started',
  'ContainerEvent Started',
  'PodStatusReported Running',
  'Running seen through the API',
] as const;

/**
 * Where the time of each start goes: the bus's messages for the pod (a core NATS subscription
 * to every subject, so each is timed when the server delivered it) and the engine's events
 * for the node's containers (times from the engine, on the same host clock).
 */
async function watchTimelines(
  cluster: Cluster,
  node: string,
): Promise<{ timelines: Map<string, Timeline>; posted(name: string, atMs: number): void; close(): Promise<void> }> {
  const timelines = new Map<string, Timeline>();
  const posts = new Map<string, number>();
  const names = new Map<string, string>();
  const mark = (name: string | undefined, stage: string, atMs: number): void => {
    const t0 = name === undefined ? undefined : posts.get(name);
    if (name === undefined || t0 === undefined) return;
    const timeline = timelines.get(name) ?? new Map<string, number>();
    timelines.set(name, timeline);
    if (!timeline.has(stage)) timeline.set(stage, atMs - t0);
  };
  const { connect } = await import('@nats-io/transport-node');
  const nc = await connect({ servers: cluster.nats.url });
  nc.subscribe('jetlet.>', {
    callback: (error, msg) => {
      if (error) return;
      const atMs = performance.timeOrigin + performance.now();
      try {
        const envelope = msg.json<{
          type: string;
          data: { uid?: string; name?: string; pod?: { metadata?: { name?: string; uid?: string } }; reason?: string; status?: { phase?: string } };
        }>();
        const { data } = envelope;
        const name = data.name ?? data.pod?.metadata?.name ?? (data.uid !== undefined ? names.get(data.uid) : undefined);
        const uid = data.uid ?? data.pod?.metadata?.uid;
        if (name !== undefined && uid !== undefined) names.set(uid, name);
        if (envelope.type === 'ContainerEvent') mark(name, `ContainerEvent ${envelope.data.reason ?? ''}`, atMs);
        else if (envelope.type === 'PodStatusReported') mark(name, `PodStatusReported ${envelope.data.status?.phase ?? ''}`, atMs);
        else mark(name, `${envelope.type} stored`, atMs);
      } catch {
        // not JSON: no milestone
      }
    },
  });
  await nc.flush();
  const events = spawn('docker', ['events', '--format', '{{json .}}', '--filter', 'type=container', '--filter', `label=io.jetlet.node=${node}`], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  createInterface({ input: events.stdout }).on('line', (line) => {
    try {
      const event = JSON.parse(line) as { Action: string; timeNano: number; Actor: { Attributes: Record<string, string> } };
      const attributes = event.Actor.Attributes;
      if (event.Action !== 'create' && event.Action !== 'start') return;
      mark(attributes['io.jetlet.pod.name'], `${attributes['io.jetlet.kind']} ${event.Action === 'create' ? 'created' : 'started'}`, event.timeNano / 1e6);
    } catch {
      // not an event line
    }
  });
  return {
    timelines,
    posted: (name, atMs) => posts.set(name, atMs),
    close: async () => {
      events.kill();
      await nc.close();
    },
  };
}

/** The median of each stage over the starts, and the median step from the stage before. */
function printBreakdown(timelines: Map<string, Timeline>): void {
  const ats = STAGES.map((stage) => summary([...timelines.values()].map((t) => t.get(stage)).filter((v) => v !== undefined)).p50);
  const rows = STAGES.map((stage, i) => [stage, fmt(ats[i]), fmt((ats[i] ?? NaN) - (i === 0 ? 0 : (ats[i - 1] ?? NaN)))]);
  printTable('where a start goes (jetlet, open): median ms after the POST, and the step from the stage before', ['at', 'step'], rows);
}

/** jetlet: POST → Running (every container running, pod IP set) observed through the API, for one pod. */
async function jetletPodStart(cluster: Cluster, name: string, watch?: Watch): Promise<number> {
  const manifest = {
    metadata: { name },
    spec: { terminationGracePeriodSeconds: 0, containers: [{ name: 'main', image: IMAGE, command: ['sleep', '3600'] }] },
  };
  const start = performance.now();
  watch?.posted(name, performance.timeOrigin + start);
  const created = await cluster.request('POST', '/api/v1/namespaces/bench/pods', manifest);
  if (created.status !== 201) throw new Error(`create ${name}: ${created.status} ${JSON.stringify(created.body)}`);
  for (;;) {
    const pod = await cluster.getPod('bench', name);
    if (pod?.status.phase === 'Running' && pod.status.podIP && pod.status.containerStatuses?.every((s) => s.state.running)) break;
    await sleep(5);
  }
  const took = performance.now() - start;
  watch?.timelines.get(name)?.set('Running seen through the API', took);
  return took;
}

/** Baseline: `docker run -d` of the same image, to the command's return (container started); with the sandbox, the two as a pod has them. */
async function dockerRun(label: string, withSandbox: boolean, ids: string[]): Promise<number> {
  const start = performance.now();
  if (withSandbox) {
    const sandbox = (await run('docker', ['run', '-d', '--label', label, 'jetlet/pause:1.0'])).stdout.trim();
    ids.push(sandbox);
    ids.push((await run('docker', ['run', '-d', '--label', label, '--network', `container:${sandbox}`, IMAGE, 'sleep', '3600'])).stdout.trim());
  } else {
    ids.push((await run('docker', ['run', '-d', '--label', label, IMAGE, 'sleep', '3600'])).stdout.trim());
  }
  return performance.now() - start;
}

/** A fresh cluster with one agent: open, or secured (API tokens, RBAC, audit, and per-component NATS identities). */
async function startCluster(secure: boolean): Promise<{ cluster: Cluster; node: string }> {
  const cluster = await Cluster.start({}, { secure, secureNats: secure });
  try {
    const node = uniqueName('bench-node');
    await cluster.startAgent(node, { RESYNC_SECONDS: '10', HEARTBEAT_SECONDS: '10' });
    await cluster.ensureNamespace('bench');
    return { cluster, node };
  } catch (error) {
    await cluster.stop();
    throw error;
  }
}

/**
 * The four kinds of start take turns, one of each per round, so each sees the same load on the
 * machine: a ratio between them holds even when the absolute figures move with the load.
 */
async function main(): Promise<void> {
  const label = `io.jetlet.bench=${uniqueName('bench-docker')}`;
  const ids: string[] = [];
  const samples = { docker: [] as number[], dockerPod: [] as number[], open: [] as number[], secured: [] as number[] };
  const { cluster: open, node } = await startCluster(false);
  let secured: Cluster | undefined;
  let watch: Watch | undefined;
  try {
    secured = (await startCluster(true)).cluster;
    watch = await watchTimelines(open, node);
    for (let i = 0; i < PODS; i++) {
      samples.docker.push(await dockerRun(label, false, ids));
      samples.dockerPod.push(await dockerRun(label, true, ids));
      samples.open.push(await jetletPodStart(open, `bench-${i}`, watch));
      samples.secured.push(await jetletPodStart(secured, `bench-${i}`));
    }
  } finally {
    await watch?.close();
    await Promise.allSettled([open.stop(), secured?.stop()]);
    if (ids.length > 0) await run('docker', ['rm', '-f', ...ids]);
  }
  const docker = summary(samples.docker);
  const row = (name: string, s: { p50: number; p99: number }): string =>
    `${name.padEnd(58)} ${s.p50.toFixed(0).padStart(7)} ${s.p99.toFixed(0).padStart(7)} ${(s.p50 / docker.p50).toFixed(2).padStart(7)}`;
  console.log(`\npod start latency, ${PODS} rounds of sequential starts, one of each kind per round (ms)`);
  console.log(`${''.padEnd(58)} ${'p50'.padStart(7)} ${'p99'.padStart(7)} ${'×docker'.padStart(7)}`);
  console.log(row('docker run -d (one container)', docker));
  console.log(row('docker run -d sandbox + joined container', summary(samples.dockerPod)));
  console.log(row('jetlet pod: POST → Running seen through the API', summary(samples.open)));
  console.log(row('  the same, secured (API auth + audit, NATS identities)', summary(samples.secured)));
  if (watch) printBreakdown(watch.timelines);
}

await main();
