import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SUBJECTS, type AnyEnvelope, type PodManifest } from '#contracts';
import { assignmentCauses } from './assignment-check.js';

const NODE = 'node-1';
const UID = '6f1c2b1e-3b9a-4c1d-9f2e-0a1b2c3d4e5f';

function assigned(uid: string | undefined, change: (pod: PodManifest) => void = () => undefined, correlationId = uid ?? ''): AnyEnvelope {
  const pod: PodManifest = {
    metadata: { name: 'web-0', namespace: 'default', ...(uid === undefined ? {} : { uid }) },
    spec: { nodeName: NODE, containers: [{ name: 'web', image: 'jetlet/busybox:1.35' }] },
  };
  change(pod);
  return {
    id: 'm1',
    type: 'PodAssigned',
    version: 1,
    time: '2024-05-01T10:00:00.000Z',
    source: { component: 'scheduler' },
    correlationId,
    data: { pod },
  };
}

const fields = (causes: Array<{ field: string }>): string[] => causes.map((c) => c.field);

describe('assignmentCauses', () => {
  it('accepts the assignment the scheduler sends', () => {
    assert.deepEqual(assignmentCauses(NODE, SUBJECTS.assignment(NODE, UID), assigned(UID)), []);
  });

  it('refuses a pod uid that is not a UUID as the API makes them, such as ".."', () => {
    for (const uid of ['..', '../../etc', 'ABCDEF00-0000-4000-8000-000000000000', '', undefined])
      assert.deepEqual(fields(assignmentCauses(NODE, `jetlet.assign.${NODE}.x`, assigned(uid, undefined, 'x'))), ['data.pod.metadata.uid'], String(uid));
  });

  it('refuses an assignment on a subject that is not its pod on this node, or with another correlation id', () => {
    assert.deepEqual(fields(assignmentCauses(NODE, SUBJECTS.assignment(NODE, '0b7e6a52-8d1f-4c3e-a5b9-1f2e3d4c5b6a'), assigned(UID))), [
      'data.pod.metadata.uid',
    ]);
    assert.deepEqual(fields(assignmentCauses(NODE, SUBJECTS.assignment(NODE, UID), assigned(UID, undefined, 'other'))), ['correlationId']);
  });

  it("applies the API's own spec rules and this node's name", () => {
    const sut = assignmentCauses(
      NODE,
      SUBJECTS.assignment(NODE, UID),
      assigned(UID, (pod) => {
        pod.spec.containers.push({ name: 'web', image: 'jetlet/busybox:1.35' });
        pod.spec.nodeName = 'node-2';
      }),
    );
    assert.deepEqual(fields(sut), ['data.pod.spec.nodeName', 'data.pod.spec.containers[1].name']);
  });

  it('checks the names and uid of a tombstone', () => {
    const tombstone = {
      id: 'm2',
      type: 'PodUnassigned',
      version: 1,
      time: '2024-05-01T10:00:00.000Z',
      source: { component: 'scheduler' },
      correlationId: UID,
      data: { uid: UID, namespace: '..', name: 'Web/0', gracePeriodSeconds: 30 },
    } as AnyEnvelope;
    assert.deepEqual(fields(assignmentCauses(NODE, SUBJECTS.assignment(NODE, UID), tombstone)), ['data.namespace', 'data.name']);
  });
});
