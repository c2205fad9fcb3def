import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Pod } from '#contracts';
import { isFakePodIP } from '#runtime';
import { Cluster, uniqueName } from '../harness/cluster.js';
import { HOLLOW_READY, spawnHollow } from '../harness/hollow.js';
import { waitFor, type ManagedProcess } from '../harness/processes.js';

const NODES = 20;
const PODS = 40;
const NS = 'hollow';

interface NodeBody {
  metadata: { name: string };
  status: { conditions?: Array<{ type: string; status: string }> };
}

const ready = (node: NodeBody): boolean => node.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
const running = (pod: Pod): boolean =>
  pod.status.phase === 'Running' && pod.status.podIP !== undefined && (pod.status.containerStatuses ?? []).every((s) => s.state.running !== undefined);

/** Hollow nodes: many real agents in one process over the in-memory runtime, as kubemark's. */
describe('hollow nodes', () => {
  let cluster: Cluster;
  let sut: ManagedProcess;
  const prefix = uniqueName('hollow');
  const names = Array.from({ length: NODES }, (_, i) => `${prefix}-${i}`);

  const listPods = async (): Promise<Pod[]> => (await cluster.request<{ items: Pod[] }>('GET', `/api/v1/namespaces/${NS}/pods`)).body.items;
  const withLogs = <T>(work: Promise<T>): Promise<T> =>
    work.catch((error: Error) => {
      throw new Error(`${error.message}\n--- ${sut.name}\n${sut.tail(60)}\n${cluster.logs()}`, { cause: error });
    });

  before(async () => {
    cluster = await Cluster.start();
    sut = spawnHollow(cluster.nats.url, prefix, NODES, { HEARTBEAT_SECONDS: '1', RESYNC_SECONDS: '2' });
  });

  after(async () => {
    await sut.stop('SIGKILL');
    await cluster.stop();
  });

  it(`registers ${NODES} nodes that turn Ready`, async () => {
    await withLogs(sut.waitForLine(HOLLOW_READY, 60_000));
    const nodes = await withLogs(
      waitFor(
        `${NODES} hollow nodes Ready`,
        async () => {
          const { body } = await cluster.request<{ items: NodeBody[] }>('GET', '/api/v1/nodes');
          const ours = body.items.filter((n) => names.includes(n.metadata.name));
          return ours.length === NODES && ours.every(ready) ? ours : undefined;
        },
        30_000,
        250,
      ),
    );
    assert.deepEqual(nodes.map((n) => n.metadata.name).sort(), [...names].sort());
  });

  it(`runs ${PODS} pods spread over the nodes with pod IPs from the fake range, then deletes them`, async () => {
    for (let i = 0; i < PODS; i++) {
      await cluster.createPod(NS, {
        metadata: { name: `p-${i}` },
        spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image: 'jetlet/busybox:1.35', command: ['sleep', '3600'] }] },
      });
    }
    const pods = await withLogs(
      waitFor(
        `${PODS} pods Running`,
        async () => {
          const items = await listPods();
          return items.length === PODS && items.every(running) ? items : undefined;
        },
        60_000,
        250,
      ),
    );
    const perNode = new Map<string, number>();
    for (const pod of pods) {
      assert.ok(isFakePodIP(pod.status.podIP ?? ''), `${pod.metadata.name} has pod IP ${pod.status.podIP}, outside 10.244.0.0/14`);
      perNode.set(pod.spec.nodeName ?? '', (perNode.get(pod.spec.nodeName ?? '') ?? 0) + 1);
    }
    assert.deepEqual([...perNode.keys()].sort(), [...names].sort(), 'every node got a pod');
    assert.ok(Math.max(...perNode.values()) <= 4, `no node runs more than 4 pods: ${JSON.stringify(Object.fromEntries(perNode))}`);
    assert.equal(new Set(pods.map((p) => p.status.podIP)).size, PODS, 'pod IPs are unique');

    for (const pod of pods) await cluster.request('DELETE', `/api/v1/namespaces/${NS}/pods/${pod.metadata.name}`);
    await withLogs(waitFor(`${PODS} pods to leave the API`, async () => (await listPods()).length === 0, 60_000, 250));
  });

  it('creates no Docker container', async () => {
    assert.deepEqual(await cluster.containersOf(`${prefix}-0`), []);
  });

  it('stops every agent on SIGTERM and exits 0 within 10 s', async () => {
    const started = performance.now();
    const exited = new Promise<number | null>((resolve) => sut.child.once('exit', resolve));
    sut.child.kill('SIGTERM');
    const code = await Promise.race([exited, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 10_000))]);
    assert.equal(code, 0, `exit after SIGTERM: ${code}\n${sut.tail()}`);
    assert.ok(performance.now() - started < 10_000);
  });
});
