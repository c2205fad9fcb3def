import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Cluster, uniqueName } from '../harness/cluster.js';
import { Alertmanager, Prometheus, type GettableAlert } from '../harness/monitoring.js';
import { freePort, ManagedProcess, ROOT, waitFor } from '../harness/processes.js';
import { parsePrometheusText } from '../harness/prometheus.js';

const BUSYBOX = 'jetlet/busybox:1.35';

/**
 * The alerter against real parts: NATS, the API, the scheduler, two agents on Docker, a real
 * Alertmanager and a real Prometheus (Debian's packages). One set-up for the whole file.
 */
describe('alerting: the alerter, Alertmanager and Prometheus', () => {
  let cluster: Cluster;
  let alertmanager: Alertmanager;
  let alerter: ManagedProcess;
  let alerterPort: number;
  const nodeA = uniqueName('alert-a');
  const nodeB = uniqueName('alert-b');

  const startAlerter = async (): Promise<ManagedProcess> => {
    const child = spawn(process.execPath, [join(ROOT, 'dist/apps/alerter/src/main.js')], {
      cwd: ROOT,
      env: {
        ...process.env,
        NO_COLOR: '1',
        NATS_URL: cluster.nats.url,
        ALERTER_PORT: String(alerterPort),
        ALERTMANAGER_URL: alertmanager.url,
        ALERT_RULES_FILE: join(ROOT, 'test/fixtures/alert-rules.yaml'),
        RESEND_SECONDS: '5',
        EVALUATION_SECONDS: '1',
        GENERATOR_BASE_URL: cluster.apiUrl,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const proc = new ManagedProcess('alerter', child);
    await proc.waitForLine(/alerter serving on/).catch((error: unknown) => {
      throw new Error(`${(error as Error).message}\n--- alerter\n${proc.tail()}`);
    });
    return proc;
  };

  /** Waits until Alertmanager holds exactly one active alert matching `labels`, and returns it. */
  const waitForAlert = async (labels: Record<string, string>, timeoutMs = 60_000): Promise<GettableAlert> =>
    cluster.withLogs(
      waitFor(
        `Alertmanager to show ${JSON.stringify(labels)}`,
        async () => {
          const found = await alertmanager.alerts(labels);
          assert.ok(found.length <= 1, `one alert per label set, got ${JSON.stringify(found)}`);
          return found[0];
        },
        timeoutMs,
      ).catch((error: unknown) => {
        throw new Error(`${(error as Error).message}\n--- alerter\n${alerter.tail()}`);
      }),
    );

  const waitForResolved = async (labels: Record<string, string>, timeoutMs = 60_000): Promise<void> => {
    await cluster.withLogs(
      waitFor(`Alertmanager to resolve ${JSON.stringify(labels)}`, async () => (await alertmanager.alerts(labels)).length === 0, timeoutMs),
    );
  };

  before(async () => {
    // Nodes go NotReady 4 s after their last heartbeat; no eviction within the test.
    cluster = await Cluster.start({ NODE_GRACE_SECONDS: '4', EVICTION_TOLERATION_SECONDS: '3600' });
    alertmanager = await Alertmanager.start();
    alerterPort = await freePort();
    await Promise.all([cluster.startAgent(nodeA), cluster.startAgent(nodeB)]);
    alerter = await startAlerter();
  });

  after(async () => {
    await alerter?.stop();
    await alertmanager?.stop();
    await cluster?.stop();
  });

  it(
    'sends an OOM kill, a crash loop and a dead node to Alertmanager with their labels, loses none and repeats none across an alerter kill, and resolves each once fixed',
    { timeout: 240_000 },
    async () => {
      await cluster.createPod('default', {
        metadata: { name: 'oom' },
        spec: {
          nodeName: nodeA,
          restartPolicy: 'Never',
          terminationGracePeriodSeconds: 1,
          containers: [{ name: 'hog', image: BUSYBOX, command: ['sh', '-c', 'head -c 200m /dev/zero | tail'], resources: { limits: { memory: '32Mi' } } }],
        },
      });
      await cluster.createPod('default', {
        metadata: { name: 'crasher' },
        spec: { nodeName: nodeA, terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image: BUSYBOX, command: ['sh', '-c', 'exit 1'] }] },
      });

      const oom = await waitForAlert({ alertname: 'PodOOMKilled', pod: 'oom' });
      assert.deepEqual(oom.labels, { alertname: 'PodOOMKilled', severity: 'warning', namespace: 'default', pod: 'oom', container: 'hog', node: nodeA });
      assert.equal(oom.annotations.summary, 'Container hog of pod default/oom was OOMKilled');
      assert.equal(oom.generatorURL, `${cluster.apiUrl}/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Doom`);
      const crash = await waitForAlert({ alertname: 'PodCrashLooping', pod: 'crasher' });
      assert.deepEqual(crash.labels, {
        alertname: 'PodCrashLooping',
        severity: 'warning',
        namespace: 'default',
        pod: 'crasher',
        container: 'main',
        node: nodeA,
      });

      // The alerter dies without a goodbye; meanwhile node B dies too.
      await alerter.stop('SIGKILL');
      await cluster.agents.get(nodeB)?.process.stop('SIGKILL');
      await cluster.withLogs(cluster.scheduler.waitForLine(new RegExp(`Node ${nodeB} status is now: NodeNotReady`), 30_000));
      alerter = await startAlerter();
      await alerter.waitForLine(/alert state rebuilt from the log: \d+ alert\(s\) firing/);

      const dead = await waitForAlert({ alertname: 'NodeNotReady', node: nodeB });
      assert.deepEqual(
        dead.labels,
        { alertname: 'NodeNotReady', severity: 'critical', node: nodeB, team: 'platform' },
        'the death during the outage is not lost',
      );
      assert.equal(dead.generatorURL, `${cluster.apiUrl}/api/v1/nodes/${nodeB}`);
      // The restarted alerter sent the same alerts again: same identity, same start, one each.
      const again = await alertmanager.alerts({ pod: 'oom' });
      assert.equal(again.length, 1, JSON.stringify(again));
      assert.equal(again[0]?.startsAt, oom.startsAt);
      assert.equal(again[0]?.fingerprint, oom.fingerprint);
      const crashAgain = await alertmanager.alerts({ alertname: 'PodCrashLooping' });
      assert.equal(crashAgain.length, 1, JSON.stringify(crashAgain));
      assert.equal(crashAgain[0]?.startsAt, crash.startsAt);
      const all = await alertmanager.alerts();
      assert.equal(new Set(all.map((a) => a.fingerprint)).size, all.length, 'no alert twice');
      assert.ok(all.every((a) => a.status.state === 'active'));

      // Fix each cause: the pods go, the node comes back.
      assert.equal((await cluster.request('DELETE', '/api/v1/namespaces/default/pods/oom')).status, 200);
      assert.equal((await cluster.request('DELETE', '/api/v1/namespaces/default/pods/crasher')).status, 200);
      await cluster.startAgent(nodeB);
      await waitForResolved({ alertname: 'PodOOMKilled', pod: 'oom' });
      await waitForResolved({ alertname: 'PodCrashLooping', pod: 'crasher' });
      await waitForResolved({ alertname: 'NodeNotReady', node: nodeB });

      const metrics = parsePrometheusText(await (await fetch(`http://127.0.0.1:${alerterPort}/metrics`)).text());
      assert.ok((metrics.value('jetlet_alerter_notifications_total', { target: 'alertmanager', result: 'sent' }) ?? 0) > 0);
      assert.equal(metrics.value('jetlet_alerter_alerts_firing', { alertname: 'NodeNotReady' }), 0);
      assert.equal((await fetch(`http://127.0.0.1:${alerterPort}/healthz`)).status, 200);
    },
  );

  it('lists the same facts with jetctl events, filtered by pod, node, type and reason, as a table, JSON or YAML', { timeout: 60_000 }, async () => {
    const json = await cluster.jetctl(
      'events',
      '--nats',
      cluster.nats.url,
      '--pod',
      'default/crasher',
      '--type',
      'ContainerEvent',
      '--reason',
      'Died',
      '-o',
      'json',
    );
    assert.equal(json.code, 0, json.stderr);
    const deaths = json.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; data: { name: string; reason: string; exitCode: number } });
    assert.ok(deaths.length >= 3, json.stdout);
    assert.ok(deaths.every((d) => d.type === 'ContainerEvent' && d.data.name === 'crasher' && d.data.reason === 'Died' && d.data.exitCode === 1));

    const table = await cluster.jetctl('events', '--nats', cluster.nats.url, '--node', nodeB, '--since', '10m');
    assert.equal(table.code, 0, table.stderr);
    const lines = table.stdout.trim().split('\n');
    assert.match(lines[0] ?? '', /^TIME\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE$/);
    assert.ok(
      lines.some((l) => l.includes('NodeNotReady') && l.includes(`node/${nodeB}`)),
      table.stdout,
    );
    assert.ok(
      lines.some((l) => l.includes('NodeReady')),
      table.stdout,
    );
    assert.ok(!lines.some((l) => l.includes('crasher')), 'only node B');

    const yaml = await cluster.jetctl('events', '--nats', cluster.nats.url, '--pod', 'oom', '--reason', 'OOMKilled', '-o', 'yaml');
    assert.equal(yaml.code, 0, yaml.stderr);
    assert.match(yaml.stdout, /reason: OOMKilled/);
    const bad = await cluster.jetctl('events', '--nats', cluster.nats.url, '-o', 'xml');
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /Allowed choices are wide, json, yaml/);
  });

  it(
    'is scraped by a real Prometheus with every component: a PromQL query per component returns data, and the shipped rules load',
    { timeout: 120_000 },
    async () => {
      const schedulerPort = (await cluster.scheduler.waitForLine(/metrics on http:\/\/[\d.]+:\d+/)).match(/:(\d+)\/metrics/)?.[1];
      const agentUrl = new URL(cluster.agentUrl(nodeA));
      const prometheus = await Prometheus.start(
        {
          api: [new URL(cluster.apiUrl).host],
          scheduler: [`127.0.0.1:${schedulerPort}`],
          agent: [agentUrl.host],
          alerter: [`127.0.0.1:${alerterPort}`],
        },
        [join(ROOT, 'deploy/prometheus/rules.yaml')],
      );
      try {
        // Some traffic for the API's request metrics.
        await cluster.request('GET', '/api/v1/namespaces/default/pods');
        const queries: Record<string, string> = {
          api: 'sum by (verb, resource, code) (apiserver_request_total{job="api", resource="pods", verb="LIST"})',
          scheduler: 'scheduler_pending_pods{job="scheduler", queue="active"}',
          agent: 'kubelet_running_pods{job="agent"}',
          alerter: 'jetlet_alerter_evaluations_total{job="alerter"}',
          process: 'count by (job) (process_resident_memory_bytes)',
          bus: 'jetlet_bus_consumer_lag_messages{job="alerter", consumer="alerter-events"}',
        };
        for (const [what, promql] of Object.entries(queries)) {
          const result = await waitFor(`Prometheus to answer ${what}: ${promql}`, async () => {
            const r = await prometheus.query(promql);
            return r.length > 0 ? r : undefined;
          });
          if (what === 'process') assert.deepEqual(result.map((r) => r.metric.job).sort(), ['agent', 'alerter', 'api', 'scheduler']);
        }
        const up = await prometheus.query('up');
        assert.equal(up.length, 4);
        assert.ok(
          up.every((r) => r.value[1] === '1'),
          JSON.stringify(up),
        );
        const groups = await waitFor('the rules to be evaluated', async () => {
          const g = await prometheus.rules();
          return g.length > 0 && g.every((group) => group.rules.every((r) => r.health === 'ok')) ? g : undefined;
        });
        assert.deepEqual(groups.map((g) => g.name).sort(), ['jetlet.alerts', 'jetlet.recording']);
      } finally {
        await prometheus.stop();
      }
    },
  );
});
