import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { Pod } from '#contracts';
import { Cluster, uniqueName } from '../test/harness/cluster.js';
import { HOLLOW_READY, readyHollowNodes, spawnHollow } from '../test/harness/hollow.js';
import { sleep, waitFor, type ManagedProcess } from '../test/harness/processes.js';
import { cpuSeconds, fmt, printTable, rssKiB, scrape, sumMetric, summary, workTimeoutMs } from './bench-util.js';

/** Sizes; the environment may lower them for a quick run. */
const NODES = Number(process.env.BENCH_HOLLOW_NODES ?? 1000);
const NODES_PER_PROCESS = Number(process.env.BENCH_HOLLOW_PER_PROCESS ?? 250);
const PODS = Number(process.env.BENCH_SCHED_PODS ?? 10_000);
/** The same-run baseline: one binding at a time, every node filtered and scored (the scheduler before pipelining and sampling). */
const SERIAL_PODS = Number(process.env.BENCH_SCHED_SERIAL_PODS ?? 1000);
/** Pods queued for a fresh scheduler, the API out of the way. */
const BACKLOG_PODS = Number(process.env.BENCH_SCHED_BACKLOG_PODS ?? 10_000);
/** How cost grows with the cluster: `nodes:pods` pairs, lighter settings for the largest. */
const GROWTH = (process.env.BENCH_GROWTH ?? '100:2000,5000:3000')
  .split(',')
  .filter(Boolean)
  .map((pair) => pair.split(':').map(Number) as [number, number]);
const WINDOW_MS = Number(process.env.BENCH_LOAD_WINDOW_MS ?? 30_000);
const IN_FLIGHT = 50;
/** Creation stops here; the bench then reports what it got. */
const SCHED_DEADLINE_MS = 240_000;
const KUBE_SCHEDULER_FLOOR = 680; // pods/s, scheduler_perf's floor for 5,000 nodes
const GRACE = 5;
const SERIAL = { BINDS_IN_FLIGHT: '1', PERCENTAGE_OF_NODES_TO_SCORE: '100' };

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

/** Starts `nodes` hollow agents, NODES_PER_PROCESS to a process, and waits until all are Ready in the API. */
async function startHollowNodes(cluster: Cluster, prefix: string, nodes: number, env: Record<string, string>): Promise<ManagedProcess[]> {
  const procs: ManagedProcess[] = [];
  for (let first = 0; first < nodes; first += NODES_PER_PROCESS)
    procs.push(spawnHollow(cluster.nats.url, prefix, Math.min(NODES_PER_PROCESS, nodes - first), env, first));
  try {
    await Promise.all(
      procs.map((p) =>
        p.waitForLine(HOLLOW_READY, 600_000).catch(async (error: unknown) => {
          // The tail rarely shows why: the process's whole log is kept for reading.
          throw new Error(`${(error as Error).message}\nits whole log: ${await keepLog(p)}`, { cause: error });
        }),
      ),
    );
    await waitFor(`${nodes} hollow nodes Ready`, async () => (await readyHollowNodes(cluster, prefix)) === nodes, workTimeoutMs(nodes, 500), 1000);
  } catch (error) {
    // The caller never gets them: stop them here, or they outlive the run.
    await Promise.all(procs.map((p) => p.stop()));
    throw error;
  }
  return procs;
}

/** The scheduler's /metrics address, from the line it logs at start. */
async function metricsUrl(scheduler: ManagedProcess): Promise<string> {
  const line = await scheduler.waitForLine(/metrics on http:\/\/\S+\/metrics/);
  const match = /(http:\/\/\S+)\/metrics/.exec(line);
  if (!match?.[1]) throw new Error(`no metrics address in ${line}`);
  return match[1];
}

interface Throughput {
  nodes: number;
  created: number;
  failed: number;
  bound: number;
  boundPerSecond: number;
  createdPerSecond: number;
  createP50Ms: number;
  createP99Ms: number;
  schedulerCpuPercent: number;
  schedulerRssMiB: number;
  messagesPerSecond: number;
  /** Scheduler seconds by phase over the run, and its whole CPU time. */
  candidatesSeconds: number;
  filterScoreSeconds: number;
  bindSeconds: number;
  cpuSeconds: number;
  seconds: number;
}

/**
 * POSTs `pods` pods, IN_FLIGHT at a time, and follows every PodScheduled on the pods'
 * subjects (a core subscription sees every append): bound pods per second from the first
 * POST to the last binding, each create's latency, and where the scheduler's time went.
 */
async function throughput(
  cluster: Cluster,
  nc: NatsConnection,
  scheduler: ManagedProcess,
  namespace: string,
  pods: number,
  nodes: number,
): Promise<Throughput> {
  const url = await metricsUrl(scheduler);
  const pid = scheduler.child.pid ?? 0;
  let bound = 0;
  let lastBoundAt = 0;
  const prefix = `jetlet.pods.${namespace}.`;
  const sub = nc.subscribe(`${prefix}>`, {
    callback: (error, msg) => {
      if (error) return;
      if (msg.json<{ type: string }>().type === 'PodScheduled') {
        bound++;
        lastBoundAt = performance.now();
      }
    },
  });
  await nc.flush();
  await cluster.ensureNamespace(namespace);
  const before = await scrape(url);
  const [m0, c0] = [await appended(nc), cpuSeconds(pid)];
  const startedAt = performance.now();
  const latencies: number[] = [];
  let next = 0;
  let created = 0;
  let failed = 0;
  const post = async (): Promise<void> => {
    while (next < pods && performance.now() - startedAt < SCHED_DEADLINE_MS) {
      const i = next++;
      const sent = performance.now();
      const { status } = await cluster.request<Pod>('POST', `/api/v1/namespaces/${namespace}/pods`, {
        metadata: { name: `s-${i}` },
        spec: { terminationGracePeriodSeconds: 0, containers: [{ name: 'main', image: 'jetlet/busybox:1.35', command: ['sleep', '3600'] }] },
      });
      latencies.push(performance.now() - sent);
      if (status === 201) created++;
      else failed++;
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, post));
  const createdAt = performance.now();
  await waitFor(`${created} pods bound`, () => bound >= created, Math.max(30_000, SCHED_DEADLINE_MS + 60_000 - (createdAt - startedAt)), 200).catch(
    () => undefined,
  );
  const seconds = ((bound > 0 ? lastBoundAt : performance.now()) - startedAt) / 1000;
  const [m1, c1] = [await appended(nc), cpuSeconds(pid)];
  const after = await scrape(url);
  sub.unsubscribe();
  const phase = (name: string): number =>
    sumMetric(after, 'jetlet_scheduler_phase_seconds_total', (l) => l.phase === name) -
    sumMetric(before, 'jetlet_scheduler_phase_seconds_total', (l) => l.phase === name);
  const { p50, p99 } = summary(latencies);
  return {
    nodes,
    created,
    failed,
    bound,
    boundPerSecond: bound / seconds,
    createdPerSecond: created / ((createdAt - startedAt) / 1000),
    createP50Ms: p50,
    createP99Ms: p99,
    schedulerCpuPercent: ((c1 - c0) / seconds) * 100,
    schedulerRssMiB: rssKiB(pid) / 1024,
    messagesPerSecond: (m1 - m0) / seconds,
    candidatesSeconds: phase('candidates'),
    filterScoreSeconds: phase('filter_score'),
    bindSeconds: phase('bind'),
    cpuSeconds: c1 - c0,
    seconds,
  };
}

interface Backlog {
  created: number;
  bound: number;
  /** First to last PodScheduled: the scheduler's own rate, the API out of the way. */
  boundPerSecond: number;
  /** Scheduler spawned to its first PodScheduled: process start, reading the pods stream, first decisions. */
  firstBindSeconds: number;
  cpuPercent: number;
  filterScoreMsPerPod: number;
  bindMeanMs: number;
  passes: number;
  cpuMsPerBind: number;
  /** CPU ms per pod bound from the first binding on, by process: where a binding's cost goes across the cluster. */
  cpuMsPerBindBy: Record<string, number>;
}

/**
 * The scheduler's throughput with the API out of the way, as scheduler_perf measures it: the
 * running scheduler is stopped, `pods` pods are created (they stay Pending), and a fresh
 * scheduler starts on that backlog; pods bound per second from its first PodScheduled to its last.
 */
async function backlog(
  cluster: Cluster,
  nc: NatsConnection,
  namespace: string,
  pods: number,
  env: Record<string, string>,
  hollow: ManagedProcess[],
  pauseNodes: boolean,
): Promise<Backlog> {
  await cluster.scheduler.stop();
  await cluster.ensureNamespace(namespace);
  let next = 0;
  let created = 0;
  const post = async (): Promise<void> => {
    while (next < pods) {
      const i = next++;
      const { status } = await cluster.request<Pod>('POST', `/api/v1/namespaces/${namespace}/pods`, {
        metadata: { name: `b-${i}` },
        spec: { terminationGracePeriodSeconds: 0, containers: [{ name: 'main', image: 'jetlet/busybox:1.35', command: ['sleep', '3600'] }] },
      });
      if (status === 201) created++;
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, post));
  let bound = 0;
  let firstBoundAt = 0;
  let lastBoundAt = 0;
  let pid = 0;
  let cpuAtFirstBind = Number.NaN;
  // Everything else a binding costs: the API's projection, the nodes acting on it, the server.
  const others: Array<[string, number]> = [
    ['API', cluster.api.child.pid ?? 0],
    ['NATS', cluster.nats.pid ?? 0],
    ...hollow.map((h): [string, number] => ['hollow nodes', h.child.pid ?? 0]),
  ];
  let othersAtFirstBind: number[] = [];
  const sub = nc.subscribe(`jetlet.pods.${namespace}.>`, {
    callback: (error, msg) => {
      if (error || msg.json<{ type: string }>().type !== 'PodScheduled') return;
      bound++;
      lastBoundAt = performance.now();
      if (firstBoundAt === 0) {
        firstBoundAt = lastBoundAt;
        if (pid > 0) cpuAtFirstBind = cpuSeconds(pid);
        othersAtFirstBind = others.map(([, p]) => cpuSeconds(p));
      }
    },
  });
  await nc.flush();
  // scheduler_perf's setting: node objects and no kubelets. The agents stop acting on what is
  // bound (SIGSTOP) and resume afterwards; their silence is not a NotReady, by a long grace.
  if (pauseNodes) for (const h of hollow) h.child.kill('SIGSTOP');
  const spawnedAt = performance.now();
  let cpu: number;
  let othersCpu: number[];
  let metrics: Awaited<ReturnType<typeof scrape>>;
  try {
    const schedulerEnv = pauseNodes ? { ...env, NODE_GRACE_SECONDS: '3600' } : env;
    const scheduler = await cluster.startExtraScheduler(schedulerEnv, 120_000, (spawned) => (pid = spawned.child.pid ?? 0));
    const url = await metricsUrl(scheduler);
    await waitFor(`${created} backlog pods bound`, () => bound >= created, workTimeoutMs(created, 20), 200).catch(() => undefined);
    cpu = cpuSeconds(pid);
    othersCpu = others.map(([, p]) => cpuSeconds(p));
    metrics = await scrape(url);
    // The next backlog starts with no scheduler running, as this one did.
    await scheduler.stop();
  } finally {
    if (pauseNodes) for (const h of hollow) h.child.kill('SIGCONT');
  }
  const cpuMsPerBindBy: Record<string, number> = {};
  for (const [i, [name]] of others.entries()) {
    cpuMsPerBindBy[name] = (cpuMsPerBindBy[name] ?? 0) + (((othersCpu[i] ?? 0) - (othersAtFirstBind[i] ?? Number.NaN)) * 1000) / Math.max(1, bound - 1);
  }
  sub.unsubscribe();
  const phase = (name: string): number => sumMetric(metrics, 'jetlet_scheduler_phase_seconds_total', (l) => l.phase === name);
  const seconds = Math.max(0.001, (lastBoundAt - firstBoundAt) / 1000);
  return {
    created,
    bound,
    boundPerSecond: bound > 1 ? (bound - 1) / seconds : 0,
    firstBindSeconds: firstBoundAt > 0 ? (firstBoundAt - spawnedAt) / 1000 : Number.NaN,
    // The whole process's CPU over its life, against its life so far.
    cpuPercent: (cpu / ((performance.now() - spawnedAt) / 1000)) * 100,
    filterScoreMsPerPod: (phase('filter_score') * 1000) / Math.max(1, bound),
    bindMeanMs: (phase('bind') * 1000) / Math.max(1, bound),
    passes: sumMetric(metrics, 'jetlet_scheduler_passes_total', () => true),
    // From its first binding on (start-up and catching up left out); NaN when the first came before its pid was known.
    cpuMsPerBind: ((cpu - cpuAtFirstBind) * 1000) / Math.max(1, bound - 1),
    cpuMsPerBindBy,
  };
}

/**
 * JetStream alone, as the API uses it: `pods` publishes of a created pod's size, IN_FLIGHT at a
 * time, each awaiting its ack, on a scratch stream of the same server (the ceiling the API's creates sit under).
 */
async function rawPublishes(nc: NatsConnection, pods: number): Promise<{ perSecond: number; p99Ms: number }> {
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: 'BENCH_RAW', subjects: ['bench.raw.>'] });
  const js = jetstream(nc);
  const payload = new TextEncoder().encode(JSON.stringify({ pad: 'x'.repeat(1500) }));
  const latencies: number[] = [];
  let next = 0;
  const startedAt = performance.now();
  const publish = async (): Promise<void> => {
    while (next < pods) {
      const i = next++;
      const sent = performance.now();
      await js.publish(`bench.raw.${i}`, payload, { expect: { lastSubjectSequence: 0 } });
      latencies.push(performance.now() - sent);
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, publish));
  const seconds = (performance.now() - startedAt) / 1000;
  await jsm.streams.delete('BENCH_RAW');
  return { perSecond: pods / seconds, p99Ms: summary(latencies).p99 };
}

/**
 * The heartbeat of a bench's hollow nodes and the grace the control plane gives it. Past
 * 1,000 nodes the lighter settings the issue allows: at 5,000 nodes beating every 10 s (500
 * messages a second) the scheduler counted every node NotReady on two cores. The grace
 * stays four heartbeats, as 40 s is to 10 s.
 */
function heartbeatFor(nodes: number): { seconds: number; graceSeconds: number } {
  const seconds = nodes > 1000 ? 40 : 10;
  return { seconds, graceSeconds: seconds * 4 };
}

/** Writes everything `p` printed to a file in the temporary directory, for reading after a failure; returns its path. */
async function keepLog(p: ManagedProcess): Promise<string> {
  const file = join(tmpdir(), `${uniqueName(p.name.replace(/\W+/g, '-'))}.log`);
  await writeFile(file, p.output.join('\n') + '\n');
  return file;
}

/** One cluster with `nodes` hollow nodes; `run` gets it once every node is Ready. */
async function withHollowCluster<T>(
  nodes: number,
  env: Record<string, string>,
  run: (cluster: Cluster, nc: NatsConnection, procs: ManagedProcess[], bootSeconds: number) => Promise<T>,
): Promise<T> {
  const beat = heartbeatFor(nodes);
  const cluster = await Cluster.start({ RESYNC_SECONDS: '5', NODE_GRACE_SECONDS: String(beat.graceSeconds), ...env });
  const nc = await connect({ servers: cluster.nats.url });
  let procs: ManagedProcess[] = [];
  try {
    const bootAt = performance.now();
    procs = await startHollowNodes(cluster, uniqueName('hn'), nodes, { HEARTBEAT_SECONDS: String(beat.seconds), RESYNC_SECONDS: '10', LOG_LEVEL: 'warn' });
    const bootSeconds = (performance.now() - bootAt) / 1000;
    await sleep(10_000); // registrations and first status reports settle
    return await run(cluster, nc, procs, bootSeconds);
  } catch (error) {
    // What the control plane said up to the failure, kept for reading, and whether it is busy now.
    const planes = [cluster.api, cluster.scheduler];
    const cpuBefore = planes.map((p) => cpuSeconds(p.child.pid ?? 0));
    await sleep(10_000);
    const kept = await Promise.all(
      planes.map(async (p, i) => {
        const file = await keepLog(p);
        const busy = ((cpuSeconds(p.child.pid ?? 0) - (cpuBefore[i] ?? 0)) / 10) * 100;
        return `${p.name}: ${file} (${fmt(cpuBefore[i] ?? 0, 1)} s of CPU; ${fmt(busy, 0)} % of a core over the last 10 s)`;
      }),
    );
    console.error(`at ${nodes} nodes the control plane's logs: ${kept.join('; ')}`);
    throw error;
  } finally {
    await Promise.all(procs.map((p) => p.stop()));
    await nc.close();
    await cluster.stop();
  }
}

/** (a) + (b): control-plane load with 0 and NODES idle nodes, then scheduler throughput over those nodes beside its serial baseline. */
async function scale(): Promise<Throughput> {
  let empty: Load | undefined;
  {
    const cluster = await Cluster.start({ RESYNC_SECONDS: '5' });
    const nc = await connect({ servers: cluster.nats.url });
    try {
      await sleep(3000);
      empty = await measureLoad(nc, cluster.scheduler.child.pid ?? 0);
    } finally {
      await nc.close();
      await cluster.stop();
    }
  }
  const idle = empty;
  // The serial baseline gets a cluster of its own: a second scheduler started beside a loaded
  // one can spend minutes catching up with the pods stream on a busy machine.
  let serialBacklog: Backlog | undefined;
  const serial = await withHollowCluster(NODES, SERIAL, async (cluster, nc, procs) => {
    const run = await throughput(cluster, nc, cluster.scheduler, 'sched-serial', SERIAL_PODS, NODES);
    serialBacklog = await backlog(cluster, nc, 'backlog-serial', SERIAL_PODS, SERIAL, procs, true).catch((error: unknown) => {
      console.error(`serial backlog failed: ${(error as Error).message}`);
      return undefined;
    });
    return run;
  });
  return withHollowCluster(NODES, {}, async (cluster, nc, procs, bootSeconds) => {
    const hollowRss = procs.map((p) => rssKiB(p.child.pid ?? 0) / 1024);
    const loaded = await measureLoad(nc, cluster.scheduler.child.pid ?? 0);
    printTable(
      `control-plane load, ${(WINDOW_MS / 1000).toFixed(0)} s windows: 0 nodes vs ${NODES} hollow nodes heartbeating every 10 s (${procs.length} processes, all Ready after ${bootSeconds.toFixed(0)} s)`,
      ['0 nodes', `${NODES} nodes`],
      [
        ['JetStream messages appended per second (all streams)', fmt(idle.messagesPerSecond, 1), fmt(loaded.messagesPerSecond, 1)],
        ['  expected from heartbeats alone (nodes / 10 s)', 0, fmt(NODES / 10, 1)],
        ['scheduler CPU (% of one core)', fmt(idle.cpuPercent, 1), fmt(loaded.cpuPercent, 1)],
        ['scheduler resident memory, VmRSS (MiB)', fmt(idle.rssMiB, 0), fmt(loaded.rssMiB, 0)],
        ['hollow process resident memory, VmRSS (MiB, each)', '-', hollowRss.map((r) => fmt(r, 0)).join('/')],
      ],
    );
    const raw = await rawPublishes(nc, 5000);
    // A failure of the real run still shows the baseline.
    let run: Throughput | undefined;
    try {
      run = await throughput(cluster, nc, cluster.scheduler, 'sched', PODS, NODES);
    } finally {
      const r = run;
      const scaledDown = r && r.created < PODS ? ` (scaled down from ${PODS}: creation stopped at the ${SCHED_DEADLINE_MS / 1000} s bound)` : '';
      printTable(
        `scheduler throughput: ${NODES} hollow nodes, ${r?.created ?? 0} pods${scaledDown}, ${IN_FLIGHT} POSTs in flight; baseline: the same scheduler binding one pod at a time over every node (BINDS_IN_FLIGHT=1, PERCENTAGE_OF_NODES_TO_SCORE=100), ${serial.created} pods, same run`,
        ['jetlet', 'serial', 'kube-scheduler'],
        [
          [
            'pods bound per second, first POST to last PodScheduled',
            fmt(r?.boundPerSecond, 0),
            fmt(serial.boundPerSecond, 0),
            `${KUBE_SCHEDULER_FLOOR} (floor, 5,000 nodes)`,
          ],
          [
            'pods created (201) / failed POSTs / bound',
            r ? `${r.created}/${r.failed}/${r.bound}` : '-',
            `${serial.created}/${serial.failed}/${serial.bound}`,
            '-',
          ],
          ['seconds, first POST to last bound', fmt(r?.seconds, 1), fmt(serial.seconds, 1), '-'],
        ],
      );
    }
    const queued = await backlog(cluster, nc, 'backlog', BACKLOG_PODS, {}, procs, true);
    const live = await backlog(cluster, nc, 'backlog-live', BACKLOG_PODS, {}, procs, false);
    const b = serialBacklog;
    const rows = (name: string, value: (r: Backlog) => string | number): (string | number)[] => [name, value(queued), value(live), b ? value(b) : '-'];
    const clusterCpu = (r: Backlog): number => r.cpuMsPerBind + Object.values(r.cpuMsPerBindBy).reduce((a, v) => a + v, 0);
    printTable(
      `scheduler alone over a backlog: ${NODES} hollow nodes; the scheduler is stopped, ${queued.created} pods are created, and a fresh scheduler binds them. ` +
        `Agents paused: as scheduler_perf measures, node objects with no kubelet acting on the bindings. Agents live: every node runs what it is given meanwhile, on the same 2 cores. ` +
        `Baseline: the serial scheduler over ${b?.created ?? 0} pods, agents paused, same run`,
      ['agents paused', 'agents live', 'serial', 'target'],
      [
        [...rows('pods bound per second, first to last PodScheduled', (r) => fmt(r.boundPerSecond, 0)), `1000 (kube-scheduler floor ${KUBE_SCHEDULER_FLOOR})`],
        [...rows('pods bound / created', (r) => `${r.bound}/${r.created}`), '-'],
        [...rows('scheduler spawned to first PodScheduled, s', (r) => fmt(r.firstBindSeconds, 2)), '-'],
        [...rows('scheduler CPU over its life (% of one core)', (r) => fmt(r.cpuPercent, 0)), '-'],
        [...rows('filter/score, CPU ms per pod bound', (r) => fmt(r.filterScoreMsPerPod, 3)), '-'],
        [...rows('bind: PodScheduled sent to PodAssigned stored, mean ms', (r) => fmt(r.bindMeanMs, 1)), '-'],
        [...rows('scheduling passes', (r) => r.passes), '-'],
        [...rows('scheduler CPU ms per pod bound, first binding on', (r) => fmt(r.cpuMsPerBind, 2)), '-'],
        ...['API', 'hollow nodes', 'NATS'].map((name) => [...rows(`  ${name} CPU ms per pod bound, same window`, (r) => fmt(r.cpuMsPerBindBy[name], 2)), '-']),
        [...rows('whole cluster CPU ms per pod bound', (r) => fmt(clusterCpu(r), 2)), '< 2 for 1,000/s on 2 cores'],
      ],
    );
    printTable(
      `where the time goes (same run): API creates beside bare JetStream publishes of the same size and concurrency; the scheduler's CPU by phase`,
      ['jetlet', 'serial', 'baseline'],
      [
        [
          'API: pods created per second (50 in flight)',
          fmt(run.createdPerSecond, 0),
          fmt(serial.createdPerSecond, 0),
          `${fmt(raw.perSecond, 0)} (JetStream publishes/s)`,
        ],
        ['API: one create, p50 ms', fmt(run.createP50Ms, 1), fmt(serial.createP50Ms, 1), '-'],
        ['API: one create, p99 ms', fmt(run.createP99Ms, 1), fmt(serial.createP99Ms, 1), `${fmt(raw.p99Ms, 1)} (publish p99)`],
        ['scheduler CPU (% of one core)', fmt(run.schedulerCpuPercent, 0), fmt(serial.schedulerCpuPercent, 0), '-'],
        [
          '  filter/score, CPU ms per pod bound',
          fmt((run.filterScoreSeconds * 1000) / run.bound, 3),
          fmt((serial.filterScoreSeconds * 1000) / serial.bound, 3),
          '-',
        ],
        [
          '  candidate table (CPU), % of its CPU',
          fmt((100 * run.candidatesSeconds) / run.cpuSeconds, 0),
          fmt((100 * serial.candidatesSeconds) / serial.cpuSeconds, 0),
          '-',
        ],
        [
          '  filter/score, % of its CPU',
          fmt((100 * run.filterScoreSeconds) / run.cpuSeconds, 0),
          fmt((100 * serial.filterScoreSeconds) / serial.cpuSeconds, 0),
          '-',
        ],
        [
          '  bus (decode + validate, encode, NATS client, GC), % of its CPU',
          fmt((100 * (run.cpuSeconds - run.candidatesSeconds - run.filterScoreSeconds)) / run.cpuSeconds, 0),
          fmt((100 * (serial.cpuSeconds - serial.candidatesSeconds - serial.filterScoreSeconds)) / serial.cpuSeconds, 0),
          '-',
        ],
        [
          'bind: PodScheduled sent to PodAssigned stored, mean ms',
          fmt((run.bindSeconds * 1000) / run.bound, 1),
          fmt((serial.bindSeconds * 1000) / serial.bound, 1),
          '-',
        ],
        ['bind: bindings in flight, mean', fmt(run.bindSeconds / run.seconds, 1), fmt(serial.bindSeconds / serial.seconds, 1), '-'],
        ['JetStream messages appended per second', fmt(run.messagesPerSecond, 0), fmt(serial.messagesPerSecond, 0), '-'],
      ],
    );
    return run;
  });
}

/** How cost grows with the number of nodes: the same measurement at each size of GROWTH, beside the NODES run. */
async function growth(main: Throughput | undefined): Promise<void> {
  const runs: Throughput[] = main ? [main] : [];
  const failed: number[] = [];
  for (const [nodes, pods] of GROWTH) {
    try {
      runs.push(await withHollowCluster(nodes, {}, (cluster, nc) => throughput(cluster, nc, cluster.scheduler, 'sched', pods, nodes)));
    } catch (error) {
      failed.push(nodes);
      // fetch says only "fetch failed": what failed is in its cause.
      console.error(`growth run at ${nodes} nodes failed: ${(error as Error).stack ?? String(error)}`, (error as Error).cause ?? '');
    }
  }
  runs.sort((a, b) => a.nodes - b.nodes);
  // A size that failed keeps its column, so the table says which sizes were tried.
  const sizes = [...runs.map((r) => ({ nodes: r.nodes, run: r })), ...failed.map((nodes) => ({ nodes, run: undefined }))];
  const row = (label: string, cell: (r: Throughput) => string): string[] => [label, ...sizes.map(({ run }) => (run ? cell(run) : 'failed'))];
  printTable(
    `how cost grows with the nodes (each size its own cluster in this run; pods created: ${runs.map((r) => `${r.created} at ${r.nodes}`).join(', ') || 'none'}; heartbeats every ${sizes.map(({ nodes }) => `${heartbeatFor(nodes).seconds} s at ${nodes}`).join(', ')})`,
    sizes.map(({ nodes }) => `${nodes} nodes`),
    [
      row('pods bound per second', (r) => fmt(r.boundPerSecond, 0)),
      row('API pods created per second', (r) => fmt(r.createdPerSecond, 0)),
      row('API one create, p99 ms', (r) => fmt(r.createP99Ms, 0)),
      row('scheduler CPU (% of one core)', (r) => fmt(r.schedulerCpuPercent, 0)),
      row('scheduler resident memory (MiB)', (r) => fmt(r.schedulerRssMiB, 0)),
      row('filter/score, CPU ms per pod bound', (r) => fmt((r.filterScoreSeconds * 1000) / r.bound, 3)),
      row('JetStream messages appended per second', (r) => fmt(r.messagesPerSecond, 0)),
    ],
  );
  // The sizes that ran are printed first; a size that failed still fails the bench.
  if (failed.length > 0) throw new Error(`growth runs failed at ${failed.join(', ')} nodes`);
}

/** (c) an agent's death (SIGKILL of its process) to its node showing Ready=Unknown. */
async function nodeDeath(): Promise<void> {
  const cluster = await Cluster.start({ NODE_GRACE_SECONDS: String(GRACE) });
  const prefix = uniqueName('dead');
  const node = `${prefix}-0`;
  const proc = spawnHollow(cluster.nats.url, prefix, 1, { HEARTBEAT_SECONDS: '1' });
  try {
    await proc.waitForLine(HOLLOW_READY);
    await waitFor('node Ready', async () => (await readyHollowNodes(cluster, prefix)) === 1, 30_000, 200);
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

// Each part runs even when one before it fails; any failure fails the bench at the end.
const only = process.env.BENCH_ONLY;
let failures = 0;
const part = async <T>(name: string, run: () => Promise<T>): Promise<T | undefined> => {
  if (only && only !== name) return undefined;
  try {
    return await run();
  } catch (error) {
    failures++;
    console.error(`${name} failed: ${(error as Error).stack ?? String(error)}`, (error as Error).cause ?? '');
    return undefined;
  }
};
await part('death', nodeDeath);
const main = await part('scale', scale);
await part('growth', () => growth(main));
if (failures > 0) process.exitCode = 1;
