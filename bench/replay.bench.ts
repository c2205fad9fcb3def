import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { Bus } from '#bus';
import { MESSAGES, STREAMS, SUBJECTS, type Envelope, type MessageData, type MessageType, type PodManifest } from '#contracts';
import { buildTimeline, explainPod, PodProjection, replayTo } from '#domain';
import { NatsServer, ROOT } from '../test/harness/processes.js';
import { readExplainInputs } from '../apps/cli/src/streams/explain-inputs.js';
import { readPod, readStreams } from '../apps/cli/src/streams/queries.js';
import { StreamReader } from '../apps/cli/src/streams/stream-reader.js';
import { fmt, printTable, summary } from './bench-util.js';

/** About this many messages in all: each pod writes ten (six in the pods stream, one assignment, three events). */
const MESSAGES_TOTAL = Number(process.env.BENCH_REPLAY_MESSAGES ?? 100_000);
const PODS = Math.floor(MESSAGES_TOTAL / 10);
const NODES = 100;
const WINDOW = 1000;
const REPS = 3;
const TARGET = { namespace: 'bench', name: 'crashy' };

function envelope<T extends MessageType>(type: T, data: MessageData<T>, uid: string, component: 'api' | 'scheduler' | 'agent', node?: string): Envelope<T> {
  return {
    id: randomUUID(),
    type,
    version: MESSAGES[type].version,
    time: new Date().toISOString(),
    source: { component, ...(node ? { node } : {}) },
    correlationId: uid,
    data,
  };
}

/** The ten messages of one pod's ordinary life, or (for the target) a crash loop of `crashes` restarts as well. */
function life(name: string, index: number, crashes = 0): Array<{ subject: string; envelope: Envelope }> {
  const uid = randomUUID();
  const node = `bench-node-${index % NODES}`;
  const pod: PodManifest = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'bench', uid, creationTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z'), generation: 1 },
    spec: { restartPolicy: 'Always', containers: [{ name: 'main', image: 'jetlet/busybox:1.35', command: ['sleep', '3600'] }] },
  };
  const ref = { uid, namespace: 'bench', name, nodeName: node };
  const status = (phase: 'Pending' | 'Running', restartCount = 0): Envelope =>
    envelope(
      'PodStatusReported',
      {
        ...ref,
        status: {
          phase,
          containerStatuses: [
            {
              name: 'main',
              state: phase === 'Running' ? { running: {} } : { waiting: { reason: 'ContainerCreating' } },
              lastState: {},
              ready: phase === 'Running',
              restartCount,
              image: '',
              imageID: '',
            },
          ],
        },
        removed: false,
      },
      uid,
      'agent',
      node,
    );
  const event = (reason: 'Started' | 'Died', exitCode?: number): Envelope =>
    envelope(
      'ContainerEvent',
      {
        ...ref,
        containerName: 'main',
        containerID: 'docker://0',
        reason,
        ...(exitCode === undefined ? {} : { exitCode, exitReason: 'Error' as const }),
        observedAt: new Date().toISOString(),
      },
      uid,
      'agent',
      node,
    );
  const out: Array<{ subject: string; envelope: Envelope }> = [
    { subject: SUBJECTS.pod('bench', name), envelope: envelope('PodCreated', { pod }, uid, 'api') },
    { subject: SUBJECTS.pod('bench', name), envelope: envelope('PodScheduled', { uid, nodeName: node }, uid, 'scheduler') },
    {
      subject: SUBJECTS.assignment(node, uid),
      envelope: envelope('PodAssigned', { pod: { ...pod, spec: { ...pod.spec, nodeName: node } } }, uid, 'scheduler'),
    },
    { subject: SUBJECTS.podStatus(node, uid), envelope: status('Pending') },
    { subject: SUBJECTS.podStatus(node, uid), envelope: status('Pending') },
    { subject: SUBJECTS.containerEvents(node, uid), envelope: event('Started') },
    { subject: SUBJECTS.podStatus(node, uid), envelope: status('Running') },
    {
      subject: SUBJECTS.containerEvents(node, uid),
      envelope: envelope(
        'PodEvent',
        { ...ref, eventType: 'Normal', reason: 'Started', message: 'Started container main', observedAt: new Date().toISOString() },
        uid,
        'agent',
        node,
      ),
    },
    { subject: SUBJECTS.podStatus(node, uid), envelope: status('Running') },
    { subject: SUBJECTS.podStatus(node, uid), envelope: status('Running') },
  ];
  for (let i = 1; i <= crashes; i++) {
    out.push({ subject: SUBJECTS.containerEvents(node, uid), envelope: event('Died', 1) });
    const at = new Date().toISOString();
    out.push({
      subject: SUBJECTS.containerEvents(node, uid),
      envelope: envelope(
        'BackoffRecorded',
        { ...ref, containerName: 'main', kind: 'CrashLoop', failedAt: at, recordedAt: at, delayMs: 10_000, baseMs: 10_000, capMs: 300_000, restartCount: i },
        uid,
        'agent',
        node,
      ),
    });
    out.push({ subject: SUBJECTS.containerEvents(node, uid), envelope: event('Started') });
    out.push({ subject: SUBJECTS.podStatus(node, uid), envelope: status('Running', i) });
  }
  return out;
}

/** Publishes every pod's life, the target's spread through the middle of the log, ~WINDOW acks in flight. */
async function fill(bus: Bus): Promise<number> {
  const inflight = new Set<Promise<unknown>>();
  let total = 0;
  const send = async (m: { subject: string; envelope: Envelope }): Promise<void> => {
    const ack = bus.js.publish(m.subject, JSON.stringify(m.envelope), { msgID: m.envelope.id });
    inflight.add(ack);
    void ack.finally(() => inflight.delete(ack)).catch(() => undefined);
    total++;
    if (inflight.size >= WINDOW) await Promise.race(inflight);
  };
  const target = life(TARGET.name, 0, 20);
  const every = Math.floor(PODS / target.length);
  for (let i = 0; i < PODS; i++) {
    for (const m of life(`pod-${i}`, i)) await send(m);
    if (i % every === 0 && target.length > 0) await send(target.shift() as { subject: string; envelope: Envelope });
  }
  for (const m of target) await send(m);
  await Promise.all(inflight);
  return total;
}

async function timed(work: () => Promise<unknown>): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < REPS; i++) {
    const start = performance.now();
    await work();
    samples.push(performance.now() - start);
  }
  return samples;
}

async function cli(natsUrl: string, ...args: string[]): Promise<void> {
  const child = spawn(process.execPath, [join(ROOT, 'dist/apps/cli/src/main.js'), ...args], {
    env: { ...process.env, NATS_URL: natsUrl },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const code = await new Promise<number | null>((r) => child.once('exit', r));
  if (code !== 0) throw new Error(`jetctl ${args.join(' ')} exited with ${code}`);
}

async function main(): Promise<void> {
  const nats = await NatsServer.start();
  const bus = await Bus.connect({ servers: nats.url, name: 'bench-replay', source: { component: 'api' } });
  try {
    await bus.ensureStreams();
    const filled = await fill(bus);
    const reader = await StreamReader.connect(nats.url);
    const info = await reader.streams();
    const podsLast = info.get(STREAMS.pods)?.lastSeq ?? 0;
    const middle = Math.floor(podsLast / 2);
    try {
      // Baseline: every stream replayed in order into the API's pod projection.
      const full = await timed(async () => {
        const all = await readStreams(reader, Object.values(STREAMS));
        const pods = new PodProjection();
        for (const m of all) if (m.stream === STREAMS.pods && m.envelope) pods.apply(m.envelope, m.seq);
        return pods.list().length;
      });
      const timeline = await timed(async () => buildTimeline(await readPod(reader, TARGET.namespace, TARGET.name), { kind: 'pod', ...TARGET }));
      const replayAt = await timed(async () =>
        replayTo(await readStreams(reader, [STREAMS.pods, STREAMS.events], { seq: middle }), { seq: middle }).state.podList(),
      );
      const explain = await timed(async () =>
        explainPod(await readExplainInputs(reader, TARGET.namespace, TARGET.name), TARGET.namespace, TARGET.name, { timeMs: Date.now() }, { graceMs: 40_000 }),
      );
      const cliTimeline = await timed(() => cli(nats.url, 'timeline', `${TARGET.namespace}/${TARGET.name}`));
      const cliReplay = await timed(() => cli(nats.url, 'replay', '--at', String(middle), 'get', 'pods', '-A'));
      const row = (label: string, samples: number[]): string[] => {
        const s = summary(samples);
        return [label, fmt(s.p50), fmt(Math.max(...samples)), fmt(s.p50 / summary(full).p50, 2)];
      };
      printTable(
        `jetctl over ${filled} messages (${info.get(STREAMS.pods)?.messages ?? 0} in ${STREAMS.pods}), ${REPS} runs each, ms`,
        ['p50', 'max', 'x full'],
        [
          row('full ordered replay (baseline)', full),
          row('timeline of one pod', timeline),
          row(`replay --at ${middle} get pods`, replayAt),
          row('explain one pod', explain),
          row('jetctl timeline (process)', cliTimeline),
          row('jetctl replay --at (process)', cliReplay),
        ],
      );
    } finally {
      await reader.close();
    }
  } finally {
    await bus.close();
    await nats.stop();
  }
}

await main();
