import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PodSpec } from '#contracts';
import { deletionFinalizeTimeMs, evictionTimeMs, unreachableTaints, UNREACHABLE_TAINT_KEY } from './node-lifecycle.js';

const T0 = Date.parse('2026-11-29T08:00:00Z');
const spec = (tolerations?: PodSpec['tolerations']): PodSpec => ({ containers: [{ name: 'c', image: 'x:1' }], ...(tolerations ? { tolerations } : {}) });

describe('evictionTimeMs', () => {
  it('evicts after the default toleration when the pod has none', () => {
    assert.equal(evictionTimeMs(spec(), T0, 300), T0 + 300_000);
  });

  it("uses the pod's own tolerationSeconds for the unreachable NoExecute taint", () => {
    assert.equal(evictionTimeMs(spec([{ key: UNREACHABLE_TAINT_KEY, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 5 }]), T0, 300), T0 + 5000);
  });

  it('never evicts a pod that tolerates the taint without a limit, or tolerates everything', () => {
    assert.equal(evictionTimeMs(spec([{ key: UNREACHABLE_TAINT_KEY, operator: 'Exists', effect: 'NoExecute' }]), T0, 300), undefined);
    assert.equal(evictionTimeMs(spec([{ operator: 'Exists' }]), T0, 300), undefined);
  });

  it('ignores tolerations of other taints or of NoSchedule only', () => {
    assert.equal(evictionTimeMs(spec([{ key: 'dedicated', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 1 }]), T0, 300), T0 + 300_000);
    assert.equal(evictionTimeMs(spec([{ key: UNREACHABLE_TAINT_KEY, operator: 'Exists', effect: 'NoSchedule' }]), T0, 300), T0 + 300_000);
  });
});

describe('unreachableTaints', () => {
  it('gives the NoSchedule and NoExecute taints with the time they were added', () => {
    assert.deepEqual(unreachableTaints(T0), [
      { key: UNREACHABLE_TAINT_KEY, effect: 'NoSchedule', timeAdded: '2026-11-29T08:00:00Z' },
      { key: UNREACHABLE_TAINT_KEY, effect: 'NoExecute', timeAdded: '2026-11-29T08:00:00Z' },
    ]);
  });
});

describe('deletionFinalizeTimeMs', () => {
  const GRACE = 40_000;

  it('finalises the deletion of a pod on a node that never registered once the grace has passed since the deletion', () => {
    assert.equal(deletionFinalizeTimeMs(T0, undefined, GRACE, false), T0 + GRACE);
    assert.equal(deletionFinalizeTimeMs(T0, undefined, GRACE, true), T0 + GRACE, 'an eviction too: no node will ever stop it');
  });

  it('waits for the grace since the later of the deletion and the last heartbeat of a silent node', () => {
    assert.equal(deletionFinalizeTimeMs(T0, { ready: false, lastHeartbeatMs: T0 - 60_000 }, GRACE, false), T0 + GRACE);
    assert.equal(deletionFinalizeTimeMs(T0, { ready: false, lastHeartbeatMs: T0 + 5000 }, GRACE, false), T0 + 5000 + GRACE);
  });

  it('leaves the pods of a Ready node, and evictions from a node that exists, to that node', () => {
    assert.equal(deletionFinalizeTimeMs(T0, { ready: true, lastHeartbeatMs: T0 }, GRACE, false), undefined);
    assert.equal(deletionFinalizeTimeMs(T0, { ready: false, lastHeartbeatMs: T0 - 60_000 }, GRACE, true), undefined);
  });
});
