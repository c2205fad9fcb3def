import type { NodeObject, Pod } from '#contracts';
import { Cluster, uniqueName } from '../test/harness/cluster.js';
import { DockerProxy } from '../test/harness/docker-proxy.js';
import { waitFor } from '../test/harness/processes.js';
import { createPods, fmt, printTable, workTimeoutMs } from './bench-util.js';

const PODS = Number(process.env.BENCH_OUTAGE_PODS ?? 110);
const NS = 'bench-outage';

/**
 * A node with a full load of pods loses its Docker engine, as in an engine restart without
 * live-restore: the engine is unreachable (a relay in front of its socket is cut; the shared
 * engine itself is never touched) and every container of the node dies meanwhile. Measured:
 * how soon the node says so, and how long after the engine returns until every pod runs and is
 * Ready again — beside the same pods' cold start on the same node, in the same run.
 */
async function main(): Promise<void> {
  const cluster = await Cluster.start();
  const proxy = await DockerProxy.start();
  const node = uniqueName('bench-outage');
  try {
    await cluster.startAgent(node, { DOCKER_HOST: proxy.dockerHost, MAX_PODS: String(Math.max(110, PODS)) });
    const readyPods = async (): Promise<number> => {
      const { body } = await cluster.request<{ items: Pod[] }>('GET', `/api/v1/namespaces/${NS}/pods`);
      return body.items.filter(
        (p) =>
          p.status.phase === 'Running' &&
          p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') &&
          (p.status.containerStatuses ?? []).every((s) => s.state.running),
      ).length;
    };
    const nodeReady = async (): Promise<string | undefined> =>
      (await cluster.request<NodeObject>('GET', `/api/v1/nodes/${node}`)).body.status.conditions?.find((c) => c.type === 'Ready')?.status;
    const allReady = (what: string): Promise<boolean> => waitFor(what, async () => (await readyPods()) === PODS, workTimeoutMs(PODS), 200);

    const coldStart = performance.now();
    await createPods(
      cluster,
      NS,
      Array.from({ length: PODS }, (_, i) => ({
        metadata: { name: `pod-${i}` },
        spec: { nodeName: node, terminationGracePeriodSeconds: 0, containers: [{ name: 'main', image: 'jetlet/busybox:1.35', command: ['sleep', '3600'] }] },
      })),
    );
    await allReady(`all ${PODS} pods Ready after their creation`);
    const coldMs = performance.now() - coldStart;

    const brokenAt = performance.now();
    await proxy.break();
    await waitFor('the node to say its runtime is down', async () => (await nodeReady()) === 'False', 120_000, 100);
    const downMs = performance.now() - brokenAt;
    // What an engine restart does to containers when live-restore is off.
    const containers = await cluster.docker.listContainers({ filters: { label: [`io.jetlet.node=${node}`] } });
    await Promise.all(containers.map((c) => cluster.docker.getContainer(c.Id).kill().catch(() => undefined)));

    const restoredAt = performance.now();
    await proxy.restore();
    await waitFor('the node to be Ready again', async () => (await nodeReady()) === 'True', 120_000, 100);
    const nodeBackMs = performance.now() - restoredAt;
    await allReady(`all ${PODS} pods Ready again after the engine returned`);
    const recoveredMs = performance.now() - restoredAt;

    printTable(
      `Docker engine outage at a node with ${PODS} pods (${containers.length} containers killed while it was away)`,
      ['seconds'],
      [
        [`cold start: ${PODS} pods created → all Running and Ready (baseline)`, fmt(coldMs / 1000, 1)],
        ['engine cut → node Ready=False (ContainerRuntimeDown)', fmt(downMs / 1000, 1)],
        ['engine back → node Ready=True', fmt(nodeBackMs / 1000, 1)],
        [`engine back → all ${PODS} pods Running and Ready again`, fmt(recoveredMs / 1000, 1)],
      ],
    );
    console.log(`recovery takes ${fmt(recoveredMs / coldMs, 2)}× the cold start`);
  } finally {
    await proxy.restore().catch(() => undefined);
    await cluster.stop();
    await proxy.stop();
  }
}

await main();
