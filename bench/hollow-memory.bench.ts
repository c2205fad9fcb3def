import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { Cluster, uniqueName } from '../test/harness/cluster.js';
import { HOLLOW_NODE_FLAGS, HOLLOW_READY, readyHollowNodes, spawnHollow } from '../test/harness/hollow.js';
import { sleep, waitFor } from '../test/harness/processes.js';
import { fmt, printTable, rssKiB, workTimeoutMs } from './bench-util.js';

/**
 * What one hollow node costs its process: resident memory per node and steady-state CPU, for
 * the process as it was (one NATS connection and one Nest module per folder for every agent,
 * Node's default heap) beside the process as it is launched now (one shared connection, each
 * agent's modules packed into one, HOLLOW_NODE_FLAGS), at each size of
 * BENCH_HOLLOW_SIZES, in one run against one cluster. The targets are kubemark's scale: at
 * least 1,000 hollow nodes per core and at most 200 KiB each.
 */
const SIZES = (process.env.BENCH_HOLLOW_SIZES ?? '250,1000').split(',').filter(Boolean).map(Number);
/** After every node is Ready: registrations, first statuses and the first resyncs settle. */
const SETTLE_MS = Number(process.env.BENCH_HOLLOW_SETTLE_MS ?? 20_000);
const WINDOW_MS = Number(process.env.BENCH_HOLLOW_WINDOW_MS ?? 30_000);
const TARGET_KIB = 200;
const TARGET_PER_CORE = 1000;
const CLK_TCK = 100;

interface Shape {
  name: string;
  env: Record<string, string>;
  nodeFlags: string[];
}

const SHAPES: Shape[] = [
  { name: 'before', env: { HOLLOW_CONNECTIONS: 'per-node', HOLLOW_MODULES: 'per-folder' }, nodeFlags: [] },
  { name: 'now', env: { HOLLOW_CONNECTIONS: 'shared', HOLLOW_MODULES: 'packed' }, nodeFlags: HOLLOW_NODE_FLAGS },
];

interface Sample {
  shape: Shape;
  nodes: number;
  bootSeconds: number;
  rssMiB: number;
  cpuPercent: number;
  sockets: number;
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
async function measure(cluster: Cluster, shape: Shape, nodes: number): Promise<Sample> {
  const prefix = uniqueName(`hm-${shape.name}`);
  const startedAt = performance.now();
  const proc = spawnHollow(
    cluster.nats.url,
    prefix,
    nodes,
    { HEARTBEAT_SECONDS: '10', RESYNC_SECONDS: '10', LOG_LEVEL: 'warn', ...shape.env },
    0,
    shape.nodeFlags,
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
    const sample = { shape, nodes, bootSeconds, rssMiB: rssKiB(pid) / 1024, cpuPercent: ((c1 - c0) / ((t1 - t0) / 1000)) * 100, sockets: sockets(pid) };
    console.log(`${shape.name} ${nodes}: ${fmt(sample.rssMiB, 0)} MiB, ${fmt(sample.cpuPercent, 1)} % CPU, Ready after ${fmt(bootSeconds, 0)} s`);
    return sample;
  } finally {
    await proc.stop();
  }
}

const cluster = await Cluster.start();
const samples: Sample[] = [];
let failures = 0;
try {
  for (const nodes of SIZES)
    for (const shape of SHAPES) {
      try {
        samples.push(await measure(cluster, shape, nodes));
      } catch (error) {
        failures++;
        console.error(`${shape.name} at ${nodes} nodes failed: ${(error as Error).stack ?? String(error)}`);
      }
    }
} finally {
  await cluster.stop();
}

const perNodeKiB = (s: Sample): number => (s.rssMiB * 1024) / s.nodes;
const perCore = (s: Sample): number => s.nodes / (s.cpuPercent / 100);
printTable(
  `hollow nodes, one process each: before (a NATS connection and a module per folder for every agent, default heap) vs now (one shared connection, modules packed, ${HOLLOW_NODE_FLAGS.join(' ') || 'no node flags'}); heartbeats and resyncs every 10 s, RSS after ${SETTLE_MS / 1000} s settled, CPU over ${WINDOW_MS / 1000} s, same run`,
  [...samples.map((s) => `${s.shape.name} ${s.nodes}`), 'target'],
  [
    ['hollow nodes in the process', ...samples.map((s) => s.nodes), '-'],
    ['spawn to every node Ready in the API (s)', ...samples.map((s) => fmt(s.bootSeconds, 0)), '-'],
    ['process resident memory, VmRSS (MiB)', ...samples.map((s) => fmt(s.rssMiB, 0)), '-'],
    ['resident memory per node (KiB)', ...samples.map((s) => fmt(perNodeKiB(s), 0)), `<= ${TARGET_KIB}`],
    ['steady-state CPU (% of one core)', ...samples.map((s) => fmt(s.cpuPercent, 1)), '-'],
    ['nodes one core carries at that CPU', ...samples.map((s) => fmt(perCore(s), 0)), `>= ${TARGET_PER_CORE}`],
    ['sockets open (NATS connections)', ...samples.map((s) => s.sockets), '-'],
  ],
);
if (failures > 0) process.exitCode = 1;
