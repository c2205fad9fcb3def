import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { leaseView, microTime } from './lease.js';
import { toTable } from './printers.js';

const RECORD = {
  name: 'kube-scheduler',
  holderIdentity: 'host-a_1b2c',
  leaseDurationSeconds: 15,
  acquireTime: '2026-12-07T17:30:00.123Z',
  renewTime: '2026-12-07T17:36:23.5Z',
  leaseTransitions: 2,
};

describe('leaseView', () => {
  it('shows a lease record as a coordination.k8s.io/v1 Lease in kube-system, its times as MicroTime', () => {
    const lease = leaseView(RECORD, 42, '2026-12-07T09:00:00.123456789Z');

    assert.deepEqual(lease, {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'kube-scheduler', namespace: 'kube-system', resourceVersion: '42', creationTimestamp: '2026-12-07T09:00:00Z' },
      spec: {
        holderIdentity: 'host-a_1b2c',
        leaseDurationSeconds: 15,
        acquireTime: '2026-12-07T17:30:00.123000Z',
        renewTime: '2026-12-07T17:36:23.500000Z',
        leaseTransitions: 2,
      },
    });
  });

  it('leaves a time it cannot read as written', () => {
    assert.equal(microTime('not a time'), 'not a time');
  });

  it('prints NAME, HOLDER and AGE as kubectl get lease shows them, an empty holder once let go', () => {
    const now = Date.parse('2026-12-07T10:00:00Z');
    const held = leaseView(RECORD, 42, '2026-12-07T09:00:00Z');
    const released = leaseView({ ...RECORD, name: 'other', holderIdentity: '' }, 43, '2026-12-07T09:59:30Z');

    const table = toTable('Lease', [held, released], { nowMs: now, includeObject: 'None' }) as {
      columnDefinitions: Array<{ name: string }>;
      rows: Array<{ cells: unknown[] }>;
    };

    assert.deepEqual(
      table.columnDefinitions.map((c) => c.name),
      ['Name', 'Holder', 'Age'],
    );
    assert.deepEqual(
      table.rows.map((r) => r.cells),
      [
        ['kube-scheduler', 'host-a_1b2c', '60m'],
        ['other', '', '30s'],
      ],
    );
  });
});
