import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { EphemeralContainer, PodManifest } from '#contracts';
import { LABELS, type RuntimeContainer } from '#runtime/port';
import { BackoffBook, KUBERNETES_BACKOFF } from './backoff.js';
import { containerSpecHash } from './pod-naming.js';
import { ephemeralContainerChanges, podSpecCauses } from './pod-defaults.js';
import { computePodStatus } from './pod-status.js';
import { planReconcile, type DesiredPod } from './reconcile.js';

const UID = '6f1c2b1e-3b9a-4c1d-9f2e-0a1b2c3d4e5f';
const T0 = Date.parse('2024-05-01T10:00:00.000Z');
const MAIN = { name: 'main', image: 'example/main:1.0', imagePullPolicy: 'IfNotPresent' as const };
const DEBUGGER: EphemeralContainer = { name: 'debugger', image: 'example/tools:1.0', imagePullPolicy: 'IfNotPresent', targetContainerName: 'main' };

function pod(ephemeralContainers: EphemeralContainer[], restartPolicy: 'Always' | 'Never' = 'Always'): DesiredPod {
  const manifest: PodManifest = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: 'default', uid: UID },
    spec: { containers: [MAIN], ephemeralContainers, restartPolicy, nodeName: 'node-1' },
  };
  return { namespace: 'default', name: 'web', uid: UID, manifest };
}

function container(kind: 'sandbox' | 'container', name: string, overrides: Partial<RuntimeContainer> = {}, spec?: object): RuntimeContainer {
  return {
    id: `${name}-id`,
    name,
    image: 'x',
    imageId: 'sha256:x',
    labels: {
      [LABELS.node]: 'node-1',
      [LABELS.podNamespace]: 'default',
      [LABELS.podName]: 'web',
      [LABELS.podUid]: UID,
      [LABELS.kind]: kind,
      [LABELS.containerName]: name,
      [LABELS.restartCount]: '0',
      ...(spec ? { [LABELS.specHash]: containerSpecHash(spec as EphemeralContainer) } : {}),
    },
    state: 'running',
    createdAt: new Date(T0).toISOString(),
    startedAt: new Date(T0 + 100).toISOString(),
    oomKilled: false,
    ...overrides,
  };
}

const sandbox = container('sandbox', 'POD', { ip: '172.17.0.9' });
const main = (overrides: Partial<RuntimeContainer> = {}): RuntimeContainer => container('container', 'main', overrides, MAIN);
const debuggerRun = (overrides: Partial<RuntimeContainer> = {}): RuntimeContainer => container('container', 'debugger', overrides, DEBUGGER);

const plan = (desired: DesiredPod, observed: RuntimeContainer[]) =>
  planReconcile({ desired: [desired], observed, nowMs: T0 + 60_000, backoff: new BackoffBook(KUBERNETES_BACKOFF), orphanGraceSeconds: 30 }).actions;

describe('ephemeral containers', () => {
  it('start once their target runs, in its process namespace', () => {
    assert.deepEqual(
      plan(pod([DEBUGGER]), [sandbox, main()]).map((a) => (a.kind === 'StartContainer' ? [a.container.name, a.pidOf] : a.kind)),
      [['debugger', 'main-id']],
    );
    // A target that is not running yet holds the ephemeral container back.
    assert.deepEqual(
      plan(pod([DEBUGGER]), [sandbox, main({ state: 'exited', exitCode: 1, finishedAt: new Date(T0 + 50_000).toISOString() })])
        .filter((a) => a.kind === 'StartContainer')
        .map((a) => (a.kind === 'StartContainer' ? a.container.name : '')),
      ['main'],
    );
  });

  it('are never restarted, whatever the pod restart policy and exit code', () => {
    for (const exitCode of [0, 137]) {
      const ended = debuggerRun({ state: 'exited', exitCode, finishedAt: new Date(T0 + 1000).toISOString() });
      assert.deepEqual(plan(pod([DEBUGGER], 'Always'), [sandbox, main(), ended]), []);
    }
  });

  it('show in ephemeralContainerStatuses, never ready, and leave the phase and readiness to the containers', () => {
    const desired = pod([DEBUGGER]);
    const status = computePodStatus({
      pod: desired,
      manifest: desired.manifest,
      observed: [sandbox, main(), debuggerRun({ state: 'exited', exitCode: 2, finishedAt: new Date(T0 + 1000).toISOString() })],
      hostIP: '192.0.2.1',
      nowMs: T0 + 2000,
      backoff: new BackoffBook(KUBERNETES_BACKOFF),
    });
    assert.equal(status.phase, 'Running');
    assert.equal(status.conditions?.find((c) => c.type === 'Ready')?.status, 'True');
    const [shown] = status.ephemeralContainerStatuses ?? [];
    assert.equal(shown?.name, 'debugger');
    assert.equal(shown?.ready, false);
    assert.equal(shown?.state.terminated?.exitCode, 2);
  });

  it('may not have ports, probes, hooks, resources or a restart policy, and target one of the pod containers', () => {
    const bad = {
      ...DEBUGGER,
      ports: [{ containerPort: 80 }],
      livenessProbe: { exec: { command: ['true'] } },
      lifecycle: { preStop: { exec: { command: ['true'] } } },
      resources: { requests: { cpu: '1' } },
      targetContainerName: 'nope',
    };
    const causes = podSpecCauses(pod([bad]).manifest).map((c) => `${c.field}: ${c.message}`);
    assert.deepEqual(causes, [
      'spec.ephemeralContainers[0].ports: Forbidden: cannot be set for an Ephemeral Container',
      'spec.ephemeralContainers[0].livenessProbe: Forbidden: cannot be set for an Ephemeral Container',
      'spec.ephemeralContainers[0].lifecycle: Forbidden: cannot be set for an Ephemeral Container',
      'spec.ephemeralContainers[0].resources: Forbidden: cannot be set for an Ephemeral Container',
      'spec.ephemeralContainers[0].targetContainerName: Not found: "nope"',
    ]);
    // What kubectl debug sends: empty resources are no resources.
    assert.deepEqual(podSpecCauses(pod([{ ...DEBUGGER, resources: {} }]).manifest), []);
    assert.deepEqual(
      podSpecCauses(pod([{ ...DEBUGGER, name: 'main' }]).manifest).map((c) => c.field),
      ['spec.ephemeralContainers[0].name'],
    );
  });

  it('may be added to, never changed or removed', () => {
    const other = { ...DEBUGGER, name: 'other' };
    assert.deepEqual(ephemeralContainerChanges([DEBUGGER], [DEBUGGER, other]), []);
    assert.deepEqual(
      ephemeralContainerChanges([DEBUGGER, other], [{ ...DEBUGGER, image: 'example/tools:2.0' }]).map((c) => `${c.field}: ${c.message}`),
      [
        'spec.ephemeralContainers[0]: Forbidden: existing ephemeral containers "debugger" may not be changed',
        'spec.ephemeralContainers: Forbidden: existing ephemeral containers "other" may not be removed',
      ],
    );
  });
});
