import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { LabApi } from '../test/harness/lab-api.js';
import { freePort, ROOT, sleep } from '../test/harness/processes.js';
import { fmt, printTable, summary } from './bench-util.js';

const run = promisify(execFile);
const PODS = Number(process.env.BENCH_LAB_PODS ?? 10);
const IMAGE = 'jetlet/busybox:1.35';

/**
 * The compose lab: how long `docker-compose up` takes from a built image to every node Ready,
 * and a pod's start inside a lab node beside `docker run` in that node's own engine.
 */
async function main(): Promise<void> {
  const project = `jetlet-bench-${randomBytes(3).toString('hex')}`;
  const apiPort = await freePort();
  const state = mkdtempSync(join(tmpdir(), 'jetlet-lab-bench-'));
  // The lab's API is secured: its credentials as `npm run lab:compose` makes them.
  const lab = await LabApi.create(state, apiPort);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    COMPOSE_PROJECT_NAME: project,
    LAB_API_PORT: String(apiPort),
    LAB_NATS_PORT_1: '',
    LAB_NATS_PORT_2: '',
    LAB_NATS_PORT_3: '',
    JETLET_COMPILED: '1',
    JETLET_STATE: state,
  };
  const compose = (...args: string[]) => run('docker-compose', args, { cwd: ROOT, env, maxBuffer: 1 << 26 });
  /** Runs a Node.js script inside node-1 (its own engine is the local one there) and returns its output. */
  const inNode = async (script: string): Promise<string> => (await run('docker', ['exec', `${project}_node_1`, 'node', '-e', script], { maxBuffer: 1 << 24 })).stdout;
  const get = async <T>(path: string): Promise<T> => (await lab.request<T>('GET', path)).body;
  const post = async (path: string, body: unknown): Promise<number> => (await lab.request('POST', path, body)).status;

  await run('bash', ['scripts/compose.sh', 'build'], { cwd: ROOT, env, maxBuffer: 1 << 26 });
  try {
    const upStart = performance.now();
    await compose('up', '-d');
    const upReturned = performance.now() - upStart;
    for (;;) {
      const nodes = await get<{ items: Array<{ metadata: { name: string }; status: { conditions?: Array<{ type: string; status: string }> } }> }>('/api/v1/nodes').catch(
        () => ({ items: [] }),
      );
      const ready = nodes.items.filter((n) => n.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
      if (ready.length >= 3) break;
      if (performance.now() - upStart > 300_000) throw new Error('nodes not Ready after 5 minutes');
      await sleep(100);
    }
    const allReady = performance.now() - upStart;

    /** POST → Running with every container running, seen through the API; pinned to node-1. */
    const podStart = async (name: string): Promise<number> => {
      const start = performance.now();
      const status = await post('/api/v1/namespaces/default/pods', {
        metadata: { name },
        spec: { nodeName: 'node-1', terminationGracePeriodSeconds: 0, containers: [{ name: 'main', image: IMAGE, command: ['sleep', '3600'] }] },
      });
      if (status !== 201) throw new Error(`create ${name}: ${status}`);
      for (;;) {
        const pod = await get<{ status: { phase?: string; podIP?: string; containerStatuses?: Array<{ state: { running?: unknown } }> } }>(
          `/api/v1/namespaces/default/pods/${name}`,
        );
        if (pod.status?.phase === 'Running' && pod.status.podIP && pod.status.containerStatuses?.every((s) => s.state.running)) break;
        await sleep(5);
      }
      return performance.now() - start;
    };
    // The first pod on a fresh node pulls the pause and busybox images from the lab registry.
    const firstPod = await podStart('bench-first');
    const pods: number[] = [];
    for (let i = 0; i < PODS; i++) pods.push(await podStart(`bench-${i}`));

    // Baselines inside the same node's engine, timed there (no docker exec in the measurement).
    const dockerRuns = JSON.parse(
      await inNode(`
        const { execFileSync } = require('node:child_process');
        const one = [], pod = [];
        for (let i = 0; i < ${PODS}; i++) {
          let t = performance.now();
          execFileSync('docker', ['run', '-d', '--label', 'bench=1', '${IMAGE}', 'sleep', '3600']);
          one.push(performance.now() - t);
          t = performance.now();
          const sandbox = execFileSync('docker', ['run', '-d', '--label', 'bench=1', 'jetlet/pause:1.0']).toString().trim();
          execFileSync('docker', ['run', '-d', '--label', 'bench=1', '--network', 'container:' + sandbox, '${IMAGE}', 'sleep', '3600']);
          pod.push(performance.now() - t);
        }
        execFileSync('sh', ['-c', 'docker rm -f $(docker ps -aq --filter label=bench=1) >/dev/null']);
        console.log(JSON.stringify({ one, pod }));`),
    ) as { one: number[]; pod: number[] };

    printTable('compose lab: up from a built image (3 nodes, 3 NATS servers, registry, API, 2 schedulers), s', ['seconds'], [
      ['docker-compose up -d returns', fmt(upReturned / 1000, 1)],
      ['every node Ready in the API', fmt(allReady / 1000, 1)],
    ]);
    const docker = summary(dockerRuns.one);
    const rows = [
      ['docker run -d in node-1 (one container)', docker],
      ['docker run -d in node-1, sandbox + joined container', summary(dockerRuns.pod)],
      ['jetlet pod on node-1: POST → Running via the API', summary(pods)],
    ] as const;
    printTable(
      `pod start inside a lab node, ${PODS} sequential starts (ms); first pod on a fresh node, with pulls: ${fmt(firstPod)} ms`,
      ['p50', 'p99', '×docker'],
      rows.map(([name, s]) => [name, fmt(s.p50), fmt(s.p99), fmt(s.p50 / docker.p50, 2)]),
    );
  } finally {
    await compose('down', '-v', '--remove-orphans');
    rmSync(state, { recursive: true, force: true });
  }
}

await main();
