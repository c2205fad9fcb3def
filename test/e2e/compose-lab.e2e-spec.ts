import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { STREAMS, type NodeObject, type Pod } from '#contracts';
import { LabApi } from '../harness/lab-api.js';
import { freePort, ROOT, waitFor } from '../harness/processes.js';

/** Runs a command in the repository and returns its output; throws with the output unless it exits 0. */
async function run(command: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs = 120_000): Promise<string> {
  const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  clearTimeout(timer);
  if (code !== 0) throw new Error(`${command} ${args.join(' ')} exited with ${code}:\n${output.slice(-4000)}`);
  return output;
}

const GRACE_SECONDS = 10;
const TOLERATION_SECONDS = 5;

/**
 * The compose lab end to end, with the real parts: three node containers each running its own
 * Docker engine and agent, a three-server NATS cluster with R3 streams, the lab registry, the
 * API and two schedulers. One lab for the whole file (it takes minutes to build and start).
 */
describe('the compose lab', () => {
  const project = `jetlet-e2e-${randomBytes(3).toString('hex')}`;
  const kubeDir = mkdtempSync(join(tmpdir(), 'jetlet-lab-kube-'));
  let lab: LabApi;
  let env: NodeJS.ProcessEnv;
  let api: string;
  let natsPorts: number[];
  let prometheus: string;
  let alertmanager: string;
  let tornDown = false;
  // A fetch to a port that docker-proxy publishes for a container still starting has been seen
  // to leave this process with no live handle while the request was pending, and node:test then
  // cancelled the file. A referenced timer keeps the loop alive; each request's own timeout decides.
  const keepAlive = setInterval(() => undefined, 1000);

  const compose = (...args: string[]): Promise<string> => run('docker-compose', args, env, 300_000);
  const jetctl = (...args: string[]): Promise<string> => run('node', ['dist/apps/cli/src/main.js', ...args, '--project', project], env);
  /** The docker CLI inside a node: that node's own engine. */
  const nodeDocker = (node: number, ...args: string[]): Promise<string> => run('docker', ['exec', `${project}_node_${node}`, 'docker', ...args], env);

  const request = <T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> => lab.request<T>(method, path, body);
  const pods = async (): Promise<Pod[]> => (await request<{ items: Pod[] }>('GET', '/api/v1/namespaces/default/pods')).body.items;
  const ready = async (name: string): Promise<string | undefined> =>
    (await request<NodeObject>('GET', `/api/v1/nodes/${name}`)).body.status?.conditions?.find((c) => c.type === 'Ready')?.status;
  /** Alertmanager's active alerts with this name. */
  const alerts = async (name: string): Promise<Array<{ labels: Record<string, string> }>> => {
    const response = await fetch(`${alertmanager}/api/v2/alerts?filter=${encodeURIComponent(`alertname="${name}"`)}`, { signal: AbortSignal.timeout(15_000) });
    return response.ok ? ((await response.json()) as Array<{ labels: Record<string, string> }>) : [];
  };
  const nodeNumber = (pod: Pod): number => Number(/^node-(\d+)$/.exec(pod.spec.nodeName ?? '')?.[1]);

  /** A sleeper asking for a tenth of a CPU, so LeastAllocated spreads them. */
  const sleeper = (name: string): object => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: {
      terminationGracePeriodSeconds: 1,
      containers: [{ name: 'main', image: 'jetlet/busybox:1.35', command: ['sleep', '3600'], resources: { requests: { cpu: '100m', memory: '32Mi' } } }],
    },
  });

  /** Creates a pod as a client would across a server failure: retries until the API answers 201, or 409 for a create that had landed. */
  async function create(name: string): Promise<void> {
    await waitFor(
      `pod ${name} to be created`,
      async () => {
        const { status } = await request('POST', '/api/v1/namespaces/default/pods', sleeper(name));
        if (status === 201 || status === 409) return true;
        throw new Error(`POST answered ${status}`);
      },
      120_000,
      1000,
    );
  }

  const running = (names: string[]) => async (): Promise<Pod[] | undefined> => {
    const all = await pods();
    const chosen = all.filter((p) => names.includes(p.metadata.name));
    if (chosen.length === names.length && chosen.every((p) => p.status.phase === 'Running' && p.status.podIP)) return chosen;
    // Thrown, not returned: waitFor names the last one in its timeout, so a failure says which pods and why.
    const missing = names.filter((n) => !chosen.some((p) => p.metadata.name === n));
    const notRunning = chosen.filter((p) => p.status.phase !== 'Running' || !p.status.podIP);
    throw new Error(
      `absent: [${missing.join(', ')}]; not running: ${JSON.stringify(notRunning.map((p) => ({ name: p.metadata.name, node: p.spec.nodeName, status: p.status })))}`,
    );
  };

  /** The pod's containers in its node's engine: sandbox and app, each running exactly once. */
  async function assertRunsOnce(pod: Pod): Promise<void> {
    const node = nodeNumber(pod);
    const rows = (await nodeDocker(node, 'ps', '-a', '--filter', `label=io.jetlet.pod.uid=${pod.metadata.uid}`, '--format', '{{.Names}} {{.State}}'))
      .trim()
      .split('\n');
    assert.equal(rows.length, 2, `${pod.metadata.name} on node-${node}: ${rows.join('; ')}`);
    assert.ok(
      rows.every((r) => r.endsWith(' running')),
      `${pod.metadata.name}: ${rows.join('; ')}`,
    );
    for (const other of [1, 2, 3].filter((n) => n !== node && n !== 2)) {
      const elsewhere = (await nodeDocker(other, 'ps', '-aq', '--filter', `label=io.jetlet.pod.uid=${pod.metadata.uid}`)).trim();
      assert.equal(elsewhere, '', `${pod.metadata.name} also has containers on node-${other}`);
    }
  }

  before(async () => {
    const [apiPort, prometheusPort, alertmanagerPort, ...nats] = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort(), freePort()]);
    natsPorts = nats;
    // Secured as `npm run lab:compose` secures it: a token file with an admin token, and a certificate.
    lab = await LabApi.create(kubeDir, apiPort);
    api = lab.url;
    prometheus = `http://127.0.0.1:${prometheusPort}`;
    alertmanager = `http://127.0.0.1:${alertmanagerPort}`;
    env = {
      ...process.env,
      COMPOSE_PROJECT_NAME: project,
      LAB_API_PORT: String(apiPort),
      LAB_PROMETHEUS_PORT: String(prometheusPort),
      LAB_ALERTMANAGER_PORT: String(alertmanagerPort),
      // Not the default subnet, so a lab someone runs by hand on this engine is no conflict.
      LAB_SUBNET: '172.29.43',
      LAB_NATS_PORT_1: String(nats[0]),
      LAB_NATS_PORT_2: String(nats[1]),
      LAB_NATS_PORT_3: String(nats[2]),
      HEARTBEAT_SECONDS: '2',
      NODE_GRACE_SECONDS: String(GRACE_SECONDS),
      EVICTION_TOLERATION_SECONDS: String(TOLERATION_SECONDS),
      KUBECONFIG: join(kubeDir, 'config'),
      JETLET_COMPILED: '1',
      // The lab's API credentials (its token file, admin token and certificate) live here.
      JETLET_STATE: kubeDir,
    };
    // jetctl must find the lab through the kubeconfig alone.
    delete env.JETLET_SERVER;
    // Reuses jetlet/lab:dev when nothing that goes into it changed.
    await run('bash', ['scripts/compose.sh', 'build'], env, 600_000);
    await compose('up', '-d');
    for (const n of [1, 2, 3]) await waitFor(`node-${n} to be Ready`, async () => (await ready(`node-${n}`)) === 'True', 180_000, 500);
  });

  afterEach(async (t) => {
    // A failed test shows what the lab said meanwhile, before a later test takes the lab down.
    if ('passed' in t && !t.passed && !tornDown) process.stderr.write(await compose('logs', '--no-color', '--tail', '200').catch((e: Error) => e.message));
  });

  after(async () => {
    if (!tornDown) {
      // Something failed before the teardown: show what the lab said.
      process.stderr.write(await compose('logs', '--tail', '40').catch((e: Error) => e.message));
      await compose('down', '-v', '--remove-orphans').catch(() => undefined);
    }
    rmSync(kubeDir, { recursive: true, force: true });
    clearInterval(keepAlive);
  });

  let onNode2: Pod[] = [];

  it('spreads pods over the three nodes, each run by its own node’s Docker engine with that node’s pod addresses', async () => {
    const names = ['spread-1', 'spread-2', 'spread-3', 'spread-4', 'spread-5', 'spread-6'];
    for (const name of names) await create(name);
    const placed = await waitFor('the spread pods to run', running(names), 180_000, 500);
    assert.deepEqual([...new Set(placed.map(nodeNumber))].sort(), [1, 2, 3]);
    for (const pod of placed) {
      assert.match(pod.status.podIP ?? '', new RegExp(`^10\\.42\\.${nodeNumber(pod)}\\.`), `${pod.metadata.name} on ${pod.spec.nodeName}`);
      await assertRunsOnce(pod);
    }
    onNode2 = placed.filter((p) => nodeNumber(p) === 2);
    // Each node reports the cgroup limits of its container (1 GiB, one CPU by default), not the host's.
    const node1 = (await request<NodeObject>('GET', '/api/v1/nodes/node-1')).body;
    assert.deepEqual([node1.status.capacity.cpu, node1.status.capacity.memory], ['1', `${2 ** 20}Ki`]);
  });

  it('scrapes every component into Prometheus, whose rules load, beside the alerter and Alertmanager', async () => {
    type Target = { labels: { job: string }; health: string };
    const up = await waitFor(
      'every scrape target to be up',
      async () => {
        const response = await fetch(`${prometheus}/api/v1/targets?state=active`, { signal: AbortSignal.timeout(15_000) });
        if (!response.ok) return undefined;
        const targets = ((await response.json()) as { data: { activeTargets: Target[] } }).data.activeTargets;
        return targets.length === 7 && targets.every((t) => t.health === 'up') ? targets : undefined;
      },
      120_000,
      1000,
    );
    const jobs = up.map((t) => t.labels.job).sort();
    assert.deepEqual(jobs, ['agent', 'agent', 'agent', 'alerter', 'api', 'scheduler', 'scheduler']);
    const rules = (await (await fetch(`${prometheus}/api/v1/rules`)).json()) as { data: { groups: Array<{ rules: Array<{ health: string; name: string }> }> } };
    const all = rules.data.groups.flatMap((g) => g.rules);
    assert.ok(all.length > 0 && all.every((r) => r.health !== 'err'), JSON.stringify(all.filter((r) => r.health === 'err')));
  });

  it('points kubectl and jetctl at the lab through the kubeconfig jetctl writes, with no flags', async () => {
    writeFileSync(
      env.KUBECONFIG ?? '',
      await run(
        'node',
        ['dist/apps/cli/src/main.js', 'kubeconfig', '--server', api, '--token', lab.adminToken, '--certificate-authority', lab.certificate],
        env,
      ),
    );
    assert.deepEqual((await run('kubectl', ['get', 'nodes', '-o', 'name'], env)).trim().split('\n').sort(), ['node/node-1', 'node/node-2', 'node/node-3']);
    assert.match(await run('node', ['dist/apps/cli/src/main.js', 'get', 'pods', '-o', 'wide'], env), /spread-1 +1\/1 +Running/);
  });

  it('turns a killed node NotReady within the grace period and evicts its pods after their toleration', async () => {
    const report = await jetctl('lab', 'kill', 'node-2');
    assert.match(report, /killed node-2/);
    assert.match(report, /undo: +jetctl lab start node-2/);
    assert.match(report, new RegExp(`watch: the alerts it raises, in Alertmanager: ${alertmanager.replaceAll('.', '\\.')}/api/v2/alerts`));
    await waitFor('node-2 to be NotReady', async () => (await ready('node-2')) !== 'True', (GRACE_SECONDS + 60) * 1000, 500);
    await waitFor(
      'node-2’s pods to be evicted',
      async () => {
        const now = await pods();
        return onNode2.every((p) => now.find((q) => q.metadata.uid === p.metadata.uid)?.metadata.deletionTimestamp);
      },
      (TOLERATION_SECONDS + 60) * 1000,
      500,
    );
    // The alerter saw it on the streams, and the lab's Alertmanager holds the alert.
    await waitFor(
      'a NodeNotReady alert for node-2 in Alertmanager',
      async () => (await alerts('NodeNotReady')).some((a) => a.labels.node === 'node-2'),
      60_000,
      1000,
    );
    const others = (await pods()).filter((p) => p.metadata.name.startsWith('spread-') && nodeNumber(p) !== 2);
    assert.ok(
      others.every((p) => p.status.phase === 'Running' && !p.metadata.deletionTimestamp),
      'pods on the other nodes keep running',
    );
  });

  it('loses no pod and starts no container twice when a NATS server dies while pods are created', async () => {
    const names = ['during-1', 'during-2', 'during-3', 'during-4', 'during-5', 'during-6'];
    await create(names[0]);
    const [, report] = await Promise.all([
      (async () => {
        for (const name of names.slice(1)) await create(name);
      })(),
      jetctl('lab', 'kill', 'nats-2'),
    ]);
    assert.match(report, /killed nats-2/);
    const placed = await waitFor('the pods created across the failure to run', running(names), 180_000, 500);
    const all = await pods();
    for (const name of names) assert.equal(all.filter((p) => p.metadata.name === name).length, 1, name);
    assert.ok(
      placed.every((p) => nodeNumber(p) !== 2),
      'nothing is placed on the dead node',
    );
    for (const pod of placed) await assertRunsOnce(pod);
  });

  it('converges when the node and the NATS server come back', async () => {
    assert.match(await jetctl('lab', 'restore'), /started (node-2|nats-2).*started (node-2|nats-2)/);
    await waitFor('node-2 to be Ready again', async () => (await ready('node-2')) === 'True', 180_000, 500);
    await waitFor(
      'node-2’s evicted pods to be removed from the API and from its engine',
      async () => {
        const now = await pods();
        if (onNode2.some((p) => now.some((q) => q.metadata.uid === p.metadata.uid))) return false;
        return (await nodeDocker(2, 'ps', '-aq', '--filter', 'label=io.jetlet.node=node-2')).trim() === '';
      },
      180_000,
      1000,
    );
    const remaining = (await pods()).map((p) => p.metadata.name);
    await waitFor('every remaining pod to run', running(remaining), 60_000, 500);
    // The lab's NATS takes only its identities: an anonymous client is turned away.
    await assert.rejects(connect({ servers: `nats://127.0.0.1:${natsPorts[1]}`, maxReconnectAttempts: 0 }), /Authorization/i);
    // nats-2 is back in every stream's replica set and has caught up.
    const nc = await connect({ servers: `nats://127.0.0.1:${natsPorts[1]}`, ...lab.natsOptions() });
    try {
      const jsm = await jetstreamManager(nc);
      for (const stream of Object.values(STREAMS)) {
        await waitFor(
          `${stream} to have three current replicas`,
          async () => {
            const info = await jsm.streams.info(stream);
            const peers = [info.cluster?.leader, ...(info.cluster?.replicas ?? []).filter((r) => r.current && !r.offline).map((r) => r.name)];
            return info.config.num_replicas === 3 && peers.filter(Boolean).length === 3;
          },
          120_000,
          1000,
        );
      }
    } finally {
      await nc.close();
    }
  });

  it('leaves no container, network or volume behind after docker-compose down -v', async () => {
    const label = `label=com.docker.compose.project=${project}`;
    // The nodes' engines keep their data on anonymous volumes (one per replica), which carry no project label.
    const nodes = (await run('docker', ['ps', '-aq', '--filter', label, '--filter', 'label=com.docker.compose.service=node'], env)).trim().split('\n');
    const engineVolumes = (await run('docker', ['inspect', '-f', '{{range .Mounts}}{{if eq .Type "volume"}}{{.Name}} {{end}}{{end}}', ...nodes], env))
      .split(/\s+/)
      .filter(Boolean);
    assert.equal(engineVolumes.length, 3);
    await compose('down', '-v', '--remove-orphans');
    tornDown = true;
    assert.equal((await run('docker', ['ps', '-aq', '--filter', label], env)).trim(), '');
    assert.equal((await run('docker', ['network', 'ls', '-q', '--filter', label], env)).trim(), '');
    assert.equal((await run('docker', ['volume', 'ls', '-q', '--filter', label], env)).trim(), '');
    const volumes = (await run('docker', ['volume', 'ls', '-q'], env)).split('\n');
    assert.deepEqual(
      engineVolumes.filter((v) => volumes.includes(v)),
      [],
      'the nodes’ engine volumes are gone',
    );
  });
});
