import { randomUUID } from 'node:crypto';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { Bus } from '#bus';
import { STREAMS, SUBJECTS, type PodManifest } from '#contracts';
import { MESSAGE_EXAMPLES } from '../libs/contracts/src/docs/message-examples.js';
import { API_NODE_FLAGS } from '../test/harness/cluster.js';
import { freePort, ManagedProcess, NatsServer, ROOT } from '../test/harness/processes.js';
import { fmt, lineTime, printTable, summary } from './bench-util.js';

const PODS = Number(process.env.BENCH_STARTUP_PODS ?? 100);
/** Status reports per pod: 40 × 100 pods is the 4,000 reports one test hour wrote before history was bounded. */
const REPORTS = Number(process.env.BENCH_STARTUP_REPORTS ?? 40);
const REPS = Number(process.env.BENCH_STARTUP_REPS ?? 3);
const NODE = 'bench-startup-node';
const NS = 'bench';

/**
 * The API's start-up cost follows what the pods stream holds. Before history was bounded, every
 * status report stayed in it; now the agent keeps each pod's newest report only (purge to the
 * last message of `jetlet.podstatus.<node>.<uid>`). This bench writes the same history both
 * ways into one stream — first every report kept, then compacted as the agent compacts it —
 * and times a real API from spawn to "serving" (which it prints once its projections have
 * caught up) against each.
 */
async function main(): Promise<void> {
  const nats = await NatsServer.start();
  const api = await Bus.connect({ servers: nats.url, name: 'bench-startup-api', source: { component: 'api' } });
  const agent = await Bus.connect({ servers: nats.url, name: 'bench-startup-agent', source: { component: 'agent', node: NODE } });
  try {
    await api.ensureStreams();
    const messages = async (): Promise<number> => (await api.jsm.streams.info(STREAMS.pods)).state.messages;
    const startOnce = async (): Promise<number> => {
      const port = await freePort();
      const spawnedAt = performance.now();
      const child = spawn(process.execPath, [...API_NODE_FLAGS, join(ROOT, 'dist/apps/api/src/main.js')], {
        cwd: ROOT,
        env: { ...process.env, NO_COLOR: '1', NATS_URL: nats.url, API_PORT: String(port), API_INSECURE: 'true' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const proc = new ManagedProcess('api', child);
      try {
        return (await lineTime(proc, /API serving on/, 120_000)) - spawnedAt;
      } finally {
        await proc.stop();
      }
    };
    const measure = async (): Promise<number[]> => {
      const samples: number[] = [];
      for (let i = 0; i < REPS; i++) samples.push(await startOnce());
      return samples;
    };
    // The fixed cost: the same API on an empty pods stream.
    const empty = await measure();

    const statusSubjects: string[] = [];
    for (let i = 0; i < PODS; i++) {
      const uid = randomUUID();
      const name = `pod-${i}`;
      const template = MESSAGE_EXAMPLES.PodCreated.data.pod;
      const pod: PodManifest = { ...template, metadata: { ...template.metadata, name, namespace: NS, uid }, spec: { ...template.spec, nodeName: NODE } };
      await api.publish(SUBJECTS.pod(NS, name), 'PodCreated', { pod }, { correlationId: uid });
      const subject = SUBJECTS.podStatus(NODE, uid);
      statusSubjects.push(subject);
      const status = MESSAGE_EXAMPLES.PodStatusReported.data;
      const reports: Promise<unknown>[] = [];
      for (let r = 0; r < REPORTS; r++)
        reports.push(agent.publish(subject, 'PodStatusReported', { ...status, uid, namespace: NS, name, nodeName: NODE }, { correlationId: uid }));
      await Promise.all(reports);
    }

    const unboundedMessages = await messages();
    const unbounded = await measure();
    for (const subject of statusSubjects) await api.compactSubject(STREAMS.pods, subject);
    const boundedMessages = await messages();
    const bounded = await measure();

    const row = (name: string, count: number, samples: number[]): string[] => {
      const s = summary(samples);
      return [name, String(count), fmt(s.p50), fmt(Math.max(...samples)), String(samples.length)];
    };
    printTable(
      `API start-up (spawn → serving, projections caught up), ${PODS} pods with ${REPORTS} status reports each; rows: what the pods stream holds`,
      ['messages', 'p50 ms', 'max ms', 'runs'],
      [
        row('empty (the fixed cost of starting)', 0, empty),
        row('every report kept (before history was bounded)', unboundedMessages, unbounded),
        row("each pod's newest report only (as the agent keeps it)", boundedMessages, bounded),
      ],
    );
    const overEmpty = (samples: number[]): number => summary(samples).p50 - summary(empty).p50;
    console.log(
      `above the fixed cost: ${fmt(overEmpty(unbounded))} ms with every report, ${fmt(overEmpty(bounded))} ms bounded; ` +
        `bounded history starts the API ${fmt(summary(unbounded).p50 / summary(bounded).p50, 2)}× as fast`,
    );
  } finally {
    await agent.close();
    await api.close();
    await nats.stop();
  }
}

await main();
