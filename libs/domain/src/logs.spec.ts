import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ContainerStatus } from '#contracts';
import { logContainerId, logContainerName } from './logs.js';

describe('logContainerName', () => {
  it('takes the only container when none is named', () => {
    assert.deepEqual(logContainerName('web', ['main']), { ok: true, value: 'main' });
  });

  it('asks for a name, listing the choices, when the pod has several', () => {
    assert.deepEqual(logContainerName('web', ['a', 'b']), { ok: false, message: 'a container name must be specified for pod web, choose one of: [a b]' });
  });

  it('accepts a named container of the spec and rejects any other', () => {
    assert.deepEqual(logContainerName('web', ['a', 'b'], 'b'), { ok: true, value: 'b' });
    assert.deepEqual(logContainerName('web', ['a', 'b'], 'c'), { ok: false, message: 'container c is not valid for pod web' });
  });
});

const base = { name: 'main', ready: false, restartCount: 0, image: 'busybox', imageID: '' };
const dead = (id: string) => ({ terminated: { exitCode: 1, reason: 'Error', containerID: `docker://${id}` } });

describe('logContainerId', () => {
  it('reads the running container, and its predecessor for previous', () => {
    const status: ContainerStatus = { ...base, containerID: 'docker://run2', state: { running: {} }, lastState: dead('run1'), restartCount: 1 };
    assert.deepEqual(logContainerId('web', 'main', status, false), { ok: true, value: 'run2' });
    assert.deepEqual(logContainerId('web', 'main', status, true), { ok: true, value: 'run1' });
  });

  it('has no previous run before the first restart', () => {
    const status: ContainerStatus = { ...base, containerID: 'docker://run1', state: { running: {} }, lastState: {} };
    assert.deepEqual(logContainerId('web', 'main', status, true), { ok: false, message: 'previous terminated container "main" in pod "web" not found' });
  });

  it('reads the last dead run while the container waits in back-off', () => {
    const status: ContainerStatus = { ...base, containerID: 'docker://run3', state: { waiting: { reason: 'CrashLoopBackOff' } }, lastState: dead('run3') };
    assert.deepEqual(logContainerId('web', 'main', status, false), { ok: true, value: 'run3' });
    assert.deepEqual(logContainerId('web', 'main', status, true), { ok: true, value: 'run3' });
  });

  it('reads a terminated container that will not restart', () => {
    const status: ContainerStatus = { ...base, containerID: 'docker://done', state: dead('done'), lastState: {} };
    assert.deepEqual(logContainerId('web', 'main', status, false), { ok: true, value: 'done' });
  });

  it('says what a container that never ran waits for, as the kubelet does', () => {
    const waiting = (reason?: string): ContainerStatus => ({ ...base, state: { waiting: reason === undefined ? {} : { reason } }, lastState: {} });
    assert.deepEqual(logContainerId('web', 'main', undefined, false), {
      ok: false,
      message: 'container "main" in pod "web" is waiting to start: ContainerCreating',
    });
    assert.deepEqual(logContainerId('web', 'main', waiting('ContainerCreating'), false), {
      ok: false,
      message: 'container "main" in pod "web" is waiting to start: ContainerCreating',
    });
    assert.deepEqual(logContainerId('web', 'main', waiting('ErrImagePull'), false), {
      ok: false,
      message: `container "main" in pod "web" is waiting to start: image can't be pulled`,
    });
    assert.deepEqual(logContainerId('web', 'main', waiting('ImagePullBackOff'), false), {
      ok: false,
      message: 'container "main" in pod "web" is waiting to start: trying and failing to pull image',
    });
    assert.deepEqual(logContainerId('web', 'main', { ...base, state: {}, lastState: {} }, false), {
      ok: false,
      message: 'container "main" in pod "web" is waiting to start - no logs yet',
    });
  });
});
