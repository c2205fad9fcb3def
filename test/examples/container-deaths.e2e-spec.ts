import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Bus } from '#bus';
import { SUBJECTS } from '#contracts';
import { ManagedProcess, NatsServer, ROOT } from '../harness/processes.js';

const UID = '6f1c2b1e-3b9a-4c1d-9f2e-0a1b2c3d4e5f';

/** examples/container-deaths.mjs, run as a user would, against a real nats-server. */
describe('the container-deaths example subscriber', () => {
  let nats: NatsServer;
  let bus: Bus;
  let sut: ManagedProcess | undefined;

  before(async () => {
    nats = await NatsServer.start();
    bus = await Bus.connect({ servers: nats.url, name: 'example-test', source: { component: 'agent', node: 'node-1' } });
    await bus.ensureStreams();
  });

  after(async () => {
    await sut?.stop();
    await bus?.close();
    await nats?.stop();
  });

  const event = (
    containerName: string,
    reason: 'Started' | 'Died' | 'OOMKilled',
    exit?: { exitCode: number; exitReason: 'Error' | 'OOMKilled' | 'Completed' },
  ) =>
    bus.publish(
      SUBJECTS.containerEvents('node-1', UID),
      'ContainerEvent',
      {
        uid: UID,
        namespace: 'default',
        name: 'web',
        nodeName: 'node-1',
        containerName,
        containerID: 'docker://abc',
        reason,
        observedAt: new Date().toISOString(),
        ...exit,
      },
      { correlationId: UID },
    );

  it('prints past and new container deaths with their reasons, and nothing else', { timeout: 60_000 }, async () => {
    await event('server', 'Started');
    await event('server', 'Died', { exitCode: 137, exitReason: 'OOMKilled' });
    await bus.publish(
      SUBJECTS.containerEvents('node-1', UID),
      'PodEvent',
      {
        uid: UID,
        namespace: 'default',
        name: 'web',
        nodeName: 'node-1',
        eventType: 'Warning',
        reason: 'BackOff',
        message: 'x',
        observedAt: new Date().toISOString(),
      },
      { correlationId: UID },
    );
    sut = new ManagedProcess(
      'example',
      spawn(process.execPath, [join(ROOT, 'examples/container-deaths.mjs'), nats.url], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] }),
    );
    await sut.waitForLine(/default\/web container server on node-1 died: OOMKilled \(exit code 137\)/);
    await event('sidecar', 'Died', { exitCode: 1, exitReason: 'Error' });
    await sut.waitForLine(/default\/web container sidecar on node-1 died: Error \(exit code 1\)/);
    assert.equal(sut.output.length, 2, sut.output.join('\n'));
  });
});
