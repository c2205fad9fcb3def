import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  allocatableFrom,
  NODE_LABELS_FORMAT,
  parseNodeLabels,
  parseTaints,
  pressureConditions,
  TAINTS_FORMAT,
  THRESHOLDS,
  type NodeReadings,
} from './node-conditions.js';

const fine: NodeReadings = {
  memoryAvailable: { ok: true, value: 8 * 2 ** 30 },
  diskFreeFraction: { ok: true, value: 0.5 },
  pidFreeFraction: { ok: true, value: 0.99 },
};

describe('pressureConditions', () => {
  it('reports no pressure with headroom, with the kubelet reasons', () => {
    const sut = pressureConditions(fine);
    assert.deepEqual(
      sut.map((c) => `${c.type}=${c.status}/${c.reason}`),
      ['MemoryPressure=False/KubeletHasSufficientMemory', 'DiskPressure=False/KubeletHasNoDiskPressure', 'PIDPressure=False/KubeletHasSufficientPID'],
    );
  });

  it('reports pressure below the kubelet thresholds', () => {
    const sut = pressureConditions({
      memoryAvailable: { ok: true, value: THRESHOLDS.memoryAvailableBytes - 1 },
      diskFreeFraction: { ok: true, value: 0.05 },
      pidFreeFraction: { ok: true, value: 0.01 },
    });
    assert.deepEqual(
      sut.map((c) => c.status),
      ['True', 'True', 'True'],
    );
  });

  it('says Unknown, with why, for a reading that could not be taken, never a made-up number', () => {
    const sut = pressureConditions({ ...fine, pidFreeFraction: { ok: false, why: 'process ids: ENOENT /proc/sys/kernel/pid_max' } });
    const pid = sut.find((c) => c.type === 'PIDPressure');
    assert.equal(pid?.status, 'Unknown');
    assert.match(pid?.message ?? '', /cannot be determined: process ids: ENOENT/);
  });
});

describe('node labels and taints from configuration', () => {
  it('parses the kubelet --node-labels form', () => {
    assert.deepEqual(parseNodeLabels('zone=a,disk=ssd'), { zone: 'a', disk: 'ssd' });
    assert.deepEqual(parseNodeLabels(''), {});
    assert.ok(NODE_LABELS_FORMAT.test('topology.kubernetes.io/zone=eu-1,disk=ssd'));
    assert.ok(!NODE_LABELS_FORMAT.test('zone'));
  });

  it('parses the kubelet --register-with-taints form', () => {
    assert.deepEqual(parseTaints('dedicated=gpu:NoSchedule,maintenance:NoExecute'), [
      { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' },
      { key: 'maintenance', effect: 'NoExecute' },
    ]);
    assert.ok(TAINTS_FORMAT.test('dedicated=gpu:NoSchedule'));
    assert.ok(!TAINTS_FORMAT.test('dedicated=gpu:Sometimes'));
  });
});

describe('allocatableFrom', () => {
  const parse = (q: string): number =>
    q.endsWith('m')
      ? Number(q.slice(0, -1)) / 1000
      : q.endsWith('Ki')
        ? Number(q.slice(0, -2)) * 1024
        : q.endsWith('Gi')
          ? Number(q.slice(0, -2)) * 2 ** 30
          : Number(q);

  it('subtracts what the system keeps, in Kubernetes units', () => {
    assert.deepEqual(allocatableFrom({ cpu: '2', memory: '4194304Ki', pods: '110' }, 'cpu=500m,memory=1Gi', parse), {
      cpu: '1500m',
      memory: '3145728Ki',
      pods: '110',
    });
  });

  it('is the capacity when nothing is reserved, and never negative', () => {
    assert.deepEqual(allocatableFrom({ cpu: '2', memory: '1024Ki', pods: '110' }, '', parse), { cpu: '2', memory: '1024Ki', pods: '110' });
    assert.equal(allocatableFrom({ cpu: '1', memory: '1024Ki', pods: '110' }, 'cpu=2', parse).cpu, '0m');
  });
});
