import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { jetstream } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { decodeStreamFrame, STREAMS, SUBJECTS, token } from '#contracts';
import { Cluster, uniqueName } from '../harness/cluster.js';
import { freePort, ManagedProcess, ROOT, waitFor } from '../harness/processes.js';

/** The value of one series in a Prometheus text page (0 when absent); `labels` as printed, e.g. `stream="X",consumer="Y"`. */
function series(page: string, name: string, labels: string): number {
  const line = page.split('\n').find((l) => l.startsWith(`${name}{${labels}} `));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

/** The sum of every series of `name` whose labels include `label`. */
function sum(page: string, name: string, label: string): number {
  return page
    .split('\n')
    .filter((l) => l.startsWith(`${name}{`) && l.includes(label))
    .reduce((total, l) => total + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}

/**
 * Every stream consumer of the API, the scheduler, the agent and the alerter, through the
 * JetStream transport: an invalid envelope and a message of an unknown type on its subjects
 * are terminated (skipped, on ordered consumers), counted, and the valid messages behind
 * them are handled.
 */
describe('the JetStream transport: invalid messages on every consumer', () => {
  let cluster: Cluster;
  let alerter: ManagedProcess;
  let alerterUrl: string;
  let schedulerUrl: string;
  const node = uniqueName('transport-node');

  before(async () => {
    cluster = await Cluster.start();
    await cluster.startAgent(node);
    const port = await freePort();
    alerterUrl = `http://127.0.0.1:${port}`;
    const child = spawn(process.execPath, [join(ROOT, 'dist/apps/alerter/src/main.js')], {
      cwd: ROOT,
      env: {
        ...process.env,
        NO_COLOR: '1',
        NATS_URL: cluster.nats.url,
        ALERTER_PORT: String(port),
        ALERT_RULES_FILE: join(ROOT, 'test/fixtures/alert-rules.yaml'),
        EVALUATION_SECONDS: '1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    alerter = new ManagedProcess('alerter', child);
    await alerter.waitForLine(/alerter serving on/);
    const line = await cluster.scheduler.waitForLine(/metrics on http:\/\/\S+\/metrics/);
    schedulerUrl = /(http:\/\/\S+)\/metrics/.exec(line)?.[1] ?? '';
  });

  after(async () => {
    await alerter?.stop();
    await cluster?.stop();
  });

  it('terminates and counts both on each consumer, and handles the next valid message', async () => {
    const uid = randomUUID();
    const unknownType = JSON.stringify({
      id: randomUUID(),
      type: 'PodTeleported',
      version: 1,
      time: new Date().toISOString(),
      source: { component: 'api' },
      correlationId: uid,
      data: {},
    });
    const subjects = [
      SUBJECTS.pod('default', uniqueName('junk')),
      SUBJECTS.nodeHeartbeat(node),
      SUBJECTS.containerEvents(node, uid),
      SUBJECTS.assignment(node, uid),
      SUBJECTS.configMap('default', uniqueName('junk')),
    ];
    const nc = await connect({ servers: cluster.nats.url });
    try {
      const js = jetstream(nc);
      for (const subject of subjects) {
        await js.publish(subject, 'this is not an envelope {');
        await js.publish(subject, unknownType);
      }
    } finally {
      await nc.close();
    }

    const page = async (url: string): Promise<string> => (await fetch(`${url}/metrics`)).text();
    const terminated = 'jetlet_bus_messages_terminated_total';
    const expected: Array<{ app: string; url: string; stream: string; consumer: string }> = [
      { app: 'api', url: cluster.apiUrl, stream: STREAMS.pods, consumer: 'ordered' },
      { app: 'api', url: cluster.apiUrl, stream: STREAMS.nodes, consumer: 'ordered' },
      { app: 'api', url: cluster.apiUrl, stream: STREAMS.events, consumer: 'ordered' },
      { app: 'api', url: cluster.apiUrl, stream: STREAMS.config, consumer: 'ordered' },
      { app: 'scheduler', url: schedulerUrl, stream: STREAMS.pods, consumer: 'ordered' },
      { app: 'scheduler', url: schedulerUrl, stream: STREAMS.nodes, consumer: 'ordered' },
      { app: 'scheduler', url: schedulerUrl, stream: STREAMS.assign, consumer: 'ordered' },
      { app: 'agent', url: cluster.agentUrl(node), stream: STREAMS.assign, consumer: `agent-${token(node)}` },
      { app: 'alerter', url: alerterUrl, stream: STREAMS.pods, consumer: 'alerter-pods' },
      { app: 'alerter', url: alerterUrl, stream: STREAMS.events, consumer: 'alerter-events' },
      { app: 'alerter', url: alerterUrl, stream: STREAMS.nodes, consumer: 'alerter-nodes' },
    ];
    for (const e of expected) {
      await cluster.withLogs(
        waitFor(`the ${e.app} to count two terminated messages on ${e.stream} (${e.consumer})`, async () => {
          return series(await page(e.url), terminated, `stream="${e.stream}",consumer="${e.consumer}"`) === 2;
        }),
      );
    }

    // What each consumer has handled so far; valid messages behind the invalid ones must add to it.
    const consumed = 'jetlet_bus_messages_consumed_total';
    const before = await Promise.all(expected.map(async (e) => sum(await page(e.url), consumed, `stream="${e.stream}"`)));
    const manifest = {
      metadata: { name: 'after-junk' },
      spec: { terminationGracePeriodSeconds: 2, containers: [{ name: 'main', image: 'jetlet/busybox:1.35', command: ['sleep', '3600'] }] },
    };
    assert.equal((await cluster.request('POST', '/api/v1/namespaces/default/pods', manifest)).status, 201);
    await cluster.waitForRunning('default', 'after-junk');
    // The config stream's valid message: nothing a pod does writes one.
    const configMap = { metadata: { name: 'after-junk' }, data: { key: 'value' } };
    assert.equal((await cluster.request('POST', '/api/v1/namespaces/default/configmaps', configMap)).status, 201);
    for (const [i, e] of expected.entries()) {
      await cluster.withLogs(
        waitFor(`the ${e.app} to handle valid messages on ${e.stream} after the invalid ones`, async () => {
          return sum(await page(e.url), consumed, `stream="${e.stream}"`) > (before[i] ?? 0);
        }),
      );
    }
    // Nothing was redelivered: each invalid message was counted once, and no handler failed.
    for (const e of expected) {
      const text = await page(e.url);
      assert.equal(series(text, terminated, `stream="${e.stream}",consumer="${e.consumer}"`), 2, `${e.app} ${e.stream}`);
      assert.equal(series(text, 'jetlet_bus_handler_errors_total', `stream="${e.stream}",consumer="${e.consumer}"`), 0, `${e.app} ${e.stream}`);
    }
    assert.ok(alerter.running && cluster.agents.get(node)?.process.running, 'the alerter and the agent are still up');
  });

  it('drops and counts a bad frame, a bad log control and a bad mirror notice on the agent core subscriptions, and serves the next stream request', async () => {
    const inputs = SUBJECTS.nodeStreamInput(node);
    const controls = SUBJECTS.nodeLogStreamControl(node);
    const mirrors = SUBJECTS.mirrorDeleted(node);
    const nc = await connect({ servers: cluster.nats.url });
    let answer;
    try {
      nc.publish(SUBJECTS.streamInput(node, randomUUID()), Buffer.from('no'));
      nc.publish(SUBJECTS.logStreamControl(node, randomUUID()), 'this is not a control {');
      nc.publish(mirrors, JSON.stringify({ uid: 'not-a-uid' }));
      const request = {
        version: 1,
        streamId: randomUUID(),
        kind: 'exec',
        namespace: 'default',
        name: 'not-on-this-node',
        uid: randomUUID(),
        command: ['true'],
        stdout: true,
      };
      // The agent's first frame answers on the request's inbox, as bytes.
      answer = decodeStreamFrame((await nc.request(SUBJECTS.streamRequests(node), JSON.stringify(request), { timeout: 10_000 })).data);
    } finally {
      await nc.close();
    }
    assert.equal(answer.kind, 'error');
    assert.equal(answer.kind === 'error' && answer.body.code, 404);
    const terminated = 'jetlet_bus_messages_terminated_total';
    const page = async (): Promise<string> => (await fetch(`${cluster.agentUrl(node)}/metrics`)).text();
    await cluster.withLogs(
      waitFor('the agent to count the bad frame, the bad control and the bad mirror notice', async () => {
        const text = await page();
        return [inputs, controls, mirrors].every((subject) => series(text, terminated, `stream="core",consumer="${subject}"`) === 1);
      }),
    );
    const text = await page();
    for (const subject of [inputs, controls, mirrors])
      assert.equal(series(text, 'jetlet_bus_handler_errors_total', `stream="core",consumer="${subject}"`), 0, subject);
    assert.ok(cluster.agents.get(node)?.process.running, 'the agent is still up');
  });
});
