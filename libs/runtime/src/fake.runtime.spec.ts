import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { LABELS, type RuntimeEvent } from './container-runtime.port.js';
import { FakeRuntime, fakePodBlock, isFakePodIP } from './fake.runtime.js';
import { RuntimeError } from './runtime.errors.js';

const NODE = { [LABELS.node]: 'hollow-0' };

function sandboxConfig(name = 'jetlet_POD_web_default_uid-1_0') {
  return { name, image: 'jetlet/pause:1.0', hostname: 'web', labels: { ...NODE, [LABELS.kind]: 'sandbox', [LABELS.podUid]: 'uid-1' } };
}

function containerConfig(name = 'jetlet_main_web_default_uid-1_0') {
  return { name, image: 'jetlet/busybox:1.35', env: [], labels: { ...NODE, [LABELS.kind]: 'container', [LABELS.podUid]: 'uid-1' } };
}

/** Collects events until `count` have arrived (or the test fails on its timeout). */
async function collect(sut: FakeRuntime, labels: Record<string, string>, count: number, act: () => Promise<void>): Promise<RuntimeEvent[]> {
  const abort = new AbortController();
  const events: RuntimeEvent[] = [];
  let subscribed!: () => void;
  const ready = new Promise<void>((r) => (subscribed = r));
  const loop = (async () => {
    for await (const event of sut.events(labels, abort.signal, subscribed)) {
      events.push(event);
      if (events.length === count) abort.abort();
    }
  })();
  await ready;
  await act();
  await loop;
  return events;
}

describe('FakeRuntime', () => {
  it('runs a sandbox with a pod IP from the node block, and a second run of the name returns it', async () => {
    const sut = new FakeRuntime({ nodeIndex: 3 });
    const first = await sut.runPodSandbox(sandboxConfig());
    const again = await sut.runPodSandbox(sandboxConfig());
    assert.equal(first.state, 'running');
    assert.equal(again.id, first.id);
    assert.equal(first.ip, '10.244.3.2');
    assert.ok(isFakePodIP(first.ip));
    assert.match(first.id, /^[0-9a-f]{64}$/);
    assert.match(first.imageId, /^sha256:[0-9a-f]{64}$/);
    assert.ok(first.startedAt);
  });

  it('gives each sandbox its own IP and reuses the IP of a removed one', async () => {
    const sut = new FakeRuntime();
    const a = await sut.runPodSandbox(sandboxConfig('a'));
    const b = await sut.runPodSandbox(sandboxConfig('b'));
    assert.notEqual(a.ip, b.ip);
    await sut.removeContainer(a.id);
    const c = await sut.runPodSandbox(sandboxConfig('c'));
    assert.equal(c.ip, a.ip);
  });

  it('spreads node blocks over 10.192.0.0/10, from 10.244.0.0 and wrapping at 10.255, one /24 for each of 16,384 nodes', () => {
    assert.equal(fakePodBlock(0), '10.244.0');
    assert.equal(fakePodBlock(257), '10.245.1');
    assert.equal(fakePodBlock(1023), '10.247.255');
    assert.equal(fakePodBlock(3071), '10.255.255');
    assert.equal(fakePodBlock(3072), '10.192.0');
    assert.equal(fakePodBlock(4999), '10.199.135');
    assert.equal(fakePodBlock(16_383), '10.243.255');
    assert.equal(fakePodBlock(16_384), '10.244.0', 'an index past the range wraps');
    const blocks = new Set(Array.from({ length: 16_384 }, (_, i) => fakePodBlock(i)));
    assert.equal(blocks.size, 16_384, 'no two nodes share a block');
    for (const block of blocks) assert.ok(isFakePodIP(`${block}.2`), block);
    assert.equal(isFakePodIP('172.17.0.2'), false);
    assert.equal(isFakePodIP('10.191.255.2'), false);
    assert.equal(isFakePodIP('10.42.1.2'), false);
  });

  it('takes a container through created, running and exited (137 on stop), and forgets it on remove', async () => {
    const sut = new FakeRuntime();
    const sandbox = await sut.runPodSandbox(sandboxConfig());
    const id = await sut.createContainer(sandbox.id, containerConfig());
    assert.equal(await sut.createContainer(sandbox.id, containerConfig()), id, 'create of an existing name returns it');
    assert.equal((await sut.inspectContainer(id))?.state, 'created');
    await sut.startContainer(id);
    assert.equal((await sut.inspectContainer(id))?.state, 'running');
    await sut.stopContainer(id, 30);
    const stopped = await sut.inspectContainer(id);
    assert.equal(stopped?.state, 'exited');
    assert.equal(stopped?.exitCode, 137);
    assert.ok(stopped?.finishedAt);
    await sut.stopContainer(id, 30); // stopping a stopped container succeeds
    await sut.removeContainer(id);
    await sut.removeContainer(id); // removing a missing one succeeds
    await sut.stopContainer(id, 30);
    assert.equal(await sut.inspectContainer(id), undefined);
  });

  it('inspects by name too, and lists by every given label', async () => {
    const sut = new FakeRuntime();
    const sandbox = await sut.runPodSandbox(sandboxConfig());
    await sut.createContainer(sandbox.id, containerConfig());
    assert.equal((await sut.inspectContainer(sandbox.name))?.id, sandbox.id);
    assert.equal((await sut.listContainers(NODE)).length, 2);
    assert.deepEqual(
      (await sut.listContainers({ ...NODE, [LABELS.kind]: 'sandbox' })).map((c) => c.id),
      [sandbox.id],
    );
    assert.equal((await sut.listContainers({ [LABELS.node]: 'other' })).length, 0);
  });

  it('hands out copies: a caller cannot change its state', async () => {
    const sut = new FakeRuntime();
    const sandbox = await sut.runPodSandbox(sandboxConfig());
    sandbox.state = 'exited';
    sandbox.labels['x'] = 'y';
    const again = await sut.inspectContainer(sandbox.id);
    assert.equal(again?.state, 'running');
    assert.equal(again?.labels['x'], undefined);
  });

  it('fails with 404 for what it does not know', async () => {
    const sut = new FakeRuntime();
    const is404 = (error: unknown): boolean => error instanceof RuntimeError && error.statusCode === 404;
    await assert.rejects(sut.startContainer('nope'), is404);
    await assert.rejects(sut.createContainer('nope', containerConfig()), is404);
    await assert.rejects(sut.logs('nope', {}), is404);
    await assert.rejects(sut.exec('nope', ['true'], 1000), is404);
    await assert.rejects(async () => {
      for await (const chunk of sut.streamLogs('nope', {}, new AbortController().signal)) assert.fail(chunk);
    }, is404);
  });

  it('streams its own state changes as events, filtered by labels, with exit code 137 on die', async () => {
    const sut = new FakeRuntime();
    const sandbox = await sut.runPodSandbox(sandboxConfig());
    const events = await collect(sut, { [LABELS.kind]: 'container' }, 5, async () => {
      const id = await sut.createContainer(sandbox.id, containerConfig());
      await sut.startContainer(id);
      await sut.stopContainer(id, 1);
      await sut.removeContainer(id);
    });
    assert.deepEqual(
      events.map((e) => e.action),
      ['create', 'start', 'die', 'stop', 'destroy'],
    );
    assert.equal(events[2]?.exitCode, 137);
    assert.equal(events[0]?.labels[LABELS.podUid], 'uid-1');
  });

  it('kills a running container that is removed (die, then destroy)', async () => {
    const sut = new FakeRuntime();
    const sandbox = await sut.runPodSandbox(sandboxConfig());
    const events = await collect(sut, NODE, 3, () => sut.removeContainer(sandbox.id));
    assert.deepEqual(
      events.map((e) => e.action),
      ['die', 'stop', 'destroy'],
    );
  });

  it('ends the event stream quietly on abort', async () => {
    const sut = new FakeRuntime();
    const abort = new AbortController();
    const loop = (async () => {
      const seen: RuntimeEvent[] = [];
      for await (const event of sut.events(NODE, abort.signal)) seen.push(event);
      return seen;
    })();
    abort.abort();
    assert.deepEqual(await loop, []);
  });

  it('has every image, execs with exit 0 in a running container only, and has empty logs', async () => {
    const sut = new FakeRuntime();
    assert.equal(await sut.imagePresent('anything:1'), true);
    await sut.pullImage('anything:1');
    const sandbox = await sut.runPodSandbox(sandboxConfig());
    assert.deepEqual(await sut.exec(sandbox.id, ['cat', '/tmp/healthy'], 1000), { exitCode: 0, output: '', timedOut: false });
    assert.equal(await sut.logs(sandbox.id, { tailLines: 10 }), '');
    await sut.stopContainer(sandbox.id, 0);
    await assert.rejects(sut.exec(sandbox.id, ['true'], 1000), (e: unknown) => e instanceof RuntimeError && e.statusCode === 409);
    assert.equal((await sut.info()).name, 'fake');
  });

  it('follows the (empty) log of a running container until it stops', async () => {
    const sut = new FakeRuntime();
    const sandbox = await sut.runPodSandbox(sandboxConfig());
    let ended = false;
    const reading = (async () => {
      const chunks: string[] = [];
      for await (const chunk of sut.streamLogs(sandbox.id, { follow: true }, new AbortController().signal)) chunks.push(chunk);
      ended = true;
      return chunks;
    })();
    await new Promise((r) => setImmediate(r));
    assert.equal(ended, false);
    await sut.stopContainer(sandbox.id, 0);
    assert.deepEqual(await reading, []);
    // Without follow, or after the stop, it ends at once.
    for await (const chunk of sut.streamLogs(sandbox.id, { follow: true }, new AbortController().signal)) assert.fail(chunk);
  });
});
