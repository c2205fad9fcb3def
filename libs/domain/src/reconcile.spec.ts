import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { PodManifest, RestartPolicy } from '#contracts';
import { LABELS, type RuntimeContainer } from '#runtime';
import { containerName, sandboxName } from './pod-naming.js';
import { KUBERNETES_BACKOFF } from './pod-status.js';
import { planReconcile, type Action, type DesiredPod, type PlanInput, type PodRef } from './reconcile.js';

const UID_A = '6f1c2b1e-3b9a-4c1d-9f2e-0a1b2c3d4e5f';
const UID_B = '0b7e6a52-8d1f-4c3e-a5b9-1f2e3d4c5b6a';
const UID_ORPHAN = 'c3d4e5f6-a7b8-4c9d-8e0f-112233445566';
const T0 = Date.parse('2024-05-01T10:00:00.000Z');
const iso = (ms: number): string => new Date(ms).toISOString();
const ORPHAN_GRACE = 30;

function ref(uid: string, name = 'web-0', namespace = 'default'): PodRef {
  return { namespace, name, uid };
}

function desired(pod: PodRef, restartPolicy: RestartPolicy = 'Always', names: string[] = ['web', 'sidecar']): DesiredPod {
  const manifest: PodManifest = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: pod.name, namespace: pod.namespace, uid: pod.uid },
    spec: {
      containers: names.map((name) => ({ name, image: `example/${name}:1.0`, imagePullPolicy: 'IfNotPresent' })),
      restartPolicy,
      terminationGracePeriodSeconds: 30,
      nodeName: 'node-1',
    },
  };
  return { ...pod, manifest };
}

function podLabels(pod: PodRef, kind: 'sandbox' | 'container', grace?: number): Record<string, string> {
  return {
    [LABELS.managed]: 'true',
    [LABELS.node]: 'node-1',
    [LABELS.podNamespace]: pod.namespace,
    [LABELS.podName]: pod.name,
    [LABELS.podUid]: pod.uid,
    [LABELS.kind]: kind,
    ...(grace === undefined ? {} : { [LABELS.grace]: String(grace) }),
  };
}

function sandbox(pod: PodRef, overrides: Partial<RuntimeContainer> = {}, grace?: number): RuntimeContainer {
  return {
    id: `sandbox-${pod.uid.slice(0, 4)}`,
    name: sandboxName(pod),
    image: 'jetlet/pause:1.0',
    imageId: 'sha256:pause',
    labels: podLabels(pod, 'sandbox', grace),
    state: 'running',
    createdAt: iso(T0),
    startedAt: iso(T0 + 100),
    oomKilled: false,
    ip: '172.17.0.5',
    ...overrides,
  };
}

/** A running app container; attempt n was created n seconds after the pod. */
function app(pod: PodRef, name: string, attempt: number, overrides: Partial<RuntimeContainer> = {}, grace?: number): RuntimeContainer {
  return {
    id: `${name}-${attempt}-${pod.uid.slice(0, 4)}`,
    name: containerName(pod, name, attempt),
    image: `example/${name}:1.0`,
    imageId: `sha256:${name}`,
    labels: { ...podLabels(pod, 'container', grace), [LABELS.containerName]: name, [LABELS.restartCount]: String(attempt) },
    state: 'running',
    createdAt: iso(T0 + 1000 * (attempt + 1)),
    startedAt: iso(T0 + 1000 * (attempt + 1) + 100),
    oomKilled: false,
    ...overrides,
  };
}

function exited(pod: PodRef, name: string, attempt: number, exitCode: number, finishedAtMs: number): RuntimeContainer {
  return app(pod, name, attempt, { state: 'exited', exitCode, finishedAt: iso(finishedAtMs) });
}

function plan(pods: DesiredPod[], observed: RuntimeContainer[], nowMs: number): ReturnType<typeof planReconcile> {
  const input: PlanInput = { desired: pods, observed, nowMs, backoff: KUBERNETES_BACKOFF, orphanGraceSeconds: ORPHAN_GRACE };
  return planReconcile(input);
}

const kinds = (actions: Action[]): string[] => actions.map((a) => a.kind);

describe('planReconcile', () => {
  it('runs the sandbox first for a new pod on an empty node', () => {
    const pod = desired(ref(UID_A));

    const sut = plan([pod], [], T0);

    assert.deepEqual(sut, { actions: [{ kind: 'RunSandbox', pod }] });
  });

  it('starts every container at attempt 0 once the sandbox runs', () => {
    const pod = desired(ref(UID_A));
    const box = sandbox(pod);

    const sut = plan([pod], [box], T0);

    assert.deepEqual(sut, {
      actions: [
        { kind: 'StartContainer', pod, container: pod.manifest.spec.containers[0], attempt: 0, sandboxId: box.id },
        { kind: 'StartContainer', pod, container: pod.manifest.spec.containers[1], attempt: 0, sandboxId: box.id },
      ],
    });
  });

  it('starts a container the runtime created but never started, keeping its attempt', () => {
    const pod = desired(ref(UID_A), 'Always', ['web']);
    const box = sandbox(pod);

    const sut = plan([pod], [box, exited(pod, 'web', 0, 1, T0 + 5000), app(pod, 'web', 1, { state: 'created' })], T0 + 6000);

    assert.deepEqual(
      sut.actions.filter((a) => a.kind === 'StartContainer').map((a) => a.attempt),
      [1],
    );
  });

  it('does nothing while everything runs, and planning again gives the same', () => {
    const pod = desired(ref(UID_A));
    const observed = [sandbox(pod), app(pod, 'web', 0), app(pod, 'sidecar', 0)];

    const first = plan([pod], observed, T0 + 60_000);
    const second = plan([pod], observed, T0 + 60_000);

    assert.deepEqual(first, { actions: [] });
    assert.deepEqual(second, first);
  });

  it('plans the same actions twice for the same input', () => {
    const pod = desired(ref(UID_A));
    const observed = [sandbox(pod), exited(pod, 'web', 1, 1, T0 + 10_000), sandbox(ref(UID_ORPHAN), {}, 5)];

    assert.deepEqual(plan([pod], observed, T0 + 12_000), plan([pod], observed, T0 + 12_000));
  });

  it('restarts a container right after its first exit under Always, as attempt 1', () => {
    const pod = desired(ref(UID_A), 'Always', ['web']);
    const box = sandbox(pod);

    const sut = plan([pod], [box, exited(pod, 'web', 0, 0, T0 + 5000)], T0 + 5000);

    assert.deepEqual(sut, {
      actions: [{ kind: 'StartContainer', pod, container: pod.manifest.spec.containers[0], attempt: 1, sandboxId: box.id }],
    });
  });

  it('waits out the back-off of an exited container and asks to be woken when it ends', () => {
    const pod = desired(ref(UID_A), 'Always', ['web']);
    const finished = T0 + 20_000;

    const sut = plan([pod], [sandbox(pod), exited(pod, 'web', 1, 1, finished)], finished + 3000);

    assert.deepEqual(sut, { actions: [], wakeAtMs: finished + 10_000 });
  });

  it('restarts an exited container as attempt n+1 once its back-off is over', () => {
    const pod = desired(ref(UID_A), 'Always', ['web']);
    const box = sandbox(pod);
    const finished = T0 + 20_000;

    const sut = plan([pod], [box, exited(pod, 'web', 3, 1, finished)], finished + 40_000);

    assert.deepEqual(sut, {
      actions: [{ kind: 'StartContainer', pod, container: pod.manifest.spec.containers[0], attempt: 4, sandboxId: box.id }],
    });
  });

  it('wakes at the earliest back-off end over all pods', () => {
    const a = desired(ref(UID_A), 'Always', ['web']);
    const b = desired(ref(UID_B, 'web-1'), 'Always', ['web']);

    const sut = plan([a, b], [sandbox(a), exited(a, 'web', 2, 1, T0 + 10_000), sandbox(b), exited(b, 'web', 1, 1, T0 + 15_000)], T0 + 16_000);

    assert.deepEqual(sut, { actions: [], wakeAtMs: T0 + 25_000 });
  });

  it('never restarts a container under Never', () => {
    const pod = desired(ref(UID_A), 'Never', ['web']);

    const sut = plan([pod], [sandbox(pod), exited(pod, 'web', 0, 1, T0)], T0 + 3_600_000);

    assert.deepEqual(sut, { actions: [] });
  });

  it('restarts under OnFailure only after a failure', () => {
    const pod = desired(ref(UID_A), 'OnFailure');

    const sut = plan([pod], [sandbox(pod), exited(pod, 'web', 0, 0, T0), exited(pod, 'sidecar', 0, 2, T0)], T0 + 1000);

    assert.deepEqual(
      sut.actions.map((a) => (a.kind === 'StartContainer' ? `${a.container.name}@${a.attempt}` : a.kind)),
      ['sidecar@1'],
    );
  });

  it('kills the containers of a pod this node does not know as Orphaned, with the grace from their label', () => {
    const orphan = ref(UID_ORPHAN, 'old-0', 'shop');
    const observed = [sandbox(orphan, {}, 5), app(orphan, 'web', 0, {}, 5), app(orphan, 'web', 1, { state: 'exited', exitCode: 1 }, 5)];

    const sut = plan([], observed, T0);

    assert.deepEqual(sut, {
      actions: [
        {
          kind: 'KillPod',
          pod: orphan,
          containerIds: [observed[1].id, observed[2].id],
          sandboxIds: [observed[0].id],
          graceSeconds: 5,
          reason: 'Orphaned',
        },
      ],
    });
  });

  it('kills an orphan without a grace label with the configured orphan grace', () => {
    const orphan = ref(UID_ORPHAN);

    const sut = plan([], [sandbox(orphan)], T0);

    assert.equal(sut.actions[0].kind === 'KillPod' && sut.actions[0].graceSeconds, ORPHAN_GRACE);
  });

  it('leaves containers without a pod uid label alone', () => {
    const foreign = app(ref(UID_ORPHAN), 'web', 0);
    foreign.labels = { 'com.example.other': 'yes' };

    assert.deepEqual(plan([], [foreign], T0), { actions: [] });
  });

  it('kills a terminating pod with the grace of its deletion', () => {
    const pod: DesiredPod = { ...desired(ref(UID_A)), terminating: { graceSeconds: 12 } };
    const observed = [sandbox(pod), app(pod, 'web', 0), app(pod, 'sidecar', 0)];

    const sut = plan([pod], observed, T0);

    assert.deepEqual(sut, {
      actions: [
        {
          kind: 'KillPod',
          pod,
          containerIds: [observed[1].id, observed[2].id],
          sandboxIds: [observed[0].id],
          graceSeconds: 12,
          reason: 'Deleted',
        },
      ],
    });
  });

  it('reports a terminating pod removed once none of its containers is left', () => {
    const pod: DesiredPod = { ...desired(ref(UID_A)), terminating: { graceSeconds: 12 } };

    const sut = plan([pod], [], T0);

    assert.deepEqual(sut, { actions: [{ kind: 'ReportRemoved', pod }] });
  });

  it('removes old dead attempts, keeping the newest dead one beside a running container', () => {
    const pod = desired(ref(UID_A), 'Always', ['web']);
    const observed = [
      sandbox(pod),
      exited(pod, 'web', 0, 1, T0 + 1000),
      exited(pod, 'web', 1, 1, T0 + 2000),
      exited(pod, 'web', 2, 1, T0 + 3000),
      app(pod, 'web', 3),
    ];

    const sut = plan([pod], observed, T0 + 60_000);

    assert.deepEqual(sut.actions.map((a) => (a.kind === 'RemoveContainer' ? a.containerId : a.kind)).sort(), [observed[1].id, observed[2].id].sort());
  });

  it('removes older dead attempts while the newest one waits out its back-off', () => {
    const pod = desired(ref(UID_A), 'Always', ['web']);
    const observed = [sandbox(pod), exited(pod, 'web', 0, 1, T0 + 1000), exited(pod, 'web', 1, 1, T0 + 2000), exited(pod, 'web', 2, 1, T0 + 30_000)];

    const sut = plan([pod], observed, T0 + 31_000);

    assert.deepEqual(sut.actions.map((a) => (a.kind === 'RemoveContainer' ? a.containerId : a.kind)).sort(), [observed[1].id, observed[2].id].sort());
    assert.equal(sut.wakeAtMs, T0 + 50_000);
  });

  it('keeps a single dead attempt', () => {
    const pod = desired(ref(UID_A), 'Always', ['web']);

    const sut = plan([pod], [sandbox(pod), exited(pod, 'web', 0, 1, T0 + 1000), app(pod, 'web', 1)], T0 + 60_000);

    assert.deepEqual(sut, { actions: [] });
  });

  it('kills every container of a pod whose sandbox died, at once, as SandboxChanged', () => {
    const pod = desired(ref(UID_A));
    const observed = [sandbox(pod, { state: 'exited', exitCode: 137, ip: undefined }), app(pod, 'web', 0), app(pod, 'sidecar', 0)];

    const sut = plan([pod], observed, T0 + 60_000);

    assert.deepEqual(sut, {
      actions: [
        {
          kind: 'KillPod',
          pod,
          containerIds: [observed[1].id, observed[2].id],
          sandboxIds: [observed[0].id],
          graceSeconds: 0,
          reason: 'SandboxChanged',
        },
      ],
    });
  });

  it('does not start a finished pod over when its sandbox is gone', () => {
    const pod = desired(ref(UID_A), 'Never', ['web']);

    const sut = plan([pod], [sandbox(pod, { state: 'exited', exitCode: 0 }), exited(pod, 'web', 0, 0, T0 + 5000)], T0 + 60_000);

    assert.deepEqual(sut, { actions: [] });
  });

  it('plans each pod on its own: one orphan killed, one pod started, one left running', () => {
    const running = desired(ref(UID_A, 'web-0'), 'Always', ['web']);
    const fresh = desired(ref(UID_B, 'web-1'), 'Always', ['web']);
    const orphan = ref(UID_ORPHAN, 'old-0');

    const sut = plan([running, fresh], [sandbox(running), app(running, 'web', 0), sandbox(orphan, {}, 3)], T0);

    assert.deepEqual(kinds(sut.actions), ['KillPod', 'RunSandbox']);
    assert.deepEqual(
      sut.actions.map((a) => a.pod.uid),
      [UID_ORPHAN, UID_B],
    );
  });
});
