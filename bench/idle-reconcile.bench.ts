import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Docker from 'dockerode';
import type { Pod } from '#contracts';
import { LABELS } from '#runtime';
import { AGENT_BUNDLE, AGENT_LAUNCH, AGENT_MODULES, Cluster, NODE_DEFAULTS, uniqueName, type Launch } from '../test/harness/cluster.js';
import { sleep, waitFor } from '../test/harness/processes.js';
import { fmt, printTable, rssKiB, scrape, sumMetric, workTimeoutMs, type MetricSample } from './bench-util.js';

const PODS = 110;
const NS = 'bench';
const IDLE_WINDOW_MS = 20_000;
const EMPTY_WINDOW_MS = 10_000;
const CALLS = 'jetlet_runtime_docker_calls_total';
const PASSES = 'jetlet_reconcile_duration_seconds_count';
const PASS_SECONDS = 'jetlet_reconcile_duration_seconds_sum';
const RELISTS = 'kubelet_pleg_relist_duration_seconds_count';
const RELIST_SECONDS = 'kubelet_pleg_relist_duration_seconds_sum';
/** Direct list calls timed for the floor. */
const FLOOR_LISTS = 20;
/** The kubelet's generic PLEG relist asks the runtime for sandboxes and containers: 2 CRI list calls a second, whatever the pod count. */
const KUBELET_RELIST_CALLS = 2;

interface Window {
  seconds: number;
  passes: number;
  meanPassMs: number;
  /** The pass's list of the node's containers (the PLEG relist), Docker's time and the decoding. */
  meanListMs: number;
  callsPerPass: number;
  byCall: Map<string, number>;
}

/** Scrapes the agent's /metrics twice `ms` apart and turns the deltas into per-pass figures. */
async function idleWindow(url: string, ms: number): Promise<Window> {
  const before = await scrape(url);
  const start = performance.now();
  await sleep(ms);
  const after = await scrape(url);
  const seconds = (performance.now() - start) / 1000;
  const delta = (name: string, filter?: (labels: Record<string, string>) => boolean): number =>
    sumMetric(after, name, filter) - sumMetric(before, name, filter);
  const passes = delta(PASSES);
  const calls = new Set([...before, ...after].filter((s: MetricSample) => s.name === CALLS).map((s) => s.labels['call'] ?? ''));
  const byCall = new Map([...calls].sort().map((call) => [call, delta(CALLS, (l) => l['call'] === call) / passes]));
  return {
    seconds,
    passes,
    meanPassMs: (delta(PASS_SECONDS) / passes) * 1000,
    meanListMs: (delta(RELIST_SECONDS) / delta(RELISTS)) * 1000,
    callsPerPass: delta(CALLS) / passes,
    byCall,
  };
}

/** The same list call as the pass's (every container of the node, by label), made by this process straight to the engine: Docker's own floor. */
async function dockerListMs(node: string): Promise<number> {
  const docker = new Docker();
  const samples: number[] = [];
  for (let i = 0; i < FLOOR_LISTS; i++) {
    const start = performance.now();
    await docker.listContainers({ all: true, filters: { label: [`${LABELS.node}=${node}`] } });
    samples.push(performance.now() - start);
  }
  return samples.reduce((a, b) => a + b, 0) / samples.length;
}

/** What an agent's memory holds, from its /metrics (prom-client's Node.js figures) and /proc. */
interface Memory {
  rssMiB: number;
  heapUsedMiB: number;
  heapTotalMiB: number;
  externalMiB: number;
}

async function memoryOf(url: string, pid: number): Promise<Memory> {
  const samples = await scrape(url);
  const mib = (name: string): number => sumMetric(samples, name) / 2 ** 20;
  return {
    rssMiB: rssKiB(pid) / 1024,
    heapUsedMiB: mib('nodejs_heap_size_used_bytes'),
    heapTotalMiB: mib('nodejs_heap_size_total_bytes'),
    externalMiB: mib('nodejs_external_memory_bytes'),
  };
}

/**
 * The floors under an agent's memory, each in a fresh process: Node.js alone, and Node.js with
 * the agent's modules loaded (nothing started), with V8's default heap sizing and with the
 * agent's own (`--optimize-for-size`, set by its entry point).
 */
async function floorsMiB(): Promise<{ node: number; loaded: number; loadedForSize: number }> {
  const run = promisify(execFile);
  const report = 'global.gc(); console.log(process.memoryUsage().rss)';
  const rss = async (script: string): Promise<number> =>
    Number((await run(process.execPath, ['--expose-gc', '--input-type=module', '-e', script])).stdout) / 2 ** 20;
  const load = `await import(${JSON.stringify(join(process.cwd(), 'dist/apps/agent/src/agent.module.js'))});`;
  return {
    node: await rss(report),
    loaded: await rss(`${load} ${report}`),
    loadedForSize: await rss(`(await import('node:v8')).setFlagsFromString('--optimize-for-size'); ${load} ${report}`),
  };
}

async function listPods(cluster: Cluster): Promise<Pod[]> {
  const { status, body } = await cluster.request<{ items: Pod[] }>('GET', `/api/v1/namespaces/${NS}/pods`);
  if (status !== 200) throw new Error(`listing pods answered ${status}`);
  return body.items;
}

const running = (pod: Pod): boolean => pod.status.phase === 'Running' && (pod.status.containerStatuses ?? []).every((s) => s.state.running !== undefined);

async function main(): Promise<void> {
  const cluster = await Cluster.start();
  const node = uniqueName('bench-idle');
  try {
    const idleEnv = { RESYNC_SECONDS: '1', HEARTBEAT_SECONDS: '10' };
    const agent = await cluster.startAgent(node, idleEnv);
    const pid = agent.child.pid ?? 0;
    const url = cluster.agentUrl(node);
    await sleep(3000); // let start-up passes and registration settle
    const empty = await idleWindow(url, EMPTY_WINDOW_MS);
    const memoryEmpty = await memoryOf(url, pid);
    const floorEmpty = await dockerListMs(node);

    const createStart = performance.now();
    for (let i = 0; i < PODS; i++) {
      await cluster.createPod(NS, {
        metadata: { name: `idle-${i}` },
        spec: { terminationGracePeriodSeconds: 0, containers: [{ name: 'main', image: 'jetlet/busybox:1.35', command: ['sleep', '3600'] }] },
      });
    }
    await cluster.withLogs(
      waitFor(
        `${PODS} pods Running`,
        async () => {
          const pods = await listPods(cluster);
          return pods.length === PODS && pods.every(running);
        },
        workTimeoutMs(PODS),
        1000,
      ),
    );
    console.log(`${PODS} pods created and Running in ${((performance.now() - createStart) / 1000).toFixed(1)} s`);
    await sleep(3000); // status reports of the last starts
    const full = await idleWindow(url, IDLE_WINDOW_MS);
    const memoryFull = await memoryOf(url, pid);
    const floors = await floorsMiB();
    const floorFull = await dockerListMs(node);

    // The baseline, same pods: the agent started again listing every pass (no list kept between passes).
    await agent.stop();
    const listing = await cluster.startAgent(node, { ...idleEnv, PLEG_RELIST_SECONDS: '0' });
    await cluster.withLogs(waitFor(`${PODS} pods Running after the restart`, async () => (await listPods(cluster)).every(running), workTimeoutMs(PODS), 1000));
    await sleep(3000); // the restarted agent's first passes and status reports
    const everyPass = await idleWindow(url, IDLE_WINDOW_MS);

    // Memory after a restart on the same pods, the agent as it ships and its baseline (its modules
    // loaded file by file): each adopts the running pods rather than starts them, and is as long idle.
    await listing.stop();
    const memoryAfterRestart = async (entry: string, launch: Launch): Promise<Memory> => {
      const restarted = await cluster.startAgent(node, idleEnv, true, entry, launch);
      await cluster.withLogs(
        waitFor(`${PODS} pods Running after the restart`, async () => (await listPods(cluster)).every(running), workTimeoutMs(PODS), 1000),
      );
      await sleep(3000);
      await idleWindow(url, IDLE_WINDOW_MS);
      const memory = await memoryOf(url, restarted.child.pid ?? 0);
      await restarted.stop();
      return memory;
    };
    const memoryBundle = await memoryAfterRestart(AGENT_BUNDLE, AGENT_LAUNCH);
    const memoryBundleDefaults = await memoryAfterRestart(AGENT_BUNDLE, NODE_DEFAULTS);
    const memoryModules = await memoryAfterRestart(AGENT_MODULES, NODE_DEFAULTS);

    // Calls made in any window, by name (the rest stay at zero while idle).
    const windows = [empty, full, everyPass];
    const calls = [...new Set(windows.flatMap((w) => [...w.byCall.keys()]))].filter((c) => windows.some((w) => (w.byCall.get(c) ?? 0) > 0)).sort();
    const reconcileCalls = (w: Window): number => w.callsPerPass - (w.byCall.get('container_stats') ?? 0);
    printTable(
      `idle reconcile, RESYNC_SECONDS=1: agent with 0 pods (${empty.seconds.toFixed(0)} s) vs ${PODS} running pods (${full.seconds.toFixed(0)} s), ` +
        `and the baseline: the same ${PODS} pods listed every pass (PLEG_RELIST_SECONDS=0, ${everyPass.seconds.toFixed(0)} s)`,
      ['0 pods', `${PODS} pods`, `${PODS} pods, a list every pass`],
      [
        ['reconcile passes per second', ...windows.map((w) => fmt(w.passes / w.seconds, 2))],
        ['mean time per pass (ms)', ...windows.map((w) => fmt(w.meanPassMs, 2))],
        ["  the pass's list of the node's containers (PLEG relist, kept or asked for, ms)", ...windows.map((w) => fmt(w.meanListMs, 2))],
        ['  the rest: admit, plan, probes, status (ms)', ...windows.map((w) => fmt(w.meanPassMs - w.meanListMs, 2))],
        [`Docker's own floor: the same list call from outside, mean of ${FLOOR_LISTS} (ms)`, fmt(floorEmpty, 2), fmt(floorFull, 2), fmt(floorFull, 2)],
        ['  target, 110 pods (ms)', '-', 10, '-'],
        ['Docker API calls per pass, all', ...windows.map((w) => fmt(w.callsPerPass, 2))],
        // The stats collector samples each running container every 10 s (cAdvisor's housekeeping), apart from the passes.
        ['Docker API calls per pass, reconcile only (all but container_stats)', ...windows.map((w) => fmt(reconcileCalls(w), 2))],
        ...calls.map((call) => [`  ${call}`, ...windows.map((w) => fmt(w.byCall.get(call) ?? 0, 2))]),
        ['kubelet generic PLEG: CRI list calls per relist (reference)', KUBELET_RELIST_CALLS, KUBELET_RELIST_CALLS, KUBELET_RELIST_CALLS],
        ['agent resident memory, VmRSS (MiB)', fmt(memoryEmpty.rssMiB, 1), fmt(memoryFull.rssMiB, 1), '-'],
        ['  V8 heap in use (MiB)', fmt(memoryEmpty.heapUsedMiB, 1), fmt(memoryFull.heapUsedMiB, 1), '-'],
        ['  V8 heap reserved (MiB)', fmt(memoryEmpty.heapTotalMiB, 1), fmt(memoryFull.heapTotalMiB, 1), '-'],
        ['  outside the heap: buffers, WebAssembly memory (MiB)', fmt(memoryEmpty.externalMiB, 1), fmt(memoryFull.externalMiB, 1), '-'],
        [`after a restart on the same ${PODS} pods, as it ships (one file, its launch settings), VmRSS (MiB)`, '-', fmt(memoryBundle.rssMiB, 1), '-'],
        ['  V8 heap in use (MiB)', '-', fmt(memoryBundle.heapUsedMiB, 1), '-'],
        ['  outside the heap: buffers, WebAssembly memory (MiB)', '-', fmt(memoryBundle.externalMiB, 1), '-'],
        ["  the same file with Node's and glibc's defaults, VmRSS (MiB)", '-', fmt(memoryBundleDefaults.rssMiB, 1), '-'],
        ["  baseline, the same restart from its modules file by file, Node's and glibc's defaults, VmRSS (MiB)", '-', fmt(memoryModules.rssMiB, 1), '-'],
        ['    V8 heap in use (MiB)', '-', fmt(memoryModules.heapUsedMiB, 1), '-'],
        ['    outside the heap: buffers, WebAssembly memory (MiB)', '-', fmt(memoryModules.externalMiB, 1), '-'],
        ['floor: Node.js alone, VmRSS (MiB)', fmt(floors.node, 1), fmt(floors.node, 1), '-'],
        [
          "floor: Node.js with the agent's modules loaded file by file, nothing started, V8's default sizing (MiB)",
          fmt(floors.loaded, 1),
          fmt(floors.loaded, 1),
          '-',
        ],
        ['floor: the same, sized as the agent runs (--optimize-for-size) (MiB)', fmt(floors.loadedForSize, 1), fmt(floors.loadedForSize, 1), '-'],
        ['target (the kubelet runs in 50-100 MB)', '-', 80, '-'],
      ],
    );

    for (const pod of await listPods(cluster)) await cluster.request('DELETE', `/api/v1/namespaces/${NS}/pods/${pod.metadata.name}?gracePeriodSeconds=0`);
    await cluster.withLogs(waitFor(`${PODS} pods to be deleted`, async () => (await listPods(cluster)).length === 0, workTimeoutMs(PODS), 1000));
  } finally {
    await cluster.stop();
  }
}

await main();
