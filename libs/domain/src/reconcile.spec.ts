import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, PodManifest, RestartPolicy } from '#contracts';
import { LABELS, type RuntimeContainer } from '#runtime/port';
import { BackoffBook, KUBERNETES_BACKOFF, crashKey } from './backoff.js';
import { containerName, containerSpecHash, sandboxName } from './pod-naming.js';
import { MINIMUM_GRACE_SECONDS, planReconcile, startKey, type Action, type DesiredPod, type PlanInput, type PodRef, type ProbeResults } from './reconcile.js';

const UID_A = '6f1c2b1e-3b9a-4c1d-9f2e-0a1b2c3d4e5f';
const UID_B = '0b7e6a52-8d1f-4c3e-a5b9-1f2e3d4c5b6a';
const UID_ORPHAN = 'c3d4e5f6-a7b8-4c9d-8e0f-112233445566';
const T0 = Date.parse('2024-05-01T10:00:00.000Z');
const iso = (ms: number): string => new Date(ms).toISOString();
const ORPHAN_GRACE = 30;
const MINUTE = 60_000;

/** The spec the desired pods give a container of this name. */
function specOf(name: string): Container {
  return { name, image: `example/${name}:1.0`, imagePullPolicy: 'IfNotPresent' };
}

function ref(uid: string, name = 'web-0', namespace = 'default'): PodRef {
  return { namespace, name, uid };
}

function desired(pod: PodRef, restartPolicy: RestartPolicy = 'Always', names: string[] = ['web', 'sidecar']): DesiredPod {
  const manifest: PodManifest = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: pod.name, namespace: pod.namespace, uid: pod.uid },
    spec: {
      containers: names.map(specOf),
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

/** A running app container, created from the current spec; attempt n was created n seconds after the pod. */
function app(pod: PodRef, name: string, attempt: number, overrides: Partial<RuntimeContainer> = {}, grace?: number): RuntimeContainer {
  return {
    id: `${name}-${attempt}-${pod.uid.slice(0, 4)}`,
    name: containerName(pod, name, attempt),
    image: `example/${name}:1.0`,
    imageId: `sha256:${name}`,
    labels: {
      ...podLabels(pod, 'container', grace),
      [LABELS.containerName]: name,
      [LABELS.restartCount]: String(attempt),
      [LABELS.specHash]: containerSpecHash(specOf(name)),
    },
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

/** The same container as created from an older spec of it, with another image. */
function outdated(c: RuntimeContainer): RuntimeContainer {
  const name = c.labels[LABELS.containerName] ?? '';
  const old = { ...specOf(name), image: `example/${name}:0.9` };
  return { ...c, image: old.image, labels: { ...c.labels, [LABELS.specHash]: containerSpecHash(old) } };
}

function terminating(pod: DesiredPod, graceSeconds: number): DesiredPod {
  return { ...pod, terminating: { graceSeconds } };
}

function plan(
  pods: DesiredPod[],
  observed: RuntimeContainer[],
  nowMs: number,
  backoff = new BackoffBook(KUBERNETES_BACKOFF),
): ReturnType<typeof planReconcile> {
  const input: PlanInput = { desired: pods, observed, nowMs, backoff, orphanGraceSeconds: ORPHAN_GRACE };
  return planReconcile(input);
}

/**
 * Drives a book the way the reconciler does through `restarts` crash restarts of one
 * container: the first restart is immediate, each later one waits out the delay in force,
 * and each dispatch records `next(key, deathMs)`. Every attempt runs for `runMs`. Returns
 * when the latest attempt (number `restarts`) died.
 */
function crashLoop(book: BackoffBook, pod: PodRef, container: string, firstDeathMs: number, restarts: number, runMs = 1000): number {
  const key = crashKey(pod.uid, container);
  let deathMs = firstDeathMs;
  for (let i = 0; i < restarts; i++) {
    const restartMs = deathMs + book.delay(key);
    book.next(key, deathMs, restartMs);
    deathMs = restartMs + runMs;
  }
  return deathMs;
}

const kinds = (actions: Action[]): string[] => actions.map((a) => a.kind);

describe('planReconcile', () => {
  it('runs the sandbox first for a new pod on an empty node, with the containers to start once it runs', () => {
    const pod = desired(ref(UID_A));

    const sut = plan([pod], [], T0);

    assert.deepEqual(sut, { actions: [{ kind: 'RunSandbox', pod, attempt: 0, containers: pod.manifest.spec.containers }] });
  });

  it('gives a new pod with init containers only its first init container to start with the sandbox', () => {
    const pod = desired(ref(UID_A));
    const inits = [
      { name: 'init-a', image: 'busybox' },
      { name: 'init-b', image: 'busybox' },
    ];
    pod.manifest.spec.initContainers = inits;

    const sut = plan([pod], [], T0);

    assert.deepEqual(sut.actions, [{ kind: 'RunSandbox', pod, attempt: 0, containers: [inits[0]] }]);
  });

  it('starts every container at attempt 0 once the sandbox runs, as no restart', () => {
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

  it('starts a container the runtime created but never started, keeping its attempt, as no restart', () => {
    const pod = desired(ref(UID_A), 'Always', ['web']);
    const box = sandbox(pod);
    const observed = [box, exited(pod, 'web', 0, 1, T0 + 5000), app(pod, 'web', 1, { state: 'created', startedAt: undefined })];

    const sut = plan([pod], observed, T0 + 6000);

    assert.deepEqual(sut, { actions: [{ kind: 'StartContainer', pod, container: pod.manifest.spec.containers[0], attempt: 1, sandboxId: box.id }] });
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
    const book = new BackoffBook(KUBERNETES_BACKOFF);
    const died = crashLoop(book, pod, 'web', T0 + 5000, 1);
    const observed = [sandbox(pod), exited(pod, 'web', 1, 1, died), sandbox(ref(UID_ORPHAN), {}, 5)];

    assert.deepEqual(plan([pod], observed, died + 2000, book), plan([pod], observed, died + 2000, book));
  });

  it('does not record anything in the back-off book itself', () => {
    const pod = desired(ref(UID_A), 'Always', ['web']);
    const book = new BackoffBook(KUBERNETES_BACKOFF);

    plan([pod], [sandbox(pod), exited(pod, 'web', 0, 1, T0 + 5000)], T0 + 5000, book);
    const sut = plan([pod], [sandbox(pod), exited(pod, 'web', 0, 1, T0 + 5000)], T0 + 5000, book);

    assert.equal(book.delay(crashKey(UID_A, 'web')), 0);
    assert.equal(sut.actions.length, 1);
  });
});

describe('planReconcile: crash restarts and back-off', () => {
  it('restarts a container right after its first exit under Always, as attempt 1, carrying the back-off key and death time', () => {
    const pod = desired(ref(UID_A), 'Always', ['web']);
    const box = sandbox(pod);

    const sut = plan([pod], [box, exited(pod, 'web', 0, 0, T0 + 5000)], T0 + 5000);

    assert.deepEqual(sut, {
      actions: [
        {
          kind: 'StartContainer',
          pod,
          container: pod.manifest.spec.containers[0],
          attempt: 1,
          sandboxId: box.id,
          restart: { key: crashKey(UID_A, 'web'), deathMs: T0 + 5000 },
        },
      ],
    });
  });

  it('waits out the back-off of an exited container and asks to be woken when it ends', () => {
    const pod = desired(ref(UID_A), 'Always', ['web']);
    const book = new BackoffBook(KUBERNETES_BACKOFF);
    const died = crashLoop(book, pod, 'web', T0 + 5000, 1);

    const sut = plan([pod], [sandbox(pod), exited(pod, 'web', 1, 1, died)], died + 3000, book);

    assert.deepEqual(sut, { actions: [], wakeAtMs: died + 10_000 });
  });

  it('waits until just before the delay in force has passed, and restarts as attempt n+1 from then on', () => {
    const pod = desired(ref(UID_A), 'Always', ['web']);
    const box = sandbox(pod);
    const book = new BackoffBook(KUBERNETES_BACKOFF);
    const died = crashLoop(book, pod, 'web', T0 + 5000, 3);
    const observed = [box, exited(pod, 'web', 3, 1, died)];

    const waiting = plan([pod], observed, died + 39_999, book);
    const sut = plan([pod], observed, died + 40_000, book);

    assert.deepEqual(waiting, { actions: [], wakeAtMs: died + 40_000 });
    assert.deepEqual(sut, {
      actions: [
        {
          kind: 'StartContainer',
          pod,
          container: pod.manifest.spec.containers[0],
          attempt: 4,
          sandboxId: box.id,
          restart: { key: crashKey(UID_A, 'web'), deathMs: died },
        },
      ],
    });
  });

  it('holds the wait at the 5 minute cap however often the container crashed', () => {
    const pod = desired(ref(UID_A), 'Always', ['web']);
    const book = new BackoffBook(KUBERNETES_BACKOFF);
    const died = crashLoop(book, pod, 'web', T0 + 5000, 12);

    const sut = plan([pod], [sandbox(pod), exited(pod, 'web', 12, 1, died)], died + 1000, book);

    assert.deepEqual(sut, { actions: [], wakeAtMs: died + 300_000 });
  });

  it('restarts at once, with no back-off, a container whose book has no entry, whatever its restart count', () => {
    // As after an agent restart: the kubelet keeps back-off in memory only.
    const pod = desired(ref(UID_A), 'Always', ['web']);

    const sut = plan([pod], [sandbox(pod), exited(pod, 'web', 7, 1, T0 + 100_000)], T0 + 100_000);

    assert.deepEqual(
      sut.actions.map((a) => (a.kind === 'StartContainer' ? a.attempt : a.kind)),
      [8],
    );
  });

  it('restarts at once a container that ran more than 10 minutes after its last restart at the cap', () => {
    const pod = desired(ref(UID_A), 'Always', ['web']);
    const box = sandbox(pod);
    const key = crashKey(UID_A, 'web');
    const book = new BackoffBook(KUBERNETES_BACKOFF);
    const previous = crashLoop(book, pod, 'web', T0 + 5000, 6);
    const restartedAt = previous + book.delay(key);
    book.next(key, previous, restartedAt);
    const died = restartedAt + 11 * MINUTE;

    const sut = plan([pod], [box, exited(pod, 'web', 7, 1, died)], died + 1000, book);

    assert.deepEqual(sut.actions, [
      { kind: 'StartContainer', pod, container: pod.manifest.spec.containers[0], attempt: 8, sandboxId: box.id, restart: { key, deathMs: died } },
    ]);
  });

  it('still backs off 5 minutes a container at the cap that ran 6 minutes after its last restart (the reset needs 10 minutes since the restart)', () => {
    // client-go Backoff.Next stamps lastUpdate with the clock at the restart, and
    // IsInBackOffSince expires an entry only when the new death is over 2 × cap after it.
    const pod = desired(ref(UID_A), 'Always', ['web']);
    const key = crashKey(UID_A, 'web');
    const book = new BackoffBook(KUBERNETES_BACKOFF);
    const previous = crashLoop(book, pod, 'web', T0 + 5000, 6);
    const restartedAt = previous + book.delay(key);
    book.next(key, previous, restartedAt);
    const died = restartedAt + 6 * MINUTE;

    const sut = plan([pod], [sandbox(pod), exited(pod, 'web', 7, 1, died)], died + 1000, book);

    assert.deepEqual(sut, { actions: [], wakeAtMs: died + 300_000 });
  });

  it('wakes at the earliest back-off end over all pods', () => {
    const a = desired(ref(UID_A), 'Always', ['web']);
    const b = desired(ref(UID_B, 'web-1'), 'Always', ['web']);
    const book = new BackoffBook(KUBERNETES_BACKOFF);
    book.next(crashKey(UID_A, 'web'), T0);
    book.next(crashKey(UID_A, 'web'), T0 + 5000);
    book.next(crashKey(UID_B, 'web'), T0 + 5000);

    const sut = plan([a, b], [sandbox(a), exited(a, 'web', 2, 1, T0 + 10_000), sandbox(b), exited(b, 'web', 1, 1, T0 + 15_000)], T0 + 16_000, book);

    assert.deepEqual(sut, { actions: [], wakeAtMs: T0 + 25_000 });
  });

  it('never restarts a container under Never', () => {
    const pod = desired(ref(UID_A), 'Never', ['web']);

    const sut = plan([pod], [sandbox(pod, { state: 'exited', exitCode: 0 }), exited(pod, 'web', 0, 1, T0)], T0 + 3_600_000);

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

  it('restarts a container that the engine could not run, measuring its back-off from its creation', () => {
    const pod = desired(ref(UID_A), 'Always', ['web']);
    const box = sandbox(pod);
    const book = new BackoffBook(KUBERNETES_BACKOFF);
    book.next(crashKey(UID_A, 'web'), T0 + 1000);
    const failed = app(pod, 'web', 1, { state: 'created', startedAt: undefined, exitCode: 127, error: 'exec: "web": executable file not found in $PATH' });
    const createdMs = Date.parse(failed.createdAt);

    const waiting = plan([pod], [box, failed], createdMs + 9_999, book);
    const sut = plan([pod], [box, failed], createdMs + 10_000, book);

    assert.deepEqual(waiting, { actions: [], wakeAtMs: createdMs + 10_000 });
    assert.deepEqual(
      sut.actions.map((a) => (a.kind === 'StartContainer' ? [a.attempt, a.restart] : a.kind)),
      [[2, { key: crashKey(UID_A, 'web'), deathMs: createdMs }]],
    );
  });
});

describe('planReconcile: probe kills', () => {
  /** A pod whose `web` container has a liveness probe, and `web`'s running container as created from that spec. */
  function probed(probeGrace?: number): { pod: DesiredPod; web: RuntimeContainer } {
    const pod = desired(ref(UID_A), 'Always', ['web']);
    const spec = pod.manifest.spec.containers[0];
    spec.livenessProbe = { exec: { command: ['true'] }, ...(probeGrace === undefined ? {} : { terminationGracePeriodSeconds: probeGrace }) };
    const running = app(pod, 'web', 0);
    return { pod, web: { ...running, labels: { ...running.labels, [LABELS.specHash]: containerSpecHash(spec) } } };
  }
  const planWith = (pod: DesiredPod, observed: RuntimeContainer[], probes: Map<string, ProbeResults>): ReturnType<typeof planReconcile> =>
    planReconcile({ desired: [pod], observed, nowMs: T0 + MINUTE, backoff: new BackoffBook(KUBERNETES_BACKOFF), orphanGraceSeconds: ORPHAN_GRACE, probes });

  it('leaves a running container alone while its probes pass', () => {
    const { pod, web } = probed();
    assert.deepEqual(planWith(pod, [sandbox(pod), web], new Map([[web.id, { ready: true }]])).actions, []);
  });

  it('kills a container whose liveness probe failed, with the probe’s own grace, and starts nothing until it is dead', () => {
    const { pod, web } = probed(5);
    const sut = planWith(pod, [sandbox(pod), web], new Map([[web.id, { unhealthy: 'LivenessProbe' }]]));
    assert.deepEqual(sut.actions, [{ kind: 'KillContainer', pod, containerId: web.id, containerName: 'web', graceSeconds: 5, reason: 'LivenessProbe' }]);
  });

  it('kills for a failed startup probe with the pod’s grace when the probe sets none', () => {
    const { pod, web } = probed();
    const sut = planWith(pod, [sandbox(pod), web], new Map([[web.id, { unhealthy: 'StartupProbe' }]]));
    assert.deepEqual(
      sut.actions.map((a) => a.kind === 'KillContainer' && [a.reason, a.graceSeconds]),
      [['StartupProbe', 30]],
    );
  });
});

describe('planReconcile: spec changes', () => {
  it('kills a running container whose spec hash is outdated, with the pod grace, and starts the new spec at once', () => {
    const pod = desired(ref(UID_A));
    const web = outdated(app(pod, 'web', 0));
    const box = sandbox(pod);

    const sut = plan([pod], [box, web, app(pod, 'sidecar', 0)], T0 + 60_000);

    assert.deepEqual(sut, {
      actions: [
        { kind: 'KillContainer', pod, containerId: web.id, containerName: 'web', graceSeconds: 30, reason: 'SpecChanged' },
        { kind: 'StartContainer', pod, container: pod.manifest.spec.containers[0], attempt: 1, sandboxId: box.id },
      ],
    });
  });

  it('gives a SpecChanged kill at least the minimum grace', () => {
    const pod = desired(ref(UID_A), 'Always', ['web']);
    pod.manifest.spec.terminationGracePeriodSeconds = 0;

    const sut = plan([pod], [sandbox(pod), outdated(app(pod, 'web', 0))], T0 + 60_000);

    assert.equal(sut.actions[0]?.kind === 'KillContainer' && sut.actions[0].graceSeconds, MINIMUM_GRACE_SECONDS);
    assert.equal(MINIMUM_GRACE_SECONDS, 2);
  });

  for (const [policy, exitCode] of [
    ['Always', 0],
    ['OnFailure', 1],
  ] as const) {
    it(`starts a dead container of an outdated spec again as attempt n+1 under ${policy} at once, with a fresh back-off`, () => {
      // The kubelet keys crash back-off by spec hash: a new spec has no back-off yet.
      const pod = desired(ref(UID_A), policy, ['web']);
      const box = sandbox(pod);
      const book = new BackoffBook(KUBERNETES_BACKOFF);
      const died = crashLoop(book, pod, 'web', T0 + 5000, 4);

      const sut = plan([pod], [box, outdated(exited(pod, 'web', 4, exitCode, died))], died + 1000, book);

      assert.deepEqual(sut, {
        actions: [
          {
            kind: 'StartContainer',
            pod,
            container: pod.manifest.spec.containers[0],
            attempt: 5,
            sandboxId: box.id,
            restart: { key: crashKey(UID_A, 'web'), deathMs: died, fresh: true },
          },
        ],
      });
    });
  }

  for (const [policy, exitCode] of [
    ['Never', 1],
    ['OnFailure', 0],
  ] as const) {
    it(`does not start again a dead container of an outdated spec that ${policy} would not restart after exit ${exitCode}`, () => {
      // The kubelet checks the spec hash of running containers only; a dead one is
      // started again only if ShouldContainerBeRestarted says so, by restart policy.
      const pod = desired(ref(UID_A), policy, ['web', 'sidecar']);

      const sut = plan([pod], [sandbox(pod), outdated(exited(pod, 'web', 0, exitCode, T0 + 5000)), app(pod, 'sidecar', 0)], T0 + 60_000);

      assert.deepEqual(sut, { actions: [] });
    });
  }

  it('leaves a running container of the current spec alone', () => {
    const pod = desired(ref(UID_A), 'Always', ['web']);

    assert.deepEqual(plan([pod], [sandbox(pod), app(pod, 'web', 3)], T0 + 60_000), { actions: [] });
  });
});

describe('planReconcile: orphans', () => {
  it('kills and removes the containers of a pod this node does not know as Orphaned, with the grace from their label', () => {
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
          remove: true,
        },
      ],
    });
  });

  it('kills an orphan without a grace label with the configured orphan grace', () => {
    const orphan = ref(UID_ORPHAN);

    const sut = plan([], [sandbox(orphan)], T0);

    assert.equal(sut.actions[0]?.kind === 'KillPod' && sut.actions[0].graceSeconds, ORPHAN_GRACE);
  });

  it('gives an orphan at least the minimum grace', () => {
    const orphan = ref(UID_ORPHAN);

    const sut = plan([], [sandbox(orphan, {}, 0), app(orphan, 'web', 0, {}, 0)], T0);

    assert.equal(sut.actions[0]?.kind === 'KillPod' && sut.actions[0].graceSeconds, MINIMUM_GRACE_SECONDS);
  });

  it('leaves containers without a pod uid label alone', () => {
    const foreign = app(ref(UID_ORPHAN), 'web', 0);
    foreign.labels = { 'com.example.other': 'yes' };

    assert.deepEqual(plan([], [foreign], T0), { actions: [] });
  });
});

describe('planReconcile: terminating pods', () => {
  it('stops a terminating pod with the grace of its deletion, keeping its containers', () => {
    const pod = terminating(desired(ref(UID_A)), 12);
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
          remove: false,
        },
      ],
    });
  });

  it('gives a deletion at least the minimum grace', () => {
    const pod = terminating(desired(ref(UID_A)), 0);

    const sut = plan([pod], [sandbox(pod), app(pod, 'web', 0)], T0);

    assert.equal(sut.actions[0]?.kind === 'KillPod' && sut.actions[0].graceSeconds, MINIMUM_GRACE_SECONDS);
  });

  it('stops a terminating pod whose only running container is its sandbox', () => {
    const pod = terminating(desired(ref(UID_A), 'Always', ['web']), 12);

    const sut = plan([pod], [sandbox(pod), exited(pod, 'web', 0, 0, T0 + 5000)], T0 + 6000);

    assert.deepEqual(kinds(sut.actions), ['KillPod']);
  });

  it('finalizes a terminating pod once every container is stopped, naming them all, and restarts none', () => {
    const pod = terminating(desired(ref(UID_A)), 12);
    const observed = [sandbox(pod, { state: 'exited', exitCode: 0 }), exited(pod, 'web', 0, 1, T0 + 5000), exited(pod, 'sidecar', 0, 0, T0 + 5000)];

    const sut = plan([pod], observed, T0 + 6000);

    assert.deepEqual(sut, { actions: [{ kind: 'FinalizePod', pod, containerIds: observed.map((c) => c.id) }] });
  });

  it('reports a terminating pod removed once none of its containers is left', () => {
    const pod = terminating(desired(ref(UID_A)), 12);

    const sut = plan([pod], [], T0);

    assert.deepEqual(sut, { actions: [{ kind: 'ReportRemoved', pod }] });
  });
});

describe('planReconcile: dead attempts', () => {
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
    const book = new BackoffBook(KUBERNETES_BACKOFF);
    book.next(crashKey(UID_A, 'web'), T0 + 1000);
    book.next(crashKey(UID_A, 'web'), T0 + 2000);
    const observed = [sandbox(pod), exited(pod, 'web', 0, 1, T0 + 1000), exited(pod, 'web', 1, 1, T0 + 2000), exited(pod, 'web', 2, 1, T0 + 30_000)];

    const sut = plan([pod], observed, T0 + 31_000, book);

    assert.deepEqual(sut.actions.map((a) => (a.kind === 'RemoveContainer' ? a.containerId : a.kind)).sort(), [observed[1].id, observed[2].id].sort());
    assert.equal(sut.wakeAtMs, T0 + 50_000);
  });

  it('keeps a single dead attempt', () => {
    const pod = desired(ref(UID_A), 'Always', ['web']);

    const sut = plan([pod], [sandbox(pod), exited(pod, 'web', 0, 1, T0 + 1000), app(pod, 'web', 1)], T0 + 60_000);

    assert.deepEqual(sut, { actions: [] });
  });
});

describe('planReconcile: sandbox changes', () => {
  it('kills and removes every container of a pod whose sandbox died, with the pod grace, as SandboxChanged', () => {
    // The kubelet kills the pod with no grace override (killPodWithSyncResult(..., nil)): each
    // container gets the pod's terminationGracePeriodSeconds.
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
          graceSeconds: 30,
          reason: 'SandboxChanged',
          remove: true,
        },
      ],
    });
  });

  it('stops but does not start over a Never pod whose sandbox died while its container ran', () => {
    // computePodActions: no new sandbox when the policy is Never and containers have run;
    // the pod is killed and ends Failed.
    const pod = desired(ref(UID_A), 'Never', ['web']);
    const observed = [sandbox(pod, { state: 'exited', exitCode: 137, ip: undefined }), app(pod, 'web', 0)];

    const sut = plan([pod], observed, T0 + 60_000);

    assert.deepEqual(
      sut.actions.map((a) => (a.kind === 'KillPod' ? [a.kind, a.remove] : [a.kind])),
      [['KillPod', false]],
    );
  });

  it('does not start a finished pod over when its sandbox is gone', () => {
    const pod = desired(ref(UID_A), 'Never', ['web']);

    const sut = plan([pod], [sandbox(pod, { state: 'exited', exitCode: 0 }), exited(pod, 'web', 0, 0, T0 + 5000)], T0 + 60_000);

    assert.deepEqual(sut, { actions: [] });
  });

  it('stops the sandbox of a pod whose containers all finished and will not restart, keeping the containers', () => {
    // computePodActions: keepCount == 0 && len(ContainersToStart) == 0 → KillPod.
    const pod = desired(ref(UID_A), 'OnFailure', ['web']);
    const box = sandbox(pod);

    const sut = plan([pod], [box, exited(pod, 'web', 0, 0, T0 + 5000)], T0 + 60_000);

    assert.ok(
      sut.actions.some((a) => a.kind === 'KillPod' && a.sandboxIds.includes(box.id) && !a.remove),
      `expected the sandbox to be stopped, got ${JSON.stringify(kinds(sut.actions))}`,
    );
  });
});

describe('planReconcile: several pods', () => {
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

describe('planReconcile: sandbox attempts', () => {
  it('runs a new sandbox, numbered after the dead one, when everything of the pod is dead (an engine restart)', () => {
    const pod = desired(ref(UID_A), 'Always', ['web']);
    const observed = [sandbox(pod, { state: 'exited', exitCode: 0, ip: undefined }), exited(pod, 'web', 2, 137, T0 + 5000)];

    const sut = plan([pod], observed, T0 + 60_000);

    assert.deepEqual(sut.actions, [{ kind: 'RunSandbox', pod, attempt: 1 }]);
  });

  it('removes dead sandboxes of earlier attempts once a newer one runs', () => {
    const pod = desired(ref(UID_A), 'Always', ['web']);
    const old = sandbox(pod, { id: 'old-sandbox', state: 'exited', exitCode: 0, ip: undefined });
    const current = sandbox(pod, { id: 'new-sandbox', labels: { ...sandbox(pod).labels, [LABELS.restartCount]: '1' } });

    const sut = plan([pod], [old, current, app(pod, 'web', 3)], T0 + 60_000);

    assert.deepEqual(sut.actions, [{ kind: 'RemoveContainer', pod, containerId: 'old-sandbox' }]);
  });
});

describe('planReconcile: exactly one sandbox per pod', () => {
  const attemptLabels = (pod: PodRef, attempt: number): Record<string, string> => ({ ...podLabels(pod, 'sandbox'), [LABELS.restartCount]: String(attempt) });

  it('starts a sandbox still in the created state under its own attempt, never a second one', () => {
    // A list taken while a worker was starting sandbox 0, or an agent killed between create and start.
    const pod = desired(ref(UID_A), 'Always', ['web']);
    const created = sandbox(pod, { state: 'created', startedAt: undefined, ip: undefined });

    const sut = plan([pod], [created], T0 + 1000);

    assert.deepEqual(sut.actions, [{ kind: 'RunSandbox', pod, attempt: 0 }]);
  });

  it('starts the created sandbox of a later attempt, numbered as it is, beside dead ones', () => {
    const pod = desired(ref(UID_A), 'Always', ['web']);
    const dead = sandbox(pod, { id: 'dead', state: 'exited', exitCode: 0, ip: undefined });
    const created = sandbox(pod, {
      id: 'created',
      name: sandboxName(pod, 1),
      labels: attemptLabels(pod, 1),
      state: 'created',
      startedAt: undefined,
      ip: undefined,
    });

    const sut = plan([pod], [dead, created, exited(pod, 'web', 0, 137, T0 + 500)], T0 + 60_000);

    assert.deepEqual(sut.actions, [{ kind: 'RunSandbox', pod, attempt: 1 }]);
  });

  it('runs a new sandbox beside one the engine could not start (created with an error)', () => {
    const pod = desired(ref(UID_A), 'Always', ['web']);
    const failed = sandbox(pod, { state: 'created', startedAt: undefined, ip: undefined, exitCode: 128, error: 'oci runtime error' });

    const sut = plan([pod], [failed], T0 + 60_000);

    assert.deepEqual(sut.actions, [{ kind: 'RunSandbox', pod, attempt: 1 }]);
  });

  it('stops a second running sandbox, keeping the one the app containers joined, and starts nothing in the other', () => {
    const pod = desired(ref(UID_A), 'Always', ['web']);
    const first = sandbox(pod, { id: 'first', ip: '172.17.0.5' });
    const second = sandbox(pod, { id: 'second', name: sandboxName(pod, 1), labels: attemptLabels(pod, 1), ip: '172.17.0.6' });
    const web = app(pod, 'web', 0, { networkOf: 'second' });

    const sut = plan([pod], [first, second, web], T0 + 60_000);

    assert.deepEqual(sut.actions, [{ kind: 'KillPod', pod, containerIds: [], sandboxIds: ['first'], graceSeconds: 30, reason: 'ExtraSandbox', remove: false }]);
  });

  it('keeps the oldest attempt when no app container joined either sandbox yet, and starts containers in it', () => {
    const pod = desired(ref(UID_A), 'Always', ['web']);
    const first = sandbox(pod, { id: 'first' });
    const second = sandbox(pod, { id: 'second', name: sandboxName(pod, 1), labels: attemptLabels(pod, 1) });

    const sut = plan([pod], [second, first], T0 + 60_000);

    assert.deepEqual(
      sut.actions.map((a) => (a.kind === 'KillPod' ? [a.kind, a.sandboxIds] : a.kind === 'StartContainer' ? [a.kind, a.sandboxId] : [a.kind])),
      [
        ['KillPod', ['second']],
        ['StartContainer', 'first'],
      ],
    );
  });

  it('stops the running app containers that joined the extra sandbox with it, as they lose their network', () => {
    const pod = desired(ref(UID_A), 'Always', ['web', 'sidecar']);
    const kept = sandbox(pod, { id: 'kept' });
    const extra = sandbox(pod, { id: 'extra', name: sandboxName(pod, 1), labels: attemptLabels(pod, 1) });
    const web = app(pod, 'web', 0, { networkOf: 'kept' });
    const sidecar = app(pod, 'sidecar', 0, { networkOf: 'kept' });
    const strayWeb = app(pod, 'web', 1, { networkOf: 'extra', id: 'stray' });

    const sut = plan([pod], [kept, extra, web, sidecar, strayWeb], T0 + 60_000);

    const kill = sut.actions.find((a) => a.kind === 'KillPod');
    assert.deepEqual(kill && [kill.containerIds, kill.sandboxIds, kill.reason], [['stray'], ['extra'], 'ExtraSandbox']);
  });

  it('removes a stopped extra sandbox and a created one beside the running sandbox', () => {
    const pod = desired(ref(UID_A), 'Always', ['web']);
    const kept = sandbox(pod, { id: 'kept' });
    const stopped = sandbox(pod, { id: 'stopped', labels: attemptLabels(pod, 1), state: 'exited', exitCode: 0, ip: undefined });
    const created = sandbox(pod, { id: 'created', labels: attemptLabels(pod, 2), state: 'created', startedAt: undefined, ip: undefined });

    const sut = plan([pod], [kept, stopped, created, app(pod, 'web', 0, { networkOf: 'kept' })], T0 + 60_000);

    assert.deepEqual(sut.actions, [
      { kind: 'RemoveContainer', pod, containerId: 'stopped' },
      { kind: 'RemoveContainer', pod, containerId: 'created' },
    ]);
  });

  it('stops every running sandbox of a finished pod', () => {
    const pod = desired(ref(UID_A), 'OnFailure', ['web']);
    const first = sandbox(pod, { id: 'first' });
    const second = sandbox(pod, { id: 'second', labels: attemptLabels(pod, 1) });

    const sut = plan([pod], [first, second, exited(pod, 'web', 0, 0, T0 + 5000)], T0 + 60_000);

    assert.deepEqual(
      sut.actions.map((a) => (a.kind === 'KillPod' ? [a.reason, [...a.sandboxIds].sort()] : [a.kind])),
      [['PodCompleted', ['first', 'second']]],
    );
  });
});

describe('planReconcile: back-off after a failed create or start', () => {
  it('plans no start (and so no engine call) while the back-off of a failed create runs, and wakes when it ends', () => {
    const pod = desired(ref(UID_A), 'Always', ['web']);
    const book = new BackoffBook(KUBERNETES_BACKOFF);
    book.next(startKey(pod.uid, specOf('web')), T0);

    const waiting = planReconcile({
      desired: [pod],
      observed: [sandbox(pod)],
      nowMs: T0 + 9_000,
      backoff: new BackoffBook(KUBERNETES_BACKOFF),
      startBackoff: book,
      orphanGraceSeconds: ORPHAN_GRACE,
    });
    const after = planReconcile({
      desired: [pod],
      observed: [sandbox(pod)],
      nowMs: T0 + 10_000,
      backoff: new BackoffBook(KUBERNETES_BACKOFF),
      startBackoff: book,
      orphanGraceSeconds: ORPHAN_GRACE,
    });

    assert.deepEqual(waiting, { actions: [], wakeAtMs: T0 + 10_000 });
    assert.deepEqual(kinds(after.actions), ['StartContainer']);
  });

  it('doubles the wait with each failure, as a crash does', () => {
    const pod = desired(ref(UID_A), 'Always', ['web']);
    const book = new BackoffBook(KUBERNETES_BACKOFF);
    const key = startKey(pod.uid, specOf('web'));
    book.next(key, T0);
    book.next(key, T0 + 10_000);

    const sut = planReconcile({
      desired: [pod],
      observed: [sandbox(pod)],
      nowMs: T0 + 25_000,
      backoff: new BackoffBook(KUBERNETES_BACKOFF),
      startBackoff: book,
      orphanGraceSeconds: ORPHAN_GRACE,
    });

    assert.deepEqual(sut, { actions: [], wakeAtMs: T0 + 30_000 });
  });

  it('tries a changed spec at once', () => {
    const pod = desired(ref(UID_A), 'Always', ['web']);
    const book = new BackoffBook(KUBERNETES_BACKOFF);
    book.next(startKey(pod.uid, { ...specOf('web'), image: 'example/web:0.9' }), T0);

    const sut = planReconcile({
      desired: [pod],
      observed: [sandbox(pod)],
      nowMs: T0 + 1000,
      backoff: new BackoffBook(KUBERNETES_BACKOFF),
      startBackoff: book,
      orphanGraceSeconds: ORPHAN_GRACE,
    });

    assert.deepEqual(kinds(sut.actions), ['StartContainer']);
  });
});
