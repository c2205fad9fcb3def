import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { NestFactory } from '@nestjs/core';
import type { INestApplication } from '@nestjs/common';
import { JetStreamServer } from '#bus';
import { loadConfig, type Pod } from '#contracts';
import { isFakePodIP } from '#runtime';
import { AgentConfig } from '../../apps/agent/src/agent.config.js';
import { AgentModule } from '../../apps/agent/src/agent.module.js';
import { parsePrometheusText, type Exposition } from '../harness/prometheus.js';
import { Cluster, uniqueName } from '../harness/cluster.js';
import { HOLLOW_READY, spawnHollow } from '../harness/hollow.js';
import { freePort, waitFor, type ManagedProcess } from '../harness/processes.js';

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
  let metricsUrl: string;
  const prefix = uniqueName('hollow');
  const names = Array.from({ length: NODES }, (_, i) => `${prefix}-${i}`);

  const listPods = async (): Promise<Pod[]> => (await cluster.request<{ items: Pod[] }>('GET', `/api/v1/namespaces/${NS}/pods`)).body.items;
  const withLogs = <T>(work: Promise<T>): Promise<T> =>
    work.catch((error: Error) => {
      throw new Error(`${error.message}\n--- ${sut.name}\n${sut.tail(60)}\n${cluster.logs()}`, { cause: error });
    });

  before(async () => {
    cluster = await Cluster.start();
    const metricsPort = await freePort();
    metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
    sut = spawnHollow(cluster.nats.url, prefix, NODES, { HEARTBEAT_SECONDS: '1', RESYNC_SECONDS: '2', HOLLOW_METRICS_PORT: String(metricsPort) });
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

    // The process's /metrics holds every node's series, labelled by node: each counts its own pods.
    await withLogs(
      waitFor(
        "each node's running pods in the process's metrics",
        async () => {
          const exposition = parsePrometheusText(await (await fetch(metricsUrl)).text());
          return names.every((node) => exposition.value('kubelet_running_pods', { node }) === perNode.get(node));
        },
        30_000,
        250,
      ),
    );
    const exposition = parsePrometheusText(await (await fetch(metricsUrl)).text());
    for (const node of names) {
      assert.equal(exposition.value('jetlet_runtime_event_stream_connected', { node }), 1, `${node}'s PLEG watch is connected`);
      assert.ok((exposition.value('kubelet_pod_start_duration_seconds_count', { node }) ?? 0) >= 1, `${node} recorded its pods' starts`);
    }
    assert.equal(exposition.types.get('kubelet_running_pods'), 'gauge');

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

  it('keeps metrics and PLEG health per agent with two agents in one process', async () => {
    const agents: Array<{ node: string; app: INestApplication; rootDir: string }> = [];
    const metricsOf = async (app: INestApplication): Promise<Exposition> => {
      const { port } = (app.getHttpServer() as Server).address() as AddressInfo;
      return parsePrometheusText(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text());
    };
    const value = (exposition: Exposition, name: string, labels: Record<string, string> = {}): number | undefined =>
      exposition.samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
    try {
      for (const [i, node] of [`${prefix}-own-a`, `${prefix}-own-b`].entries()) {
        const rootDir = mkdtempSync(join(tmpdir(), `jetlet-${node}-`));
        const env = { NATS_URL: cluster.nats.url, NODE_NAME: node, RUNTIME: 'fake', AGENT_ROOT_DIR: rootDir, HEARTBEAT_SECONDS: '1', RESYNC_SECONDS: '2' };
        const app = await NestFactory.create(AgentModule.forConfig(loadConfig(AgentConfig, env), 100 + i), { logger: ['error', 'warn'] });
        agents.push({ node, app, rootDir });
        app.connectMicroservice({ strategy: app.get(JetStreamServer) });
        await app.init();
        await app.startAllMicroservices();
        await app.listen(0, '127.0.0.1');
      }
      const [a, b] = agents as [(typeof agents)[0], (typeof agents)[0]];
      await cluster.createPod(NS, {
        metadata: { name: 'own-metrics' },
        spec: { nodeName: a.node, terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image: 'jetlet/busybox:1.35', command: ['sleep', '3600'] }] },
      });
      await cluster.waitForPod(NS, 'own-metrics', 'Running', running);
      // Both agents keep passing (RESYNC_SECONDS=2): with one process-wide gauge their last writes would overwrite each other.
      const [ma, mb] = await waitFor(
        "a's pass counted on a only",
        async () => {
          const pair = [await metricsOf(a.app), await metricsOf(b.app)] as const;
          return value(pair[0], 'kubelet_running_pods') === 1 ? pair : undefined;
        },
        30_000,
        250,
      );
      assert.equal(value(mb, 'kubelet_running_pods'), 0, "b runs no pod: a's gauge is not b's");
      assert.ok((value(ma, 'jetlet_reconcile_actions_total', { kind: 'StartContainer' }) ?? 0) >= 1, 'a started the container');
      assert.equal(value(mb, 'jetlet_reconcile_actions_total', { kind: 'StartContainer' }), undefined, 'b started nothing');
      assert.ok((value(ma, 'kubelet_pod_start_duration_seconds_count') ?? 0) >= 1, "a recorded the pod's start");
      assert.equal(value(mb, 'kubelet_pod_start_duration_seconds_count'), 0, 'b recorded no start');
      // An event stream counts as connected once it has stayed open a second; each agent's PLEG sets its own gauge.
      for (const agent of agents)
        await waitFor(
          `${agent.node}'s event stream connected`,
          async () => value(await metricsOf(agent.app), 'jetlet_runtime_event_stream_connected') === 1,
          30_000,
          250,
        );
    } finally {
      await Promise.allSettled(agents.map(({ app }) => app.close()));
      for (const { rootDir } of agents) rmSync(rootDir, { recursive: true, force: true });
    }
  });
});
