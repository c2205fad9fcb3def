import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PodSpec } from '#contracts';
import { deletionFinalizeTimeMs, evictionTimeMs, heldEvictions, inZone, unreachableTaints, UNREACHABLE_TAINT_KEY } from './node-lifecycle.js';

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

describe('heldEvictions', () => {
  const node = (ready: boolean, zone?: string) => ({ ready, ...(zone ? { labels: { 'topology.kubernetes.io/zone': zone } } : {}) });

  it('holds every eviction while no node of a cluster of two or more is Ready, and none while one is', () => {
    assert.equal(heldEvictions([node(false), node(false), node(false)]).all, true);
    assert.equal(heldEvictions([node(false), node(true), node(false)]).all, false);
    assert.equal(heldEvictions([node(false), node(false)]).all, true);
  });

  it('keeps evicting from a one-node cluster, and has nothing to hold without nodes', () => {
    assert.equal(heldEvictions([node(false)]).all, false);
    assert.equal(heldEvictions([]).all, false);
  });

  it('holds every eviction only when every zone is fully disrupted; a dead zone beside a live one is evicted from', () => {
    assert.equal(heldEvictions([node(false, 'a'), node(false, 'b')]).all, true);
    const oneDead = heldEvictions([node(false, 'a'), node(false, 'a'), node(true, 'b')]);
    assert.equal(oneDead.all, false);
    assert.equal(inZone(oneDead.zones, { 'topology.kubernetes.io/zone': 'a' }), false);
  });

  it('holds a small zone in partial disruption: more than two nodes NotReady, at least 55% of it', () => {
    const partial = heldEvictions([node(false, 'a'), node(false, 'a'), node(false, 'a'), node(true, 'a'), node(true, 'b')]);
    assert.equal(partial.all, false);
    assert.equal(inZone(partial.zones, { 'topology.kubernetes.io/zone': 'a' }), true);
    assert.equal(inZone(partial.zones, { 'topology.kubernetes.io/zone': 'b' }), false);
    const two = heldEvictions([node(false, 'a'), node(false, 'a'), node(true, 'a')]);
    assert.equal(inZone(two.zones, { 'topology.kubernetes.io/zone': 'a' }), false, 'two NotReady nodes are not a disruption');
    const under = heldEvictions([node(false, 'a'), node(false, 'a'), node(false, 'a'), node(true, 'a'), node(true, 'a'), node(true, 'a')]);
    assert.equal(inZone(under.zones, { 'topology.kubernetes.io/zone': 'a' }), false, '50% is under the threshold');
  });

  it('evicts from a zone of more than 50 nodes in partial disruption (Kubernetes slows it to a secondary rate; there is no eviction rate here)', () => {
    const large = heldEvictions([...Array.from({ length: 40 }, () => node(false, 'a')), ...Array.from({ length: 11 }, () => node(true, 'a'))]);
    assert.equal(inZone(large.zones, { 'topology.kubernetes.io/zone': 'a' }), false);
  });
});
