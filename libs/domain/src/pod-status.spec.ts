import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { ContainerStatus, PodManifest, PodStatus, RestartPolicy } from '#contracts';
import { LABELS, type RuntimeContainer } from '#runtime/port';
import { containerName, sandboxName } from './pod-naming.js';
import { BackoffBook, KUBERNETES_BACKOFF, crashKey } from './backoff.js';
import {
  attemptsOf,
  computePodStatus,
  deathTimeMs,
  isDead,
  podFinished,
  podPhase,
  runtimeDownStatus,
  shouldRestart,
  terminatedState,
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

function input(
  restartPolicy: RestartPolicy,
  observed: RuntimeContainer[],
  nowMs: number,
  names?: string[],
  waiting?: WaitingReasons,
  backoff: BackoffBook = new BackoffBook(KUBERNETES_BACKOFF),
): StatusInput {
  return { pod: POD, manifest: manifest(restartPolicy, names), observed, hostIP: HOST_IP, nowMs, backoff, ...(waiting ? { waiting } : {}) };
}

/** A container the engine created but could not start: Docker leaves it "created" with exit code 127 and an error. */
function cannotRun(name: string, attempt: number, error: string, overrides: Partial<RuntimeContainer> = {}): RuntimeContainer {
  return app(name, attempt, { state: 'created', startedAt: undefined, exitCode: 127, error, ...overrides });
}

/**
 * Drives a book the way the reconciler does through `restarts` crash restarts of `container`:
 * the first restart is immediate, each later one waits out the delay in force, and each
 * dispatch records `next(key, deathMs)`. Every attempt runs for `runMs`. Returns when the
 * latest attempt (number `restarts`) died.
 */
function crashLoop(book: BackoffBook, container: string, firstDeathMs: number, restarts: number, runMs = 1000): number {
  const key = crashKey(UID, container);
  let deathMs = firstDeathMs;
  for (let i = 0; i < restarts; i++) {
    const restartMs = deathMs + book.delay(key);
    book.next(key, deathMs, restartMs);
    deathMs = restartMs + runMs;
  }
  return deathMs;
}

function statusOf(status: PodStatus, name: string): ContainerStatus {
  const found = status.containerStatuses?.find((s) => s.name === name);
  assert.ok(found, `no status for container ${name}`);
  return found;
}

const condition = (status: PodStatus, type: string) => status.conditions?.find((c) => c.type === type);

describe('computePodStatus', () => {
  it('shows the IP of the sandbox the app containers joined when a second one runs', () => {
    const first = sandbox({ id: 'first', ip: '172.17.0.5' });
    const second = sandbox({ id: 'second', ip: '172.17.0.6', labels: { ...podLabels('sandbox'), [LABELS.restartCount]: '1' } });

    const sut = computePodStatus(input('Always', [first, second, app('web', 0, { networkOf: 'second' })], T0 + 60_000, ['web']));

    assert.equal(sut.podIP, '172.17.0.6');
  });

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

  it('fails a Never pod whose container exited 1: reason Error, no restarts, Ready False with reason PodFailed', () => {
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
    assert.deepEqual(condition(sut, 'Ready'), { type: 'Ready', status: 'False', reason: 'PodFailed' });
  });

  it('completes an OnFailure pod whose containers exited 0 as Succeeded, reason Completed, Ready False with reason PodCompleted', () => {
    const sut = computePodStatus(input('OnFailure', [sandbox(), exited('web', 0, 0, T0 + 5000), exited('sidecar', 0, 0, T0 + 6000)], T0 + 60_000));

    assert.equal(sut.phase, 'Succeeded');
    assert.equal(statusOf(sut, 'web').state.terminated?.reason, 'Completed');
    assert.equal(statusOf(sut, 'sidecar').state.terminated?.exitCode, 0);
    assert.deepEqual(condition(sut, 'ContainersReady'), { type: 'ContainersReady', status: 'False', reason: 'PodCompleted' });
    assert.deepEqual(condition(sut, 'Ready'), { type: 'Ready', status: 'False', reason: 'PodCompleted' });
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
    const book = new BackoffBook(KUBERNETES_BACKOFF);
    // Attempt 0 died at T0 + 5 s and was restarted at once; the reconciler recorded it.
    book.next(crashKey(UID, 'web'), T0 + 5000);
    const finished = T0 + 20_000;
    const observed = [sandbox(), exited('web', 0, 1, T0 + 5000), exited('web', 1, 1, finished)];

    const sut = computePodStatus(input('Always', observed, finished + 5000, ['web'], undefined, book));

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
    assert.equal(web.started, false);
    assert.equal(web.containerID, 'docker://web-1-id');
    assert.equal(condition(sut, 'Ready')?.status, 'False');
  });

  it('doubles the back-off in the CrashLoopBackOff message with each restart', () => {
    const book = new BackoffBook(KUBERNETES_BACKOFF);
    const finished = crashLoop(book, 'web', T0 + 5000, 3);

    const sut = computePodStatus(input('Always', [sandbox(), exited('web', 3, 1, finished)], finished + 1000, ['web'], undefined, book));

    assert.equal(statusOf(sut, 'web').state.waiting?.message, `back-off 40s restarting failed container=web pod=web-0_default(${UID})`);
  });

  it('formats a back-off of minutes as Go does, e.g. "back-off 5m0s" at the cap', () => {
    const book = new BackoffBook(KUBERNETES_BACKOFF);
    const finished = crashLoop(book, 'web', T0 + 5000, 9);

    const sut = computePodStatus(input('Always', [sandbox(), exited('web', 9, 1, finished)], finished + 1000, ['web'], undefined, book));

    assert.match(statusOf(sut, 'web').state.waiting?.message ?? '', /^back-off 5m0s restarting failed container=web /);
  });

  it('shows CrashLoopBackOff until just before the delay has passed from the death, the exited state from then on', () => {
    const book = new BackoffBook(KUBERNETES_BACKOFF);
    book.next(crashKey(UID, 'web'), T0 + 5000);
    const finished = T0 + 20_000;
    const observed = [sandbox(), exited('web', 1, 1, finished)];

    const before = computePodStatus(input('Always', observed, finished + 9_999, ['web'], undefined, book));
    const sut = computePodStatus(input('Always', observed, finished + 10_000, ['web'], undefined, book));

    assert.equal(statusOf(before, 'web').state.waiting?.reason, 'CrashLoopBackOff');
    assert.equal(sut.phase, 'Running');
    assert.equal(statusOf(sut, 'web').state.waiting, undefined);
    assert.equal(statusOf(sut, 'web').state.terminated?.exitCode, 1);
  });

  it('shows no back-off after the first exit, since the first restart is immediate', () => {
    const sut = computePodStatus(input('Always', [sandbox(), exited('web', 0, 1, T0 + 5000)], T0 + 5000, ['web']));

    assert.equal(statusOf(sut, 'web').state.waiting, undefined);
    assert.equal(statusOf(sut, 'web').state.terminated?.reason, 'Error');
  });

  it('takes the back-off from the book, not the restart count: a book without an entry shows no back-off', () => {
    // As after an agent restart: the kubelet keeps its back-off in memory only.
    const sut = computePodStatus(input('Always', [sandbox(), exited('web', 5, 1, T0 + 100_000)], T0 + 101_000, ['web']));

    assert.equal(statusOf(sut, 'web').state.waiting, undefined);
    assert.equal(statusOf(sut, 'web').state.terminated?.exitCode, 1);
    assert.equal(statusOf(sut, 'web').restartCount, 5);
  });

  it('shows no CrashLoopBackOff for a container its policy does not restart, whatever the book holds', () => {
    const book = new BackoffBook(KUBERNETES_BACKOFF);
    book.next(crashKey(UID, 'web'), T0 + 5000);
    const finished = T0 + 20_000;

    const onFailure = computePodStatus(input('OnFailure', [sandbox(), exited('web', 1, 0, finished)], finished + 1000, ['web'], undefined, book));
    const never = computePodStatus(input('Never', [sandbox(), exited('web', 1, 1, finished)], finished + 1000, ['web'], undefined, book));

    assert.deepEqual(
      [onFailure, never].map((s) => [s.phase, statusOf(s, 'web').state.terminated?.reason]),
      [
        ['Succeeded', 'Completed'],
        ['Failed', 'Error'],
      ],
    );
  });

  it('shows the executor waiting reason instead of CrashLoopBackOff while a restart is failing', () => {
    const waiting: WaitingReasons = new Map([['web', { reason: 'CreateContainerError', message: 'no space left on device' }]]);
    const book = new BackoffBook(KUBERNETES_BACKOFF);
    book.next(crashKey(UID, 'web'), T0 + 5000);
    const finished = T0 + 20_000;

    const sut = computePodStatus(input('Always', [sandbox(), exited('web', 1, 1, finished)], finished + 1000, ['web'], waiting, book));

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

  it('reports a container the engine created but could not run as terminated ContainerCannotRun, exit 127, with the engine message', () => {
    const error = 'exec: "nginx": executable file not found in $PATH';

    const sut = computePodStatus(input('Never', [sandbox(), cannotRun('web', 0, error)], T0 + 6000, ['web']));

    assert.equal(sut.phase, 'Failed');
    assert.deepEqual(statusOf(sut, 'web').state, {
      terminated: { exitCode: 127, reason: 'ContainerCannotRun', message: error, containerID: 'docker://web-0-id' },
    });
  });

  it('backs off a container that could not run like one that crashed, measured from its creation', () => {
    const error = 'exec: "nginx": executable file not found in $PATH';
    const book = new BackoffBook(KUBERNETES_BACKOFF);
    // Attempt 0 could not run either (created at T0 + 1 s) and was retried at once.
    book.next(crashKey(UID, 'web'), T0 + 1000);
    const observed = [sandbox(), cannotRun('web', 0, error), cannotRun('web', 1, error)];

    const sut = computePodStatus(input('Always', observed, T0 + 2000 + 9_999, ['web'], undefined, book));
    const after = computePodStatus(input('Always', observed, T0 + 2000 + 10_000, ['web'], undefined, book));

    const web = statusOf(sut, 'web');
    assert.equal(sut.phase, 'Running');
    assert.equal(web.state.waiting?.reason, 'CrashLoopBackOff');
    assert.deepEqual(web.lastState, {
      terminated: { exitCode: 127, reason: 'ContainerCannotRun', message: error, containerID: 'docker://web-1-id' },
    });
    assert.equal(statusOf(after, 'web').state.terminated?.reason, 'ContainerCannotRun');
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

describe('computePodStatus of a terminal pod (deleted, its containers stopped)', () => {
  const terminal = (restartPolicy: RestartPolicy, observed: RuntimeContainer[], nowMs: number, book?: BackoffBook): StatusInput => ({
    ...input(restartPolicy, observed, nowMs, undefined, undefined, book),
    terminal: true,
  });

  it('ends an Always pod whose containers all exited 0 as Succeeded, Ready and ContainersReady False with reason PodCompleted', () => {
    const observed = [sandbox({ state: 'exited', exitCode: 0 }), exited('web', 0, 0, T0 + 50_000), exited('sidecar', 0, 0, T0 + 50_000)];

    const sut = computePodStatus(terminal('Always', observed, T0 + 51_000));

    assert.equal(sut.phase, 'Succeeded');
    assert.deepEqual(sut.conditions, [
      { type: 'Initialized', status: 'True' },
      { type: 'ContainersReady', status: 'False', reason: 'PodCompleted' },
      { type: 'Ready', status: 'False', reason: 'PodCompleted' },
    ]);
    assert.equal(statusOf(sut, 'web').state.terminated?.reason, 'Completed');
  });

  it('ends it Failed, with reason PodFailed, when a container exited non-zero', () => {
    const observed = [sandbox({ state: 'exited', exitCode: 0 }), exited('web', 0, 0, T0 + 50_000), exited('sidecar', 0, 137, T0 + 80_000)];

    const sut = computePodStatus(terminal('Always', observed, T0 + 81_000));

    assert.equal(sut.phase, 'Failed');
    assert.deepEqual(condition(sut, 'Ready'), { type: 'Ready', status: 'False', reason: 'PodFailed' });
    assert.deepEqual(condition(sut, 'ContainersReady'), { type: 'ContainersReady', status: 'False', reason: 'PodFailed' });
  });

  it('shows the stopped container as terminated, not CrashLoopBackOff, even within its back-off', () => {
    const book = new BackoffBook(KUBERNETES_BACKOFF);
    book.next(crashKey(UID, 'web'), T0 + 5000);
    const finished = T0 + 20_000;
    const observed = [sandbox({ state: 'exited', exitCode: 0 }), exited('web', 0, 1, T0 + 5000), exited('web', 1, 1, finished)];

    const sut = computePodStatus({ ...terminal('Always', observed, finished + 1000, book), manifest: manifest('Always', ['web']) });

    const web = statusOf(sut, 'web');
    assert.equal(sut.phase, 'Failed');
    assert.equal(web.state.waiting, undefined);
    assert.deepEqual(web.state, {
      terminated: { exitCode: 1, reason: 'Error', startedAt: iso(T0 + 2100), finishedAt: iso(finished), containerID: 'docker://web-1-id' },
    });
  });

  it('ends a pod whose container never started as Failed', () => {
    const sut = computePodStatus({ ...terminal('Always', [sandbox({ state: 'exited', exitCode: 0 })], T0 + 1000), manifest: manifest('Always', ['web']) });

    assert.equal(sut.phase, 'Failed');
  });

  it('keeps a pod whose container still runs Running', () => {
    const sut = computePodStatus(terminal('Always', [sandbox(), app('web', 0), exited('sidecar', 0, 0, T0 + 5000)], T0 + 6000));

    assert.equal(sut.phase, 'Running');
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

  for (const [label, statuses, policy, phase] of [
    ['all succeeded, Always', [succeeded, succeeded], 'Always', 'Succeeded'],
    ['all succeeded, OnFailure', [succeeded], 'OnFailure', 'Succeeded'],
    ['one failed, Always', [succeeded, failed], 'Always', 'Failed'],
    ['one failed, OnFailure', [failed], 'OnFailure', 'Failed'],
    ['one that had failed and waits, Always', [backingOff], 'Always', 'Failed'],
    ['one never started, Always', [waiting], 'Always', 'Failed'],
    ['one still running', [running, succeeded], 'Always', 'Running'],
  ] as const) {
    it(`is ${phase} for a terminal pod with ${label}`, () => {
      assert.equal(podPhase([...statuses], policy, true), phase);
    });
  }
});

describe('isDead, deathTimeMs and terminatedState', () => {
  it('counts an exited container and a created one the engine could not start as dead, and no other', () => {
    const cases: Array<[RuntimeContainer, boolean]> = [
      [exited('web', 0, 0, T0 + 5000), true],
      [cannotRun('web', 0, 'permission denied'), true],
      [cannotRun('web', 0, 'permission denied', { exitCode: 126 }), true],
      [app('web', 0, { state: 'created', startedAt: undefined }), false],
      [app('web', 0), false],
      [app('web', 0, { state: 'unknown' }), false],
    ];

    assert.deepEqual(
      cases.map(([c]) => isDead(c)),
      cases.map(([, dead]) => dead),
    );
  });

  it('dates a death by the finish time, or by the creation for a container that never ran', () => {
    assert.equal(deathTimeMs(exited('web', 3, 1, T0 + 42_000)), T0 + 42_000);
    assert.equal(deathTimeMs(cannotRun('web', 2, 'no such file')), T0 + 3000);
  });

  it('describes a finished container as Completed or Error by its exit code, OOMKilled when the kernel killed it', () => {
    assert.deepEqual(
      [exited('web', 0, 0, T0 + 5000), exited('web', 0, 143, T0 + 5000), exited('web', 0, 137, T0 + 5000, { oomKilled: true })].map(
        (c) => terminatedState(c).terminated?.reason,
      ),
      ['Completed', 'Error', 'OOMKilled'],
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

describe('runtimeDownStatus', () => {
  it('keeps the phase and states but marks the pod and its containers not Ready, with why', () => {
    const last: PodStatus = {
      phase: 'Running',
      conditions: [
        { type: 'PodScheduled', status: 'True' },
        { type: 'ContainersReady', status: 'True', lastTransitionTime: iso(T0) },
        { type: 'Ready', status: 'True', lastTransitionTime: iso(T0) },
      ],
      containerStatuses: [
        { name: 'web', ready: true, restartCount: 0, image: 'x', imageID: '', state: { running: { startedAt: iso(T0) } } } as ContainerStatus,
      ],
    };
    const sut = runtimeDownStatus(last, 'connect ENOENT', iso(T0 + 5000));
    assert.equal(sut.phase, 'Running');
    assert.deepEqual(sut.containerStatuses?.[0]?.state, { running: { startedAt: iso(T0) } });
    assert.equal(sut.containerStatuses?.[0]?.ready, false);
    const ready = sut.conditions?.find((c) => c.type === 'Ready');
    assert.deepEqual(ready, {
      type: 'Ready',
      status: 'False',
      reason: 'ContainerRuntimeDown',
      message: 'container runtime is down: connect ENOENT',
      lastTransitionTime: iso(T0 + 5000),
    });
    assert.equal(sut.conditions?.find((c) => c.type === 'PodScheduled')?.status, 'True');
    // Applied again on the next pass: nothing moves, so nothing new is reported.
    assert.deepEqual(runtimeDownStatus(sut, 'connect ENOENT', iso(T0 + 9000)), sut);
  });
});

describe('podFinished', () => {
  it("says what computePodStatus's phase says (Succeeded or Failed), with and without init containers", () => {
    const state = fc.constantFrom<RuntimeContainer['state']>('running', 'exited', 'created');
    const run = fc.record({ state, exitCode: fc.constantFrom(0, 1, 137), attempt: fc.integer({ min: 0, max: 2 }) });
    fc.assert(
      fc.property(
        fc.constantFrom<RestartPolicy>('Always', 'OnFailure', 'Never'),
        fc.boolean(),
        fc.array(fc.tuple(fc.constantFrom('web', 'sidecar', 'init'), run), { maxLength: 5 }),
        fc.boolean(),
        (policy, withInit, runs, withSandbox) => {
          const base = manifest(policy);
          const pod: PodManifest = withInit ? { ...base, spec: { ...base.spec, initContainers: [{ name: 'init', image: 'example/init:1.0' }] } } : base;
          const observed = [
            ...(withSandbox ? [sandbox()] : []),
            ...runs.map(([name, r]) =>
              r.state === 'running'
                ? app(name, r.attempt)
                : r.state === 'exited'
                  ? exited(name, r.attempt, r.exitCode, T0 + 10_000)
                  : app(name, r.attempt, { state: 'created', startedAt: undefined }),
            ),
          ];
          const statusInput = { pod: POD, manifest: pod, observed, nowMs: T0 + 20_000, backoff: new BackoffBook(KUBERNETES_BACKOFF) };
          const phase = computePodStatus({ ...statusInput, hostIP: '' }).phase;
          assert.equal(podFinished(statusInput), phase === 'Succeeded' || phase === 'Failed');
        },
      ),
      { numRuns: 500 },
    );
  });
});
