import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Pod } from '#contracts';
import { Cluster, uniqueName } from '../harness/cluster.js';
import { waitFor } from '../harness/processes.js';

const BUSYBOX = 'jetlet/busybox:1.35';
/** A container that stops at once on SIGTERM. */
const SLEEPER = ['sh', '-c', "trap 'exit 0' TERM; sleep 3600 & wait"];

function sleeperPod(name: string, node: string): object {
  return {
    metadata: { name, labels: { test: 'recovery' } },
    spec: { nodeName: node, terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image: BUSYBOX, command: SLEEPER }] },
  };
}

/** What a user sees of an agent that crashes, misses work, or shares its engine with others. */
describe('the agent: recovery and ownership', () => {
  let cluster: Cluster;

  before(async () => {
    cluster = await Cluster.start();
  });

  after(async () => {
    await cluster?.stop();
  });

  it('converges to exactly one set of containers per pod when killed with SIGKILL in the middle of a 20-pod rollout', { timeout: 240_000 }, async (t) => {
    const node = uniqueName('rec-rollout');
    const namespace = 'rollout';
    cluster.cleanUpAfter(t, node);
    const agent = await cluster.startAgent(node);
    const names = Array.from({ length: 20 }, (_, i) => `pod-${String(i).padStart(2, '0')}`);
    const created = await Promise.all(names.map((name) => cluster.createPod(namespace, sleeperPod(name, node))));
    const uids = new Set(created.map((p) => p.metadata.uid!));
    assert.equal(uids.size, 20);

    await cluster.withLogs(
      waitFor(
        'five app containers running',
        async () => (await cluster.containersOf(node)).filter((c) => c.Labels['io.jetlet.kind'] === 'container' && c.State === 'running').length >= 5,
        90_000,
        50,
      ),
    );
    await agent.stop('SIGKILL');
    const atKill = await cluster.containersOf(node);
    t.diagnostic(
      `at SIGKILL: ${atKill.filter((c) => c.Labels['io.jetlet.kind'] === 'sandbox').length} sandboxes, ` +
        `${atKill.filter((c) => c.Labels['io.jetlet.kind'] === 'container').length} app containers ` +
        `(${atKill.filter((c) => c.State === 'running').length} running)`,
    );

    await cluster.startAgent(node);
    await cluster.withLogs(
      waitFor(
        'all 20 pods Running',
        async () => {
          const { body } = await cluster.request<{ items: Pod[] }>('GET', `/api/v1/namespaces/${namespace}/pods`);
          const running = body.items.filter(
            (p) => p.status.phase === 'Running' && p.status.podIP && (p.status.containerStatuses ?? []).every((s) => s.state.running),
          );
          return running.length === 20;
        },
        120_000,
        500,
      ),
    );
    // Let the restarted agent run a few more passes, to catch duplicates it would create late.
    await cluster.waitForPasses(node, 3);

    const containers = await cluster.containersOf(node);
    const sandboxes = containers.filter((c) => c.Labels['io.jetlet.kind'] === 'sandbox');
    const apps = containers.filter((c) => c.Labels['io.jetlet.kind'] === 'container');
    assert.equal(sandboxes.length, 20, 'exactly 20 sandboxes');
    assert.equal(apps.length, 20, 'exactly 20 app containers');
    for (const uid of uids) {
      assert.equal(sandboxes.filter((c) => c.Labels['io.jetlet.pod.uid'] === uid).length, 1, `one sandbox for ${uid}`);
      assert.equal(apps.filter((c) => c.Labels['io.jetlet.pod.uid'] === uid).length, 1, `one app container for ${uid}`);
    }
    assert.deepEqual(
      containers.filter((c) => c.State !== 'running').map((c) => c.Names[0]),
      [],
      'every container runs',
    );
    // What ran at the SIGKILL runs on: the restarted agent adopted it instead of starting over.
    const ids = new Set(containers.map((c) => c.Id));
    const runningAtKill = atKill.filter((c) => c.State === 'running');
    assert.ok(runningAtKill.length >= 5);
    assert.deepEqual(
      runningAtKill.filter((c) => !ids.has(c.Id)).map((c) => c.Names[0]),
      [],
      'containers running at the SIGKILL were kept',
    );
    const { body } = await cluster.request<{ items: Pod[] }>('GET', `/api/v1/namespaces/${namespace}/pods`);
    assert.equal(body.items.length, 20);
    for (const pod of body.items) {
      assert.equal(pod.status.phase, 'Running', pod.metadata.name);
      assert.equal(pod.status.containerStatuses?.[0]?.restartCount, 0, `${pod.metadata.name} was never restarted`);
      const id = pod.status.containerStatuses?.[0]?.containerID?.replace('docker://', '');
      assert.ok(
        apps.some((c) => c.Id === id),
        `${pod.metadata.name} reports the container that runs`,
      );
    }
  });

  it('removes the containers of a pod deleted while the agent was down, then the pod leaves the API', { timeout: 120_000 }, async (t) => {
    const node = uniqueName('rec-delete');
    cluster.cleanUpAfter(t, node);
    const agent = await cluster.startAgent(node);
    await cluster.createPod('default', sleeperPod('deleted-offline', node));
    const pod = await cluster.waitForRunning('default', 'deleted-offline');
    const uid = pod.metadata.uid!;
    assert.equal((await cluster.podContainers(node, uid)).length, 2);

    await agent.stop();
    const deleted = await cluster.request<Pod>('DELETE', '/api/v1/namespaces/default/pods/deleted-offline');
    assert.equal(deleted.status, 200);
    // Without its node the deletion cannot finish: the pod stays, terminating, and its containers stay.
    const terminating = await cluster.waitForPod('default', 'deleted-offline', 'terminating', (p) => p.metadata.deletionTimestamp !== undefined);
    assert.ok(terminating?.metadata.deletionTimestamp, 'the pod is shown terminating until its node confirms');
    const stillThere = await cluster.podContainers(node, uid);
    assert.equal(stillThere.filter((c) => c.State === 'running').length, 2, 'nothing removed the containers while the agent was down');

    await cluster.startAgent(node);
    await cluster.waitForGone('default', 'deleted-offline', 60_000);
    assert.deepEqual(
      (await cluster.podContainers(node, uid)).map((c) => c.Names[0]),
      [],
      "the pod's containers are gone from Docker",
    );
  });

  it('leaves alone containers it does not own: unlabelled ones and those of another node', { timeout: 120_000 }, async (t) => {
    const node = uniqueName('rec-foreign');
    const otherNode = uniqueName('rec-other');
    const foreignName = uniqueName('jetlet-foreign');
    const otherName = uniqueName('jetlet-other-node');
    const orphanName = uniqueName('jetlet-orphan');
    cluster.cleanUpAfter(t, node);
    t.after(async () => {
      for (const name of [foreignName, otherName, orphanName])
        await cluster.docker
          .getContainer(name)
          .remove({ force: true })
          .catch(() => undefined);
    });

    const labels = (forNode: string): string[] => {
      const pairs = {
        'io.jetlet.managed': 'true',
        'io.jetlet.node': forNode,
        'io.jetlet.kind': 'sandbox',
        'io.jetlet.pod.namespace': 'default',
        'io.jetlet.pod.name': 'not-ours',
        'io.jetlet.pod.uid': randomUUID(),
        'io.jetlet.pod.grace': '1',
      };
      return Object.entries(pairs).flatMap(([k, v]) => ['--label', `${k}=${v}`]);
    };
    for (const [name, extra] of [
      [foreignName, []],
      [otherName, labels(otherNode)],
      // A control: a container labelled for this node but of no pod it runs, which it must remove.
      [orphanName, labels(node)],
    ] as const) {
      const run = await cluster.dockerCli('run', '-d', '--name', name, ...extra, BUSYBOX, 'sleep', '300');
      assert.equal(run.code, 0, run.stderr);
    }
    const before = new Map(
      await Promise.all(
        [foreignName, otherName].map(async (name) => {
          const info = await cluster.docker.getContainer(name).inspect();
          return [name, { id: info.Id, startedAt: info.State.StartedAt }] as const;
        }),
      ),
    );

    await cluster.startAgent(node);
    await cluster.createPod('default', sleeperPod('owner', node));
    await cluster.waitForRunning('default', 'owner');
    await cluster.withLogs(
      waitFor(
        'the agent to remove the orphan labelled for its node',
        async () =>
          cluster.docker
            .getContainer(orphanName)
            .inspect()
            .then(
              () => false,
              () => true,
            ),
        60_000,
        250,
      ),
    );
    await cluster.waitForPasses(node, 4);

    for (const [name, was] of before) {
      const info = await cluster.docker
        .getContainer(name)
        .inspect()
        .catch(() => undefined);
      assert.ok(info, `${name} still exists`);
      assert.equal(info.Id, was.id, `${name} is the same container`);
      assert.equal(info.State.Running, true, `${name} still runs`);
      assert.equal(info.State.StartedAt, was.startedAt, `${name} was not restarted`);
    }
  });

  it('reports a container killed behind its back (docker kill) as Died on the bus and restarts it per policy', { timeout: 120_000 }, async (t) => {
    const node = uniqueName('rec-kill');
    cluster.cleanUpAfter(t, node);
    await cluster.startAgent(node);
    const events = await cluster.watchContainerEvents(node);
    t.after(() => events.close());
    const created = await cluster.createPod('default', sleeperPod('killed', node));
    const pod = await cluster.waitForRunning('default', 'killed');
    const status = pod.status.containerStatuses![0];
    const id = status.containerID!.replace('docker://', '');
    assert.equal(status.restartCount, 0);
    await events.waitFor('Started for the first container', (e) => e.data.reason === 'Started' && e.data.containerID === `docker://${id}`);

    const kill = await cluster.dockerCli('kill', id);
    assert.equal(kill.code, 0, kill.stderr);

    const died = await events.waitFor(`Died for ${id.slice(0, 12)}`, (e) => e.data.reason === 'Died' && e.data.containerID === `docker://${id}`);
    assert.equal(died.data.exitCode, 137);
    // Named after the engine's event, so the same death told again (a restarted agent's first stream) is stored once.
    assert.match(died.id, new RegExp(`^container-event\\.${id}\\.die\\.\\d+$`));
    assert.equal(died.data.uid, created.metadata.uid);
    assert.equal(died.data.containerName, 'main');

    const restarted = await cluster.waitForPod(
      'default',
      'killed',
      'to run the container again',
      (p) => {
        const s = p.status.containerStatuses?.[0];
        return s?.state.running !== undefined && s.restartCount === 1;
      },
      60_000,
    );
    const again = restarted.status.containerStatuses![0];
    assert.equal(restarted.status.phase, 'Running');
    assert.notEqual(again.containerID, status.containerID, 'a new container runs');
    assert.equal(again.lastState.terminated?.exitCode, 137);
    assert.equal(again.lastState.terminated?.containerID, status.containerID);
    const newId = again.containerID!.replace('docker://', '');
    assert.equal((await cluster.docker.getContainer(newId).inspect()).State.Running, true);
    await events.waitFor('Started for the new container', (e) => e.data.reason === 'Started' && e.data.containerID === again.containerID);
  });
});
