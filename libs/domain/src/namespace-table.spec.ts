import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AnyEnvelope } from '#contracts';
import { NamespaceTable, namespaceView } from './namespace-table.js';

const UID = '6f1c2b1e-3b9a-4c1d-9f2e-0a1b2c3d4e5f';
const envelope = (type: string, data: unknown): AnyEnvelope =>
  ({ id: `${type}-1`, type, version: 1, time: '2026-05-01T10:00:00.000Z', source: { component: 'api' }, correlationId: UID, data }) as AnyEnvelope;

describe('NamespaceTable', () => {
  it('shows a created namespace Active with its name label, then Terminating, then nothing', () => {
    const sut = new NamespaceTable();
    sut.apply(envelope('NamespaceCreated', { name: 'team-a', uid: UID, creationTimestamp: '2026-05-01T10:00:00Z', labels: { team: 'a' } }), 4);
    const active = namespaceView(sut.get('team-a') ?? assert.fail('missing'));
    sut.apply(envelope('NamespaceDeletionRequested', { uid: UID, deletionTimestamp: '2026-05-01T10:05:00Z' }), 9);
    const terminating = namespaceView(sut.get('team-a') ?? assert.fail('missing'));
    const listedWhileTerminating = sut.terminating().map((r) => r.name);
    sut.apply(envelope('NamespaceRemoved', { uid: UID }), 12);

    assert.equal(active.status.phase, 'Active');
    assert.deepEqual(active.metadata.labels, { team: 'a', 'kubernetes.io/metadata.name': 'team-a' });
    assert.equal(active.metadata.resourceVersion, '4');
    assert.equal(terminating.status.phase, 'Terminating');
    assert.equal(terminating.metadata.deletionTimestamp, '2026-05-01T10:05:00Z');
    assert.deepEqual(listedWhileTerminating, ['team-a']);
    assert.equal(sut.get('team-a'), undefined);
    assert.equal(sut.record('team-a')?.subjectSeq, 12);
    assert.deepEqual(sut.list(), []);
  });

  it('ignores facts about another incarnation', () => {
    const sut = new NamespaceTable();
    sut.apply(envelope('NamespaceCreated', { name: 'x', uid: UID, creationTimestamp: '2026-05-01T10:00:00Z' }), 1);
    assert.equal(sut.apply(envelope('NamespaceRemoved', { uid: '00000000-0000-4000-8000-000000000000' }), 2), undefined);
    assert.ok(sut.get('x'));
  });
});
