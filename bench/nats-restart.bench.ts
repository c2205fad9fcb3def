import type { Pod } from '#contracts';
import { Cluster, uniqueName } from '../test/harness/cluster.js';
import { waitFor } from '../test/harness/processes.js';
import { fmt, printTable, summary } from './bench-util.js';

const NS = 'bench';
const ROUNDS = Number(process.env.BENCH_NATS_ROUNDS ?? 3);
const REFUSALS = 5;

const manifest = (name: string, node: string): object => ({
  metadata: { name },
  spec: { nodeName: node, terminationGracePeriodSeconds: 0, containers: [{ name: 'main', image: 'jetlet/busybox:1.35', command: ['sleep', '3600'] }] },
});

/** POSTs a pod; returns the status and the ms the answer took. */
async function timedCreate(cluster: Cluster, name: string, node: string): Promise<{ status: number; ms: number }> {
  const start = performance.now();
  await cluster.ensureNamespace(NS);
  const { status } = await cluster.request<Pod>('POST', `/api/v1/namespaces/${NS}/pods`, manifest(name, node));
  return { status, ms: performance.now() - start };
}

async function running(cluster: Cluster, name: string): Promise<boolean> {
  const pod = await cluster.getPod(NS, name);
  return pod?.status.phase === 'Running';
}

/**
 * A NATS SIGKILL and restart on the same port and data directory, beside the same steps
 * with NATS up: how fast writes are refused during the outage, how long after the server
 * is back the first create succeeds, and when that pod runs.
 */
async function main(): Promise<void> {
  const cluster = await Cluster.start();
  const node = uniqueName('bench-nats');
  try {
    await cluster.startAgent(node);
    const steadyCreate: number[] = [];
    const steadyRunning: number[] = [];
    const refused: number[] = [];
    const firstCreate: number[] = [];
    const afterRunning: number[] = [];
    const refusedCodes = new Set<number>();
    for (let round = 0; round < ROUNDS; round++) {
      // Baseline: NATS up.
      const start = performance.now();
      const created = await timedCreate(cluster, `steady-${round}`, node);
      if (created.status !== 201) throw new Error(`steady create answered ${created.status}`);
      steadyCreate.push(created.ms);
      await waitFor('the steady pod to run', () => running(cluster, `steady-${round}`), 60_000, 50);
      steadyRunning.push(performance.now() - start);

      await cluster.nats.kill();
      await waitFor('the API to see the outage', () => cluster.api.output.filter((l) => /lost the NATS connection/.test(l)).length > round, 30_000, 20);
      for (let i = 0; i < REFUSALS; i++) {
        const r = await timedCreate(cluster, `refused-${round}-${i}`, node);
        refusedCodes.add(r.status);
        refused.push(r.ms);
      }
      await cluster.nats.restart();
      const back = performance.now();
      let n = 0;
      await waitFor(
        'a create to succeed after the restart',
        async () => (await timedCreate(cluster, `after-${round}-${n++}`, node)).status === 201 || undefined,
        120_000,
        50,
      );
      firstCreate.push(performance.now() - back);
      await waitFor('the first pod after the restart to run', () => running(cluster, `after-${round}-${n - 1}`), 120_000, 50);
      afterRunning.push(performance.now() - back);
    }
    const s = (xs: number[]): [string, string] => {
      const { p50, p99 } = summary(xs);
      return [fmt(p50), fmt(p99)];
    };
    printTable(
      `NATS SIGKILL and restart, ${ROUNDS} rounds (ms; p50, max): NATS up vs after the server is back`,
      ['p50', 'max'],
      [
        ['create answered, NATS up', ...s(steadyCreate)],
        ['create to Running, NATS up', ...s(steadyRunning)],
        [`write answered while NATS is down (codes ${[...refusedCodes].join(',')})`, ...s(refused)],
        ['server ready to first create answered 201', ...s(firstCreate)],
        ['server ready to that pod Running', ...s(afterRunning)],
      ],
    );
  } finally {
    await cluster.stop();
  }
}

await main();
