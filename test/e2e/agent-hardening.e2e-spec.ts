import assert from 'node:assert/strict';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { jetstream } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { token, type Pod } from '#contracts';
import { Cluster, uniqueName } from '../harness/cluster.js';
import { sleep, waitFor } from '../harness/processes.js';

const BUSYBOX = 'jetlet/busybox:1.35';
const PAUSE = 'jetlet/pause:1.0';
/** A container that stops at once on SIGTERM. */
const SLEEPER = ['sh', '-c', "trap 'exit 0' TERM; sleep 3600 & wait"];

function sleeperPod(name: string, node: string): object {
  return {
    metadata: { name },
    spec: { nodeName: node, terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image: BUSYBOX, command: SLEEPER }] },
  };
}

/** The labels and name the agent gives sandbox `attempt` of `pod`, as `docker` arguments. */
function sandboxArgs(node: string, pod: Pod, attempt: number): string[] {
  const { name, namespace, uid } = pod.metadata as Required<Pod['metadata']>;
  const labels = {
    'io.jetlet.managed': 'true',
    'io.jetlet.node': node,
    'io.jetlet.pod.namespace': namespace,
    'io.jetlet.pod.name': name,
    'io.jetlet.pod.uid': uid,
    'io.jetlet.pod.grace': '1',
    'io.jetlet.kind': 'sandbox',
    'io.jetlet.container.restart-count': String(attempt),
  };
  return ['--name', `jetlet_POD_${name}_${namespace}_${uid}_${attempt}`, ...Object.entries(labels).flatMap(([k, v]) => ['--label', `${k}=${v}`]), PAUSE];
}

/** What an operator sees of an agent that is crashed, lied to or overloaded. */
describe('the agent: hardening', () => {
  let cluster: Cluster;

  before(async () => {
    cluster = await Cluster.start();
  });

  after(async () => {
    await cluster?.stop();
  });

  it('keeps exactly one sandbox per pod across an agent SIGKILL: starts a created one, stops an extra running one', { timeout: 180_000 }, async (t) => {
    const node = uniqueName('hard-sandbox');
    cluster.cleanUpAfter(t, node);
    const agent = await cluster.startAgent(node);
    await cluster.createPod('default', sleeperPod('twin', node));
    await cluster.createPod('default', sleeperPod('half', node));
    const twin = await cluster.waitForRunning('default', 'twin');
    const half = await cluster.waitForRunning('default', 'half');
    const twinUid = twin.metadata.uid!;
    const halfUid = half.metadata.uid!;
    const twinSandbox = (await cluster.podContainers(node, twinUid)).find((c) => c.Labels['io.jetlet.kind'] === 'sandbox')!;
    const twinApp = (await cluster.podContainers(node, twinUid)).find((c) => c.Labels['io.jetlet.kind'] === 'container')!;

    await agent.stop('SIGKILL');
    // What a killed agent (or a plan from a stale list) leaves behind: `twin` has a second
    // running sandbox; `half` lost its containers and has a sandbox created but never started.
    const extra = await cluster.dockerCli('run', '-d', ...sandboxArgs(node, twin, 1));
    assert.equal(extra.code, 0, extra.stderr);
    for (const c of await cluster.podContainers(node, halfUid)) await cluster.docker.getContainer(c.Id).remove({ force: true });
    const created = await cluster.dockerCli('create', ...sandboxArgs(node, half, 0));
    assert.equal(created.code, 0, created.stderr);
    const createdId = created.stdout.trim();

    await cluster.startAgent(node);
    const sandboxesOf = async (uid: string) =>
      (await cluster.podContainers(node, uid)).filter((c) => c.Labels['io.jetlet.kind'] === 'sandbox').map((c) => ({ id: c.Id, state: c.State }));
    await cluster.withLogs(
      waitFor(
        "twin's extra sandbox to go",
        async () => {
          const sandboxes = await sandboxesOf(twinUid);
          return sandboxes.length === 1 && sandboxes[0].id === twinSandbox.Id ? sandboxes : undefined;
        },
        60_000,
        250,
      ),
    );
    const after = await cluster.waitForRunning('default', 'twin');
    assert.equal(after.status.podIP, twin.status.podIP, 'the pod keeps its IP');
    assert.equal(after.status.containerStatuses?.[0]?.containerID, `docker://${twinApp.Id}`, 'the app container that joined the kept sandbox runs on');
    assert.equal(after.status.containerStatuses?.[0]?.restartCount, 0);

    await cluster.withLogs(
      waitFor(
        "half's app container to run again",
        async () => (await cluster.podContainers(node, halfUid)).some((c) => c.Labels['io.jetlet.kind'] === 'container' && c.State === 'running'),
        60_000,
        250,
      ),
    );
    assert.deepEqual(await sandboxesOf(halfUid), [{ id: createdId, state: 'running' }], 'the created sandbox was started, no second one made');
  });

  it('terminates a forged assignment with a pod uid of "..", and never removes its root for an orphan labelled so', { timeout: 120_000 }, async (t) => {
    const node = uniqueName('hard-forged');
    cluster.cleanUpAfter(t, node);
    await cluster.startAgent(node);
    const rootDir = cluster.agents.get(node)!.rootDir;
    writeFileSync(join(rootDir, 'keep'), 'the agent root must survive');

    // Straight onto the bus, past the API: a client allowed to publish is not trusted either.
    const forged = {
      id: `forged-${node}`,
      type: 'PodAssigned',
      version: 1,
      time: new Date().toISOString(),
      source: { component: 'scheduler' },
      correlationId: '..',
      data: {
        pod: {
          metadata: { name: 'forged', namespace: 'default', uid: '..' },
          spec: { nodeName: node, terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image: BUSYBOX, command: SLEEPER }] },
        },
      },
    };
    const nc = await connect({ servers: cluster.nats.url });
    try {
      await jetstream(nc).publish(`jetlet.assign.${token(node)}.forged`, JSON.stringify(forged));
    } finally {
      await nc.close();
    }
    const series = `jetlet_bus_messages_terminated_total{stream="JETLET_ASSIGN",consumer="agent-${node}"}`;
    await cluster.withLogs(
      waitFor('the agent to terminate the forged assignment', async () => {
        const metrics = await (await fetch(`${cluster.agentUrl(node)}/metrics`)).text();
        return metrics.split('\n').some((line) => line.startsWith(`${series} `) && Number(line.split(' ')[1]) >= 1);
      }),
    );
    assert.match(cluster.agentLog(node), /terminated invalid message on jetlet\.assign\..*data\.pod\.metadata\.uid/);
    assert.deepEqual(
      (await cluster.containersOf(node)).map((c) => c.Names[0]),
      [],
      'nothing of the forged pod runs',
    );

    // An orphan whose labels name the uid "..": removing it must not remove the agent's root.
    const orphan = uniqueName('jetlet-dotdot');
    t.after(() =>
      cluster.docker
        .getContainer(orphan)
        .remove({ force: true })
        .catch(() => undefined),
    );
    const labels = {
      'io.jetlet.managed': 'true',
      'io.jetlet.node': node,
      'io.jetlet.kind': 'container',
      'io.jetlet.pod.uid': '..',
      'io.jetlet.pod.namespace': 'default',
      'io.jetlet.pod.name': 'forged',
      'io.jetlet.container.name': 'main',
      'io.jetlet.pod.grace': '1',
    };
    const run = await cluster.dockerCli(
      'run',
      '-d',
      '--name',
      orphan,
      ...Object.entries(labels).flatMap(([k, v]) => ['--label', `${k}=${v}`]),
      BUSYBOX,
      'sleep',
      '300',
    );
    assert.equal(run.code, 0, run.stderr);
    await cluster.withLogs(
      waitFor(
        'the agent to remove the orphan',
        () =>
          cluster.docker
            .getContainer(orphan)
            .inspect()
            .then(
              () => false,
              () => true,
            ),
        60_000,
        250,
      ),
    );
    assert.ok(existsSync(join(rootDir, 'keep')), 'the agent root and what it holds survive');
    assert.deepEqual(
      readdirSync(rootDir).filter((f) => f !== 'keep' && f !== 'pods'),
      [],
      'nothing written beside the pods directory',
    );
    // The agent still works: a real pod runs.
    await cluster.createPod('default', sleeperPod('after-forgery', node));
    await cluster.waitForRunning('default', 'after-forgery');
  });

  it('backs off a pod whose container cannot be created: under one engine call a second, and a bounded number of events', { timeout: 180_000 }, async (t) => {
    const node = uniqueName('hard-backoff');
    cluster.cleanUpAfter(t, node);
    // The kubelet's back-off shortened (1 s doubling to 8 s), and the safety-net resync at its default.
    await cluster.startAgent(node, { BACKOFF_BASE_SECONDS: '1', BACKOFF_CAP_SECONDS: '8', RESYNC_SECONDS: '10' });
    const names = ['cannot-create-0', 'cannot-create-1', 'cannot-create-2'];
    for (const name of names)
      await cluster.createPod('default', {
        metadata: { name },
        spec: {
          nodeName: node,
          terminationGracePeriodSeconds: 1,
          // A limit above the machine's CPUs: the engine refuses to create the container.
          containers: [{ name: 'main', image: BUSYBOX, command: SLEEPER, resources: { requests: { cpu: '10m' }, limits: { cpu: '512' } } }],
        },
      });
    for (const name of names)
      await cluster.waitForPod(
        'default',
        name,
        'CreateContainerError',
        (p) => p.status.containerStatuses?.[0]?.state.waiting?.reason === 'CreateContainerError',
      );
    const calls = async (): Promise<number> => {
      const metrics = await (await fetch(`${cluster.agentUrl(node)}/metrics`)).text();
      return metrics
        .split('\n')
        .filter((line) => line.startsWith('jetlet_runtime_docker_calls_total{'))
        .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
    };
    const failures = async (name: string): Promise<number> => {
      const { body } = await cluster.request<{ items: Array<{ reason: string; count: number }> }>(
        'GET',
        `/api/v1/namespaces/default/events?fieldSelector=involvedObject.name=${name}`,
      );
      return body.items.filter((e) => e.reason === 'Failed').reduce((sum, e) => sum + e.count, 0);
    };
    // Failures at 0, 1, 3 and 7 s: from then on the back-off is at its 8 s cap.
    await cluster.withLogs(waitFor('four failed creates of each pod', async () => (await Promise.all(names.map(failures))).every((n) => n >= 4), 60_000, 500));
    const before = await calls();
    const windowMs = 16_000;
    // A measuring window, not a wait for anything: the agent should stay all but idle through it.
    await sleep(windowMs);
    const perSecond = ((await calls()) - before) / (windowMs / 1000);
    t.diagnostic(`engine calls per second for 3 pods that cannot be created: ${perSecond.toFixed(2)}`);
    assert.ok(perSecond / names.length < 1, `${perSecond.toFixed(2)} engine calls per second for ${names.length} pods`);
    for (const name of names) {
      const failed = await failures(name);
      assert.ok(failed <= 8, `${name}: ${failed} failed creates in about 25 s`);
      const { body } = await cluster.request<{ items: unknown[] }>('GET', `/api/v1/namespaces/default/events?fieldSelector=involvedObject.name=${name}`);
      assert.ok(body.items.length <= 10, `${name}: ${body.items.length} events listed`);
    }
  });
});
