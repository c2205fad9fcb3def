import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ContainerStatus, PodManifest, PodStatus, RestartPolicy } from '#contracts';
import { LABELS, type RuntimeContainer } from '#runtime';
import { containerName, sandboxName } from './pod-naming.js';
import {
  KUBERNETES_BACKOFF,
  attemptsOf,
  computePodStatus,
  podPhase,
  restartDelayMs,
  shouldRestart,
  type StatusInput,
  type WaitingReasons,
} from './pod-status.js';

const UID = '6f1c2b1e-3b9a-4c1d-9f2e-0a1b2c3d4e5f';
const POD = { namespace: 'default', name: 'web-0', uid: UID };
const T0 = Date.parse('2024-05-01T10:00:00.000Z');
const iso = (ms: number): string => new Date(ms).toISOString();
const HOST_IP = '10.0.0.11';

function manifest(restartPolicy: RestartPolicy, names: string[] = ['web', 'sidecar']): PodManifest {
  return {
    metadata: { name: POD.name, namespace: POD.namespace, uid: UID },
    spec: { containers: names.map((name) => ({ name, image: `example/${name}:1.0` })), restartPolicy },
  };
}

function podLabels(kind: 'sandbox' | 'container'): Record<string, string> {
  return {
    [LABELS.managed]: 'true',
    [LABELS.node]: 'node-1',
    [LABELS.podNamespace]: POD.namespace,
    [LABELS.podName]: POD.name,
    [LABELS.podUid]: POD.uid,
    [LABELS.kind]: kind,
    [LABELS.grace]: '30',
  };
}

function sandbox(overrides: Partial<RuntimeContainer> = {}): RuntimeContainer {
  return {
    id: 'sandbox-id',
    name: sandboxName(POD),
    image: 'jetlet/pause:1.0',
    imageId: 'sha256:pause',
    labels: podLabels('sandbox'),
    state: 'running',
    createdAt: iso(T0),
    startedAt: iso(T0 + 100),
    oomKilled: false,
    ip: '172.17.0.5',
    ...overrides,
  };
}

/** A running app container; attempt n was created n seconds after the pod. */
function app(name: string, attempt: number, overrides: Partial<RuntimeContainer> = {}): RuntimeContainer {
  return {
    id: `${name}-${attempt}-id`,
    name: containerName(POD, name, attempt),
    image: `example/${name}:1.0`,
    imageId: `sha256:${name}`,
    labels: { ...podLabels('container'), [LABELS.containerName]: name, [LABELS.restartCount]: String(attempt) },
    state: 'running',
    createdAt: iso(T0 + 1000 * (attempt + 1)),
    startedAt: iso(T0 + 1000 * (attempt + 1) + 100),
    oomKilled: false,
    ...overrides,
  };
}

function exited(name: string, attempt: number, exitCode: number, finishedAtMs: number, overrides: Partial<RuntimeContainer> = {}): RuntimeContainer {
  return app(name, attempt, { state: 'exited', exitCode, finishedAt: iso(finishedAtMs), ...overrides });
}

function input(restartPolicy: RestartPolicy, observed: RuntimeContainer[], nowMs: number, names?: string[], waiting?: WaitingReasons): StatusInput {
  return { pod: POD, manifest: manifest(restartPolicy, names), observed, hostIP: HOST_IP, nowMs, backoff: KUBERNETES_BACKOFF, ...(waiting ? { waiting } : {}) };
}

function statusOf(status: PodStatus, name: string): ContainerStatus {
  const found = status.containerStatuses?.find((s) => s.name === name);
  assert.ok(found, `no status for container ${name}`);
  return found;
}

const condition = (status: PodStatus, type: string) => status.conditions?.find((c) => c.type === type);

describe('computePodStatus', () => {
  it('shows a pod whose containers all run as Running and Ready, with the sandbox IP as podIP', () => {
    const sut = computePodStatus(input('Always', [sandbox(), app('web', 0), app('sidecar', 0)], T0 + 60_000));

    assert.equal(sut.phase, 'Running');
    assert.deepEqual(sut.conditions, [
      { type: 'Initialized', status: 'True' },
      { type: 'ContainersReady', status: 'True' },
      { type: 'Ready', status: 'True' },
    ]);
    assert.equal(sut.hostIP, HOST_IP);
    assert.equal(sut.podIP, '172.17.0.5');
    assert.deepEqual(sut.podIPs, [{ ip: '172.17.0.5' }]);
    assert.equal(sut.startTime, iso(T0));
    assert.deepEqual(statusOf(sut, 'web'), {
      name: 'web',
      image: 'example/web:1.0',
      imageID: 'sha256:web',
      containerID: 'docker://web-0-id',
      ready: true,
      started: true,
      restartCount: 0,
      state: { running: { startedAt: iso(T0 + 1100) } },
      lastState: {},
    });
  });

  it('lists container statuses in spec order', () => {
    const sut = computePodStatus(input('Always', [sandbox(), app('sidecar', 0), app('web', 0)], T0));

    assert.deepEqual(
      sut.containerStatuses?.map((s) => s.name),
      ['web', 'sidecar'],
    );
  });

  it('shows a pod with no containers yet as Pending, each container waiting in ContainerCreating', () => {
    const sut = computePodStatus(input('Always', [], T0));

    assert.equal(sut.phase, 'Pending');
    assert.equal(sut.podIP, undefined);
    assert.equal(sut.startTime, undefined);
    for (const name of ['web', 'sidecar']) {
      const container = statusOf(sut, name);
      assert.deepEqual(container.state, { waiting: { reason: 'ContainerCreating' } });
      assert.equal(container.ready, false);
      assert.equal(container.restartCount, 0);
    }
    assert.deepEqual(condition(sut, 'Ready'), {
      type: 'Ready',
      status: 'False',
      reason: 'ContainersNotReady',
      message: 'containers with unready status: [web sidecar]',
    });
  });

  it('shows the sandbox IP while app containers are still being created', () => {
    const sut = computePodStatus(input('Always', [sandbox(), app('web', 0, { state: 'created' })], T0));

    assert.equal(sut.phase, 'Pending');
    assert.equal(sut.podIP, '172.17.0.5');
    assert.deepEqual(statusOf(sut, 'web').state, { waiting: { reason: 'ContainerCreating' } });
  });

  it('names only the unready containers in the Ready condition', () => {
    const sut = computePodStatus(input('Always', [sandbox(), app('web', 0)], T0));

    assert.equal(sut.phase, 'Pending');
    assert.equal(condition(sut, 'ContainersReady')?.message, 'containers with unready status: [sidecar]');
  });

  it('gives no podIP when the sandbox is not running', () => {
    const sut = computePodStatus(input('Always', [sandbox({ state: 'exited', exitCode: 0 }), app('web', 0)], T0, ['web']));

    assert.equal(sut.podIP, undefined);
    assert.equal(sut.podIPs, undefined);
  });

  it('shows the executor waiting reason, such as ErrImagePull', () => {
    const waiting: WaitingReasons = new Map([['web', { reason: 'ErrImagePull', message: 'pull access denied for example/web' }]]);

    const sut = computePodStatus(input('Always', [sandbox()], T0, ['web'], waiting));

    assert.equal(sut.phase, 'Pending');
    assert.deepEqual(statusOf(sut, 'web').state, { waiting: { reason: 'ErrImagePull', message: 'pull access denied for example/web' } });
  });

  it('fails a Never pod whose container exited 1: reason Error, no restarts', () => {
    const sut = computePodStatus(input('Never', [sandbox(), exited('web', 0, 1, T0 + 5000)], T0 + 60_000, ['web']));

    assert.equal(sut.phase, 'Failed');
    const web = statusOf(sut, 'web');
    assert.equal(web.restartCount, 0);
    assert.equal(web.ready, false);
    assert.equal(web.started, false);
    assert.deepEqual(web.state, {
      terminated: { exitCode: 1, reason: 'Error', startedAt: iso(T0 + 1100), finishedAt: iso(T0 + 5000), containerID: 'docker://web-0-id' },
    });
    assert.deepEqual(web.lastState, {});
  });

  it('completes an OnFailure pod whose containers exited 0 as Succeeded, reason Completed', () => {
    const sut = computePodStatus(input('OnFailure', [sandbox(), exited('web', 0, 0, T0 + 5000), exited('sidecar', 0, 0, T0 + 6000)], T0 + 60_000));

    assert.equal(sut.phase, 'Succeeded');
    assert.equal(statusOf(sut, 'web').state.terminated?.reason, 'Completed');
    assert.equal(statusOf(sut, 'sidecar').state.terminated?.exitCode, 0);
  });

  it('keeps an OnFailure pod Running while one container succeeded and another still runs', () => {
    const sut = computePodStatus(input('OnFailure', [sandbox(), exited('web', 0, 0, T0 + 5000), app('sidecar', 0)], T0 + 60_000));

    assert.equal(sut.phase, 'Running');
  });

  it('fails a Never pod when one container failed and the other succeeded', () => {
    const sut = computePodStatus(input('Never', [sandbox(), exited('web', 0, 0, T0 + 5000), exited('sidecar', 0, 2, T0 + 6000)], T0 + 60_000));

    assert.equal(sut.phase, 'Failed');
  });

  it('shows an Always container that exited within its back-off as CrashLoopBackOff, the pod still Running', () => {
    const finished = T0 + 20_000;
    const observed = [sandbox(), exited('web', 0, 1, T0 + 5000), exited('web', 1, 1, finished)];

    const sut = computePodStatus(input('Always', observed, finished + 5000, ['web']));

    assert.equal(sut.phase, 'Running');
    const web = statusOf(sut, 'web');
    assert.deepEqual(web.state, {
      waiting: { reason: 'CrashLoopBackOff', message: `back-off 10s restarting failed container=web pod=web-0_default(${UID})` },
    });
    assert.deepEqual(web.lastState, {
      terminated: { exitCode: 1, reason: 'Error', startedAt: iso(T0 + 2100), finishedAt: iso(finished), containerID: 'docker://web-1-id' },
    });
    assert.equal(web.restartCount, 1);
    assert.equal(web.ready, false);
    assert.equal(web.containerID, 'docker://web-1-id');
    assert.equal(condition(sut, 'Ready')?.status, 'False');
  });

  it('doubles the back-off in the CrashLoopBackOff message with each restart', () => {
    const finished = T0 + 100_000;

    const sut = computePodStatus(input('Always', [sandbox(), exited('web', 3, 1, finished)], finished + 1000, ['web']));

    assert.match(statusOf(sut, 'web').state.waiting?.message ?? '', /^back-off 40s restarting failed container=web /);
  });

  it('formats a back-off of minutes as Go does, e.g. "back-off 5m0s" at the cap', () => {
    const finished = T0 + 1_000_000;

    const sut = computePodStatus(input('Always', [sandbox(), exited('web', 9, 1, finished)], finished + 1000, ['web']));

    assert.match(statusOf(sut, 'web').state.waiting?.message ?? '', /^back-off 5m0s restarting failed container=web /);
  });

  it('shows the exited state again once the back-off is over, the pod still Running', () => {
    const finished = T0 + 20_000;

    const sut = computePodStatus(input('Always', [sandbox(), exited('web', 1, 1, finished)], finished + 10_000, ['web']));

    assert.equal(sut.phase, 'Running');
    assert.equal(statusOf(sut, 'web').state.terminated?.exitCode, 1);
  });

  it('shows no back-off after the first exit, since the first restart is immediate', () => {
    const sut = computePodStatus(input('Always', [sandbox(), exited('web', 0, 1, T0 + 5000)], T0 + 5000, ['web']));

    assert.equal(statusOf(sut, 'web').state.waiting, undefined);
    assert.equal(statusOf(sut, 'web').state.terminated?.reason, 'Error');
  });

  it('shows the executor waiting reason instead of CrashLoopBackOff while a restart is failing', () => {
    const waiting: WaitingReasons = new Map([['web', { reason: 'CreateContainerError', message: 'no space left on device' }]]);
    const finished = T0 + 20_000;

    const sut = computePodStatus(input('Always', [sandbox(), exited('web', 1, 1, finished)], finished + 1000, ['web'], waiting));

    const web = statusOf(sut, 'web');
    assert.deepEqual(web.state, { waiting: { reason: 'CreateContainerError', message: 'no space left on device' } });
    assert.equal(web.lastState.terminated?.exitCode, 1);
  });

  it('reports a container killed for memory as OOMKilled', () => {
    const sut = computePodStatus(input('Never', [sandbox(), exited('web', 0, 137, T0 + 5000, { oomKilled: true })], T0 + 6000, ['web']));

    assert.equal(sut.phase, 'Failed');
    assert.equal(statusOf(sut, 'web').state.terminated?.reason, 'OOMKilled');
    assert.equal(statusOf(sut, 'web').state.terminated?.exitCode, 137);
  });

  it('reports a container the engine could not run as ContainerCannotRun with the engine message', () => {
    const error = 'exec: "nginx": executable file not found in $PATH';

    const sut = computePodStatus(input('Never', [sandbox(), exited('web', 0, 127, T0 + 5000, { error })], T0 + 6000, ['web']));

    assert.deepEqual(
      { reason: statusOf(sut, 'web').state.terminated?.reason, message: statusOf(sut, 'web').state.terminated?.message },
      { reason: 'ContainerCannotRun', message: error },
    );
  });

  it('shows a restarted container running, with the previous run as lastState and its restart count', () => {
    const observed = [sandbox(), exited('web', 0, 2, T0 + 5000), app('web', 1)];

    const sut = computePodStatus(input('Always', observed, T0 + 60_000, ['web']));

    const web = statusOf(sut, 'web');
    assert.equal(sut.phase, 'Running');
    assert.equal(web.restartCount, 1);
    assert.equal(web.containerID, 'docker://web-1-id');
    assert.deepEqual(web.lastState, {
      terminated: { exitCode: 2, reason: 'Error', startedAt: iso(T0 + 1100), finishedAt: iso(T0 + 5000), containerID: 'docker://web-0-id' },
    });
  });
});

describe('podPhase', () => {
  const running: ContainerStatus = { name: 'a', image: 'x', imageID: '', ready: true, restartCount: 0, state: { running: {} }, lastState: {} };
  const waiting: ContainerStatus = { ...running, ready: false, state: { waiting: { reason: 'ContainerCreating' } } };
  const succeeded: ContainerStatus = { ...running, ready: false, state: { terminated: { exitCode: 0 } } };
  const failed: ContainerStatus = { ...running, ready: false, state: { terminated: { exitCode: 1 } } };
  const backingOff: ContainerStatus = {
    ...running,
    ready: false,
    state: { waiting: { reason: 'CrashLoopBackOff' } },
    lastState: { terminated: { exitCode: 1 } },
  };

  for (const [label, statuses, policy, phase] of [
    ['no containers', [], 'Always', 'Pending'],
    ['one waiting, one running', [waiting, running], 'Always', 'Pending'],
    ['running and succeeded', [running, succeeded], 'Never', 'Running'],
    ['all succeeded, Always', [succeeded, succeeded], 'Always', 'Running'],
    ['all succeeded, OnFailure', [succeeded, succeeded], 'OnFailure', 'Succeeded'],
    ['all succeeded, Never', [succeeded], 'Never', 'Succeeded'],
    ['one failed, Never', [succeeded, failed], 'Never', 'Failed'],
    ['one failed, OnFailure', [succeeded, failed], 'OnFailure', 'Running'],
    ['one backing off, Always', [backingOff], 'Always', 'Running'],
    ['one backing off, one succeeded, OnFailure', [backingOff, succeeded], 'OnFailure', 'Running'],
  ] as const) {
    it(`is ${phase} with ${label}`, () => {
      assert.equal(podPhase([...statuses], policy), phase);
    });
  }
});

describe('restartDelayMs', () => {
  for (const [restarts, delay] of [
    [0, 0],
    [1, 10_000],
    [2, 20_000],
    [3, 40_000],
    [5, 160_000],
    [6, 300_000],
    [100, 300_000],
  ] as const) {
    it(`waits ${delay} ms after ${restarts} restart(s) with the Kubernetes back-off`, () => {
      assert.equal(restartDelayMs(restarts, KUBERNETES_BACKOFF), delay);
    });
  }

  it('follows a custom base and cap', () => {
    const policy = { baseMs: 100, capMs: 350 };

    assert.deepEqual(
      [0, 1, 2, 3, 4].map((n) => restartDelayMs(n, policy)),
      [0, 100, 200, 350, 350],
    );
  });
});

describe('shouldRestart', () => {
  for (const [policy, exitCode, restart] of [
    ['Always', 0, true],
    ['Always', 1, true],
    ['OnFailure', 0, false],
    ['OnFailure', 137, true],
    ['Never', 0, false],
    ['Never', 1, false],
  ] as const) {
    it(`${restart ? 'restarts' : 'does not restart'} after exit ${exitCode} under ${policy}`, () => {
      assert.equal(shouldRestart(policy, exitCode), restart);
    });
  }
});

describe('attemptsOf', () => {
  it('returns the app containers of one name, newest attempt first, without the sandbox or other containers', () => {
    const sut = attemptsOf([app('web', 0), sandbox(), app('web', 2), app('sidecar', 5), app('web', 1)], 'web');

    assert.deepEqual(
      sut.map((c) => c.id),
      ['web-2-id', 'web-1-id', 'web-0-id'],
    );
  });
});
