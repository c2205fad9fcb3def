import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster, uniqueName } from '../test/harness/cluster.js';
import { freePort } from '../test/harness/processes.js';
import { fmt, printTable, summary } from './bench-util.js';

const BIG_MIB = 100;
const DOWNLOADS = 3;
const REQUESTS = 50;
const ECHOES = 200;
const ECHO_BYTES = 64;

/** GETs `path`, counting the body's bytes, on a connection of its own; rejects on anything but 200. */
function get(port: number, host: string, path: string): Promise<{ ms: number; bytes: number }> {
  const start = performance.now();
  return new Promise((resolve, reject) => {
    const req = request({ host, port, path, agent: false, headers: { connection: 'close' } }, (res) => {
      let bytes = 0;
      res.on('data', (c: Buffer) => (bytes += c.length));
      res.once('error', reject);
      res.once('end', () => (res.statusCode === 200 ? resolve({ ms: performance.now() - start, bytes }) : reject(new Error(`GET ${path}: ${res.statusCode}`))));
    });
    req.once('error', reject);
    req.end();
  });
}

/** One connection to an echo server: each call sends `size` bytes and resolves with the ms until all came back. */
async function echoClient(port: number, host: string): Promise<{ roundTrip: (size: number) => Promise<number>; socket: Socket }> {
  const socket = connect({ host, port });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  socket.setNoDelay(true);
  let waiting: { left: number; done: () => void } | undefined;
  socket.on('data', (c: Buffer) => {
    if (!waiting) return;
    waiting.left -= c.length;
    if (waiting.left <= 0) waiting.done();
  });
  const roundTrip = (size: number): Promise<number> => {
    const start = performance.now();
    return new Promise((resolve) => {
      waiting = {
        left: size,
        done: () => {
          waiting = undefined;
          resolve(performance.now() - start);
        },
      };
      socket.write(Buffer.alloc(size, 0x61));
    });
  };
  return { roundTrip, socket };
}

/** Starts `kubectl port-forward` and resolves once it says it listens on both ports. */
async function portForward(cluster: Cluster, dir: string, pod: string, mappings: string[]): Promise<ChildProcess> {
  const child = spawn('kubectl', ['--server', cluster.apiUrl, '--cache-dir', join(dir, 'cache'), 'port-forward', pod, ...mappings], {
    env: { ...process.env, KUBECONFIG: join(dir, 'none') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let seen = '';
  await new Promise<void>((resolve, reject) => {
    const onData = (c: Buffer): void => {
      seen += c.toString();
      if ((seen.match(/Forwarding from 127\.0\.0\.1/g) ?? []).length >= mappings.length) resolve();
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`kubectl port-forward exited ${code}: ${seen}`)));
  });
  return child;
}

/**
 * `kubectl port-forward` through the API, NATS and the agent beside the same traffic sent
 * straight to the pod's IP on the engine's bridge, in the same run against the same pod: a
 * 100 MiB download from busybox httpd, an HTTP GET of a small page on a new connection each
 * time (the cost of opening a forwarded connection), and a 64-byte echo round trip over one
 * open connection (the relay's latency).
 */
async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'jetlet-bench-pf-'));
  const cluster = await Cluster.start();
  const node = uniqueName('bench-pf');
  let forward: ChildProcess | undefined;
  try {
    await cluster.startAgent(node);
    await cluster.createPod('default', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web' },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [
          {
            name: 'main',
            image: 'jetlet/busybox:1.35',
            command: [
              'sh',
              '-c',
              `mkdir /www && echo ok > /www/small && dd if=/dev/urandom of=/www/big bs=1M count=${BIG_MIB} 2>/dev/null && httpd -p 8080 -h /www && touch /tmp/ready && exec nc -ll -p 9000 -e cat`,
            ],
            readinessProbe: { exec: { command: ['test', '-f', '/tmp/ready'] }, periodSeconds: 1 },
          },
        ],
      },
    });
    const pod = await cluster.waitForPod(
      'default',
      'web',
      'Ready',
      (p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false,
      180_000,
    );
    const podIP = pod.status?.podIP;
    if (!podIP) throw new Error('the pod has no IP');
    const [webPort, echoPort] = [await freePort(), await freePort()];
    forward = await portForward(cluster, dir, 'web', [`${webPort}:8080`, `${echoPort}:9000`]);
    const paths = { kubectl: { host: '127.0.0.1', web: webPort, echo: echoPort }, direct: { host: podIP, web: 8080, echo: 9000 } } as const;

    // Warm both paths before measuring.
    for (const p of Object.values(paths)) await get(p.web, p.host, '/small');

    const download: Record<keyof typeof paths, number[]> = { kubectl: [], direct: [] };
    for (let i = 0; i < DOWNLOADS; i++) {
      for (const [name, p] of Object.entries(paths) as Array<[keyof typeof paths, (typeof paths)[keyof typeof paths]]>) {
        const { ms, bytes } = await get(p.web, p.host, '/big');
        if (bytes !== BIG_MIB * 2 ** 20) throw new Error(`${name} download gave ${bytes} bytes`);
        download[name].push(BIG_MIB / (ms / 1000));
      }
    }
    const requests: Record<keyof typeof paths, number[]> = { kubectl: [], direct: [] };
    for (let i = 0; i < REQUESTS; i++) {
      for (const [name, p] of Object.entries(paths) as Array<[keyof typeof paths, (typeof paths)[keyof typeof paths]]>) {
        requests[name].push((await get(p.web, p.host, '/small')).ms);
      }
    }
    const echoes: Record<keyof typeof paths, number[]> = { kubectl: [], direct: [] };
    const clients = { kubectl: await echoClient(paths.kubectl.echo, paths.kubectl.host), direct: await echoClient(paths.direct.echo, paths.direct.host) };
    for (let i = 0; i < ECHOES; i++) {
      echoes.kubectl.push(await clients.kubectl.roundTrip(ECHO_BYTES));
      echoes.direct.push(await clients.direct.roundTrip(ECHO_BYTES));
    }
    for (const c of Object.values(clients)) c.socket.destroy();

    const dk = summary(download.kubectl);
    const dd = summary(download.direct);
    printTable(
      `download of a ${BIG_MIB} MiB file from busybox httpd, ${DOWNLOADS} runs each, alternating (MiB/s)`,
      ['port-fwd', 'pod IP', 'fwd/direct'],
      [['median', fmt(dk.p50, 0), fmt(dd.p50, 0), fmt(dk.p50 / dd.p50, 2)]],
    );
    const rk = summary(requests.kubectl);
    const rd = summary(requests.direct);
    printTable(
      `GET of a small page, a new connection each, ${REQUESTS} runs each, alternating (ms)`,
      ['port-fwd', 'pod IP', 'fwd/direct'],
      [
        ['p50', fmt(rk.p50, 1), fmt(rd.p50, 1), fmt(rk.p50 / rd.p50, 1)],
        ['p99', fmt(rk.p99, 1), fmt(rd.p99, 1), fmt(rk.p99 / rd.p99, 1)],
      ],
    );
    const ek = summary(echoes.kubectl);
    const ed = summary(echoes.direct);
    printTable(
      `${ECHO_BYTES}-byte echo round trip over one open connection, ${ECHOES} each, alternating (ms)`,
      ['port-fwd', 'pod IP', 'fwd/direct'],
      [
        ['p50', fmt(ek.p50, 2), fmt(ed.p50, 2), fmt(ek.p50 / ed.p50, 1)],
        ['p99', fmt(ek.p99, 2), fmt(ed.p99, 2), fmt(ek.p99 / ed.p99, 1)],
      ],
    );
  } finally {
    if (forward?.pid !== undefined && forward.exitCode === null) {
      const exited = new Promise((resolve) => forward?.once('exit', resolve));
      process.kill(forward.pid, 'SIGTERM');
      await exited;
    }
    await cluster.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
