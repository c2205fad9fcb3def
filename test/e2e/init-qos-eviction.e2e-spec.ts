import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Container, Pod, RestartPolicy } from '#contracts';
import { Cluster, uniqueName } from '../harness/cluster.js';
import { waitFor } from '../harness/processes.js';

const BUSYBOX = 'jetlet/busybox:1.35';
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io';

const sh = (name: string, script: string, extra: Partial<Container> = {}): Container => ({ name, image: BUSYBOX, command: ['sh', '-c', script], ...extra });

function manifest(name: string, node: string, spec: { initContainers?: Container[]; containers: Container[]; restartPolicy?: RestartPolicy }): object {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { nodeName: node, terminationGracePeriodSeconds: 2, ...spec } };
}

const initStatus = (pod: Pod, name: string) => pod.status.initContainerStatuses?.find((s) => s.name === name);
const appStatus = (pod: Pod, name: string) => pod.status.containerStatuses?.find((s) => s.name === name);

/** Init containers, sidecars, QoS classes and node-pressure eviction on one node of one cluster, against the real Docker engine. */
describe('pods as the kubelet runs them: init containers, sidecars, QoS, eviction', () => {
  let cluster: Cluster;
  const node = uniqueName('initc');

  /** The STATUS column as the API's server-side Table printing (what kubectl get shows) has it. */
  async function statusColumn(name: string): Promise<string> {
    const response = await fetch(`${cluster.apiUrl}/api/v1/namespaces/default/pods/${name}`, { headers: { Accept: TABLE } });
    const table = (await response.json()) as { rows: Array<{ cells: unknown[] }> };
    return String(table.rows[0]?.cells[2]);
  }

  async function waitForColumn(name: string, wanted: string, timeoutMs = 60_000): Promise<void> {
    let seen = '';
    await waitFor(`${name} to show STATUS ${wanted}`, async () => (seen = await statusColumn(name)) === wanted, timeoutMs, 200).catch((error: unknown) => {
      throw new Error(`${(error as Error).message}: STATUS ${seen}\n${cluster.agentLog(node)}`);
    });
  }

  /** Docker's start and finish times of the pod's container of one name (its only run). */
  async function times(pod: Pod, container: string): Promise<{ startedMs: number; finishedMs: number; count: number }> {
    const runs = (await cluster.podContainers(node, pod.metadata.uid!)).filter((c) => c.Labels['io.jetlet.container.name'] === container);
    const info = await cluster.docker.getContainer(runs[0]?.Id ?? '').inspect();
    const finished = info.State.Running ? Number.POSITIVE_INFINITY : Date.parse(info.State.FinishedAt);
    return { startedMs: Date.parse(info.State.StartedAt), finishedMs: finished, count: runs.length };
  }

  before(async () => {
    cluster = await Cluster.start();
    await cluster.startAgent(node);
  });

  after(async () => {
    await cluster?.stopAgentAndClean(node);
    await cluster?.stop();
  });

  it('runs init containers in order, each to completion, before the app, and a restarted agent does not run them again', { timeout: 120_000 }, async () => {
    await cluster.createPod(
      'default',
      manifest('ordered', node, {
        initContainers: [sh('first', 'echo first done; sleep 1'), sh('second', 'echo second done')],
        containers: [sh('app', 'echo app up; sleep 3600')],
      }),
    );
    const pod = await cluster.waitForPod('default', 'ordered', 'to run its app', (p) => appStatus(p, 'app')?.state.running !== undefined, 60_000);
    assert.equal(pod.status.phase, 'Running');
    assert.deepEqual(
      pod.status.conditions?.find((c) => c.type === 'Initialized'),
      { type: 'Initialized', status: 'True', lastTransitionTime: pod.status.conditions?.find((c) => c.type === 'Initialized')?.lastTransitionTime },
    );
    for (const name of ['first', 'second']) {
      const s = initStatus(pod, name);
      assert.equal(s?.state.terminated?.exitCode, 0, `${name} completed`);
      assert.equal(s?.state.terminated?.reason, 'Completed');
      assert.equal(s?.ready, true);
    }
    const [first, second, app] = await Promise.all([times(pod, 'first'), times(pod, 'second'), times(pod, 'app')]);
    assert.ok(second.startedMs >= first.finishedMs, 'second started after first finished');
    assert.ok(app.startedMs >= second.finishedMs, 'the app started after the last init container finished');
    const log = await fetch(`${cluster.apiUrl}/api/v1/namespaces/default/pods/ordered/log?container=first`);
    assert.equal(log.status, 200);
    assert.equal((await log.text()).trim(), 'first done', "an init container's log is served");

    // An agent restart rebuilds from Docker and the stream: completed init containers stay completed.
    await cluster.agents.get(node)!.process.stop();
    await cluster.startAgent(node);
    // Its HTTP server opens after the desired state is rebuilt.
    await waitFor('the restarted agent to serve', async () => (await fetch(`${cluster.agentUrl(node)}/healthz`).catch(() => undefined)) !== undefined, 30_000);
    await cluster.waitForPasses(node, 3);
    const again = await cluster.waitForPod('default', 'ordered', 'to be reported by the new agent', (p) => appStatus(p, 'app')?.state.running !== undefined);
    for (const name of ['first', 'second']) {
      const run = await times(again, name);
      assert.equal(run.count, 1, `${name} has one run`);
      assert.equal(initStatus(again, name)?.restartCount, 0);
    }
    assert.equal((await times(again, 'app')).startedMs, app.startedMs, 'the app kept running');
  });

  it('shows Init:N/M while an init container runs and PodInitializing on the app', { timeout: 120_000 }, async () => {
    await cluster.createPod(
      'default',
      manifest('slow-init', node, { initContainers: [sh('quick', 'true'), sh('slow', 'sleep 3600')], containers: [sh('app', 'sleep 3600')] }),
    );
    const pod = await cluster.waitForPod('default', 'slow-init', 'to run its second init container', (p) => initStatus(p, 'slow')?.state.running !== undefined);
    assert.equal(pod.status.phase, 'Pending');
    assert.deepEqual(appStatus(pod, 'app')?.state, { waiting: { reason: 'PodInitializing' } });
    assert.equal(pod.status.conditions?.find((c) => c.type === 'Initialized')?.message, 'containers with incomplete status: [slow]');
    await waitForColumn('slow-init', 'Init:1/2');
  });

  it('fails a pod whose init container fails under restartPolicy Never: Init:Error, the app never runs', { timeout: 120_000 }, async () => {
    await cluster.createPod(
      'default',
      manifest('init-never', node, { restartPolicy: 'Never', initContainers: [sh('broken', 'exit 3')], containers: [sh('app', 'sleep 3600')] }),
    );
    const pod = await cluster.waitForPod('default', 'init-never', 'to fail', (p) => p.status.phase === 'Failed');
    assert.equal(initStatus(pod, 'broken')?.state.terminated?.exitCode, 3);
    assert.equal(initStatus(pod, 'broken')?.restartCount, 0);
    assert.deepEqual(appStatus(pod, 'app')?.state, { waiting: { reason: 'PodInitializing' } });
    await waitForColumn('init-never', 'Init:Error');
    const apps = (await cluster.podContainers(node, pod.metadata.uid!)).filter((c) => c.Labels['io.jetlet.container.name'] === 'app');
    assert.equal(apps.length, 0, 'the app container was never created');
  });

  it('restarts a failing init container with the crash back-off otherwise: Init:CrashLoopBackOff', { timeout: 120_000 }, async () => {
    await cluster.createPod(
      'default',
      manifest('init-crash', node, { restartPolicy: 'Always', initContainers: [sh('broken', 'exit 1')], containers: [sh('app', 'sleep 3600')] }),
    );
    const pod = await cluster.waitForPod(
      'default',
      'init-crash',
      'to back off restarting its init container',
      (p) => initStatus(p, 'broken')?.state.waiting?.reason === 'CrashLoopBackOff' && (initStatus(p, 'broken')?.restartCount ?? 0) >= 1,
    );
    assert.equal(pod.status.phase, 'Pending');
    assert.equal(initStatus(pod, 'broken')?.lastState.terminated?.exitCode, 1);
    await waitForColumn('init-crash', 'Init:CrashLoopBackOff');
  });

  it('runs a sidecar beside the app: started before it, restarted when it exits', { timeout: 120_000 }, async () => {
    await cluster.createPod(
      'default',
      manifest('with-sidecar', node, {
        initContainers: [sh('proxy', 'sleep 3600', { restartPolicy: 'Always' }), sh('setup', 'true')],
        containers: [sh('app', 'sleep 3600')],
      }),
    );
    const pod = await cluster.waitForPod(
      'default',
      'with-sidecar',
      'to run app and sidecar',
      (p) => appStatus(p, 'app')?.state.running !== undefined && initStatus(p, 'proxy')?.ready === true,
    );
    assert.equal(pod.status.phase, 'Running');
    assert.equal(initStatus(pod, 'proxy')?.started, true);
    assert.ok(initStatus(pod, 'proxy')?.state.running);
    const [proxy, setup] = await Promise.all([times(pod, 'proxy'), times(pod, 'setup')]);
    assert.ok(setup.startedMs >= proxy.startedMs, 'the next init container started after the sidecar');
    const table = await fetch(`${cluster.apiUrl}/api/v1/namespaces/default/pods/with-sidecar`, { headers: { Accept: TABLE } });
    const cells = ((await table.json()) as { rows: Array<{ cells: unknown[] }> }).rows[0]?.cells;
    assert.deepEqual(cells?.slice(1, 3), ['2/2', 'Running']);

    const running = (await cluster.podContainers(node, pod.metadata.uid!)).find(
      (c) => c.Labels['io.jetlet.container.name'] === 'proxy' && c.State === 'running',
    );
    await cluster.docker.getContainer(running!.Id).kill();
    const restarted = await cluster.waitForPod(
      'default',
      'with-sidecar',
      'to restart its sidecar',
      (p) => initStatus(p, 'proxy')?.restartCount === 1 && initStatus(p, 'proxy')?.state.running !== undefined,
    );
    assert.equal(appStatus(restarted, 'app')?.restartCount, 0, 'the app ran on');
  });

  it('reports the QoS class as Kubernetes computes it, init containers included', { timeout: 60_000 }, async () => {
    const limits = { cpu: '100m', memory: '32Mi' };
    const cases: Array<[string, Partial<Container>, Partial<Container>, string]> = [
      ['qos-guaranteed', { resources: { limits } }, { resources: { limits } }, 'Guaranteed'],
      ['qos-burstable', { resources: { requests: { memory: '16Mi' } } }, {}, 'Burstable'],
      ['qos-init-burstable', { resources: { limits } }, {}, 'Burstable'],
      ['qos-besteffort', {}, {}, 'BestEffort'],
    ];
    for (const [name, app, init] of cases)
      await cluster.createPod('default', manifest(name, node, { initContainers: [sh('init', 'true', init)], containers: [sh('app', 'sleep 3600', app)] }));
    for (const [name, , , qos] of cases) {
      const pod = await cluster.waitForPod('default', name, 'to be reported', (p) => p.status.qosClass !== undefined);
      assert.equal(pod.status.qosClass, qos, name);
    }
  });

  it(
    'evicts under an artificially high nodefs.available threshold: DiskPressure and its taint, the BestEffort pod first, Failed/Evicted',
    { timeout: 180_000 },
    async () => {
      // Every disk is below 100 % free: the soft threshold holds from the agent's first look, and pods go once its grace is over.
      const pressured = uniqueName('evict');
      await cluster.startAgent(pressured, {
        EVICTION_HARD: '',
        EVICTION_SOFT: 'nodefs.available<100%',
        EVICTION_SOFT_GRACE_PERIOD: 'nodefs.available=30s',
        EVICTION_MONITORING_INTERVAL_SECONDS: '1',
      });
      try {
        const tolerations = [{ key: 'node.kubernetes.io/disk-pressure', operator: 'Exists', effect: 'NoSchedule' }];
        const pod = (name: string, resources: object): object => ({
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name },
          spec: { nodeName: pressured, terminationGracePeriodSeconds: 2, tolerations, containers: [sh('app', 'sleep 3600', { resources })] },
        });
        await cluster.createPod('default', pod('evict-burstable', { requests: { memory: '16Mi' } }));
        await cluster.createPod('default', pod('evict-besteffort', {}));

        const node = await waitFor(
          'the node to report DiskPressure',
          async () => {
            const { body } = await cluster.request<{
              spec: { taints?: Array<{ key: string; effect: string }> };
              status: { conditions: Array<{ type: string; status: string }> };
            }>('GET', `/api/v1/nodes/${pressured}`);
            return body.status.conditions.some((c) => c.type === 'DiskPressure' && c.status === 'True') ? body : undefined;
          },
          60_000,
        );
        assert.deepEqual(
          node.spec.taints?.filter((t) => t.key === 'node.kubernetes.io/disk-pressure'),
          [{ key: 'node.kubernetes.io/disk-pressure', effect: 'NoSchedule' }],
        );
        const evicted = await cluster.waitForPod('default', 'evict-besteffort', 'to be evicted', (p) => p.status.reason === 'Evicted', 120_000);
        assert.equal(evicted.status.phase, 'Failed');
        assert.match(evicted.status.message ?? '', /^The node was low on resource: ephemeral-storage\. Threshold quantity: \d+(Ki)?, available: \d+(Ki)?\. $/);
        const disruption = evicted.status.conditions?.find((c) => c.type === 'DisruptionTarget');
        assert.equal(disruption?.reason, 'TerminationByKubelet');
        await cluster.waitForPod('default', 'evict-besteffort', 'to have its container stopped', (p) => appStatus(p, 'app')?.state.terminated !== undefined);

        // One pod per look: the Burstable pod goes after.
        const second = await cluster.waitForPod('default', 'evict-burstable', 'to be evicted next', (p) => p.status.reason === 'Evicted', 120_000);
        assert.equal(second.status.qosClass, 'Burstable');
        assert.equal(evicted.status.qosClass, 'BestEffort');
        const secondAt = second.status.conditions?.find((c) => c.type === 'DisruptionTarget')?.lastTransitionTime ?? '';
        assert.ok((disruption?.lastTransitionTime ?? '') <= secondAt, `BestEffort evicted at ${disruption?.lastTransitionTime}, Burstable at ${secondAt}`);
        await waitFor(
          'nothing of the evicted pod to run, sandbox included',
          async () => (await cluster.podContainers(pressured, evicted.metadata.uid ?? '')).every((c) => c.State !== 'running'),
          60_000,
        );
      } finally {
        await cluster.stopAgentAndClean(pressured);
      }
    },
  );

  it(
    'evicts a pod whose emptyDir passes its sizeLimit, and one whose writable layer passes its ephemeral-storage limit, and keeps one within',
    { timeout: 180_000 },
    async () => {
      const storageNode = uniqueName('evict-storage');
      await cluster.startAgent(storageNode, { EVICTION_HARD: '', EVICTION_MONITORING_INTERVAL_SECONDS: '1' });
      try {
        const pod = (name: string, script: string, extra: object): object => ({
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name },
          spec: { nodeName: storageNode, terminationGracePeriodSeconds: 2, ...extra, containers: [sh('app', `${script}; sleep 3600`)] },
        });
        const scratch = (sizeLimit: string): object => ({ volumes: [{ name: 'scratch', emptyDir: { sizeLimit } }] });
        const mount = [{ name: 'scratch', mountPath: '/scratch' }];
        const withMount = (manifest: object): object => {
          const m = manifest as { spec: { containers: Array<Record<string, unknown>> } };
          m.spec.containers[0]['volumeMounts'] = mount;
          return m;
        };
        await cluster.createPod('default', withMount(pod('emptydir-over', 'dd if=/dev/zero of=/scratch/fill bs=1024 count=3072', scratch('1Mi'))));
        await cluster.createPod('default', withMount(pod('emptydir-within', 'dd if=/dev/zero of=/scratch/fill bs=1024 count=512', scratch('8Mi'))));
        const rootfs = pod('rootfs-over', 'dd if=/dev/zero of=/tmp/fill bs=1024 count=4096', {}) as { spec: { containers: Array<Record<string, unknown>> } };
        rootfs.spec.containers[0]['resources'] = { limits: { 'ephemeral-storage': '2Mi' } };
        await cluster.createPod('default', rootfs);

        const overDir = await cluster.waitForPod('default', 'emptydir-over', 'to be evicted', (p) => p.status.reason === 'Evicted', 90_000);
        assert.equal(overDir.status.phase, 'Failed');
        assert.equal(overDir.status.message, 'Usage of EmptyDir volume "scratch" exceeds the limit "1Mi". ');
        const overLayer = await cluster.waitForPod('default', 'rootfs-over', 'to be evicted', (p) => p.status.reason === 'Evicted', 90_000);
        assert.equal(overLayer.status.message, 'Pod ephemeral local storage usage exceeds the total limit of containers 2Mi. ');
        const events = (
          await cluster.request<{ items: Array<{ reason: string; message: string }> }>(
            'GET',
            '/api/v1/namespaces/default/events?fieldSelector=involvedObject.name=emptydir-over',
          )
        ).body.items;
        assert.ok(
          events.some((e) => e.reason === 'Evicted' && e.message === overDir.status.message),
          JSON.stringify(events),
        );
        await cluster.waitForPod('default', 'rootfs-over', 'to have its container stopped', (p) => appStatus(p, 'app')?.state.terminated !== undefined);

        // Looked at every second since it started writing: the pod within its limit is still running.
        const within = await cluster.getPod('default', 'emptydir-within');
        assert.equal(within?.status.phase, 'Running', JSON.stringify(within?.status));
        assert.equal(within?.status.reason, undefined);
      } finally {
        await cluster.stopAgentAndClean(storageNode);
      }
    },
  );
});
