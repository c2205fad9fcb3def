import { readFileSync } from 'node:fs';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { Pod } from '#contracts';
import { Cluster, uniqueName } from '../test/harness/cluster.js';
import { HOLLOW_READY, spawnHollow } from '../test/harness/hollow.js';
import { sleep, waitFor, type ManagedProcess } from '../test/harness/processes.js';
import { fmt, printTable, rssKiB, workTimeoutMs } from './bench-util.js';

/** Sizes; the environment may lower them for a quick run. */
const NODES = Number(process.env.BENCH_HOLLOW_NODES ?? 1000);
const PROCESSES = Number(process.env.BENCH_HOLLOW_PROCESSES ?? 4);
const PODS = Number(process.env.BENCH_SCHED_PODS ?? 10_000);
const WINDOW_MS = Number(process.env.BENCH_LOAD_WINDOW_MS ?? 30_000);
const IN_FLIGHT = 50;
/** Creation stops here; the bench then reports what it got. */
const SCHED_DEADLINE_MS = 240_000;
const NS = 'sched';
const KUBE_SCHEDULER_FLOOR = 680; // pods/s, scheduler_perf's floor for 5,000 nodes
const CLK_TCK = 100;
const GRACE = 5;

/** utime + stime of a process, in seconds (/proc/<pid>/stat fields 14 and 15). */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
}

/** Messages appended to every stream (sum of last sequences): counts what limits have already discarded too. */
async function appended(nc: NatsConnection): Promise<number> {
  const jsm = await jetstreamManager(nc);
  let total = 0;
  for await (const info of jsm.streams.list()) total += info.state.last_seq;
  return total;
}

interface Load {
  messagesPerSecond: number;
  cpuPercent: number;
  rssMiB: number;
}

async function measureLoad(nc: NatsConnection, schedulerPid: number): Promise<Load> {
  const [m0, c0, t0] = [await appended(nc), cpuSeconds(schedulerPid), performance.now()];
  await sleep(WINDOW_MS);
  const [m1, c1, t1] = [await appended(nc), cpuSeconds(schedulerPid), performance.now()];
  const seconds = (t1 - t0) / 1000;
  return { messagesPerSecond: (m1 - m0) / seconds, cpuPercent: ((c1 - c0) / seconds) * 100, rssMiB: rssKiB(schedulerPid) / 1024 };
}

async function readyNodes(cluster: Cluster, prefix: string): Promise<number> {
  const { body } = await cluster.request<{ items: Array<{ metadata: { name: string }; status: { conditions?: Array<{ type: string; status: string }> } }> }>(
    'GET',
    '/api/v1/nodes',
  );
  return body.items.filter((n) => n.metadata.name.startsWith(`${prefix}-`) && n.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))
    .length;
}

/** Starts NODES hollow agents in PROCESSES processes and waits until all are Ready in the API. */
async function startHollowNodes(cluster: Cluster, prefix: string, env: Record<string, string>): Promise<ManagedProcess[]> {
  const per = Math.ceil(NODES / PROCESSES);
  const procs: ManagedProcess[] = [];
  for (let first = 0; first < NODES; first += per) procs.push(spawnHollow(cluster.nats.url, prefix, Math.min(per, NODES - first), env, first));
  await Promise.all(procs.map((p) => p.waitForLine(HOLLOW_READY, 300_000)));
  await waitFor(`${NODES} hollow nodes Ready`, async () => (await readyNodes(cluster, prefix)) === NODES, workTimeoutMs(NODES, 500), 1000);
  return procs;
}

/** (a) + (b): control-plane load with 0 and NODES idle nodes, then scheduler throughput over those nodes. */
async function scale(): Promise<void> {
  const cluster = await Cluster.start({ RESYNC_SECONDS: '5' });
  const nc = await connect({ servers: cluster.nats.url });
  const schedulerPid = cluster.scheduler.child.pid ?? 0;
  let procs: ManagedProcess[] = [];
  try {
    await sleep(3000);
    const empty = await measureLoad(nc, schedulerPid);
    const prefix = uniqueName('hn');
    const bootAt = performance.now();
    procs = await startHollowNodes(cluster, prefix, { HEARTBEAT_SECONDS: '10', RESYNC_SECONDS: '10', LOG_LEVEL: 'warn' });
    const bootSeconds = (performance.now() - bootAt) / 1000;
    const hollowRss = procs.map((p) => rssKiB(p.child.pid ?? 0) / 1024);
    await sleep(10_000); // registrations and first status reports settle
    const loaded = await measureLoad(nc, schedulerPid);
    printTable(
      `control-plane load, ${(WINDOW_MS / 1000).toFixed(0)} s windows: 0 nodes vs ${NODES} hollow nodes heartbeating every 10 s (${procs.length} processes, all Ready after ${bootSeconds.toFixed(0)} s)`,
      ['0 nodes', `${NODES} nodes`],
      [
        ['JetStream messages appended per second (all streams)', fmt(empty.messagesPerSecond, 1), fmt(loaded.messagesPerSecond, 1)],
        ['  expected from heartbeats alone (nodes / 10 s)', 0, fmt(NODES / 10, 1)],
        ['scheduler CPU (% of one core)', fmt(empty.cpuPercent, 1), fmt(loaded.cpuPercent, 1)],
        ['scheduler resident memory, VmRSS (MiB)', fmt(empty.rssMiB, 0), fmt(loaded.rssMiB, 0)],
        ['hollow process resident memory, VmRSS (MiB, each)', '-', hollowRss.map((r) => fmt(r, 0)).join('/')],
      ],
    );

    // (a) scheduler throughput: count PodScheduled envelopes on the pods' subjects (a core subscription sees every append).
    let scheduled = 0;
    let lastScheduledAt = 0;
    const sub = nc.subscribe('jetlet.pods.>', {
      callback: (error, msg) => {
        if (error) return;
        if (msg.json<{ type: string }>().type === 'PodScheduled') {
          scheduled++;
          lastScheduledAt = performance.now();
        }
      },
    });
    await nc.flush();
    await cluster.ensureNamespace(NS);
    const startedAt = performance.now();
    let next = 0;
    let created = 0;
    let failed = 0;
    const post = async (): Promise<void> => {
      while (next < PODS && performance.now() - startedAt < SCHED_DEADLINE_MS) {
        const i = next++;
        const { status } = await cluster.request<Pod>('POST', `/api/v1/namespaces/${NS}/pods`, {
          metadata: { name: `s-${i}` },
          spec: { terminationGracePeriodSeconds: 0, containers: [{ name: 'main', image: 'jetlet/busybox:1.35', command: ['sleep', '3600'] }] },
        });
        if (status === 201) created++;
        else failed++;
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, post));
    const createdAt = performance.now();
    await waitFor(`${created} pods scheduled`, () => scheduled >= created, Math.max(30_000, SCHED_DEADLINE_MS + 60_000 - (createdAt - startedAt)), 200).catch(
      () => undefined,
    );
    sub.unsubscribe();
    const seconds = (lastScheduledAt - startedAt) / 1000;
    const scaledDown = created < PODS ? ` (scaled down from ${PODS}: creation stopped at the ${SCHED_DEADLINE_MS / 1000} s bound)` : '';
    printTable(
      `scheduler throughput: ${NODES} hollow nodes, ${created} pods${scaledDown}, ${IN_FLIGHT} POSTs in flight`,
      ['jetlet', 'kube-scheduler'],
      [
        ['pods bound per second, first POST to last PodScheduled', fmt(scheduled / seconds, 0), `${KUBE_SCHEDULER_FLOOR} (floor, 5,000 nodes, scheduler_perf)`],
        ['pods created (201) / failed POSTs / bound', `${created}/${failed}/${scheduled}`, '-'],
        ['creation rate (pods/s, API)', fmt(created / ((createdAt - startedAt) / 1000), 0), '-'],
        ['seconds, first POST to last bound', fmt(seconds, 1), '-'],
      ],
    );
  } finally {
    await Promise.all(procs.map((p) => p.stop()));
    await nc.close();
    await cluster.stop();
  }
}

/** (c) an agent's death (SIGKILL of its process) to its node showing Ready=Unknown. */
async function nodeDeath(): Promise<void> {
  const cluster = await Cluster.start({ NODE_GRACE_SECONDS: String(GRACE) });
  const prefix = uniqueName('dead');
  const node = `${prefix}-0`;
  const proc = spawnHollow(cluster.nats.url, prefix, 1, { HEARTBEAT_SECONDS: '1' });
  try {
    await proc.waitForLine(HOLLOW_READY);
    await waitFor('node Ready', async () => (await readyNodes(cluster, prefix)) === 1, 30_000, 200);
    await sleep(2000);
    const killedAt = performance.now();
    await proc.stop('SIGKILL');
    await waitFor(
      'Ready=Unknown',
      async () => {
        const { body } = await cluster.request<{ status: { conditions?: Array<{ type: string; status: string }> } }>('GET', `/api/v1/nodes/${node}`);
        return body.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'Unknown');
      },
      GRACE * 1000 + 30_000,
      50,
    );
    const seconds = (performance.now() - killedAt) / 1000;
    printTable(
      `node death: SIGKILL of a hollow agent (HEARTBEAT_SECONDS=1) to Ready=Unknown in /api/v1/nodes`,
      ['measured', 'configured'],
      [['seconds', fmt(seconds, 2), `${GRACE} (NODE_GRACE_SECONDS)`]],
    );
  } finally {
    await proc.stop('SIGKILL');
    await cluster.stop();
  }
}

const only = process.env.BENCH_ONLY;
if (!only || only === 'death') await nodeDeath();
if (!only || only === 'scale') await scale();
