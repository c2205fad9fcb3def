/**
 * DockerRuntime against the real engine at /var/run/docker.sock (or DOCKER_HOST). Uses
 * only the local images jetlet/pause:1.0 and jetlet/busybox:1.35; never pulls from a
 * public registry. Everything it creates carries a per-run node label and is removed in
 * `after`.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import Docker from 'dockerode';
import { DockerRuntime, LABELS, RuntimeError, type ContainerConfig, type RuntimeContainer, type RuntimeEvent } from '../../libs/runtime/src/index.js';
import { waitFor } from '../harness/processes.js';

const PAUSE_IMAGE = 'jetlet/pause:1.0';
const BUSYBOX_IMAGE = 'jetlet/busybox:1.35';
const runId = randomUUID().slice(0, 8);
const prefix = `rt-test-${runId}`;
const nodeLabels = { [LABELS.managed]: 'true', [LABELS.node]: prefix };

function appConfig(name: string, overrides: Partial<ContainerConfig> = {}): ContainerConfig {
  return {
    name: `${prefix}-${name}`,
    image: BUSYBOX_IMAGE,
    env: [],
    labels: { ...nodeLabels, [LABELS.kind]: 'container', [LABELS.containerName]: name },
    ...overrides,
  };
}

describe('DockerRuntime (real engine)', { timeout: 120_000 }, () => {
  const sut = new DockerRuntime();
  // A second client for assertions the port does not expose (HostConfig).
  const docker = new Docker();
  let sandbox: RuntimeContainer;

  before(async () => {
    assert.equal(await sut.imagePresent(PAUSE_IMAGE), true, `${PAUSE_IMAGE} must exist locally`);
    assert.equal(await sut.imagePresent(BUSYBOX_IMAGE), true, `${BUSYBOX_IMAGE} must exist locally`);
  });

  after(async () => {
    const leftovers = await sut.listContainers({ [LABELS.node]: prefix });
    await Promise.all(leftovers.map((c) => sut.removeContainer(c.id)));
    assert.deepEqual(await sut.listContainers({ [LABELS.node]: prefix }), []);
  });

  it('reports engine info', async () => {
    const info = await sut.info();
    assert.equal(info.name, 'docker');
    assert.match(info.version, /^\d+\.\d+/);
    assert.match(info.apiVersion, /^1\.\d+$/);
    assert.ok(info.os.length > 0);
    assert.ok(info.kernelVersion.length > 0);
  });

  it('tells present from absent images', async () => {
    assert.equal(await sut.imagePresent(BUSYBOX_IMAGE), true);
    assert.equal(await sut.imagePresent(`jetlet/absent-${runId}:0`), false);
  });

  it('rejects a pull that cannot succeed with a RuntimeError', async () => {
    // A registry on a closed loopback port: fails fast and never leaves the machine.
    await assert.rejects(sut.pullImage(`127.0.0.1:1/jetlet/absent-${runId}:0`), (err: unknown) => {
      assert.ok(err instanceof RuntimeError);
      assert.match(err.message, /pull image 127\.0\.0\.1:1\/jetlet\/absent/);
      return true;
    });
  });

  it('runs a sandbox with an IP and adopts it when run again', async () => {
    const config = {
      name: `${prefix}-sandbox`,
      image: PAUSE_IMAGE,
      hostname: 'web-0',
      labels: { ...nodeLabels, [LABELS.kind]: 'sandbox' },
    };
    sandbox = await sut.runPodSandbox(config);
    assert.equal(sandbox.state, 'running');
    assert.match(sandbox.ip ?? '', /^\d+\.\d+\.\d+\.\d+$/);
    assert.equal(sandbox.name, config.name);
    assert.equal(sandbox.image, PAUSE_IMAGE);
    assert.match(sandbox.imageId, /^sha256:/);
    assert.equal(sandbox.labels[LABELS.kind], 'sandbox');
    assert.ok(sandbox.startedAt);
    assert.equal(sandbox.exitCode, undefined);

    const again = await sut.runPodSandbox(config);
    assert.equal(again.id, sandbox.id);
    assert.equal(again.ip, sandbox.ip);
  });

  it('tells the sandbox id before it starts, so a container joined to it is created meanwhile, and started once it runs', async () => {
    let joined: Promise<string> | undefined;
    const running = sut.runPodSandbox(
      { name: `${prefix}-sandbox-early`, image: PAUSE_IMAGE, hostname: 'early-0', labels: { ...nodeLabels, [LABELS.kind]: 'sandbox' } },
      (id) => {
        joined = sut.createContainer(id, appConfig('early', { entrypoint: ['sleep', '30'] }));
      },
    );
    const box = await running;
    assert.ok(joined, 'the id came before the sandbox ran');
    const id = await joined;
    await sut.startContainer(id);

    const app = await sut.inspectContainer(id);
    assert.equal(app?.state, 'running');
    assert.equal(app?.networkOf, box.id);
    // The joined container takes the sandbox's hostname: the pod's name, set when the sandbox was created.
    assert.equal((await sut.exec(id, ['hostname'], 10_000)).output.trim(), 'early-0');
  });

  it('restarts an adopted sandbox that is not running', async () => {
    const config = {
      name: `${prefix}-sandbox-stopped`,
      image: PAUSE_IMAGE,
      hostname: 'stopped',
      labels: { ...nodeLabels, [LABELS.kind]: 'sandbox' },
    };
    const first = await sut.runPodSandbox(config);
    await sut.stopContainer(first.id, 2);
    assert.equal((await sut.inspectContainer(first.id))?.state, 'exited');
    const again = await sut.runPodSandbox(config);
    assert.equal(again.id, first.id);
    assert.equal(again.state, 'running');
    assert.ok(again.ip);
  });

  it('runs an app container in the sandbox, lists it by label and returns its logs', async () => {
    const config = appConfig('app', {
      entrypoint: ['sh', '-c', 'echo hi; sleep 30'],
      memoryLimitBytes: 64 * 1024 * 1024,
      nanoCpus: 500_000_000,
      cpuShares: 512,
    });
    const id = await sut.createContainer(sandbox.id, config);
    await sut.startContainer(id);
    await sut.startContainer(id); // 304: already started

    const listed = await sut.listContainers({ [LABELS.node]: prefix, [LABELS.containerName]: 'app' });
    assert.equal(listed.length, 1);
    assert.equal(listed[0].id, id);
    assert.equal(listed[0].state, 'running');
    assert.equal(listed[0].name, config.name);
    assert.equal(listed[0].ip, undefined);

    const logs = await waitFor('hi in logs', async () => {
      const text = await sut.logs(id, {});
      return text.includes('hi') ? text : undefined;
    });
    assert.equal(logs, 'hi\n');

    const raw = await docker.getContainer(id).inspect();
    assert.equal(raw.HostConfig.NetworkMode, `container:${sandbox.id}`);
    assert.equal(raw.HostConfig.Memory, 64 * 1024 * 1024);
    assert.equal(raw.HostConfig.NanoCpus, 500_000_000);
    assert.equal(raw.HostConfig.CpuShares, 512);
  });

  it('returns the same id when the same name is created twice', async () => {
    const config = appConfig('twice', { entrypoint: ['sleep', '30'] });
    const first = await sut.createContainer(sandbox.id, config);
    const second = await sut.createContainer(sandbox.id, config);
    assert.equal(second, first);
  });

  it('applies command/args with Kubernetes semantics, env and working dir', async () => {
    // busybox's image CMD is ["sh"]; a command alone must not get it appended.
    const commandOnly = await sut.createContainer(sandbox.id, appConfig('cmd-only', { entrypoint: ['echo', 'x'] }));
    // args alone replace CMD and keep the (empty) image entrypoint.
    const argsOnly = await sut.createContainer(sandbox.id, appConfig('args-only', { cmd: ['echo', 'y'] }));
    const both = await sut.createContainer(
      sandbox.id,
      appConfig('both', {
        entrypoint: ['sh', '-c'],
        cmd: ['echo "$GREETING from $(pwd)"; echo one; echo two'],
        env: [{ name: 'GREETING', value: 'hello world' }],
        workingDir: '/tmp',
      }),
    );
    for (const id of [commandOnly, argsOnly, both]) await sut.startContainer(id);
    for (const id of [commandOnly, argsOnly, both]) {
      const done = await waitFor('exit', async () => {
        const c = await sut.inspectContainer(id);
        return c?.state === 'exited' ? c : undefined;
      });
      assert.equal(done.exitCode, 0);
      assert.ok(done.finishedAt);
    }
    assert.equal(await sut.logs(commandOnly, {}), 'x\n');
    assert.equal(await sut.logs(argsOnly, {}), 'y\n');
    assert.equal(await sut.logs(both, {}), 'hello world from /tmp\none\ntwo\n');
    assert.equal(await sut.logs(both, { tailLines: 1 }), 'two\n');
    assert.match(await sut.logs(both, { tailLines: 1, timestamps: true }), /^\d{4}-\d\d-\d\dT\S+ two\n$/);
  });

  it('reports a container that cannot start with its error', async () => {
    const id = await sut.createContainer(sandbox.id, appConfig('bad', { entrypoint: ['/no/such/binary'] }));
    await assert.rejects(sut.startContainer(id), (err: unknown) => {
      assert.ok(err instanceof RuntimeError);
      assert.match(err.message, new RegExp(`start container ${id}`));
      assert.equal(err.statusCode, 400);
      return true;
    });
    const c = await sut.inspectContainer(id);
    assert.equal(c?.state, 'created');
    assert.equal(c?.exitCode, 127);
    assert.match(c?.error ?? '', /no such file or directory/);
  });

  it('stops and removes idempotently', async () => {
    const id = await sut.createContainer(sandbox.id, appConfig('stoppable', { entrypoint: ['sleep', '30'] }));
    await sut.startContainer(id);
    // busybox sleep as PID 1 ignores SIGTERM, so this also exercises the SIGKILL after grace.
    await sut.stopContainer(id, 1);
    const stopped = await sut.inspectContainer(id);
    assert.equal(stopped?.state, 'exited');
    await sut.stopContainer(id, 1); // 304
    await sut.removeContainer(id);
    await sut.removeContainer(id); // 404
    await sut.stopContainer(id, 1); // 404
    assert.equal(await sut.inspectContainer(id), undefined);
    await assert.rejects(sut.logs(id, {}), (err: unknown) => err instanceof RuntimeError && err.statusCode === 404);
  });

  it('streams start and die (with exit code) events for matching labels until aborted', async () => {
    const labels = { [LABELS.node]: prefix, [LABELS.containerName]: 'events' };
    const seen: RuntimeEvent[] = [];
    const controller = new AbortController();
    let markSubscribed: () => void = () => undefined;
    const subscribed = new Promise<void>((resolve) => (markSubscribed = resolve));
    const consumer = (async () => {
      for await (const event of sut.events(labels, controller.signal, markSubscribed)) seen.push(event);
    })();
    try {
      // The engine has answered the events request: what happens from here is streamed.
      await subscribed;
      // Not matching the filter: must not show up.
      const other = await sut.createContainer(sandbox.id, appConfig('not-events', { entrypoint: ['true'] }));
      await sut.startContainer(other);
      const id = await sut.createContainer(sandbox.id, appConfig('events', { entrypoint: ['sh', '-c', 'exit 3'] }));
      await sut.startContainer(id);

      const die = await waitFor('die event', async () => seen.find((e) => e.containerId === id && e.action === 'die'));
      assert.equal(die.exitCode, 3);
      assert.equal(die.labels[LABELS.node], prefix);
      assert.equal(die.labels['name'], undefined);
      assert.ok(Math.abs(die.timeMs - Date.now()) < 60_000);
      const start = seen.find((e) => e.containerId === id && e.action === 'start');
      assert.ok(start, `start event missing; saw ${seen.map((e) => e.action).join(',')}`);
      assert.ok(start.timeMs <= die.timeMs);
      assert.equal(start.exitCode, undefined);
      assert.equal(
        seen.some((e) => e.containerId === other),
        false,
      );
    } finally {
      controller.abort();
    }
    await consumer; // ends without throwing once aborted
  });

  it('sends a stream opened again what happened while none was open, and nothing twice', async () => {
    const labels = { [LABELS.node]: prefix, [LABELS.containerName]: 'resumed' };
    const run = async (name: string): Promise<string> => {
      const config = appConfig(name, { entrypoint: ['sh', '-c', 'exit 4'] });
      const id = await sut.createContainer(sandbox.id, { ...config, labels: { ...config.labels, [LABELS.containerName]: 'resumed' } });
      await sut.startContainer(id);
      return id;
    };
    /** One stream of `labels`, read until container `id` died; `act` runs once the engine answered. */
    const stream = async (id: string | (() => Promise<string>)): Promise<{ seen: RuntimeEvent[]; id: string }> => {
      const seen: RuntimeEvent[] = [];
      const controller = new AbortController();
      let known = typeof id === 'string' ? id : '';
      const done = (): boolean => seen.some((e) => e.containerId === known && e.action === 'die');
      let acting: Promise<void> = Promise.resolve();
      const act = (): void => {
        if (typeof id === 'string') return;
        acting = id().then((started) => {
          known = started;
          if (done()) controller.abort();
        });
      };
      // At most 15 s: a stream the die never comes on ends, and the assertions below say so.
      const guard = setTimeout(() => controller.abort(), 15_000);
      for await (const event of sut.events(labels, controller.signal, act)) {
        seen.push(event);
        if (done()) controller.abort();
      }
      clearTimeout(guard);
      await acting;
      return { seen, id: known };
    };
    const actions = (seen: RuntimeEvent[], id: string): string[] =>
      seen.filter((e) => e.containerId === id && ['start', 'die'].includes(e.action)).map((e) => e.action);

    const { seen: seenFirst, id: first } = await stream(() => run('resumed-1'));
    // With no stream open: a container starts and dies unseen.
    const second = await run('resumed-2');
    await waitFor('the second container exited', async () => ((await sut.inspectContainer(second))?.state === 'exited' ? true : undefined));
    const { seen: seenSecond } = await stream(second);

    assert.deepEqual(actions(seenFirst, first), ['start', 'die']);
    assert.deepEqual(actions(seenSecond, second), ['start', 'die']);
    assert.equal(seenSecond.find((e) => e.containerId === second && e.action === 'die')?.exitCode, 4);
    assert.deepEqual(actions(seenSecond, first), [], "the first stream's events came again");
  });

  it("tells a new process's first stream what the engine did in the second before it opened, marked as it was", async () => {
    const labels = { [LABELS.node]: prefix, [LABELS.containerName]: 'before-first' };
    // This process sees the container die...
    const watching = new AbortController();
    let subscribed: () => void = () => undefined;
    const open = new Promise<void>((resolve) => (subscribed = resolve));
    let died: RuntimeEvent | undefined;
    const watch = (async () => {
      for await (const event of sut.events(labels, watching.signal, subscribed)) {
        if (event.action !== 'die') continue;
        died = event;
        watching.abort();
      }
    })();
    await open;
    const id = await sut.createContainer(sandbox.id, appConfig('before-first', { entrypoint: ['sh', '-c', 'exit 5'] }));
    await sut.startContainer(id);
    await watch;
    assert.equal(died?.containerId, id);

    // ...and a new one opens its first stream at once, well within the second it asks for before.
    const fresh = new DockerRuntime();
    const seen: RuntimeEvent[] = [];
    const reading = new AbortController();
    const guard = setTimeout(() => reading.abort(), 15_000);
    for await (const event of fresh.events(labels, reading.signal)) {
      seen.push(event);
      if (event.containerId === id && event.action === 'die') reading.abort();
    }
    clearTimeout(guard);
    // The die only: the container's start may be more than the second before.
    const told = seen.find((e) => e.containerId === id && e.action === 'die');
    assert.ok(died?.id);
    assert.equal(told?.id, died.id);
    assert.equal(told.exitCode, 5);
  });

  it('ends events immediately for an already aborted signal', async () => {
    const controller = new AbortController();
    controller.abort();
    const seen: RuntimeEvent[] = [];
    for await (const event of sut.events({ [LABELS.node]: prefix }, controller.signal)) seen.push(event);
    assert.deepEqual(seen, []);
  });
});
