import type { Pod } from '#contracts';
import { Cluster, uniqueName } from '../test/harness/cluster.js';
import { sleep, waitFor } from '../test/harness/processes.js';
import { cpuSeconds, fmt, printTable, rssKiB, scrape, sumMetric, workTimeoutMs } from './bench-util.js';

const PODS = 110;
const NS = 'bench';
const WINDOW_MS = 30_000;
const CREATE_CONCURRENCY = 8;
const PROBES = 'jetlet_probe_results_total';
const PORT = 8080;
const PATH = '/healthz';
/** busybox httpd serves files from -h; /healthz must exist or it answers 404. */
const SERVE = `mkdir -p /www && echo ok > /www${PATH} && exec httpd -f -p ${PORT} -h /www`;


interface Window {
  seconds: number;
  cpuPercent: number;
  rssMiB: number;
  probesPerSecond: number;
  failedPerSecond: number;
  byType: Map<string, number>;
}

/** Measures the agent's CPU time and probe runs over `ms`, and its VmRSS at the end. */
async function measure(pid: number, url: string, ms: number): Promise<Window> {
  const before = await scrape(url);
  const cpuBefore = cpuSeconds(pid);
  const start = performance.now();
  await sleep(ms);
  const cpuAfter = cpuSeconds(pid);
  const seconds = (performance.now() - start) / 1000;
  const rssMiB = rssKiB(pid) / 1024;
  const after = await scrape(url);
  const delta = (filter?: (labels: Record<string, string>) => boolean): number => sumMetric(after, PROBES, filter) - sumMetric(before, PROBES, filter);
  const byType = new Map(['liveness', 'readiness', 'startup'].map((t) => [t, delta((l) => l['probe_type'] === t) / seconds]));
  return {
    seconds,
    cpuPercent: ((cpuAfter - cpuBefore) / seconds) * 100,
    rssMiB,
    probesPerSecond: delta() / seconds,
    failedPerSecond: delta((l) => l['result'] === 'failed') / seconds,
    byType,
  };
}

async function listPods(cluster: Cluster): Promise<Pod[]> {
  const { status, body } = await cluster.request<{ items: Pod[] }>('GET', `/api/v1/namespaces/${NS}/pods`);
  if (status !== 200) throw new Error(`listing pods answered ${status}`);
  return body.items;
}

const running = (pod: Pod): boolean => pod.status.phase === 'Running' && (pod.status.containerStatuses ?? []).every((s) => s.state.running !== undefined);
const ready = (pod: Pod): boolean => running(pod) && (pod.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');

function manifest(name: string, withProbes: boolean): object {
  const probe = { httpGet: { path: PATH, port: PORT }, periodSeconds: 1, initialDelaySeconds: 0 };
  return {
    metadata: { name },
    spec: {
      terminationGracePeriodSeconds: 0,
      containers: [
        {
          name: 'web',
          image: 'jetlet/busybox:1.35',
          command: ['sh', '-c', SERVE],
          ...(withProbes ? { livenessProbe: probe, readinessProbe: probe } : {}),
        },
      ],
    },
  };
}

/** Creates PODS pods, a few requests at a time, and waits until every one satisfies `done`; returns the seconds taken. */
async function createAll(cluster: Cluster, prefix: string, withProbes: boolean, what: string, done: (pod: Pod) => boolean, timeoutMs: number): Promise<number> {
  const start = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: CREATE_CONCURRENCY }, async () => {
      while (next < PODS) await cluster.createPod(NS, manifest(`${prefix}-${next++}`, withProbes));
    }),
  );
  let last: Pod[] = [];
  try {
    await cluster.withLogs(
      waitFor(
        `${PODS} pods ${what}`,
        async () => {
          last = await listPods(cluster);
          return last.length === PODS && last.every(done);
        },
        timeoutMs,
        1000,
      ),
    );
  } catch (error) {
    throw new Error(`${last.filter(done).length}/${last.length} pods ${what}`, { cause: error });
  }
  return (performance.now() - start) / 1000;
}

async function deleteAll(cluster: Cluster, timeoutMs: number): Promise<number> {
  const start = performance.now();
  const pods = await listPods(cluster);
  for (const pod of pods) await cluster.request('DELETE', `/api/v1/namespaces/${NS}/pods/${pod.metadata.name}?gracePeriodSeconds=0`);
  await cluster.withLogs(waitFor(`${pods.length} pods to be deleted`, async () => (await listPods(cluster)).length === 0, timeoutMs, 1000));
  return (performance.now() - start) / 1000;
}

async function main(): Promise<void> {
  // Every wait scales with the pods it waits for (a fixed budget timed out on a busy machine).
  const wait = workTimeoutMs(PODS);
  const cluster = await Cluster.start();
  const node = uniqueName('bench-probes');
  try {
    const agent = await cluster.startAgent(node, { RESYNC_SECONDS: '10', HEARTBEAT_SECONDS: '10' });
    const pid = agent.child.pid ?? 0;
    const url = cluster.agentUrl(node);

    // Phase A: the pods without probes.
    const upA = await createAll(cluster, 'plain', false, 'Running', running, wait);
    console.log(`A: ${PODS} pods without probes created and Running in ${upA.toFixed(1)} s`);
    await sleep(3000); // status reports of the last starts
    const a = await measure(pid, url, WINDOW_MS);
    const goneA = await deleteAll(cluster, wait);
    console.log(`A: ${PODS} pods deleted in ${goneA.toFixed(1)} s`);

    // Phase B: the same pods with an httpGet liveness and readiness probe every second.
    const upB = await createAll(cluster, 'probed', true, 'Ready', ready, wait);
    console.log(`B: ${PODS} pods with probes created and Ready in ${upB.toFixed(1)} s`);
    await sleep(3000);
    const b = await measure(pid, url, WINDOW_MS);
    const notReady = (await listPods(cluster)).filter((p) => !ready(p)).map((p) => p.metadata.name);

    printTable(
      `probe cost: agent with ${PODS} httpd pods, RESYNC_SECONDS=10, windows of ${a.seconds.toFixed(0)} s / ${b.seconds.toFixed(0)} s`,
      ['without probes', 'with probes', 'difference'],
      [
        ['agent CPU (% of one core)', fmt(a.cpuPercent, 1), fmt(b.cpuPercent, 1), fmt(b.cpuPercent - a.cpuPercent, 1)],
        ['agent VmRSS (MiB)', fmt(a.rssMiB, 1), fmt(b.rssMiB, 1), fmt(b.rssMiB - a.rssMiB, 1)],
        ['probes run per second', fmt(a.probesPerSecond, 1), fmt(b.probesPerSecond, 1), fmt(b.probesPerSecond - a.probesPerSecond, 1)],
      ],
    );
    const types = [...b.byType].filter(([, perSecond]) => perSecond > 0).map(([type, perSecond]) => `${type} ${fmt(perSecond, 1)}/s`);
    console.log(`with probes: expected ${2 * PODS}/s (${types.join(', ')}); failed ${fmt(b.failedPerSecond, 1)}/s; not Ready at the end: ${notReady.length}`);

    const goneB = await deleteAll(cluster, wait);
    console.log(`B: ${PODS} pods deleted in ${goneB.toFixed(1)} s`);
  } finally {
    await cluster.stop();
  }
}

await main();
