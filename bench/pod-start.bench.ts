import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Cluster, uniqueName } from '../test/harness/cluster.js';
import { sleep } from '../test/harness/processes.js';
import { summary } from './bench-util.js';

const run = promisify(execFile);
const PODS = Number(process.env.BENCH_PODS ?? 20);
const IMAGE = 'jetlet/busybox:1.35';

/** jetlet: POST → Running (every container running, pod IP set) observed through the API. */
async function jetletPodStarts(cluster: Cluster): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < PODS; i++) {
    const name = `bench-${i}`;
    const manifest = {
      metadata: { name },
      spec: { terminationGracePeriodSeconds: 0, containers: [{ name: 'main', image: IMAGE, command: ['sleep', '3600'] }] },
    };
    const start = performance.now();
    await cluster.ensureNamespace('bench');
    const created = await cluster.request('POST', '/api/v1/namespaces/bench/pods', manifest);
    if (created.status !== 201) throw new Error(`create ${name}: ${created.status} ${JSON.stringify(created.body)}`);
    for (;;) {
      const pod = await cluster.getPod('bench', name);
      if (pod?.status.phase === 'Running' && pod.status.podIP && pod.status.containerStatuses?.every((s) => s.state.running)) break;
      await sleep(5);
    }
    samples.push(performance.now() - start);
  }
  return samples;
}

/** Baseline: `docker run -d` of the same image, to the command's return (container started). */
async function dockerRuns(label: string, withSandbox: boolean): Promise<number[]> {
  const samples: number[] = [];
  const ids: string[] = [];
  try {
    for (let i = 0; i < PODS; i++) {
      const start = performance.now();
      if (withSandbox) {
        const sandbox = (await run('docker', ['run', '-d', '--label', label, 'jetlet/pause:1.0'])).stdout.trim();
        ids.push(sandbox);
        ids.push((await run('docker', ['run', '-d', '--label', label, '--network', `container:${sandbox}`, IMAGE, 'sleep', '3600'])).stdout.trim());
      } else {
        ids.push((await run('docker', ['run', '-d', '--label', label, IMAGE, 'sleep', '3600'])).stdout.trim());
      }
      samples.push(performance.now() - start);
    }
  } finally {
    if (ids.length > 0) await run('docker', ['rm', '-f', ...ids]);
  }
  return samples;
}

/** POST → Running on a fresh cluster with one agent: open, or secured (API tokens, RBAC, audit, and per-component NATS identities). */
async function clusterPodStarts(secure: boolean): Promise<number[]> {
  const cluster = await Cluster.start({}, { secure, secureNats: secure });
  try {
    await cluster.startAgent(uniqueName('bench-node'), { RESYNC_SECONDS: '10', HEARTBEAT_SECONDS: '10' });
    return await jetletPodStarts(cluster);
  } finally {
    await cluster.stop();
  }
}

async function main(): Promise<void> {
  const label = `io.jetlet.bench=${uniqueName('bench-docker')}`;
  const docker = summary(await dockerRuns(label, false));
  const dockerPod = summary(await dockerRuns(label, true));
  const open = summary(await clusterPodStarts(false));
  const secured = summary(await clusterPodStarts(true));
  const row = (name: string, s: { p50: number; p99: number }): string =>
    `${name.padEnd(58)} ${s.p50.toFixed(0).padStart(7)} ${s.p99.toFixed(0).padStart(7)} ${(s.p50 / docker.p50).toFixed(2).padStart(7)}`;
  console.log(`\npod start latency, ${PODS} sequential starts (ms)`);
  console.log(`${''.padEnd(58)} ${'p50'.padStart(7)} ${'p99'.padStart(7)} ${'×docker'.padStart(7)}`);
  console.log(row('docker run -d (one container)', docker));
  console.log(row('docker run -d sandbox + joined container', dockerPod));
  console.log(row('jetlet pod: POST → Running seen through the API', open));
  console.log(row('  the same, secured (API auth + audit, NATS identities)', secured));
}

await main();
