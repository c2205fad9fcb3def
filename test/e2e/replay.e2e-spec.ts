import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import type { NodeObject, Pod } from '#contracts';
import type { PodExplanation } from '#domain';
import { Cluster, uniqueName } from '../harness/cluster.js';
import { NatsServer, ROOT, waitFor } from '../harness/processes.js';

const GRACE = 6;
const TOLERATION = 2;
const BUSYBOX = 'jetlet/busybox:1.35';

function pod(name: string, selector: Record<string, string>, container: Record<string, unknown>, restartPolicy = 'Always'): object {
  return {
    metadata: { name },
    spec: { restartPolicy, terminationGracePeriodSeconds: 1, nodeSelector: selector, containers: [{ name: 'main', image: BUSYBOX, ...container }] },
  };
}

/** jetctl against the streams only: no API URL, just NATS. */
async function jetctl(natsUrl: string, ...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }>;
async function jetctl(natsUrl: string, env: Record<string, string>, ...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }>;
async function jetctl(natsUrl: string, ...rest: unknown[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env = typeof rest[0] === 'object' ? (rest.shift() as Record<string, string>) : {};
  const args = rest as string[];
  const child = spawn(process.execPath, [join(ROOT, 'dist/apps/cli/src/main.js'), ...args], {
    cwd: ROOT,
    env: { ...process.env, NATS_URL: natsUrl, JETLET_SERVER: 'http://127.0.0.1:1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const code = await new Promise<number | null>((r) => child.once('exit', r));
  return { code, stdout, stderr };
}

const outputs = new Map<string, Promise<string>>();

/** jetctl's output, which must succeed; the streams no longer change, so each command runs once per server. */
function ok(natsUrl: string, ...args: string[]): Promise<string> {
  const key = `${natsUrl} ${args.join(' ')}`;
  let output = outputs.get(key);
  if (!output) {
    output = jetctl(natsUrl, ...args).then((r) => {
      assert.equal(r.code, 0, `jetctl ${args.join(' ')} failed: ${r.stderr}`);
      return r.stdout;
    });
    outputs.set(key, output);
  }
  return output;
}

/** Messages and sequences of every stream. */
async function streamStates(url: string): Promise<Record<string, string>> {
  const nc = await connect({ servers: url });
  try {
    const jsm = await jetstreamManager(nc);
    const states: Record<string, string> = {};
    for await (const s of jsm.streams.list()) states[s.config.name] = `${s.state.messages} messages, ${s.state.first_seq}..${s.state.last_seq}`;
    return states;
  } finally {
    await nc.close();
  }
}

/**
 * Debugging from the log: a cluster records a crash loop, an OOM kill, a pod that fits
 * nowhere until a node joins, and a node death with eviction; then every jetlet process
 * stops, and jetctl tells the story from NATS alone — and again from an exported bundle
 * imported into a fresh NATS server.
 */
describe('timeline, replay, explain and export from the streams alone', { timeout: 300_000 }, () => {
  let cluster: Cluster;
  let scratch: NatsServer | undefined;
  const a = uniqueName('rp-a');
  const b = uniqueName('rp-b');
  const c = uniqueName('rp-c');
  const dir = mkdtempSync(join(tmpdir(), 'jetlet-replay-'));
  let pendingMessage = '';
  let nats = '';
  const grace = ['--node-grace', `${GRACE}s`];
  let recorded: Record<string, string> = {};
  let waited: { code: number | null; stdout: string; stderr: string };
  let failedWait: { code: number | null; stdout: string; stderr: string };
  let watched = '';

  before(async () => {
    cluster = await Cluster.start({ NODE_GRACE_SECONDS: String(GRACE), EVICTION_TOLERATION_SECONDS: String(TOLERATION) });
    nats = cluster.nats.url;
    await Promise.all([cluster.startAgent(a, { NODE_LABELS: 'role=a' }), cluster.startAgent(c, { NODE_LABELS: 'role=c' })]);
    // jetctl get -w follows every change; apply --wait follows one pod to Ready, or to its failure.
    const watcher = spawn(process.execPath, [join(ROOT, 'dist/apps/cli/src/main.js'), 'get', 'pods', '-w'], {
      env: { ...process.env, NATS_URL: nats, JETLET_SERVER: cluster.apiUrl },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    watcher.stdout.on('data', (chunk: Buffer) => (watched += chunk.toString()));
    const manifest = (name: string, image: string): string => {
      const file = join(dir, `${name}.json`);
      writeFileSync(
        file,
        JSON.stringify({ apiVersion: 'v1', kind: 'Pod', ...pod(name, { role: 'a' }, { image, imagePullPolicy: 'Never', command: ['sleep', '600'] }) }),
      );
      return file;
    };
    const env = { JETLET_SERVER: cluster.apiUrl };
    [waited, failedWait] = await Promise.all([
      jetctl(nats, env, 'apply', '-f', manifest('waiter', BUSYBOX), '--wait'),
      jetctl(nats, env, 'apply', '-f', manifest('never', 'jetlet/not-here:1.0'), '--wait', '--timeout', '60s'),
    ]);
    await waitFor('get -w to show the waiter running', () => /waiter\s+1\/1\s+Running/.test(watched), 30_000);
    watcher.kill('SIGINT');
    await new Promise((r) => watcher.once('exit', r));

    await cluster.createPod('default', pod('crashy', { role: 'a' }, { command: ['sh', '-c', 'sleep 0.3; exit 1'] }));
    // tail keeps its newline-free input in memory: 200 MB against a 32 MiB limit.
    await cluster.createPod(
      'default',
      pod('oomy', { role: 'a' }, { command: ['sh', '-c', 'head -c 200m /dev/zero | tail'], resources: { limits: { memory: '32Mi', cpu: '500m' } } }, 'Never'),
    );
    await cluster.createPod('default', pod('victim', { role: 'c' }, { command: ['sleep', '600'] }));
    await cluster.createPod('default', pod('pending', { disk: 'ssd' }, { command: ['sleep', '600'] }));

    const unschedulable = await cluster.waitForPod('default', 'pending', 'unschedulable', (p) =>
      Boolean(p.status.conditions?.find((x) => x.type === 'PodScheduled' && x.message?.startsWith('0/'))),
    );
    pendingMessage = unschedulable.status.conditions?.find((x) => x.type === 'PodScheduled')?.message ?? '';
    await cluster.waitForPod('default', 'crashy', 'to restart three times', (p) => (p.status.containerStatuses?.[0]?.restartCount ?? 0) >= 3, 90_000);
    await cluster.waitForPod('default', 'oomy', 'OOM-killed', (p) => p.status.containerStatuses?.[0]?.state.terminated?.reason === 'OOMKilled');
    await cluster.waitForRunning('default', 'victim');

    // A node with the label the pending pod asks for joins: now it fits.
    await cluster.startAgent(b, { NODE_LABELS: 'disk=ssd' });
    await cluster.waitForRunning('default', 'pending');

    // The victim's node dies; after the grace and the toleration its pod is evicted.
    await cluster.agents.get(c)?.process.stop('SIGKILL');
    await cluster.waitForPod('default', 'victim', 'evicted', (p) => p.metadata.deletionTimestamp !== undefined, 60_000);

    // A message no consumer can read, on the crashing pod's events subject.
    const crashy = (await cluster.getPod('default', 'crashy')) as Pod;
    const nc = await connect({ servers: nats });
    await jetstream(nc).publish(`jetlet.events.${a}.${crashy.metadata.uid ?? ''}`, '{"not":"an envelope"}');
    await nc.close();

    // Every jetlet process stops; only NATS is left.
    await Promise.all([...cluster.agents.values()].map((x) => x.process.stop()));
    await Promise.all([cluster.api.stop(), cluster.scheduler.stop()]);
    recorded = await streamStates(nats);
  });

  after(async () => {
    await scratch?.stop();
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const explain = async (url: string, name: string, ...extra: string[]): Promise<PodExplanation> =>
    JSON.parse(await ok(url, 'explain', `default/${name}`, '-o', 'json', ...grace, ...extra)) as PodExplanation;

  it('apply --wait shows the steps and exits 0 once Ready, or 1 with the reason; get -w prints each change', () => {
    assert.equal(waited.code, 0, waited.stderr);
    const steps = waited.stdout.split('\n');
    const at = (pattern: RegExp): number => steps.findIndex((l) => pattern.test(l));
    assert.ok(at(/^pod\/waiter created$/) === 0, waited.stdout);
    // Each consumer delivers on its own, so only the last step's place is fixed.
    assert.ok(at(/Scheduled to node/) > 0, waited.stdout);
    assert.ok(at(/Started: Started container main/) > 0, waited.stdout);
    assert.equal(at(/^pod\/waiter: Ready$/), steps.filter(Boolean).length - 1, waited.stdout);

    assert.equal(failedWait.code, 1, failedWait.stdout);
    assert.match(
      failedWait.stderr,
      /pod\/never: container main: ErrImageNeverPull: Container image "jetlet\/not-here:1.0" is not present with pull policy of Never/,
    );

    assert.match(watched, /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE/);
    assert.match(watched, /waiter\s+0\/1\s+(Pending|ContainerCreating)/);
    assert.match(watched, /waiter\s+1\/1\s+Running/);
  });

  it('timeline: every message about the crashing pod in order, the causal chain, the invalid message marked', async () => {
    const text = await ok(nats, 'timeline', 'default/crashy');
    const lines = text.split('\n');
    assert.match(lines[0], /^SEQ\s+TIME\s+SOURCE\s+TYPE\s+SUMMARY/);
    const index = (pattern: RegExp): number => lines.findIndex((l) => pattern.test(l));
    assert.ok(index(/PodCreated/) > 0 && index(/PodCreated/) < index(/PodScheduled\s+.*bound to node/), text);
    assert.ok(index(/PodScheduled/) < index(/PodAssigned/), text);
    assert.match(text, new RegExp(`scheduler\\s+PodScheduled\\s+.*bound to node ${a}`));
    assert.ok(lines.filter((l) => /ContainerEvent\s+container main Died exit 1/.test(l)).length >= 3, text);
    assert.ok(lines.filter((l) => /BackoffRecorded\s+back-off: restarting main/.test(l)).length >= 3, text);
    assert.match(text, /Warning BackOff: Back-off restarting failed container main/);
    assert.match(text, /!! INVALID\s+invalid message on jetlet\.events\./);
    // The assignment hangs under the binding that caused it.
    assert.match(text, /PodAssigned\s+└─ assigned to/);

    const json = JSON.parse(await ok(nats, 'timeline', 'default/crashy', '-o', 'json')) as Array<{ envelope?: { type: string } }>;
    assert.equal(json[0].envelope?.type, 'PodCreated');
  });

  it('timeline of a node marks its silence and its NotReady', async () => {
    const text = await ok(nats, 'timeline', `node/${c}`);
    assert.match(text, /NodeRegistered/);
    assert.match(text, /NodeNotReady/);
    assert.match(text, new RegExp(`!! GAP\\s+node ${c} silent for`));
  });

  it('timeline -o svg draws the crash loop as a swimlane with back-off', async () => {
    const svg = await ok(nats, 'timeline', 'default/crashy', '-o', 'svg');
    assert.match(svg, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    assert.match(svg, /data-lane="main"/);
    assert.ok((svg.match(/<rect class="running"/g) ?? []).length >= 3, 'a running bar per attempt');
    assert.ok((svg.match(/<rect class="back-off"/g) ?? []).length >= 2, 'back-off bars between attempts');
    assert.ok((svg.match(/class="mark crashed"/g) ?? []).length >= 3, 'a crash mark per death');
    const html = await ok(nats, 'timeline', 'default/crashy', '-o', 'html');
    assert.match(html, /<!doctype html>[\s\S]*<svg[\s\S]*PodCreated/);
  });

  it("explain: the restarts with exit codes and the back-off of the agent's own code", async () => {
    const x = await explain(nats, 'crashy');
    assert.deepEqual(x.findings, []);
    const main = x.containers.find((k) => k.name === 'main');
    assert.ok(main && main.restarts.length >= 3, JSON.stringify(x.containers));
    for (const r of main.restarts) {
      assert.equal(r.exitCode, 1);
      assert.equal(r.recordedDelayMs, r.computedDelayMs, `restart ${r.restartCount}: recorded and recomputed back-off agree`);
      assert.ok((r.startedMs ?? 0) >= r.nextStartMs - 5, `restart ${r.restartCount} waited its back-off`);
    }
    // The test agents' back-off: 1 s doubling to 4 s; the first restart is immediate.
    assert.deepEqual(
      main.restarts.slice(0, 3).map((r) => r.waitMs),
      [0, 1000, 2000],
    );
    const text = await ok(nats, 'explain', 'default/crashy', ...grace);
    assert.match(text, /restart 2: exited 1 at \d\d:\d\d:\d\d\.\d{3}, back-off 1s → next start \d\d:\d\d:\d\d\.\d{3}; started/);
    assert.match(text, /Findings: none/);
  });

  it('explain: the OOM kill, not restarted under restartPolicy Never', async () => {
    const text = await ok(nats, 'explain', 'default/oomy', ...grace);
    assert.match(text, /exited 137 \(OOMKilled\) at .*: not restarted/);
    assert.match(text, /status: OOMKilled, phase Failed/);
  });

  it('explain reproduces the scheduler: its FailedScheduling message while nothing fit, and its choice once a node fit', async () => {
    const x = await explain(nats, 'pending');
    const failed = x.scheduling.filter((d) => d.kind === 'PodUnschedulable');
    const bound = x.scheduling.filter((d) => d.kind === 'PodScheduled');
    assert.ok(failed.length >= 1 && bound.length === 1, JSON.stringify(x.scheduling));
    assert.equal(failed[0].recorded, pendingMessage, 'the message the API showed');
    assert.equal(failed[0].recomputed, pendingMessage, 'the re-run gives the same words');
    assert.match(pendingMessage, /^0\/2 nodes are available: 2 node\(s\) didn't match Pod's node affinity\/selector\.$/);
    assert.equal(bound[0].recorded, b);
    assert.ok(
      x.scheduling.every((d) => d.matches),
      JSON.stringify(x.scheduling),
    );
    assert.deepEqual(x.findings, []);
    const verdict = bound[0].nodes.find((n) => n.name === b);
    assert.ok(verdict?.score && verdict.reasons.length === 0, JSON.stringify(bound[0].nodes));

    const text = await ok(nats, 'explain', 'default/pending', ...grace);
    assert.match(text, /FailedScheduling: 0\/2 nodes are available.*\(the re-run agrees\)/);
    assert.match(text, new RegExp(`bound to ${b} \\(the re-run agrees\\)`));
  });

  it('explain: the node death and the eviction', async () => {
    const x = await explain(nats, 'victim');
    const story = x.evictions.map((e) => e.text).join('\n');
    assert.match(story, new RegExp(`NodeNotReady: Node ${c} status is now: NodeNotReady`));
    assert.match(story, new RegExp(`evicted: Taint manager: deleting due to NoExecute taint node.kubernetes.io/unreachable on node ${c}`));
    assert.match(story, /TaintManagerEviction: Marking for deletion Pod default\/victim/);
    assert.ok(x.pod?.metadata.deletionTimestamp, 'the pod shows its deletion');
  });

  it('replay --at shows the cluster as it was, and --diff what changed', async () => {
    const x = await explain(nats, 'pending');
    const before = x.scheduling.find((d) => d.kind === 'PodUnschedulable')?.seq ?? 0;
    const bound = x.scheduling.find((d) => d.kind === 'PodScheduled')?.seq ?? 0;
    const then = JSON.parse(await ok(nats, 'replay', '--at', String(before), 'get', 'pods', '-o', 'json')) as { items: Pod[] };
    const pendingThen = then.items.find((p) => p.metadata.name === 'pending');
    assert.equal(pendingThen?.spec.nodeName, undefined);
    assert.equal(pendingThen?.status.conditions?.find((k) => k.type === 'PodScheduled')?.message, pendingMessage);
    const later = JSON.parse(await ok(nats, 'replay', '--at', String(bound), 'get', 'pods', '-o', 'json')) as { items: Pod[] };
    assert.equal(later.items.find((p) => p.metadata.name === 'pending')?.spec.nodeName, b);

    const table = await ok(nats, 'replay', '--at', String(bound), 'get', 'pods', '-o', 'wide');
    assert.match(table, /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\s+IP\s+NODE/);
    assert.match(table, new RegExp(`victim\\s+1/1\\s+Running\\s+0\\s+\\S+\\s+\\S+\\s+${c}`));

    // The moment the scheduler found the victim's node silent.
    const timeline = JSON.parse(await ok(nats, 'timeline', `node/${c}`, '-o', 'json')) as Array<{
      time: string;
      envelope?: { type: string; data: { reason?: string } };
    }>;
    const notReadyAt = timeline.find((e) => e.envelope?.type === 'NodeEvent' && e.envelope.data.reason === 'NodeNotReady')?.time ?? '';
    const nodes = JSON.parse(await ok(nats, 'replay', '--at', notReadyAt, 'get', 'nodes', '-o', 'json', ...grace)) as { items: NodeObject[] };
    const readyOf = (name: string): string | undefined =>
      nodes.items.find((n) => n.metadata.name === name)?.status.conditions?.find((k) => k.type === 'Ready')?.status;
    assert.equal(readyOf(c), 'Unknown');
    assert.equal(readyOf(a), 'True');

    const diff = await ok(nats, 'replay', '--diff', `${before}..${bound}`, ...grace);
    assert.match(diff, new RegExp(`~ pod/default/pending: status Pending, ready 0/1, restarts 0, node <none> → .*node ${b}`));
    assert.match(diff, new RegExp(`\\+ node/${b}: Ready`));
  });

  it('export, then import into a fresh NATS server: the same timeline, replay and explain', async () => {
    const bundle = join(dir, 'bundle.jsonl');
    assert.equal((await jetctl(nats, 'export', '-o', bundle)).code, 0);
    const podBundle = join(dir, 'pending.jsonl');
    assert.equal((await jetctl(nats, 'export', '--pod', 'default/pending', '-o', podBundle)).code, 0);
    assert.match(readFileSync(bundle, 'utf8').split('\n')[0], /"jetlet":"bundle","version":1/);

    scratch = await NatsServer.start();
    assert.match((await jetctl(scratch.url, 'import', bundle)).stdout, /messages imported/);
    // A second import into a server that already holds the streams is refused.
    const again = await jetctl(scratch.url, 'import', bundle);
    assert.notEqual(again.code, 0);
    assert.match(again.stderr, /already holds messages/);

    const x = await explain(nats, 'pending');
    const seq = String(x.scheduling[0].seq);
    const commands = [
      ['timeline', 'default/crashy'],
      ['timeline', 'default/crashy', '-o', 'svg'],
      ['timeline', `node/${c}`],
      ['explain', 'default/crashy', ...grace],
      ['explain', 'default/pending', ...grace],
      ['explain', 'default/victim', ...grace],
      ['replay', '--at', seq, 'get', 'pods', 'nodes', 'events', '-A', ...grace],
    ];
    const [there, here] = await Promise.all([
      Promise.all(commands.map((args) => ok(scratch?.url ?? '', ...args))),
      Promise.all(commands.map((args) => ok(nats, ...args))),
    ]);
    commands.forEach((args, i) => assert.equal(there[i], here[i], `jetctl ${args.join(' ')} differs after import`));

    const podOnly = await NatsServer.start();
    try {
      assert.equal((await jetctl(podOnly.url, 'import', podBundle)).code, 0);
      assert.equal(await ok(podOnly.url, 'explain', 'default/pending', ...grace), await ok(nats, 'explain', 'default/pending', ...grace));
      assert.equal(await ok(podOnly.url, 'timeline', 'default/pending'), await ok(nats, 'timeline', 'default/pending'));
    } finally {
      await podOnly.stop();
    }
  });

  it('says what is wrong with bad input, and never crashes', async () => {
    const unknown = await jetctl(nats, 'timeline', 'default/no-such-pod');
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /the streams hold nothing about pod default\/no-such-pod/);
    const badAt = await jetctl(nats, 'replay', '--at', 'yesterday', 'get', 'pods');
    assert.equal(badAt.code, 1);
    assert.match(badAt.stderr, /--at "yesterday" is neither a sequence/);
    const down = await jetctl('nats://127.0.0.1:1', 'timeline', 'default/crashy');
    assert.equal(down.code, 1);
    assert.match(down.stderr, /cannot reach NATS at nats:\/\/127.0.0.1:1/);
    const notBundle = join(dir, 'not-a-bundle.jsonl');
    await import('node:fs/promises').then((fs) => fs.writeFile(notBundle, 'hello\n'));
    const bad = await jetctl(nats, 'import', notBundle);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /not a jetlet bundle/);
  });

  it('reads only: every stream holds what it held before jetctl ran', async () => {
    assert.deepEqual(await streamStates(nats), recorded);
  });
});
