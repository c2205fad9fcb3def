import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { Bus } from '#bus';
import { SUBJECTS } from '#contracts';
import { Alertmanager } from '../test/harness/monitoring.js';
import { freePort, ManagedProcess, NatsServer, ROOT, waitFor } from '../test/harness/processes.js';
import { fmt, printTable, summary } from './bench-util.js';

/**
 * Event → alert visible in a real Alertmanager, beside event → message on the bus (what any
 * subscriber gets). Each sample publishes one NodeNotReady for a fresh node as the scheduler
 * would, times its arrival on a core NATS subscription and its appearance in Alertmanager's
 * GET /api/v2/alerts (polled every 5 ms), then clears it with NodeReady.
 */
const SAMPLES = Number(process.env.ALERT_SAMPLES ?? 40);

async function main(): Promise<void> {
  const nats = await NatsServer.start();
  const alertmanager = await Alertmanager.start();
  const bus = await Bus.connect({ servers: nats.url, name: 'bench-alerting', source: { component: 'scheduler' } });
  await bus.ensureStreams();
  const port = await freePort();
  const alerter = new ManagedProcess(
    'alerter',
    spawn(process.execPath, [join(ROOT, 'dist/apps/alerter/src/main.js')], {
      cwd: ROOT,
      env: {
        ...process.env,
        NATS_URL: nats.url,
        ALERTER_PORT: String(port),
        ALERTMANAGER_URL: alertmanager.url,
        ALERT_RULES_FILE: join(ROOT, 'test/fixtures/alert-rules.yaml'),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  try {
    await alerter.waitForLine(/alerter serving on/);
    const onBus: number[] = [];
    const inAlertmanager: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      const node = `bench-${i}`;
      const arrived = new Promise<number>((resolve) => {
        const sub = bus.nc.subscribe(SUBJECTS.nodeLifecycleEvents(node), { max: 1, callback: () => resolve(performance.now()) });
        void sub.closed;
      });
      await bus.nc.flush();
      const start = performance.now();
      const event = (reason: string) => ({
        nodeName: node,
        eventType: 'Warning' as const,
        reason,
        message: `Node ${node} status is now: ${reason}`,
        observedAt: new Date().toISOString(),
      });
      await bus.publish(SUBJECTS.nodeLifecycleEvents(node), 'NodeEvent', event('NodeNotReady'), { correlationId: node });
      onBus.push((await arrived) - start);
      await waitFor(`${node} in Alertmanager`, async () => (await alertmanager.alerts({ node })).length === 1, 30_000, 5);
      inAlertmanager.push(performance.now() - start);
      await bus.publish(SUBJECTS.nodeLifecycleEvents(node), 'NodeEvent', event('NodeReady'), { correlationId: node });
      await waitFor(`${node} resolved`, async () => (await alertmanager.alerts({ node })).length === 0, 30_000, 20);
    }
    const bus50 = summary(onBus);
    const am = summary(inAlertmanager);
    printTable(
      `alerting: ${SAMPLES} NodeNotReady events, latency in ms`,
      ['p50', 'p99'],
      [
        ['event → message on the bus (baseline)', fmt(bus50.p50, 1), fmt(bus50.p99, 1)],
        ['event → alert in Alertmanager', fmt(am.p50, 1), fmt(am.p99, 1)],
      ],
    );
  } finally {
    await alerter.stop();
    await bus.close();
    await alertmanager.stop();
    await nats.stop();
  }
}

await main();
