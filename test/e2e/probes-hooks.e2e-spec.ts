import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Container, Pod } from '#contracts';
import type { KubeEvent } from '#domain';
import { Cluster, uniqueName } from '../harness/cluster.js';
import { Kubectl } from '../harness/kubectl.js';
import { waitFor } from '../harness/processes.js';

const BUSYBOX = 'jetlet/busybox:1.35';
const FAST_PROBE = { initialDelaySeconds: 1, periodSeconds: 1, timeoutSeconds: 1 };

/** Probes, lifecycle hooks and termination messages, after Kubernetes' node e2e scenarios. */
describe('probes, lifecycle hooks and termination messages', () => {
  let cluster: Cluster;
  const node = uniqueName('probe-node');

  before(async () => {
    cluster = await Cluster.start();
    await cluster.startAgent(node);
  });

  after(async () => {
    await cluster?.stop();
  });

  const pod = (name: string, containers: Array<Partial<Container>>, extra: Record<string, unknown> = {}): object => ({
    metadata: { name },
    spec: { nodeName: node, terminationGracePeriodSeconds: 2, containers: containers.map((c, i) => ({ name: `c${i}`, image: BUSYBOX, ...c })), ...extra },
  });

  const restarts = (p: Pod): number => p.status.containerStatuses?.[0]?.restartCount ?? 0;
  const ready = (p: Pod): boolean => p.status.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
  const events = async (name: string): Promise<KubeEvent[]> =>
    (await cluster.request<{ items: KubeEvent[] }>('GET', `/api/v1/namespaces/default/events?fieldSelector=involvedObject.name=${name}`)).body.items;

  it('restarts a container whose exec liveness probe fails once /tmp/health is gone, and never one that stays healthy', async () => {
    const liveness = { exec: { command: ['cat', '/tmp/health'] }, ...FAST_PROBE, failureThreshold: 1 };
    await cluster.createPod(
      'default',
      pod('exec-sick', [{ command: ['sh', '-c', 'touch /tmp/health; sleep 4; rm -f /tmp/health; sleep 600'], livenessProbe: liveness }]),
    );
    await cluster.createPod('default', pod('exec-healthy', [{ command: ['sh', '-c', 'touch /tmp/health; sleep 600'], livenessProbe: liveness }]));
    await cluster.waitForPod('default', 'exec-sick', 'restarted once by its liveness probe', (p) => restarts(p) >= 1, 60_000);
    const reasons = (await events('exec-sick')).map((e) => `${e.reason}: ${e.message}`);
    assert.ok(
      reasons.some((r) => /^Unhealthy: Liveness probe failed/.test(r)),
      reasons.join('\n'),
    );
    assert.ok(
      reasons.some((r) => /^Killing: Container c0 failed liveness probe, will be restarted/.test(r)),
      reasons.join('\n'),
    );
    const healthy = await cluster.getPod('default', 'exec-healthy');
    assert.equal(healthy && restarts(healthy), 0);
    assert.ok(healthy && ready(healthy));
  });

  it('restarts on a failing httpGet liveness probe and on a failing tcpSocket liveness probe', async () => {
    // httpd serves /healthz until the file is removed, then answers 404.
    const http = 'mkdir -p /www && echo ok > /www/healthz && httpd -p 8080 -h /www && sleep 4 && rm /www/healthz && sleep 600';
    await cluster.createPod(
      'default',
      pod('http-sick', [
        {
          command: ['sh', '-c', http],
          ports: [{ containerPort: 8080, name: 'web' }],
          livenessProbe: { httpGet: { path: '/healthz', port: 'web' }, ...FAST_PROBE, failureThreshold: 1 },
        },
      ]),
    );
    // The listener goes away after 4 s: connections are then refused.
    const tcp = 'httpd -f -p 9090 & pid=$!; sleep 4; kill $pid; sleep 600';
    await cluster.createPod(
      'default',
      pod('tcp-sick', [{ command: ['sh', '-c', tcp], livenessProbe: { tcpSocket: { port: 9090 }, ...FAST_PROBE, failureThreshold: 1 } }]),
    );
    await cluster.waitForPod('default', 'http-sick', 'restarted by its httpGet probe', (p) => restarts(p) >= 1, 60_000);
    await cluster.waitForPod('default', 'tcp-sick', 'restarted by its tcpSocket probe', (p) => restarts(p) >= 1, 60_000);
    assert.ok((await events('http-sick')).some((e) => e.reason === 'Unhealthy' && /statuscode: 404/.test(e.message)));
  });

  it('keeps a pod with a failing readiness probe not Ready, without restarting it, and says so in one aggregated Unhealthy event', async () => {
    await cluster.createPod(
      'default',
      pod('never-ready', [{ command: ['sleep', '600'], readinessProbe: { exec: { command: ['sh', '-c', 'echo not ready; exit 1'] }, ...FAST_PROBE } }]),
    );
    const running = await cluster.waitForPod('default', 'never-ready', 'running', (p) => p.status.containerStatuses?.[0]?.state.running !== undefined);
    assert.equal(ready(running), false);
    // Only this pod has a failing readiness probe: five more failures are five of its own.
    const failed = (): Promise<number> => cluster.agentMetricTotal(node, 'jetlet_probe_results_total', { probe_type: 'readiness', result: 'failed' });
    const failedBefore = await failed();
    await waitFor('five more failed readiness probes', async () => (await failed()) >= failedBefore + 5, 60_000);
    const later = await cluster.getPod('default', 'never-ready');
    assert.ok(later);
    assert.equal(ready(later), false);
    assert.equal(later.status.containerStatuses?.[0]?.ready, false);
    assert.equal(later.status.conditions?.find((c) => c.type === 'ContainersReady')?.status, 'False');
    assert.equal(restarts(later), 0);

    // The kubelet's wording, every failure one series of one Event (the recorder publishes its count at doubling intervals).
    const unhealthy = await cluster.withLogs(
      waitFor(
        'the Unhealthy event to count several failures',
        async () => {
          const found = (await events('never-ready')).filter((e) => e.reason === 'Unhealthy');
          return found.length === 1 && (found[0]?.count ?? 0) >= 3 ? found[0] : undefined;
        },
        60_000,
      ),
    );
    assert.equal(unhealthy.type, 'Warning');
    assert.equal(unhealthy.message, 'Readiness probe failed: not ready\n');
    assert.equal(unhealthy.involvedObject.fieldPath, 'spec.containers{c0}');
    const kubectl = new Kubectl(cluster.apiUrl);
    try {
      const described = await kubectl.ok(['describe', 'pod', 'never-ready']);
      assert.match(described, /^\s+Warning\s+Unhealthy\s+\S+ \(x\d+ over \S+\)\s+jetlet\s+Readiness probe failed: not ready$/m);
      const listed = await kubectl.ok(['events', '--for', 'pod/never-ready', '--types=Warning']);
      assert.match(listed, /^\S+ \(x\d+ over \S+\)\s+Warning\s+Unhealthy\s+Pod\/never-ready\s+Readiness probe failed: not ready$/m);
    } finally {
      kubectl.dispose();
    }
  });

  it("is not Ready before a readiness probe's initial delay, and Ready after it", async () => {
    const created = Date.now();
    await cluster.createPod(
      'default',
      pod('slow-ready', [{ command: ['sleep', '600'], readinessProbe: { exec: { command: ['true'] }, initialDelaySeconds: 5, periodSeconds: 1 } }]),
    );
    const running = await cluster.waitForPod('default', 'slow-ready', 'running', (p) => p.status.containerStatuses?.[0]?.state.running !== undefined);
    if (Date.now() - created < 4000) assert.equal(ready(running), false, 'Ready before the initial delay');
    const readyPod = await cluster.waitForPod('default', 'slow-ready', 'Ready', ready, 30_000);
    const startedAt = Date.parse(readyPod.status.containerStatuses?.[0]?.state.running?.startedAt ?? '');
    // Seen Ready no sooner than the 5 s initial delay after the container started (same host clock).
    assert.ok(Date.now() - startedAt >= 5000, `Ready ${Date.now() - startedAt} ms after the start`);
  });

  it('holds liveness back until the startup probe succeeds, and is Ready right after', async () => {
    // Liveness would fail at once (failureThreshold 1) while /tmp/started is missing.
    const check = { exec: { command: ['cat', '/tmp/started'] } };
    await cluster.createPod(
      'default',
      pod('slow-start', [
        {
          command: ['sh', '-c', 'sleep 4; touch /tmp/started; sleep 600'],
          startupProbe: { ...check, periodSeconds: 1, failureThreshold: 30 },
          livenessProbe: { ...check, periodSeconds: 1, failureThreshold: 1 },
        },
      ]),
    );
    const notStarted = await cluster.waitForPod('default', 'slow-start', 'running', (p) => p.status.containerStatuses?.[0]?.state.running !== undefined);
    assert.equal(notStarted.status.containerStatuses?.[0]?.started, false);
    assert.equal(ready(notStarted), false);
    const started = await cluster.waitForPod('default', 'slow-start', 'Ready', ready, 30_000);
    assert.equal(started.status.containerStatuses?.[0]?.started, true);
    // Six more passed liveness probes on the node (this pod and the healthy ones of earlier tests): a kill it wrongly made would show by then.
    const passed = (): Promise<number> => cluster.agentMetricTotal(node, 'jetlet_probe_results_total', { probe_type: 'liveness', result: 'successful' });
    const passedBefore = await passed();
    await waitFor('six more successful liveness probes', async () => (await passed()) >= passedBefore + 6, 60_000);
    const later = await cluster.getPod('default', 'slow-start');
    assert.equal(later && restarts(later), 0, 'liveness did not kill it while it started');
  });

  it('runs postStart after the start, preStop before SIGTERM, and kills a container whose postStart fails', async () => {
    // The termination message records the order: preStop writes first, the TERM trap second.
    const main = "trap 'echo term >> /dev/termination-log; exit 0' TERM; while true; do sleep 1 & wait; done";
    const watch = await cluster.watchPodStatuses(node);
    try {
      const created = await cluster.createPod(
        'default',
        pod('hooked', [
          {
            command: ['sh', '-c', main],
            lifecycle: {
              postStart: { exec: { command: ['sh', '-c', 'echo started > /tmp/poststart'] } },
              preStop: { exec: { command: ['sh', '-c', 'echo prestop >> /dev/termination-log'] } },
            },
          },
        ]),
      );
      const running = await cluster.waitForRunning('default', 'hooked');
      const id = running.status.containerStatuses?.[0]?.containerID?.replace('docker://', '') ?? '';
      const exec = await cluster.dockerCli('exec', id, 'cat', '/tmp/poststart');
      assert.equal(exec.stdout, 'started\n');
      assert.equal((await cluster.request('DELETE', '/api/v1/namespaces/default/pods/hooked')).status, 200);
      await cluster.waitForGone('default', 'hooked');
      const terminal = watch.reports.filter((r) => r.uid === created.metadata.uid && r.status.phase === 'Succeeded' && !r.removed).at(-1);
      assert.ok(terminal, `a Succeeded status before removal: ${JSON.stringify(watch.reports.map((r) => [r.status.phase, r.removed]))}`);
      assert.equal(
        terminal.status.containerStatuses?.[0]?.state.terminated?.message,
        'prestop\nterm\n',
        `${JSON.stringify(terminal.status)}\n${cluster.agentLog(node, 60)}`,
      );
    } finally {
      await watch.close();
    }

    await cluster.createPod('default', pod('bad-hook', [{ command: ['sleep', '600'], lifecycle: { postStart: { exec: { command: ['false'] } } } }]));
    await cluster.waitForPod('default', 'bad-hook', 'killed for its postStart hook', (p) => restarts(p) >= 1, 60_000);
    assert.ok((await events('bad-hook')).some((e) => e.reason === 'FailedPostStartHook'));
  });

  it("fills the terminated state's message from terminationMessagePath, or from the log with FallbackToLogsOnError", async () => {
    await cluster.createPod(
      'default',
      pod('says-bye', [{ command: ['sh', '-c', 'echo bye > /tmp/why; exit 3'], terminationMessagePath: '/tmp/why' }], { restartPolicy: 'Never' }),
    );
    await cluster.createPod(
      'default',
      pod('fails-loudly', [{ command: ['sh', '-c', 'echo oops; exit 1'], terminationMessagePolicy: 'FallbackToLogsOnError' }], { restartPolicy: 'Never' }),
    );
    const bye = await cluster.waitForPod('default', 'says-bye', 'Failed', (p) => p.status.phase === 'Failed');
    assert.deepEqual(
      bye.status.containerStatuses?.[0]?.state.terminated && {
        ...bye.status.containerStatuses[0].state.terminated,
        startedAt: '',
        finishedAt: '',
        containerID: '',
      },
      {
        exitCode: 3,
        reason: 'Error',
        message: 'bye\n',
        startedAt: '',
        finishedAt: '',
        containerID: '',
      },
    );
    const loud = await cluster.waitForPod('default', 'fails-loudly', 'Failed', (p) => p.status.phase === 'Failed');
    assert.equal(loud.status.containerStatuses?.[0]?.state.terminated?.message, 'oops\n');
  });

  it("counts probe results in the agent's metrics", async () => {
    const metrics = await (await fetch(`${cluster.agentUrl(node)}/metrics`)).text();
    const value = (type: string, result: string): number =>
      Number(new RegExp(`^jetlet_probe_results_total\\{probe_type="${type}",result="${result}"\\} (\\d+)`, 'm').exec(metrics)?.[1] ?? 0);
    assert.ok(value('liveness', 'failed') >= 3, metrics);
    assert.ok(value('liveness', 'successful') >= 1);
    assert.ok(value('readiness', 'failed') >= 1);
    assert.ok(value('startup', 'successful') >= 1);
  });
});
