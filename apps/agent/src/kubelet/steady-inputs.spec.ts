import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { DesiredPod } from '#domain/reconcile';
import type { RuntimeContainer } from '#runtime';
import { sameInputs, steadyInputs } from './reconciler.service.js';

const pod: DesiredPod = {
  namespace: 'default',
  name: 'web',
  uid: 'u1',
  manifest: { metadata: { name: 'web' }, spec: { containers: [{ name: 'main', image: 'jetlet/busybox:1.35' }] } },
};
const container = (id: string, state: RuntimeContainer['state'] = 'running'): RuntimeContainer => ({
  id,
  name: id,
  image: 'jetlet/busybox:1.35',
  imageId: 'sha256:b',
  labels: {},
  state,
  createdAt: '2026-12-01T10:00:00.000Z',
  oomKilled: false,
});

describe('steadyInputs: when a pod status computed again would be the same', () => {
  const sandbox = container('s');
  const main = container('m');
  const reported = { phase: 'Running' };
  const noProbes = new Map<string, { started?: boolean; ready?: boolean }>();
  const inputs = steadyInputs(pod, [sandbox, main], '10.0.0.1', noProbes, reported) ?? [];

  it('matches the same container objects, spec, node address, probe results and reported status', () => {
    assert.ok(sameInputs(steadyInputs(pod, [sandbox, main], '10.0.0.1', new Map(), reported), inputs));
  });

  it('does not match once anything it was computed from moved', () => {
    assert.ok(!sameInputs(steadyInputs(pod, [sandbox, container('m')], '10.0.0.1', noProbes, reported), inputs), 'a container inspected anew');
    assert.ok(!sameInputs(steadyInputs(pod, [sandbox], '10.0.0.1', noProbes, reported), inputs), 'a container gone');
    assert.ok(!sameInputs(steadyInputs({ ...pod, manifest: { ...pod.manifest } }, [sandbox, main], '10.0.0.1', noProbes, reported), inputs), 'a new spec');
    assert.ok(!sameInputs(steadyInputs(pod, [sandbox, main], '10.0.0.2', noProbes, reported), inputs), 'the node address');
    assert.ok(!sameInputs(steadyInputs(pod, [sandbox, main], '10.0.0.1', new Map([['m', { ready: true }]]), reported), inputs), 'a probe result');
    assert.ok(!sameInputs(steadyInputs(pod, [sandbox, main], '10.0.0.1', noProbes, { phase: 'Running' }), inputs), 'another report of the pod');
  });

  it('is undefined while a container is not running: back-off, the clock and termination messages count then', () => {
    assert.equal(steadyInputs(pod, [sandbox, container('m', 'exited')], '10.0.0.1', noProbes, reported), undefined);
    assert.equal(steadyInputs(pod, [sandbox, container('m', 'created')], '10.0.0.1', noProbes, reported), undefined);
  });
});
