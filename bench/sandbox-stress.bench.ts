import type { Pod } from '#contracts';
import { Cluster, uniqueName } from '../test/harness/cluster.js';
import { waitFor } from '../test/harness/processes.js';
import { createPods, fmt, printTable, workTimeoutMs } from './bench-util.js';

const PODS = Number(process.env.BENCH_STRESS_PODS ?? 100);
const RUNS = Number(process.env.BENCH_STRESS_RUNS ?? 5);

interface Run {
  name: string;
  runningAtKill?: number;
  convergeMs: number;
  sandboxes: number;
  apps: number;
  podsWithExtraSandbox: number;
  podsWithExtraApp: number;
}

/**
 * Exactly one sandbox per pod, under the fault that once gave a pod two: a rollout of PODS
 * pods on one node, its agent SIGKILLed when a quarter of them run, then started again.
 * Each run counts the pods left with more than one sandbox or app container once every pod
 * runs again (and three more sync passes went by); any is a failure. The baseline row is
 * the same rollout without a kill, in the same run.
 */
async function rollout(cluster: Cluster, name: string, kill: boolean): Promise<Run> {
  const node = uniqueName('bench-stress');
  const namespace = uniqueName('stress');
  const agent = await cluster.startAgent(node);
  try {
    const start = performance.now();
    const creating = createPods(
      cluster,
      namespace,
      Array.from({ length: PODS }, (_, i) => ({
        metadata: { name: `pod-${i}` },
        spec: { nodeName: node, terminationGracePeriodSeconds: 0, containers: [{ name: 'main', image: 'jetlet/busybox:1.35', command: ['sleep', '3600'] }] },
      })),
    );
    creating.catch(() => undefined); // awaited below; a failure while the kill is prepared is reported there
    const runningApps = async (): Promise<number> =>
      (await cluster.containersOf(node)).filter((c) => c.Labels['io.jetlet.kind'] === 'container' && c.State === 'running').length;
    let runningAtKill: number | undefined;
    let from = start;
    if (kill) {
      await waitFor('a quarter of the pods running', async () => (await runningApps()) >= PODS / 4, workTimeoutMs(PODS), 50);
      await agent.stop('SIGKILL');
      runningAtKill = await runningApps();
      from = performance.now();
      await cluster.startAgent(node);
    }
    await creating;
    await waitFor(
      `all ${PODS} pods Running`,
      async () => {
        const { body } = await cluster.request<{ items: Pod[] }>('GET', `/api/v1/namespaces/${namespace}/pods`);
        return body.items.filter((p) => p.status.phase === 'Running' && (p.status.containerStatuses ?? []).every((s) => s.state.running)).length === PODS;
      },
      workTimeoutMs(PODS),
      500,
    );
    const convergeMs = performance.now() - from;
    // Duplicates created late would show within a few more passes.
    await cluster.waitForPasses(node, 3, workTimeoutMs(PODS));
    const containers = await cluster.containersOf(node);
    const perPod = (kind: string): Map<string, number> => {
      const counts = new Map<string, number>();
      for (const c of containers.filter((x) => x.Labels['io.jetlet.kind'] === kind)) {
        const uid = c.Labels['io.jetlet.pod.uid'] ?? '';
        counts.set(uid, (counts.get(uid) ?? 0) + 1);
      }
      return counts;
    };
    const sandboxes = perPod('sandbox');
    const apps = perPod('container');
    const sum = (m: Map<string, number>): number => [...m.values()].reduce((a, b) => a + b, 0);
    return {
      name,
      ...(runningAtKill !== undefined ? { runningAtKill } : {}),
      convergeMs,
      sandboxes: sum(sandboxes),
      apps: sum(apps),
      podsWithExtraSandbox: [...sandboxes.values()].filter((n) => n > 1).length,
      podsWithExtraApp: [...apps.values()].filter((n) => n > 1).length,
    };
  } finally {
    await cluster.stopAgentAndClean(node);
  }
}

async function main(): Promise<void> {
  const cluster = await Cluster.start();
  const runs: Run[] = [];
  try {
    runs.push(await rollout(cluster, 'no kill (baseline)', false));
    for (let i = 1; i <= RUNS; i++) runs.push(await rollout(cluster, `run ${i}: SIGKILL mid-rollout`, true));
  } finally {
    await cluster.stop();
  }
  printTable(
    `one sandbox per pod: ${PODS}-pod rollouts on one node, the agent SIGKILLed when a quarter run (seconds; counts)`,
    // at kill: app containers running when the agent was killed; to Running: seconds from the (re)start to every pod Running;
    // dup sbx / dup app: pods with more than one sandbox / app container at the end.
    ['at kill', 'to Running', 'sandboxes', 'apps', 'dup sbx', 'dup app'],
    runs.map((r) => [
      r.name,
      r.runningAtKill === undefined ? '-' : String(r.runningAtKill),
      fmt(r.convergeMs / 1000, 1),
      String(r.sandboxes),
      String(r.apps),
      String(r.podsWithExtraSandbox),
      String(r.podsWithExtraApp),
    ]),
  );
  const bad = runs.filter((r) => r.podsWithExtraSandbox > 0 || r.podsWithExtraApp > 0 || r.sandboxes !== PODS || r.apps !== PODS);
  if (bad.length > 0) throw new Error(`${bad.length} run(s) did not end with exactly one sandbox and one app container per pod: ${bad.map((r) => r.name).join(', ')}`);
  console.log(`${RUNS} runs × ${PODS} pods: every pod ended with exactly one sandbox and one app container`);
}

await main();
