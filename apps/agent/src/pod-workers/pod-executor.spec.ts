import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { Bus } from '#bus';
import type { PodManifest } from '#contracts';
import type { DesiredPod } from '#domain';
import { FakeRuntime, LABELS, RuntimeError, type RuntimeContainer } from '#runtime';
import { AgentConfig } from '../agent.config.js';
import { ConfigSource } from '../configmap/config-source.service.js';
import { EventRecorder } from '../events/event-recorder.service.js';
import type { NodeService } from '../node/node.service.js';
import { HandlerRunner } from '../lifecycle/handler-runner.js';
import { TerminationMessages } from '../lifecycle/termination-messages.js';
import { HostMounts } from '../volumemanager/host-mounts.js';
import { VolumeManager } from '../volumemanager/volume-manager.service.js';
import { PodExecutor } from './pod-executor.js';

const UID = '6f1c2b1e-3b9a-4c1d-9f2e-0a1b2c3d4e5f';

function pod(): DesiredPod {
  const manifest: PodManifest = {
    metadata: { name: 'web-0', namespace: 'default', uid: UID },
    spec: { nodeName: 'node-1', containers: [{ name: 'web', image: 'jetlet/busybox:1.35' }] },
  };
  return { namespace: 'default', name: 'web-0', uid: UID, manifest };
}

/** Publishes nothing; the events the executor records are kept as `reason: message`. */
const recorded: string[] = [];
const quietBus = {
  publish: () => Promise.resolve(),
  publishBuffered: (_subject: string, _type: string, data: { reason?: string; message?: string }) => recorded.push(`${data.reason}: ${data.message}`),
} as unknown as Bus;

/** An executor of node-1 on `runtime`, keeping its files under `root`. */
function executorOn(runtime: FakeRuntime, root: string): PodExecutor {
  const config = Object.assign(new AgentConfig(), { NODE_NAME: 'node-1', AGENT_ROOT_DIR: root });
  const node = { nodeIP: '10.0.0.1', allocatable: () => ({ cpu: '2', memory: '4Gi' }) } as unknown as NodeService;
  const configSource = new ConfigSource(quietBus, config);
  return new PodExecutor(
    config,
    runtime,
    new EventRecorder(config, quietBus),
    new HandlerRunner(runtime, config),
    new TerminationMessages(config, runtime),
    configSource,
    node,
    new VolumeManager(config, configSource, node, new HostMounts()),
  );
}

describe('PodExecutor: sandboxes', () => {
  let root: string;
  let runtime: FakeRuntime;
  let sut: PodExecutor;

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'jetlet-executor-'));
    runtime = new FakeRuntime();
    sut = executorOn(runtime, root);
  });

  afterEach(() => rmSync(root, { recursive: true, force: true }));

  const sandboxes = async () => (await runtime.listContainers({ [LABELS.podUid]: UID, [LABELS.kind]: 'sandbox' })).map((c) => [c.name, c.state]);

  it('does not run a sandbox planned from a stale list while another of the pod runs', async () => {
    await sut.apply({ kind: 'RunSandbox', pod: pod(), attempt: 0 });
    // A plan made from a list taken before sandbox 0 started asks for attempt 1.
    await sut.apply({ kind: 'RunSandbox', pod: pod(), attempt: 1 });

    assert.deepEqual(await sandboxes(), [[`jetlet_POD_web-0_default_${UID}_0`, 'running']]);
  });

  it('runs the same attempt again idempotently, and a new attempt once the old sandbox is dead', async () => {
    await sut.apply({ kind: 'RunSandbox', pod: pod(), attempt: 0 });
    await sut.apply({ kind: 'RunSandbox', pod: pod(), attempt: 0 });
    const [first] = await runtime.listContainers({ [LABELS.podUid]: UID });
    await runtime.stopContainer(first.id, 0);
    await sut.apply({ kind: 'RunSandbox', pod: pod(), attempt: 1 });

    assert.deepEqual((await sandboxes()).sort(), [
      [`jetlet_POD_web-0_default_${UID}_0`, 'exited'],
      [`jetlet_POD_web-0_default_${UID}_1`, 'running'],
    ]);
  });

  it("starts a new pod's containers with its sandbox, joined to its network", async () => {
    const desired = pod();
    recorded.length = 0;

    await sut.apply({ kind: 'RunSandbox', pod: desired, attempt: 0, containers: desired.manifest.spec.containers });

    const [box] = await runtime.listContainers({ [LABELS.podUid]: UID, [LABELS.kind]: 'sandbox' });
    const apps = await runtime.listContainers({ [LABELS.podUid]: UID, [LABELS.kind]: 'container' });
    assert.deepEqual(
      apps.map((c) => [c.labels[LABELS.containerName], c.state, c.networkOf]),
      [['web', 'running', box.id]],
    );
    assert.deepEqual(
      recorded.filter((r) => /^(Created|Started)/.test(r)),
      ['Created: Created container web', 'Started: Started container web'],
    );
  });

  // Before, the start waited on the inspection, which here waits on the start: the timeout fails it.
  it('starts the containers once the sandbox runs, without waiting for it to be looked at for its IP', { timeout: 10_000 }, async () => {
    const desired = pod();
    const run = runtime.runPodSandbox.bind(runtime);
    let inspected: () => void = () => undefined;
    const inspection = new Promise<void>((resolve) => (inspected = resolve));
    let startedBeforeInspection = false;
    // The engine has started the sandbox; its inspection (for the IP) answers only when told.
    runtime.runPodSandbox = async (config, onCreated, onStarted) => {
      const sandbox = await run(config, onCreated, onStarted);
      await inspection;
      return sandbox;
    };
    const start = runtime.startContainer.bind(runtime);
    runtime.startContainer = async (id) => {
      await start(id);
      if ((await runtime.inspectContainer(id))?.labels[LABELS.kind] === 'container') {
        startedBeforeInspection = true;
        inspected();
      }
    };

    await sut.apply({ kind: 'RunSandbox', pod: desired, attempt: 0, containers: desired.manifest.spec.containers });

    assert.equal(startedBeforeInspection, true);
    const apps = await runtime.listContainers({ [LABELS.podUid]: UID, [LABELS.kind]: 'container' });
    assert.deepEqual(
      apps.map((c) => c.state),
      ['running'],
    );
  });

  it('removes the containers it created for a sandbox that then failed to run', async () => {
    const desired = pod();
    const calls: string[] = [];
    const run = runtime.runPodSandbox.bind(runtime);
    const create = runtime.createContainer.bind(runtime);
    const remove = runtime.removeContainer.bind(runtime);
    // The engine creates the sandbox, then fails to set up its network.
    runtime.runPodSandbox = async (config, onCreated) => {
      await run(config, onCreated);
      throw new RuntimeError('start container: failed to set up the network');
    };
    runtime.createContainer = async (sandboxId, config) => {
      calls.push(`create ${config.labels[LABELS.containerName]}`);
      return create(sandboxId, config);
    };
    runtime.removeContainer = async (id) => {
      calls.push(`remove ${(await runtime.inspectContainer(id))?.labels[LABELS.containerName]}`);
      return remove(id);
    };

    await assert.rejects(sut.apply({ kind: 'RunSandbox', pod: desired, attempt: 0, containers: desired.manifest.spec.containers }), /network/);

    assert.deepEqual(calls, ['create web', 'remove web']);
    assert.deepEqual(await runtime.listContainers({ [LABELS.podUid]: UID, [LABELS.kind]: 'container' }), []);
  });

  it("forgets why a pod's containers waited once told to, as for a pod removed with nothing to remove", async () => {
    const desired = pod();
    const containers = [{ name: 'web', image: 'Not A Reference' }];
    desired.manifest.spec.containers = containers;
    await sut.apply({ kind: 'RunSandbox', pod: desired, attempt: 0, containers });
    assert.equal(sut.waitingReasons(UID)?.get('web')?.reason, 'InvalidImageName');

    sut.forget(UID);
    assert.equal(sut.waitingReasons(UID), undefined);
  });
});

describe('PodExecutor: kills', () => {
  let root: string;
  let runtime: FakeRuntime;
  let sut: PodExecutor;

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'jetlet-executor-'));
    recorded.length = 0;
    runtime = new FakeRuntime();
    sut = executorOn(runtime, root);
  });

  afterEach(() => rmSync(root, { recursive: true, force: true }));

  /** Runs the pod's sandbox and its `web` container; returns that container. */
  const runningWeb = async (desired: DesiredPod): Promise<RuntimeContainer> => {
    await sut.apply({ kind: 'RunSandbox', pod: desired, attempt: 0 });
    const [box] = await runtime.listContainers({ [LABELS.podUid]: UID, [LABELS.kind]: 'sandbox' });
    await sut.apply({ kind: 'StartContainer', pod: desired, container: desired.manifest.spec.containers[0], attempt: 0, sandboxId: box.id });
    const [web] = await runtime.listContainers({ [LABELS.podUid]: UID, [LABELS.kind]: 'container' });
    return web;
  };

  it('kills a run once for a probe failure, however many plans asked, and says it will be restarted only where it will', async () => {
    const desired = pod();
    const web = await runningWeb(desired);
    assert.equal(web.state, 'running');

    const stops: string[] = [];
    const stop = runtime.stopContainer.bind(runtime);
    runtime.stopContainer = (id, grace) => {
      stops.push(id);
      return stop(id, grace);
    };
    const kill = { kind: 'KillContainer', pod: desired, containerId: web.id, containerName: 'web', graceSeconds: 2, reason: 'LivenessProbe' } as const;
    await sut.apply(kill);
    // A second plan made from a listing taken before the kill finished.
    await sut.apply(kill);

    assert.equal((await runtime.inspectContainer(web.id))?.state, 'exited');
    assert.deepEqual(stops, [web.id], 'stopped once: no second preStop against a dead container');
    assert.deepEqual(
      recorded.filter((r) => r.startsWith('Killing')),
      ['Killing: Container web failed liveness probe, will be restarted'],
    );
  });

  it('does not promise a restart under restartPolicy Never', async () => {
    const desired = pod();
    desired.manifest.spec.restartPolicy = 'Never';
    const web = await runningWeb(desired);

    await sut.apply({ kind: 'KillContainer', pod: desired, containerId: web.id, containerName: 'web', graceSeconds: 2, reason: 'StartupProbe' });

    assert.deepEqual(
      recorded.filter((r) => r.startsWith('Killing')),
      ['Killing: Container web failed startup probe'],
    );
  });
});
