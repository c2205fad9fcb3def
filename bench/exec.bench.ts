import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster, uniqueName } from '../test/harness/cluster.js';
import { fmt, printTable, summary } from './bench-util.js';

const ROUND_TRIPS = 30;
const BIG_MIB = 100;
const CAT_RUNS = 3;

/** Runs a command, counting the bytes of its stdout; rejects unless it exits 0. */
function run(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<{ ms: number; bytes: number }> {
  const start = performance.now();
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let bytes = 0;
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (bytes += c.length));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) =>
      code === 0 ? resolve({ ms: performance.now() - start, bytes }) : reject(new Error(`${command} ${args.join(' ')} exited ${code}: ${stderr}`)),
    );
  });
}

/**
 * `kubectl exec` through the API, NATS and the agent beside `docker exec` straight to the
 * engine, in the same run on the same container: the round trip of `true`, and the
 * throughput of `cat` of a 100 MiB file.
 */
async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'jetlet-bench-exec-'));
  const cluster = await Cluster.start();
  const node = uniqueName('bench-exec');
  try {
    await cluster.startAgent(node);
    await cluster.createPod('default', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'target' },
      spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image: 'jetlet/busybox:1.35', command: ['sleep', '3600'] }] },
    });
    await cluster.waitForRunning('default', 'target', 120_000);
    const [container] = (await cluster.containersOf(node)).filter(
      (c) => c.Labels['io.jetlet.pod.name'] === 'target' && c.Labels['io.jetlet.kind'] === 'container',
    );
    if (!container) throw new Error('no container for the target pod');
    const kubectl = (...args: string[]): Promise<{ ms: number; bytes: number }> =>
      run('kubectl', ['--server', cluster.apiUrl, '--cache-dir', join(dir, 'cache'), 'exec', 'target', '--', ...args], {
        ...process.env,
        KUBECONFIG: join(dir, 'none'),
      });
    const docker = (...args: string[]): Promise<{ ms: number; bytes: number }> => run('docker', ['exec', container.Id, ...args]);

    await docker('dd', 'if=/dev/urandom', 'of=/tmp/big', 'bs=1M', `count=${BIG_MIB}`);
    // Warm both paths (kubectl's discovery cache, the engine's exec path) before measuring.
    await kubectl('true');
    await docker('true');

    const kubectlTrips: number[] = [];
    const dockerTrips: number[] = [];
    for (let i = 0; i < ROUND_TRIPS; i++) {
      kubectlTrips.push((await kubectl('true')).ms);
      dockerTrips.push((await docker('true')).ms);
    }
    const kubectlCat: number[] = [];
    const dockerCat: number[] = [];
    for (let i = 0; i < CAT_RUNS; i++) {
      const k = await kubectl('cat', '/tmp/big');
      const d = await docker('cat', '/tmp/big');
      if (k.bytes !== BIG_MIB * 2 ** 20 || d.bytes !== BIG_MIB * 2 ** 20) throw new Error(`cat gave ${k.bytes} / ${d.bytes} bytes`);
      kubectlCat.push(BIG_MIB / (k.ms / 1000));
      dockerCat.push(BIG_MIB / (d.ms / 1000));
    }
    const k = summary(kubectlTrips);
    const d = summary(dockerTrips);
    printTable(
      `exec round trip of \`true\`, ${ROUND_TRIPS} runs each, alternating (ms; both include their CLI's start)`,
      ['kubectl', 'docker', 'kubectl/docker'],
      [
        ['p50', fmt(k.p50, 0), fmt(d.p50, 0), fmt(k.p50 / d.p50, 2)],
        ['p99', fmt(k.p99, 0), fmt(d.p99, 0), fmt(k.p99 / d.p99, 2)],
      ],
    );
    const kc = summary(kubectlCat);
    const dc = summary(dockerCat);
    printTable(
      `cat of a ${BIG_MIB} MiB file through exec, ${CAT_RUNS} runs each (MiB/s)`,
      ['kubectl', 'docker', 'kubectl/docker'],
      [['median', fmt(kc.p50, 0), fmt(dc.p50, 0), fmt(kc.p50 / dc.p50, 2)]],
    );
  } finally {
    await cluster.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
