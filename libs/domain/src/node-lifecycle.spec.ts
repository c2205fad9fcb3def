import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PodSpec } from '#contracts';
import { evictionTimeMs, unreachableTaints, UNREACHABLE_TAINT_KEY } from './node-lifecycle.js';

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
