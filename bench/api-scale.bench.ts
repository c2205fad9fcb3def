import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import type { Pod } from '#contracts';
import { API_NODE_FLAGS, Cluster, profileArgs } from '../test/harness/cluster.js';
import { freePort, ManagedProcess, ROOT, waitFor } from '../test/harness/processes.js';
import { cpuSeconds, fmt, printTable, rssKiB, summary } from './bench-util.js';

/** Sizes; the environment may lower them for a quick run. */
const PODS = Number(process.env.BENCH_API_PODS ?? 10_000);
const WATCHERS = Number(process.env.BENCH_API_WATCHERS ?? 50);
const BURST = Number(process.env.BENCH_API_BURST ?? 1000);
const SAMPLES = Number(process.env.BENCH_API_SAMPLES ?? 1000);
const LISTS = Number(process.env.BENCH_API_LISTS ?? 20);
const IN_FLIGHT = 50;
/** As long as fetch waits for an answer by default. */
const REQUEST_TIMEOUT_MS = 300_000;
const NS = 'bench';

const manifest = (name: string): object => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, labels: { app: 'bench' } },
  spec: { containers: [{ name: 'main', image: 'jetlet/busybox:1.35', command: ['sleep', '3600'] }] },
});

/** Runs `work(i)` for i in [0, count) with at most `inFlight` at once; returns each call's latency in ms. */
async function timed(count: number, inFlight: number, work: (i: number) => Promise<void>): Promise<number[]> {
  const samples: number[] = new Array<number>(count);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) {
      const i = next++;
      const start = performance.now();
      await work(i);
      samples[i] = performance.now() - start;
    }
  };
  await Promise.all(Array.from({ length: Math.min(inFlight, count) }, worker));
  return samples;
}

/**
 * The ceiling the API's creates sit under: JetStream alone, `count` publishes of `bytes` each
 * with the API's options (a fresh subject expected empty, a message id), `IN_FLIGHT` at a time,
 * each awaiting its ack, on a scratch stream of the same server. Returns each publish's latency.
 */
async function barePublishes(natsUrl: string, count: number, bytes: number): Promise<{ samples: number[]; seconds: number }> {
  const nc = await connect({ servers: natsUrl });
  try {
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: 'BENCH_BARE', subjects: ['bench.bare.>'] });
    const js = jetstream(nc);
    const payload = new TextEncoder().encode(JSON.stringify({ pad: 'x'.repeat(Math.max(0, bytes - 10)) }));
    const start = performance.now();
    const samples = await timed(count, IN_FLIGHT, async (i) => {
      await js.publish(`bench.bare.${i}`, payload, { msgID: randomUUID(), expect: { lastSubjectSequence: 0 } });
    });
    const seconds = (performance.now() - start) / 1000;
    await jsm.streams.delete('BENCH_BARE');
    return { samples, seconds };
  } finally {
    await nc.close();
  }
}

/**
 * POSTs JSON on up to IN_FLIGHT kept-alive connections. The creates are timed with node:http's
 * client rather than fetch: here fetch spends about 0.55 ms of CPU on each request, node:http
 * about 0.12, and the client shares the machine's two cores with the server it measures.
 */
class Poster {
  private readonly agent = new Agent({ keepAlive: true, maxSockets: IN_FLIGHT });

  constructor(private readonly base: string) {}

  post(path: string, body: object, status: number, what: string): Promise<void> {
    const json = JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const req = request(
        `${this.base}${path}`,
        { method: 'POST', agent: this.agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(json) } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            if (res.statusCode === status) resolve();
            else reject(new Error(`${what}: ${res.statusCode} ${Buffer.concat(chunks).toString().slice(0, 300)}`));
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.setTimeout(REQUEST_TIMEOUT_MS, () => req.destroy(new Error(`${what}: no answer within ${REQUEST_TIMEOUT_MS / 1000} s`)));
      req.end(json);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

/**
 * The stack's floor (bench/nest-floor.ts): NestJS on Express with the API's Node flags, a
 * JSON body of a stored pod's size published to JetStream and answered, nothing else. `count` creates, IN_FLIGHT at a
 * time, from the same client as the API's; returns their latencies, rate and CPU per create.
 */
async function floorCreates(natsUrl: string, count: number, podBytes: number): Promise<{ samples: number[]; seconds: number; cpuMs: number }> {
  const port = await freePort();
  const floor = new ManagedProcess(
    'nest-floor',
    spawn(process.execPath, [...profileArgs(), ...API_NODE_FLAGS, join(ROOT, 'dist/bench/nest-floor.js')], {
      env: { ...process.env, NATS_URL: natsUrl, PORT: String(port), POD_BYTES: String(podBytes) },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  const poster = new Poster(`http://127.0.0.1:${port}`);
  try {
    await floor.waitForLine(/nest floor listening/);
    const pid = floor.child.pid ?? 0;
    const cpuBefore = cpuSeconds(pid);
    const start = performance.now();
    const samples = await timed(count, IN_FLIGHT, (i) => poster.post(`/api/v1/namespaces/${NS}/pods`, manifest(`floor-${i}`), 201, `floor create ${i}`));
    const seconds = (performance.now() - start) / 1000;
    return { samples, seconds, cpuMs: ((cpuSeconds(pid) - cpuBefore) * 1000) / count };
  } finally {
    poster.close();
    await floor.stop();
  }
}

async function expect(response: Promise<Response>, status: number, what: string): Promise<void> {
  const r = await response;
  const body = await r.text();
  if (r.status !== status) throw new Error(`${what}: ${r.status} ${body.slice(0, 300)}`);
}

/** One watcher: counts, per pod, when the burst's change arrived (by a cheap scan, not a parse). */
async function watch(url: string, arrivals: Map<string, number>, controller: AbortController): Promise<void> {
  const response = await fetch(url, { signal: controller.signal });
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      const at = performance.now();
      buffer += decoder.decode(chunk, { stream: true });
      let newline: number;
      while ((newline = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        if (!line.includes('"burst":"1"')) continue;
        const start = line.indexOf('"name":"') + 8;
        arrivals.set(line.slice(start, line.indexOf('"', start)), at);
      }
    }
  } catch {
    // aborted at the end of the run
  }
}

/**
 * The API at Kubernetes' scale target for one cluster's pods: 10,000 pods (no nodes, so they
 * stay Pending), latency of create, get, delete and cluster-wide list beside the Kubernetes
 * API call SLOs, 50 cluster-wide watchers through a burst of 1,000 changes, and the API's memory.
 */
async function main(): Promise<void> {
  // Latency is the measure here: on a shared machine a publish may take longer than the
  // 2 s after which the API answers 503, so the bench gives JetStream longer.
  const cluster = await Cluster.start({ BUS_TIMEOUT_SECONDS: '30' });
  // The API alone: a scheduler retrying 10,000 unschedulable pods would share its two cores.
  await cluster.scheduler.stop();
  await cluster.ensureNamespace(NS);
  const url = cluster.apiUrl;
  const pid = cluster.api.child.pid ?? 0;
  try {
    const rssBefore = rssKiB(pid);
    const cpuBefore = cpuSeconds(pid);
    const poster = new Poster(url);
    const fillStart = performance.now();
    const creates = await timed(PODS, IN_FLIGHT, (i) => poster.post(`/api/v1/namespaces/${NS}/pods`, manifest(`bench-${i}`), 201, `create bench-${i}`));
    const fillSeconds = (performance.now() - fillStart) / 1000;
    poster.close();
    // The API's own CPU per create: unlike the rate, it hardly moves with what else the machine runs.
    const cpuMsPerCreate = ((cpuSeconds(pid) - cpuBefore) * 1000) / PODS;
    const rssAt = rssKiB(pid);
    // The stored size of one create: the baseline publishes as many bytes.
    const stored = await fetch(`${url}/api/v1/namespaces/${NS}/pods/bench-0`).then((r) => r.text());
    const bare = await barePublishes(cluster.nats.url, PODS, Buffer.byteLength(stored));
    const floor = await floorCreates(cluster.nats.url, PODS, Buffer.byteLength(stored));

    const gets = await timed(SAMPLES, 1, (i) => expect(fetch(`${url}/api/v1/namespaces/${NS}/pods/bench-${(i * 7919) % PODS}`), 200, 'get'));
    let listed = 0;
    const lists = await timed(LISTS, 1, async () => {
      const r = await fetch(`${url}/api/v1/pods`);
      const body = (await r.json()) as { items: Pod[]; metadata: { resourceVersion: string } };
      listed = body.items.length;
    });
    const rssAfterLists = rssKiB(pid);

    // 50 cluster-wide watchers from the current resourceVersion, then a burst of label changes.
    const { resourceVersion } = ((await (await fetch(`${url}/api/v1/pods?labelSelector=nothing%3Dhere`)).json()) as { metadata: { resourceVersion: string } })
      .metadata;
    const controllers = Array.from({ length: WATCHERS }, () => new AbortController());
    const arrivals = controllers.map(() => new Map<string, number>());
    const watching = controllers.map((c, i) => watch(`${url}/api/v1/pods?watch=true&resourceVersion=${resourceVersion}`, arrivals[i] ?? new Map(), c));
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const sentAt = new Map<string, number>();
    const burstStart = performance.now();
    await timed(BURST, IN_FLIGHT, async (i) => {
      const name = `bench-${i}`;
      sentAt.set(name, performance.now());
      await expect(
        fetch(`${url}/api/v1/namespaces/${NS}/pods/${name}`, {
          method: 'PATCH',
          headers: { 'content-type': 'application/merge-patch+json' },
          body: JSON.stringify({ metadata: { labels: { burst: '1' } } }),
        }),
        200,
        `patch ${name}`,
      );
    });
    const burstSeconds = (performance.now() - burstStart) / 1000;
    await waitFor('every watcher to receive the whole burst', () => arrivals.every((a) => a.size >= BURST), 120_000, 200).catch(() => undefined);
    const lags: number[] = [];
    for (const a of arrivals) for (const [name, at] of a) lags.push(at - (sentAt.get(name) ?? at));
    const delivered = arrivals.reduce((n, a) => n + a.size, 0);
    for (const c of controllers) c.abort();
    await Promise.all(watching);

    const deletes = await timed(SAMPLES, 10, (i) =>
      expect(fetch(`${url}/api/v1/namespaces/${NS}/pods/bench-${PODS - 1 - i}`, { method: 'DELETE' }), 200, 'delete'),
    );

    const row = (name: string, samples: number[], slo: string): (string | number)[] => {
      const { p50, p99 } = summary(samples);
      return [name, fmt(p50, 1), fmt(p99, 1), slo];
    };
    printTable(
      `API at ${PODS} pods (filled in ${fmt(fillSeconds, 1)} s, ${IN_FLIGHT} in flight; latency in ms)`,
      ['p50', 'p99', 'k8s SLO p99'],
      [
        row(`create (${PODS}, ${IN_FLIGHT} in flight)`, creates, '1000'),
        row(`get (${SAMPLES}, one at a time)`, gets, '1000'),
        row(`delete (${SAMPLES}, 10 in flight)`, deletes, '1000'),
        row(`list all ${listed} pods (${LISTS})`, lists, '30000'),
        row(`watch lag, ${WATCHERS} watchers x ${BURST} changes`, lags, '-'),
      ],
    );
    const rate = (samples: number[], seconds: number): string => fmt(samples.length / seconds, 0);
    printTable(
      `API creates beside the stack's floor (NestJS, one JetStream publish, nothing else) and bare JetStream publishes of a created pod's size, ${PODS} each, ${IN_FLIGHT} in flight, same run`,
      ['API', 'floor', 'JetStream', 'target'],
      [
        ['per second', rate(creates, fillSeconds), rate(floor.samples, floor.seconds), rate(bare.samples, bare.seconds), '2000 (API)'],
        ['server CPU ms per create', fmt(cpuMsPerCreate, 2), fmt(floor.cpuMs, 2), '-', '-'],
        ['p50 ms', fmt(summary(creates).p50, 1), fmt(summary(floor.samples).p50, 1), fmt(summary(bare.samples).p50, 1), '-'],
        ['p99 ms', fmt(summary(creates).p99, 1), fmt(summary(floor.samples).p99, 1), fmt(summary(bare.samples).p99, 1), '100 (API)'],
      ],
    );
    printTable(
      'Watch burst and memory',
      ['value'],
      [
        [`changes delivered (of ${WATCHERS * BURST})`, delivered],
        ['burst written in s', fmt(burstSeconds, 2)],
        ['API RSS MiB before pods', fmt(rssBefore / 1024, 0)],
        [`API RSS MiB at ${PODS} pods`, fmt(rssAt / 1024, 0)],
        ['API RSS MiB after lists and watches', fmt(rssAfterLists / 1024, 0)],
      ],
    );
    if (delivered < WATCHERS * BURST) throw new Error(`watchers received ${delivered} of ${WATCHERS * BURST} changes`);
  } finally {
    await cluster.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
