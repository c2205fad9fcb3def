import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, PodManifest, RestartPolicy } from '#contracts';
import { LABELS, type RuntimeContainer } from '#runtime/port';
import { BackoffBook, KUBERNETES_BACKOFF, crashKey } from './backoff.js';
import { podSpecCauses } from './pod-defaults.js';
import { containerName, containerSpecHash, sandboxName } from './pod-naming.js';
import { computePodStatus } from './pod-status.js';
import { podRow } from './printers.js';
import { qosClass } from './qos.js';
import { planReconcile, type DesiredPod } from './reconcile.js';
import { podRequests } from './scheduling.js';

const UID = '6f1c2b1e-3b9a-4c1d-9f2e-0a1b2c3d4e5f';
const REF = { namespace: 'default', name: 'web-0', uid: UID };
const T0 = Date.parse('2024-05-01T10:00:00.000Z');
const iso = (ms: number): string => new Date(ms).toISOString();

const spec = (name: string, extra: Partial<Container> = {}): Container => ({ name, image: 'jetlet/busybox:1.35', imagePullPolicy: 'IfNotPresent', ...extra });

function pod(inits: Container[], restartPolicy: RestartPolicy = 'Always', containers: Container[] = [spec('app')]): DesiredPod {
  const manifest: PodManifest = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: REF.name, namespace: REF.namespace, uid: UID },
    spec: { initContainers: inits, containers, restartPolicy, terminationGracePeriodSeconds: 30, nodeName: 'node-1' },
  };
  return { ...REF, manifest };
}

const labels = (kind: 'sandbox' | 'container'): Record<string, string> => ({
  [LABELS.managed]: 'true',
  [LABELS.node]: 'node-1',
  [LABELS.podNamespace]: REF.namespace,
  [LABELS.podName]: REF.name,
  [LABELS.podUid]: UID,
  [LABELS.kind]: kind,
});

const SANDBOX: RuntimeContainer = {
  id: 'sandbox',
  name: sandboxName(REF),
  image: 'jetlet/pause:1.0',
  imageId: 'sha256:pause',
  labels: labels('sandbox'),
  state: 'running',
  createdAt: iso(T0),
  oomKilled: false,
  ip: '172.17.0.5',
};

function run(c: Container, attempt = 0, overrides: Partial<RuntimeContainer> = {}): RuntimeContainer {
  return {
    id: `${c.name}-${attempt}`,
    name: containerName(REF, c.name, attempt),
    image: c.image,
    imageId: 'sha256:busybox',
    labels: { ...labels('container'), [LABELS.containerName]: c.name, [LABELS.restartCount]: String(attempt), [LABELS.specHash]: containerSpecHash(c) },
    state: 'running',
    createdAt: iso(T0 + 1000 * (attempt + 1)),
    startedAt: iso(T0 + 1000 * (attempt + 1)),
    oomKilled: false,
    ...overrides,
  };
}
const exited = (c: Container, exitCode: number, attempt = 0, finishedMs = T0 + 5000): RuntimeContainer =>
  run(c, attempt, { state: 'exited', exitCode, finishedAt: iso(finishedMs) });

const plan = (
  p: DesiredPod,
  observed: RuntimeContainer[],
  nowMs = T0 + 10_000,
  backoff = new BackoffBook(KUBERNETES_BACKOFF),
  probes?: Map<string, { started?: boolean }>,
) => planReconcile({ desired: [p], observed, nowMs, backoff, orphanGraceSeconds: 30, ...(probes ? { probes } : {}) });
const starts = (actions: ReturnType<typeof plan>['actions']): string[] =>
  actions.flatMap((a) => (a.kind === 'StartContainer' ? [`${a.container.name}#${a.attempt}`] : []));
const status = (
  p: DesiredPod,
  observed: RuntimeContainer[],
  nowMs = T0 + 10_000,
  backoff = new BackoffBook(KUBERNETES_BACKOFF),
  probes?: Map<string, { started?: boolean }>,
) => computePodStatus({ pod: REF, manifest: p.manifest, observed, hostIP: '10.0.0.1', nowMs, backoff, ...(probes ? { probes } : {}) });
const printed = (p: DesiredPod, s: ReturnType<typeof status>): string =>
  String(podRow({ apiVersion: 'v1', kind: 'Pod', metadata: { name: REF.name }, spec: p.manifest.spec, status: s }, T0 + 10_000).cells[2]);

describe('init containers', () => {
  const first = spec('first');
  const second = spec('second');
  const twoInits = pod([first, second]);

  it('starts only the first init container, and the pod shows Init:0/2', () => {
    assert.deepEqual(starts(plan(twoInits, [SANDBOX]).actions), ['first#0']);
    const s = status(twoInits, [SANDBOX, run(first)]);
    assert.equal(s.phase, 'Pending');
    assert.deepEqual(s.conditions?.[0], {
      type: 'Initialized',
      status: 'False',
      reason: 'ContainersNotInitialized',
      message: 'containers with incomplete status: [first second]',
    });
    assert.deepEqual(s.containerStatuses?.[0]?.state, { waiting: { reason: 'PodInitializing' } });
    assert.equal(printed(twoInits, s), 'Init:0/2');
  });

  it('starts the next one only after the one before succeeded, and the containers after the last', () => {
    assert.deepEqual(starts(plan(twoInits, [SANDBOX, run(first)]).actions), []);
    assert.deepEqual(starts(plan(twoInits, [SANDBOX, exited(first, 0)]).actions), ['second#0']);
    assert.equal(printed(twoInits, status(twoInits, [SANDBOX, exited(first, 0), run(second)])), 'Init:1/2');
    const done = [SANDBOX, exited(first, 0), exited(second, 0)];
    assert.deepEqual(starts(plan(twoInits, done).actions), ['app#0']);
    const s = status(twoInits, done);
    assert.equal(s.conditions?.[0]?.status, 'True');
    assert.equal(s.initContainerStatuses?.[1]?.ready, true);
    assert.equal(printed(twoInits, s), 'PodInitializing');
  });

  it('never runs completed init containers again once a container has run, even when their runs are gone', () => {
    const app = spec('app');
    assert.deepEqual(starts(plan(twoInits, [SANDBOX, run(app)]).actions), []);
    assert.equal(status(twoInits, [SANDBOX, exited(first, 0), exited(second, 0), run(app)]).phase, 'Running');
  });

  it('fails the pod on a failed init container under policy Never: Init:Error, and the sandbox stops', () => {
    const never = pod([first, second], 'Never');
    const observed = [SANDBOX, exited(first, 1)];
    const s = status(never, observed);
    assert.equal(s.phase, 'Failed');
    assert.equal(printed(never, s), 'Init:Error');
    const kills = plan(never, observed).actions.filter((a) => a.kind === 'KillPod');
    assert.deepEqual(
      kills.map((a) => a.kind === 'KillPod' && a.sandboxIds),
      [['sandbox']],
    );
    assert.deepEqual(starts(plan(never, observed).actions), []);
  });

  it('restarts a failed init container with the crash back-off otherwise: Init:CrashLoopBackOff', () => {
    const book = new BackoffBook(KUBERNETES_BACKOFF);
    const died = T0 + 5000;
    assert.deepEqual(starts(plan(twoInits, [SANDBOX, exited(first, 1)], died + 1, book).actions), ['first#1']);
    book.next(crashKey(UID, 'first'), died, died + 1);
    const observed = [SANDBOX, exited(first, 1, 0, died), exited(first, 1, 1, died + 2000)];
    book.next(crashKey(UID, 'first'), died + 2000, died + 2000);
    const planned = plan(twoInits, observed, died + 3000, book);
    assert.deepEqual(starts(planned.actions), []);
    assert.equal(planned.wakeAtMs, died + 2000 + 20_000);
    const s = status(twoInits, observed, died + 3000, book);
    assert.equal(s.phase, 'Pending');
    assert.equal(s.initContainerStatuses?.[0]?.restartCount, 1);
    assert.equal(printed(twoInits, s), 'Init:CrashLoopBackOff');
  });

  it('does not restart an init container that succeeded, whatever the policy', () => {
    assert.deepEqual(starts(plan(pod([first], 'Always'), [SANDBOX, exited(first, 0), run(spec('app'))]).actions), []);
  });
});

describe('sidecars', () => {
  const proxy = spec('proxy', { restartPolicy: 'Always' });
  const probed = spec('proxy', { restartPolicy: 'Always', startupProbe: { exec: { command: ['true'] }, periodSeconds: 1 } });
  const migrate = spec('migrate');

  it('starts the next init container once the sidecar runs, and keeps it beside the containers', () => {
    const p = pod([proxy, migrate]);
    assert.deepEqual(starts(plan(p, [SANDBOX]).actions), ['proxy#0']);
    assert.deepEqual(starts(plan(p, [SANDBOX, run(proxy)]).actions), ['migrate#0']);
    assert.deepEqual(starts(plan(p, [SANDBOX, run(proxy), exited(migrate, 0)]).actions), ['app#0']);
    const s = status(p, [SANDBOX, run(proxy), exited(migrate, 0), run(spec('app'))]);
    assert.equal(s.phase, 'Running');
    assert.equal(s.conditions?.find((c) => c.type === 'Ready')?.status, 'True');
    assert.equal(printed(p, s), 'Running');
    assert.equal(podRow({ apiVersion: 'v1', kind: 'Pod', metadata: { name: REF.name }, spec: p.manifest.spec, status: s }, T0).cells[1], '2/2');
  });

  it('waits for a sidecar startup probe before the next init container', () => {
    const p = pod([probed, migrate]);
    const observed = [SANDBOX, run(probed)];
    assert.deepEqual(starts(plan(p, observed).actions), []);
    assert.equal(status(p, observed).phase, 'Pending');
    assert.deepEqual(starts(plan(p, observed, T0 + 10_000, new BackoffBook(KUBERNETES_BACKOFF), new Map([['proxy-0', { started: true }]])).actions), [
      'migrate#0',
    ]);
  });

  it('restarts a sidecar that exited, even under policy Never', () => {
    const p = pod([proxy], 'Never');
    assert.deepEqual(starts(plan(p, [SANDBOX, exited(proxy, 0), run(spec('app'))]).actions), ['proxy#1']);
  });

  it('stops the sidecars once the containers are done for good, and the pod succeeds', () => {
    const p = pod([proxy], 'Never');
    const app = spec('app');
    const kills = plan(p, [SANDBOX, run(proxy), exited(app, 0)]).actions.filter((a) => a.kind === 'KillPod');
    assert.deepEqual(
      kills.map((a) => a.kind === 'KillPod' && [a.containerIds, a.sidecarIds]),
      [[[], ['proxy-0']]],
    );
    assert.equal(status(p, [SANDBOX, exited(proxy, 137), exited(app, 0)]).phase, 'Succeeded');
  });

  it('stops the sidecars after the containers, the last started first', () => {
    const second = spec('second', { restartPolicy: 'Always' });
    const p = { ...pod([proxy, second]), terminating: { graceSeconds: 5 } };
    const [kill] = plan(p, [SANDBOX, run(proxy), run(second), run(spec('app'))]).actions;
    assert.ok(kill?.kind === 'KillPod');
    assert.deepEqual([kill.containerIds, kill.sidecarIds, kill.sandboxIds], [['app-0'], ['second-0', 'proxy-0'], ['sandbox']]);
  });
});

describe('qosClass', () => {
  const res = (requests?: Record<string, string>, limits?: Record<string, string>): Partial<Container> => ({
    resources: { ...(requests ? { requests } : {}), ...(limits ? { limits } : {}) },
  });
  const q = (containers: Container[], inits: Container[] = []): string => qosClass({ containers, initContainers: inits });

  it('is BestEffort without cpu or memory requests or limits (other resources do not count)', () => {
    assert.equal(q([spec('a'), spec('b', res({ 'ephemeral-storage': '1Gi' }))]), 'BestEffort');
    assert.equal(q([spec('a', res({ cpu: '0' }))]), 'BestEffort');
  });

  it('is Guaranteed when every container limits cpu and memory and requests equal limits (a missing request is its limit)', () => {
    assert.equal(
      q([spec('a', res(undefined, { cpu: '500m', memory: '64Mi' })), spec('b', res({ cpu: '0.5', memory: '64Mi' }, { cpu: '500m', memory: '64Mi' }))]),
      'Guaranteed',
    );
  });

  it('is Burstable otherwise, init containers included', () => {
    assert.equal(q([spec('a', res({ cpu: '100m' }, { cpu: '500m', memory: '64Mi' }))]), 'Burstable');
    assert.equal(q([spec('a', res(undefined, { cpu: '500m' }))]), 'Burstable');
    assert.equal(q([spec('a', res(undefined, { cpu: '500m', memory: '64Mi' }))], [spec('i')]), 'Burstable');
    assert.equal(q([spec('a')], [spec('i', res({ memory: '10Mi' }))]), 'Burstable');
  });

  it('is reported in the pod status', () => {
    assert.equal(status(pod([]), [SANDBOX]).qosClass, 'BestEffort');
  });
});

describe('podRequests with init containers', () => {
  const req = (name: string, cpu: string, memory: string, sidecar = false): Container =>
    spec(name, { resources: { requests: { cpu, memory } }, ...(sidecar ? { restartPolicy: 'Always' as const } : {}) });

  it('is the larger of the containers plus sidecars and the largest init container plus the sidecars before it', () => {
    const one = { containers: [req('app', '100m', '100Mi')], initContainers: [req('init', '500m', '10Mi')] };
    assert.deepEqual(podRequests(one), { milliCPU: 500, memory: 100 * 2 ** 20 });
    const sidecar = { containers: [req('app', '100m', '100Mi')], initContainers: [req('proxy', '200m', '20Mi', true), req('init', '400m', '10Mi')] };
    assert.deepEqual(podRequests(sidecar), { milliCPU: 600, memory: 120 * 2 ** 20 });
  });
});

describe('init container validation', () => {
  const causes = (inits: Container[], containers: Container[] = [spec('app')]): string[] =>
    podSpecCauses(pod(inits, 'Always', containers).manifest).map((c) => `${c.field}: ${c.message}`);

  it('names each forbidden field', () => {
    const probe = { exec: { command: ['true'] } };
    assert.deepEqual(causes([spec('init', { readinessProbe: probe, lifecycle: { preStop: probe } })], [spec('app', { restartPolicy: 'Always' })]), [
      'spec.initContainers[0].lifecycle: Forbidden: may not be set for init containers without restartPolicy=Always',
      'spec.initContainers[0].readinessProbe: Forbidden: may not be set for init containers without restartPolicy=Always',
      'spec.containers[0].restartPolicy: Forbidden: may not be set for non-init containers',
    ]);
  });

  it('keeps names unique across init containers and containers, and lets a sidecar have probes and hooks', () => {
    assert.deepEqual(causes([spec('app')]), ['spec.containers[0].name: Duplicate value: "app"']);
    assert.deepEqual(causes([spec('proxy', { restartPolicy: 'Always', readinessProbe: { exec: { command: ['true'] } } })]), []);
  });
});
