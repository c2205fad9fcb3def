import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PressureCondition } from '#domain';
import {
  allocatableFrom,
  NODE_LABELS_FORMAT,
  parseNodeLabels,
  parseTaints,
  pressureConditions,
  RESERVED_FORMAT,
  TAINTS_FORMAT,
  type SignalReadings,
} from './node-conditions.js';

const ok = (available: number, capacity: number) => ({ ok: true as const, value: { available, capacity } });
const fine: SignalReadings = {
  'memory.available': ok(8 * 2 ** 30, 16 * 2 ** 30),
  'nodefs.available': ok(50 * 2 ** 30, 100 * 2 ** 30),
  'nodefs.inodesFree': ok(900_000, 1_000_000),
  'imagefs.available': ok(50 * 2 ** 30, 100 * 2 ** 30),
  'pid.available': ok(4_000_000, 4_194_304),
};

describe('pressureConditions', () => {
  it('reports no pressure with headroom, with the kubelet reasons', () => {
    const sut = pressureConditions(new Set(), fine);
    assert.deepEqual(
      sut.map((c) => `${c.type}=${c.status}/${c.reason}`),
      ['MemoryPressure=False/KubeletHasSufficientMemory', 'DiskPressure=False/KubeletHasNoDiskPressure', 'PIDPressure=False/KubeletHasSufficientPID'],
    );
  });

  it('reports the pressure the eviction manager holds', () => {
    const sut = pressureConditions(new Set<PressureCondition>(['MemoryPressure', 'DiskPressure', 'PIDPressure']), fine);
    assert.deepEqual(
      sut.map((c) => `${c.status}/${c.reason}`),
      ['True/KubeletHasInsufficientMemory', 'True/KubeletHasDiskPressure', 'True/KubeletHasInsufficientPID'],
    );
  });

  it('says Unknown, with why, for a reading that could not be taken, never a made-up number', () => {
    const sut = pressureConditions(new Set(), { ...fine, 'pid.available': { ok: false, why: 'process ids: ENOENT /proc/sys/kernel/pid_max' } });
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

  it('keeps ephemeral-storage for the system too, in Ki', () => {
    const capacity = { cpu: '2', memory: '4194304Ki', 'ephemeral-storage': '20971520Ki', pods: '110' };
    assert.deepEqual(allocatableFrom(capacity, 'ephemeral-storage=2Gi', parse), { ...capacity, 'ephemeral-storage': '18874368Ki' });
    assert.equal(allocatableFrom(capacity, '', parse)['ephemeral-storage'], '20971520Ki');
    assert.equal(allocatableFrom(capacity, 'ephemeral-storage=100Gi', parse)['ephemeral-storage'], '0Ki');
    assert.match('cpu=500m,memory=1Gi,ephemeral-storage=1Gi', RESERVED_FORMAT);
    assert.doesNotMatch('disk=1Gi', RESERVED_FORMAT);
  });

  it('is the capacity when nothing is reserved, and never negative', () => {
    assert.deepEqual(allocatableFrom({ cpu: '2', memory: '1024Ki', pods: '110' }, '', parse), { cpu: '2', memory: '1024Ki', pods: '110' });
    assert.equal(allocatableFrom({ cpu: '1', memory: '1024Ki', pods: '110' }, 'cpu=2', parse).cpu, '0m');
  });
});
