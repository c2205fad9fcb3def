import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Cluster, uniqueName } from '../test/harness/cluster.js';
import { HOLLOW_NODE_FLAGS, HOLLOW_READY, readyHollowNodes, spawnHollow } from '../test/harness/hollow.js';
import { sleep, waitFor } from '../test/harness/processes.js';
import { fmt, printTable, rssKiB, workTimeoutMs } from './bench-util.js';

/**
 * What one hollow node costs its process: resident memory per node and steady-state CPU, for
 * the process as it was beside the process as it is launched now, at each size of
 * BENCH_HOLLOW_SIZES, in one run against one cluster. BENCH_HOLLOW_SHAPES picks the shapes
 * (default `before,now`):
 * - `first`: a NATS connection, a Nest module per folder and a metrics registry for every
 *   agent, Nest's bootstrap state kept, Node's default heap;
 * - `before`: one shared connection and each agent's modules packed, HOLLOW_NODE_FLAGS, but a
 *   metrics registry per agent and Nest's bootstrap state kept;
 * - `bootstrap`: metric families shared by the process, labelled by node, and Nest's bootstrap
 *   state released once each agent runs, but its container kept;
 * - `now`: as launched (Nest's whole container let go once each agent runs);
 * - `baseline`: `now`'s settings run by another build, the one in BENCH_HOLLOW_BASELINE (a
 *   `dist` directory), which adds it to the default shapes: an A/B in one run, alternately.
 * The targets are kubemark's scale: at least 1,000 hollow nodes per core and at most 200 KiB each.
 */
const SIZES = (process.env.BENCH_HOLLOW_SIZES ?? '250,1000').split(',').filter(Boolean).map(Number);
/** After every node is Ready: registrations, first statuses and the first resyncs settle. */
const SETTLE_MS = Number(process.env.BENCH_HOLLOW_SETTLE_MS ?? 20_000);
const WINDOW_MS = Number(process.env.BENCH_HOLLOW_WINDOW_MS ?? 30_000);
/** Each size in each shape, this many times over, the shapes alternating: memory varies a little run to run. */
const ROUNDS = Number(process.env.BENCH_HOLLOW_ROUNDS ?? 1);
const TARGET_KIB = 200;
const TARGET_PER_CORE = 1000;
const CLK_TCK = 100;

interface Shape {
  name: string;
  env: Record<string, string>;
  nodeFlags: string[];
  /** Another build's hollow.js; this build's by default. */
  script?: string;
}

const BASELINE = process.env.BENCH_HOLLOW_BASELINE;

const ALL_SHAPES: Shape[] = [
  {
    name: 'first',
    env: { HOLLOW_CONNECTIONS: 'per-node', HOLLOW_MODULES: 'per-folder', HOLLOW_METRICS: 'per-node', HOLLOW_BOOTSTRAP_STATE: 'kept', HOLLOW_CONTAINER: 'kept' },
    nodeFlags: [],
  },
  {
    name: 'before',
    env: { HOLLOW_CONNECTIONS: 'shared', HOLLOW_MODULES: 'packed', HOLLOW_METRICS: 'per-node', HOLLOW_BOOTSTRAP_STATE: 'kept', HOLLOW_CONTAINER: 'kept' },
    nodeFlags: HOLLOW_NODE_FLAGS,
  },
  {
    name: 'bootstrap',
    env: { HOLLOW_CONNECTIONS: 'shared', HOLLOW_MODULES: 'packed', HOLLOW_METRICS: 'shared', HOLLOW_BOOTSTRAP_STATE: 'released', HOLLOW_CONTAINER: 'kept' },
    nodeFlags: HOLLOW_NODE_FLAGS,
  },
  {
    name: 'now',
    env: { HOLLOW_CONNECTIONS: 'shared', HOLLOW_MODULES: 'packed', HOLLOW_METRICS: 'shared', HOLLOW_BOOTSTRAP_STATE: 'released', HOLLOW_CONTAINER: 'released' },
    nodeFlags: HOLLOW_NODE_FLAGS,
  },
  ...(BASELINE
    ? [
        {
          name: 'baseline',
          env: { HOLLOW_CONNECTIONS: 'shared', HOLLOW_MODULES: 'packed', HOLLOW_METRICS: 'shared', HOLLOW_BOOTSTRAP_STATE: 'released' },
          nodeFlags: HOLLOW_NODE_FLAGS,
          script: join(resolve(BASELINE), 'apps/agent/src/hollow.js'),
        },
      ]
    : []),
];
const SHAPES = (process.env.BENCH_HOLLOW_SHAPES ?? (BASELINE ? 'baseline,now' : 'before,now')).split(',').map((name) => {
  const shape = ALL_SHAPES.find((s) => s.name === name);
  if (!shape) throw new Error(`BENCH_HOLLOW_SHAPES: no shape ${name} (${ALL_SHAPES.map((s) => s.name).join(', ')})`);
  return shape;
});

interface Sample {
  shape: Shape;
  round: number;
  nodes: number;
  bootSeconds: number;
  rssMiB: number;
  cpuPercent: number;
  sockets: number;
  /** Agents started again because a bus request of their start-up timed out (the process logs each). */
  startRetries: number;
}

/** utime + stime of a process, in seconds (/proc/<pid>/stat fields 14 and 15). */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
}

/** The sockets a process holds open (its NATS connections, and nothing else in a hollow process). */
function sockets(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).filter((fd) => {
    try {
      return readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith('socket:');
    } catch {
      return false;
    }
  }).length;
}

/** One process of `nodes` hollow agents in `shape`: Ready in the API, settled, then its RSS and its CPU over WINDOW_MS. */
async function measure(cluster: Cluster, shape: Shape, nodes: number, round: number): Promise<Sample> {
  const prefix = uniqueName(`hm-${shape.name}`);
  const startedAt = performance.now();
  const proc = spawnHollow(
    cluster.nats.url,
    prefix,
    nodes,
    { HEARTBEAT_SECONDS: '10', RESYNC_SECONDS: '10', LOG_LEVEL: 'warn', ...shape.env },
    0,
    shape.nodeFlags,
    shape.script,
  );
  // A process that dies (a signal, say) fails the measurement at once, with its last lines.
  const died = new Promise<never>((_, reject) =>
    proc.child.once('exit', (code, signal) => reject(new Error(`hollow process exited (${signal ?? code}) before it was measured:\n${proc.tail()}`))),
  );
  died.catch(() => undefined);
  try {
    await Promise.race([proc.waitForLine(HOLLOW_READY, workTimeoutMs(nodes, 500)), died]);
    await Promise.race([
      waitFor(`${nodes} hollow nodes Ready`, async () => (await readyHollowNodes(cluster, prefix)) === nodes, workTimeoutMs(nodes, 500), 1000),
      died,
    ]);
    const bootSeconds = (performance.now() - startedAt) / 1000;
    await sleep(SETTLE_MS);
    const pid = proc.child.pid ?? 0;
    const [c0, t0] = [cpuSeconds(pid), performance.now()];
    await sleep(WINDOW_MS);
    const [c1, t1] = [cpuSeconds(pid), performance.now()];
    const sample = {
      shape,
      round,
      nodes,
      bootSeconds,
      rssMiB: rssKiB(pid) / 1024,
      cpuPercent: ((c1 - c0) / ((t1 - t0) / 1000)) * 100,
      sockets: sockets(pid),
      startRetries: proc.output.filter((line) => /did not start \(attempt/.test(line)).length,
    };
    console.log(
      `${shape.name} ${nodes}: ${fmt(sample.rssMiB, 0)} MiB, ${fmt((sample.rssMiB * 1024) / nodes, 0)} KiB per node, ${fmt(sample.cpuPercent, 1)} % CPU, Ready after ${fmt(bootSeconds, 0)} s`,
    );
    return sample;
  } finally {
    await proc.stop();
  }
}

const cluster = await Cluster.start();
const samples: Sample[] = [];
let failures = 0;
try {
  for (let round = 1; round <= ROUNDS; round++)
    for (const nodes of SIZES)
      for (const shape of SHAPES) {
        try {
          samples.push(await measure(cluster, shape, nodes, round));
        } catch (error) {
          failures++;
          console.error(`${shape.name} at ${nodes} nodes failed: ${(error as Error).stack ?? String(error)}`);
        }
      }
} finally {
  await cluster.stop();
}

/** A shape's settings, as the table's title gives them. */
function describe(shape: Shape): string {
  return [...Object.entries(shape.env).map(([k, v]) => `${k.replace('HOLLOW_', '').toLowerCase()} ${v}`), shape.nodeFlags.join(' ') || 'default heap'].join(
    ', ',
  );
}

const perNodeKiB = (s: Sample): number => (s.rssMiB * 1024) / s.nodes;
/** What one more node adds: the RSS between this size and the shape's smallest, per node between them. */
const perExtraNodeKiB = (s: Sample): string => {
  const smallest = samples.filter((o) => o.shape === s.shape && o.round === s.round).reduce((a, b) => (b.nodes < a.nodes ? b : a), s);
  return smallest.nodes === s.nodes ? '-' : fmt(((s.rssMiB - smallest.rssMiB) * 1024) / (s.nodes - smallest.nodes), 0);
};
const perCore = (s: Sample): number => s.nodes / (s.cpuPercent / 100);
printTable(
  `hollow nodes, one process each, by shape (${SHAPES.map((s) => `${s.name}: ${describe(s)}`).join('; ')}); heartbeats and resyncs every 10 s, RSS after ${SETTLE_MS / 1000} s settled, CPU over ${WINDOW_MS / 1000} s, same run`,
  [...samples.map((s) => `${s.shape.name} ${s.nodes}`), 'target'],
  [
    ['hollow nodes in the process', ...samples.map((s) => s.nodes), '-'],
    ['spawn to every node Ready in the API (s)', ...samples.map((s) => fmt(s.bootSeconds, 0)), '-'],
    ['process resident memory, VmRSS (MiB)', ...samples.map((s) => fmt(s.rssMiB, 0)), '-'],
    ['resident memory per node (KiB)', ...samples.map((s) => fmt(perNodeKiB(s), 0)), `<= ${TARGET_KIB}`],
    ['resident memory per node beyond the smallest size (KiB)', ...samples.map(perExtraNodeKiB), '-'],
    ['steady-state CPU (% of one core)', ...samples.map((s) => fmt(s.cpuPercent, 1)), '-'],
    ['nodes one core carries at that CPU', ...samples.map((s) => fmt(perCore(s), 0)), `>= ${TARGET_PER_CORE}`],
    ['sockets open (NATS connections)', ...samples.map((s) => s.sockets), '-'],
    ['agents started again after a start-up request failed', ...samples.map((s) => s.startRetries), '-'],
  ],
);
if (failures > 0) process.exitCode = 1;
