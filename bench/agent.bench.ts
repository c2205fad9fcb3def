import { connect } from '@nats-io/transport-node';
import { token } from '#contracts';
import { Cluster, uniqueName } from '../test/harness/cluster.js';
import { waitFor } from '../test/harness/processes.js';
import { dockerTimeMs, fmt, printTable, summary } from './bench-util.js';

const KILLS = Number(process.env.BENCH_KILLS ?? 50);
const RESTART_PODS = Number(process.env.BENCH_RESTART_PODS ?? 10);
const IMAGE = 'jetlet/busybox:1.35';
const NS = 'bench';
const RESTART_COUNT = 'io.jetlet.container.restart-count';
/** The kubelet's generic PLEG relists every second: a container's death is seen up to 1 s late. */
const KUBELET_RELIST_MS = 1000;

/** First arrival time per container id, with waiters for ids not seen yet. */
class Arrivals {
  private readonly seen = new Map<string, number>();
  private readonly waiters = new Map<string, (at: number) => void>();

  record(id: string, at: number): void {
    if (this.seen.has(id)) return;
    this.seen.set(id, at);
    this.waiters.get(id)?.(at);
    this.waiters.delete(id);
  }

  get(id: string): number | undefined {
    return this.seen.get(id);
  }

  async wait(id: string, what: string, timeoutMs = 30_000): Promise<number> {
    const at = this.seen.get(id);
    if (at !== undefined) return at;
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        new Promise<number>((resolve) => this.waiters.set(id, resolve)),
        new Promise<number>(
          (_, reject) => (timer = setTimeout(() => reject(new Error(`no ${what} for ${id.slice(0, 12)} within ${timeoutMs} ms`)), timeoutMs)),
        ),
      ]);
    } finally {
      clearTimeout(timer);
      this.waiters.delete(id);
    }
  }
}

/** Docker's own 'die' events as they reach this process, by container id. */
async function watchDockerDies(cluster: Cluster): Promise<{ arrivals: Arrivals; close: () => void }> {
  const arrivals = new Arrivals();
  const stream = (await cluster.docker.getEvents({ filters: { type: ['container'], event: ['die'] } })) as NodeJS.ReadableStream & { destroy(): void };
  let pending = '';
  stream.on('data', (chunk: Buffer) => {
    const at = performance.now();
    const lines = (pending + chunk.toString()).split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.trim()) continue;
      const event = JSON.parse(line) as { id?: string; Actor?: { ID?: string } };
      const id = event.Actor?.ID ?? event.id;
      if (id) arrivals.record(id, at);
    }
  });
  stream.on('error', () => undefined);
  return { arrivals, close: () => stream.destroy() };
}

/** 'Died' ContainerEvents of `node` as they reach a core NATS subscription, by container id. */
async function watchDiedEvents(cluster: Cluster, node: string): Promise<{ arrivals: Arrivals; close: () => Promise<void> }> {
  const arrivals = new Arrivals();
  const nc = await connect({ servers: cluster.nats.url });
  nc.subscribe(`jetlet.events.${token(node)}.>`, {
    callback: (error, msg) => {
      const at = performance.now();
      if (error) return;
      try {
        const envelope = msg.json<{ type: string; data: { reason: string; containerID: string } }>();
        if (envelope.type === 'ContainerEvent' && envelope.data.reason === 'Died') arrivals.record(envelope.data.containerID.replace(/^docker:\/\//, ''), at);
      } catch {
        // not an envelope
      }
    },
  });
  await nc.flush();
  return { arrivals, close: () => nc.close() };
}

/** The pod's app container with the highest restart count, when it runs. */
async function runningApp(cluster: Cluster, node: string, uid: string): Promise<{ id: string; attempt: number } | undefined> {
  const containers = await cluster.docker.listContainers({
    filters: { label: [`io.jetlet.node=${node}`, `io.jetlet.pod.uid=${uid}`, 'io.jetlet.kind=container'], status: ['running'] },
  });
  const newest = containers.map((c) => ({ id: c.Id, attempt: Number(c.Labels[RESTART_COUNT] ?? 0) })).sort((a, b) => b.attempt - a.attempt)[0];
  return newest;
}

/** PLEG: `docker kill` of a running app container → 'Died' on the bus (and, as the floor, Docker's own 'die' event). */
async function plegLatency(cluster: Cluster, node: string): Promise<{ bus: number[]; docker: number[] }> {
  const died = await watchDiedEvents(cluster, node);
  const dies = await watchDockerDies(cluster);
  const bus: number[] = [];
  const docker: number[] = [];
  try {
    const pod = await cluster.createPod(NS, {
      metadata: { name: 'pleg' },
      spec: { restartPolicy: 'Always', terminationGracePeriodSeconds: 0, containers: [{ name: 'main', image: IMAGE, command: ['sleep', '3600'] }] },
    });
    const uid = pod.metadata.uid ?? '';
    await cluster.waitForRunning(NS, 'pleg');
    for (let i = 0; i < KILLS; i++) {
      const current = await waitFor('the app container to run', () => runningApp(cluster, node, uid), 30_000, 20);
      const start = performance.now();
      await cluster.docker.getContainer(current.id).kill();
      bus.push((await died.arrivals.wait(current.id, "'Died' ContainerEvent")) - start);
      docker.push((await dies.arrivals.wait(current.id, "Docker 'die' event")) - start);
      // The next kill needs the next attempt running (crash back-off is 50–100 ms here).
      await waitFor(
        `restart ${current.attempt + 1} to run`,
        async () => {
          const next = await runningApp(cluster, node, uid);
          return next !== undefined && next.attempt > current.attempt;
        },
        30_000,
        20,
      );
    }
    await cluster.request('DELETE', `/api/v1/namespaces/${NS}/pods/pleg?gracePeriodSeconds=0`);
    await cluster.waitForGone(NS, 'pleg');
  } finally {
    dies.close();
    await died.close();
  }
  return { bus, docker };
}

/** First restart: the dead attempt's exit (Docker FinishedAt) → the next attempt's StartedAt, fresh pods. */
async function jetletFirstRestarts(cluster: Cluster, node: string): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < RESTART_PODS; i++) {
    const name = `restart-${i}`;
    const pod = await cluster.createPod(NS, {
      metadata: { name },
      spec: {
        restartPolicy: 'Always',
        terminationGracePeriodSeconds: 0,
        containers: [{ name: 'main', image: IMAGE, command: ['sh', '-c', 'sleep 1; exit 1'] }],
      },
    });
    const uid = pod.metadata.uid ?? '';
    const apps = await waitFor(
      `${name} restart 1 to start`,
      async () => {
        const all = await cluster.podContainers(node, uid);
        const appsOf = all.filter((c) => c.Labels['io.jetlet.kind'] === 'container');
        const first = appsOf.find((c) => c.Labels[RESTART_COUNT] === '0');
        const second = appsOf.find((c) => c.Labels[RESTART_COUNT] === '1');
        return first && second && second.State !== 'created' ? { first: first.Id, second: second.Id } : undefined;
      },
      30_000,
      25,
    );
    const first = await cluster.docker.getContainer(apps.first).inspect();
    const second = await cluster.docker.getContainer(apps.second).inspect();
    samples.push(dockerTimeMs(second.State.StartedAt) - dockerTimeMs(first.State.FinishedAt));
    await cluster.request('DELETE', `/api/v1/namespaces/${NS}/pods/${name}?gracePeriodSeconds=0`);
    await cluster.waitForGone(NS, name);
  }
  return samples;
}

/**
 * Baseline: `docker run -d --restart on-failure` of the same command, measured on Docker's own
 * State after its first restart: FinishedAt (kept from the dead run) → StartedAt (the new run).
 * While Docker waits to restart, State says Running and Restarting with the old StartedAt.
 */
async function dockerFirstRestarts(cluster: Cluster, label: string): Promise<number[]> {
  const samples: number[] = [];
  const ids: string[] = [];
  try {
    for (let i = 0; i < RESTART_PODS; i++) {
      const run = await cluster.dockerCli('run', '-d', '--restart', 'on-failure', '--label', label, IMAGE, 'sh', '-c', 'sleep 1; exit 1');
      if (run.code !== 0) throw new Error(`docker run: ${run.stderr}`);
      const id = run.stdout.trim();
      ids.push(id);
      const info = await waitFor(
        'docker to restart the container',
        async () => {
          const info = await cluster.docker.getContainer(id).inspect();
          const restarted = info.RestartCount >= 1 && info.State.Running && !info.State.Restarting;
          return restarted && dockerTimeMs(info.State.StartedAt) > dockerTimeMs(info.State.FinishedAt) ? info : undefined;
        },
        30_000,
        25,
      );
      if (info.RestartCount !== 1) throw new Error(`missed the first restart of ${id.slice(0, 12)} (RestartCount ${info.RestartCount})`);
      samples.push(dockerTimeMs(info.State.StartedAt) - dockerTimeMs(info.State.FinishedAt));
      await cluster.dockerCli('rm', '-f', id);
    }
  } finally {
    if (ids.length > 0) await cluster.dockerCli('rm', '-f', ...ids);
  }
  return samples;
}

async function main(): Promise<void> {
  const cluster = await Cluster.start();
  const node = uniqueName('bench-agent');
  try {
    // A short crash back-off so 50 kills in a row restart quickly; the first restart of a container never waits for it.
    await cluster.startAgent(node, { RESYNC_SECONDS: '10', HEARTBEAT_SECONDS: '10', BACKOFF_BASE_SECONDS: '0.05', BACKOFF_CAP_SECONDS: '0.1' });

    const pleg = await plegLatency(cluster, node);
    const bus = summary(pleg.bus);
    const floor = summary(pleg.docker);
    printTable(
      `PLEG latency: docker kill → event, ${pleg.bus.length} kills of a running container (ms from the kill call)`,
      ['p50', 'p99'],
      [
        ["docker: 'die' on the engine's event stream (floor)", fmt(floor.p50, 1), fmt(floor.p99, 1)],
        ["jetlet: ContainerEvent 'Died' on the bus", fmt(bus.p50, 1), fmt(bus.p99, 1)],
        ['kubelet generic PLEG: relist period (reference)', KUBELET_RELIST_MS, KUBELET_RELIST_MS],
      ],
    );

    const docker = summary(await dockerFirstRestarts(cluster, `io.jetlet.bench=${node}`));
    const jetlet = summary(await jetletFirstRestarts(cluster, node));
    printTable(
      `first restart latency: exit → next attempt started, ${RESTART_PODS} fresh containers (ms, engine timestamps)`,
      ['p50', 'p99', '×docker'],
      [
        ['docker run --restart on-failure (FinishedAt → StartedAt)', fmt(docker.p50), fmt(docker.p99), '1.00'],
        ['jetlet pod, restartPolicy Always (FinishedAt → StartedAt)', fmt(jetlet.p50), fmt(jetlet.p99), fmt(jetlet.p50 / docker.p50, 2)],
      ],
    );
  } finally {
    await cluster.stop();
  }
}

await main();
