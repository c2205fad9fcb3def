import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import Docker from 'dockerode';
import { AckPolicy, DeliverPolicy } from '@nats-io/jetstream';
import { Bus } from '#bus';
import { decodeEnvelope, MESSAGES, parseEnvelope, STREAMS, SUBJECTS, token, type Envelope, type PodManifest } from '#contracts';
import { AGENT_BUNDLE, AGENT_MODULES, uniqueName } from '../test/harness/cluster.js';
import { NatsServer, sleep, waitFor } from '../test/harness/processes.js';
import { fmt, lineTime, printTable, removeNodeContainers, spawnAgent, summary } from './bench-util.js';

const OTHER_NODES = 1000;
const OTHER_PODS = Number(process.env.BENCH_OTHER_PODS ?? 100_000);
const NODE_PODS = 110;
const WINDOW = 1000;
const CONSUME_REPS = 5;
const REPLAY_REPS = 2;
const AGENT_REPS = Number(process.env.BENCH_AGENT_REPS ?? 3);
/**
 * Another build's agent (its `dist/bundle/agent.mjs`, e.g. from a worktree of an earlier
 * commit), started in turns with this one's, as it ships, for a head-to-head baseline.
 */
const BASELINE_AGENT = process.env.BENCH_AGENT_BASELINE;

/** A PodAssigned envelope as the scheduler's assign() writes it: the full manifest, spec.nodeName set. */
function assignment(node: string, index: number): { subject: string; envelope: Envelope<'PodAssigned'> } {
  const uid = randomUUID();
  const pod: PodManifest = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `pod-${index}`, namespace: 'bench', uid, creationTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z'), generation: 1 },
    spec: {
      nodeName: node,
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 0,
      containers: [{ name: 'main', image: 'jetlet/busybox:1.35', command: ['sleep', '3600'], imagePullPolicy: 'IfNotPresent' }],
    },
  };
  const envelope: Envelope<'PodAssigned'> = {
    id: `assign-${uid}-1`,
    type: 'PodAssigned',
    version: MESSAGES.PodAssigned.version,
    time: new Date().toISOString(),
    source: { component: 'scheduler' },
    correlationId: uid,
    data: { pod },
  };
  return { subject: SUBJECTS.assignment(node, uid), envelope };
}

/** Publishes the other nodes' assignments with this node's spread evenly among them, ~WINDOW acks in flight. */
async function fill(bus: Bus, node: string): Promise<number> {
  parseEnvelope(JSON.parse(JSON.stringify(assignment(node, 0).envelope))); // fail fast if the shape no longer validates
  const total = OTHER_PODS + NODE_PODS;
  const every = Math.floor(total / NODE_PODS);
  const inflight = new Set<Promise<unknown>>();
  let mine = 0;
  for (let i = 0; i < total; i++) {
    const forNode = mine < NODE_PODS && i % every === every - 1;
    const { subject, envelope } = forNode ? assignment(node, mine++) : assignment(`bench-other-${i % OTHER_NODES}`, i);
    const ack = bus.js.publish(subject, JSON.stringify(envelope), { msgID: envelope.id });
    inflight.add(ack);
    void ack.finally(() => inflight.delete(ack)).catch(() => undefined);
    if (inflight.size >= WINDOW) await Promise.race(inflight);
  }
  await Promise.all(inflight);
  if (mine !== NODE_PODS) throw new Error(`placed ${mine} of ${NODE_PODS} assignments for ${node}`);
  return total;
}

/** (a) The agent's rebuild: recreate the durable, last per subject, until caught up. */
async function consumeOnce(bus: Bus, node: string): Promise<{ ms: number; count: number }> {
  let count = 0;
  const start = performance.now();
  const sub = await bus.consume(
    STREAMS.assign,
    { durable: `bench-${token(node)}`, filterSubject: SUBJECTS.nodeAssignments(node), from: 'last_per_subject', recreate: true },
    () => void count++,
  );
  await sub.caughtUp;
  const ms = performance.now() - start;
  await sub.stop();
  return { ms, count };
}

/**
 * (a') The baseline: the same durable with nats-server's own last-per-subject start, which
 * the bus no longer asks for (libs/bus/src/last-per-subject.ts), consumed until caught up,
 * each message decoded and checked as the bus does.
 */
async function serverConsumeOnce(bus: Bus, node: string): Promise<{ ms: number; count: number }> {
  const durable = `bench-server-${token(node)}`;
  // Deleted first and left afterwards, as the bus's recreate does.
  const start = performance.now();
  await bus.jsm.consumers.delete(STREAMS.assign, durable).catch(() => undefined);
  const info = await bus.jsm.consumers.add(STREAMS.assign, {
    durable_name: durable,
    ack_policy: AckPolicy.Explicit,
    filter_subject: SUBJECTS.nodeAssignments(node),
    deliver_policy: DeliverPolicy.LastPerSubject,
  });
  let count = 0;
  if (info.num_pending > 0) {
    const messages = await bus.js.consumers.getConsumerFromInfo(info).consume({ max_messages: 256 });
    for await (const m of messages) {
      decodeEnvelope(m.data); // as the bus checks each delivery
      m.ack();
      count++;
      if (m.info.pending === 0) break;
    }
    await messages.close();
  }
  return { ms: performance.now() - start, count };
}

/** (b) A full ordered replay of the whole stream, as a projection rebuilding from the start would do. */
async function replayOnce(bus: Bus): Promise<{ ms: number; count: number }> {
  let count = 0;
  const start = performance.now();
  const sub = await bus.follow(STREAMS.assign, { filterSubject: SUBJECTS.allAssignments, from: 'all' }, () => void count++);
  await sub.caughtUp;
  const ms = performance.now() - start;
  await sub.stop();
  return { ms, count };
}

/** (c) The real agent: spawn → its 'desired state rebuilt' line; then killed at once and its node's containers removed. */
async function agentOnce(docker: Docker, natsUrl: string, node: string, pods: number, entry = AGENT_BUNDLE): Promise<number> {
  const agent = await spawnAgent(natsUrl, node, { HEARTBEAT_SECONDS: '10', RESYNC_SECONDS: '10' }, entry);
  try {
    const seen = await lineTime(agent.process, new RegExp(`desired state rebuilt: ${pods} pod\\(s\\)`));
    return seen - agent.spawnedAt;
  } finally {
    // It starts the pods right after the line: kill it rather than wait for a graceful stop behind 110 starts.
    await agent.process.stop('SIGKILL');
    await removeNodeContainers(docker, node);
    await sleep(500); // a create the engine was still serving when the agent died
    await removeNodeContainers(docker, node);
  }
}

/** The code caches the agent's launcher keeps beside its code (apps/agent/src/launch/code-cache.ts). */
function codeCaches(entry = AGENT_BUNDLE): string[] {
  const dir = dirname(entry);
  return readdirSync(dir)
    .filter((name) => name.endsWith('.cache'))
    .map((name) => join(dir, name));
}

/** As after a build: the next start compiles the agent's code and keeps its cache once it serves. */
function dropCodeCaches(): void {
  for (const file of codeCaches()) rmSync(file, { force: true });
}

/** Starts the agent until it has kept its code cache, as any start after a build does; the later starts read it. */
async function keepCodeCache(natsUrl: string, node: string, entry = AGENT_BUNDLE): Promise<void> {
  if (codeCaches(entry).length > 0) return;
  const agent = await spawnAgent(natsUrl, node, { HEARTBEAT_SECONDS: '10', RESYNC_SECONDS: '10' }, entry);
  try {
    await waitFor('the agent to keep its code cache', () => codeCaches(entry).length > 0, 60_000);
  } finally {
    await agent.process.stop('SIGKILL');
  }
}

/** Floors under an agent's spawn → rebuilt: a Node.js process that does nothing, and one that loads the agent's modules (set as its entry point sets V8) and exits. */
async function processOnce(loadAgent: boolean): Promise<number> {
  const agentModule = JSON.stringify(join(process.cwd(), 'dist/apps/agent/src/agent.module.js'));
  const script = loadAgent ? `(await import('node:v8')).setFlagsFromString('--optimize-for-size'); await import(${agentModule});` : '';
  const start = performance.now();
  await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script]);
  return performance.now() - start;
}

const stats = (runs: { ms: number; count: number }[]): { p50: number; max: number; count: string } => ({
  p50: summary(runs.map((r) => r.ms)).p50,
  max: Math.max(...runs.map((r) => r.ms)),
  count: [...new Set(runs.map((r) => r.count))].join('/'),
});

async function main(): Promise<void> {
  const nats = await NatsServer.start();
  const docker = new Docker();
  const node = uniqueName('bench-rebuild');
  const empty = uniqueName('bench-empty');
  const bus = await Bus.connect({ servers: nats.url, name: 'bench-rebuild', source: { component: 'scheduler' } });
  try {
    await bus.ensureStreams();
    const fillStart = performance.now();
    const total = await fill(bus, node);
    console.log(`published ${total} assignments in ${((performance.now() - fillStart) / 1000).toFixed(1)} s`);

    const consumeEmpty: { ms: number; count: number }[] = [];
    const consumeNode: { ms: number; count: number }[] = [];
    const serverEmpty: { ms: number; count: number }[] = [];
    const serverNode: { ms: number; count: number }[] = [];
    for (let i = 0; i < CONSUME_REPS; i++) {
      consumeEmpty.push(await consumeOnce(bus, empty));
      serverEmpty.push(await serverConsumeOnce(bus, empty));
      consumeNode.push(await consumeOnce(bus, node));
      serverNode.push(await serverConsumeOnce(bus, node));
    }
    const replay: { ms: number; count: number }[] = [];
    for (let i = 0; i < REPLAY_REPS; i++) replay.push(await replayOnce(bus));
    // The agent as it ships (one file, its code cache kept by an earlier start), its first start
    // after a build (no code cache yet) and its baseline (its modules loaded file by file), in turns.
    const agentEmpty: { ms: number; count: number }[] = [];
    const agentNode: { ms: number; count: number }[] = [];
    const firstEmpty: { ms: number; count: number }[] = [];
    const firstNode: { ms: number; count: number }[] = [];
    const modulesEmpty: { ms: number; count: number }[] = [];
    const modulesNode: { ms: number; count: number }[] = [];
    const otherEmpty: { ms: number; count: number }[] = [];
    const otherNode: { ms: number; count: number }[] = [];
    for (let i = 0; i < AGENT_REPS; i++) {
      if (BASELINE_AGENT) {
        await keepCodeCache(nats.url, empty, BASELINE_AGENT);
        otherEmpty.push({ ms: await agentOnce(docker, nats.url, empty, 0, BASELINE_AGENT), count: 0 });
        otherNode.push({ ms: await agentOnce(docker, nats.url, node, NODE_PODS, BASELINE_AGENT), count: NODE_PODS });
      }
      await keepCodeCache(nats.url, empty);
      agentEmpty.push({ ms: await agentOnce(docker, nats.url, empty, 0), count: 0 });
      dropCodeCaches();
      firstEmpty.push({ ms: await agentOnce(docker, nats.url, empty, 0), count: 0 });
      modulesEmpty.push({ ms: await agentOnce(docker, nats.url, empty, 0, AGENT_MODULES), count: 0 });
      await keepCodeCache(nats.url, empty);
      agentNode.push({ ms: await agentOnce(docker, nats.url, node, NODE_PODS), count: NODE_PODS });
      dropCodeCaches();
      firstNode.push({ ms: await agentOnce(docker, nats.url, node, NODE_PODS), count: NODE_PODS });
      modulesNode.push({ ms: await agentOnce(docker, nats.url, node, NODE_PODS, AGENT_MODULES), count: NODE_PODS });
    }

    const bareNode: { ms: number; count: number }[] = [];
    const loadOnly: { ms: number; count: number }[] = [];
    for (let i = 0; i < AGENT_REPS; i++) {
      bareNode.push({ ms: await processOnce(false), count: 0 });
      loadOnly.push({ ms: await processOnce(true), count: 0 });
    }

    const row = (name: string, runs: { ms: number; count: number }[]): string[] => {
      const s = stats(runs);
      return [name, fmt(s.p50, 1), fmt(s.max, 1), s.count, String(runs.length)];
    };
    printTable(
      `desired-state rebuild: ${NODE_PODS} pods of one node among ${total} assignments for ${OTHER_NODES + 1} nodes (ms)`,
      ['p50', 'max', 'messages', 'runs'],
      [
        row('bus.consume last_per_subject (read from the stream), node with 0 pods', consumeEmpty),
        row(`bus.consume last_per_subject (read from the stream), node with ${NODE_PODS} pods`, consumeNode),
        row("  baseline, the server's own last_per_subject durable, node with 0 pods", serverEmpty),
        row(`  baseline, the server's own last_per_subject durable, node with ${NODE_PODS} pods`, serverNode),
        row("bus.follow from 'all': full ordered replay", replay),
        row("agent process (one file, as it ships): spawn → 'rebuilt: 0 pod(s)'", agentEmpty),
        row(`agent process (one file, as it ships): spawn → 'rebuilt: ${NODE_PODS} pod(s)'`, agentNode),
        ...(BASELINE_AGENT
          ? [
              row("  baseline, another build's agent (BENCH_AGENT_BASELINE): spawn → 'rebuilt: 0 pod(s)'", otherEmpty),
              row(`  baseline, another build's agent (BENCH_AGENT_BASELINE): spawn → 'rebuilt: ${NODE_PODS} pod(s)'`, otherNode),
            ]
          : []),
        row("  first start after a build, no code cache: spawn → 'rebuilt: 0 pod(s)'", firstEmpty),
        row(`  first start after a build, no code cache: spawn → 'rebuilt: ${NODE_PODS} pod(s)'`, firstNode),
        row("  baseline, its modules file by file: spawn → 'rebuilt: 0 pod(s)'", modulesEmpty),
        row(`  baseline, its modules file by file: spawn → 'rebuilt: ${NODE_PODS} pod(s)'`, modulesNode),
        row('floor: Node.js process doing nothing, spawn → exit', bareNode),
        row("floor: Node.js loading the agent's modules file by file, spawn → exit", loadOnly),
        ['target: consume ≤ 60, agent spawn → rebuilt ≤ 400', '-', '-', '-', '-'],
      ],
    );
  } finally {
    await bus.close();
    await removeNodeContainers(docker, node);
    await nats.stop();
  }
}

await main();
