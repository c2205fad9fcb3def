import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { POD_APPLY_SCHEMA } from './apply-schema.js';
import { FieldSet, pathString } from './field-set.js';
import {
  ApplyConflictError,
  applyManagedFields,
  decodeManagedFields,
  encodeManagedFields,
  managerKey,
  updateManagedFields,
  type Managers,
} from './managed-fields.js';
import { merge, toFieldSet } from './typed-value.js';

const EMPTY = { metadata: {}, spec: { containers: null }, status: {} };
const T0 = '2026-01-01T00:00:00Z';
const T1 = '2026-01-01T00:01:00Z';

const pod = (image = 'busybox:1', labels: Record<string, string> = { app: 'web' }) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web', namespace: 'default', uid: 'u1', resourceVersion: '7', labels },
  spec: {
    restartPolicy: 'Always',
    containers: [
      {
        name: 'main',
        image,
        imagePullPolicy: 'IfNotPresent',
        ports: [{ containerPort: 80, protocol: 'TCP' }],
        env: [{ name: 'A', value: '1' }],
      },
    ],
  },
  status: { phase: 'Running' },
});

/** The pod as `kubectl create` leaves it: kubectl-create owns every field it set. */
function created(): { live: ReturnType<typeof pod>; managers: Managers } {
  const live = pod();
  return { live, managers: updateManagedFields(EMPTY, live, POD_APPLY_SCHEMA, new Map(), 'kubectl-create', T0) };
}

const config = (image: string, labels: Record<string, string> = { app: 'web' }) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web', labels },
  spec: { containers: [{ name: 'main', image, ports: [{ containerPort: 80 }] }] },
});

describe('managed fields on create and update', () => {
  it('gives the creator every field it set, list items by their keys, as FieldsV1 writes them', () => {
    // As the API server shows a created pod: a list or map that was added is itself a member (".").
    const { managers } = created();
    const [entry] = encodeManagedFields(managers) ?? [];
    assert.deepEqual(entry, {
      manager: 'kubectl-create',
      operation: 'Update',
      apiVersion: 'v1',
      time: T0,
      fieldsType: 'FieldsV1',
      fieldsV1: {
        'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
        'f:spec': {
          'f:containers': {
            'k:{"name":"main"}': {
              '.': {},
              'f:env': { '.': {}, 'k:{"name":"A"}': { '.': {}, 'f:name': {}, 'f:value': {} } },
              'f:image': {},
              'f:imagePullPolicy': {},
              'f:name': {},
              'f:ports': { '.': {}, 'k:{"containerPort":80,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {}, 'f:protocol': {} } },
            },
          },
          'f:restartPolicy': {},
        },
      },
    });
  });

  it('moves a changed field to the updater and keeps the rest with its owner', () => {
    const { live, managers } = created();
    const next = pod('busybox:2');
    const sut = updateManagedFields(live, next, POD_APPLY_SCHEMA, managers, 'kubectl-set', T1);
    const image = ['f:spec', 'f:containers', 'k:{"name":"main"}', 'f:image'];
    assert.equal(sut.get(managerKey('kubectl-set', 'Update'))?.set.has(image), true);
    assert.equal(sut.get(managerKey('kubectl-create', 'Update'))?.set.has(image), false);
    assert.equal(sut.get(managerKey('kubectl-create', 'Update'))?.set.has(['f:spec', 'f:restartPolicy']), true);
    assert.equal(sut.get(managerKey('kubectl-create', 'Update'))?.time, T0);
  });

  it('reads back what it writes, and refuses what is not FieldsV1', () => {
    const { managers } = created();
    const encoded = encodeManagedFields(managers);
    assert.deepEqual(encodeManagedFields(decodeManagedFields(encoded)), encoded);
    assert.throws(() => decodeManagedFields([{ manager: 'x', operation: 'Apply', fieldsV1: { 'z:bad': {} } }]), /unknown path element/);
    assert.throws(() => decodeManagedFields([{ manager: 'x', operation: 'Delete' }]), /Apply or Update/);
    assert.throws(() => decodeManagedFields('x'), /must be a list/);
  });
});

describe('server-side apply', () => {
  it('is a conflict when it changes a field another manager owns, naming the manager and the field', () => {
    const { live, managers } = created();
    assert.throws(
      () => applyManagedFields(live, config('busybox:2'), POD_APPLY_SCHEMA, managers, 'kubectl', false, T1),
      (error: unknown) => {
        assert.ok(error instanceof ApplyConflictError);
        assert.equal(error.message, 'Apply failed with 1 conflict: conflict with "kubectl-create" using v1: .spec.containers[name="main"].image');
        return true;
      },
    );
  });

  it('lists several conflicts by manager', () => {
    const { live, managers } = created();
    assert.throws(
      () => applyManagedFields(live, config('busybox:2', { app: 'api' }), POD_APPLY_SCHEMA, managers, 'kubectl', false, T1),
      (error: unknown) =>
        error instanceof ApplyConflictError &&
        error.message ===
          'Apply failed with 2 conflicts: conflicts with "kubectl-create" using v1:\n- .metadata.labels.app\n- .spec.containers[name="main"].image',
    );
  });

  it('with force takes the fields: the applier owns them, the other manager no longer does', () => {
    const { live, managers } = created();
    const sut = applyManagedFields(live, config('busybox:2'), POD_APPLY_SCHEMA, managers, 'kubectl', true, T1);
    assert.equal((sut.object as ReturnType<typeof pod>).spec.containers[0].image, 'busybox:2');
    // Fields the configuration does not name stay as they were.
    assert.equal((sut.object as ReturnType<typeof pod>).spec.containers[0].imagePullPolicy, 'IfNotPresent');
    const image = ['f:spec', 'f:containers', 'k:{"name":"main"}', 'f:image'];
    assert.equal(sut.managers.get(managerKey('kubectl', 'Apply'))?.set.has(image), true);
    assert.equal(sut.managers.get(managerKey('kubectl-create', 'Update'))?.set.has(image), false);
  });

  it('shares fields it sets to the value they have, without conflict; a port without protocol is the TCP one', () => {
    const { live, managers } = created();
    const sut = applyManagedFields(live, config('busybox:1'), POD_APPLY_SCHEMA, managers, 'kubectl', false, T1);
    assert.deepEqual(sut.object, live);
    const port = ['f:spec', 'f:containers', 'k:{"name":"main"}', 'f:ports', 'k:{"containerPort":80,"protocol":"TCP"}', 'f:containerPort'];
    assert.equal(sut.managers.get(managerKey('kubectl', 'Apply'))?.set.has(port), true);
    assert.equal(sut.managers.get(managerKey('kubectl-create', 'Update'))?.set.has(port), true);
    // Identity fields are never owned.
    assert.equal(sut.managers.get(managerKey('kubectl', 'Apply'))?.set.has(['f:metadata', 'f:name']), false);
  });

  it('removes what it applied before and omits now, unless another manager owns it', () => {
    const first = applyManagedFields(pod(), config('busybox:1', { app: 'web', tier: 'front', team: 'a' }), POD_APPLY_SCHEMA, new Map(), 'kubectl', false, T0);
    // Someone else sets the team label too: it is theirs as well.
    const labelled = updateManagedFields(
      first.object,
      merge(first.object, { metadata: { labels: { team: 'b' } } }, POD_APPLY_SCHEMA),
      POD_APPLY_SCHEMA,
      first.managers,
      'kubectl-label',
      T1,
    );
    const live = merge(first.object, { metadata: { labels: { team: 'b' } } }, POD_APPLY_SCHEMA);
    const sut = applyManagedFields(live, config('busybox:1', { app: 'web' }), POD_APPLY_SCHEMA, labelled, 'kubectl', false, T1);
    assert.deepEqual((sut.object as ReturnType<typeof pod>).metadata.labels, { app: 'web', team: 'b' });
  });

  it('merges list items by key, keeping items it does not name in place', () => {
    const live = {
      spec: {
        containers: [
          { name: 'a', image: 'x' },
          { name: 'b', image: 'y' },
        ],
      },
    };
    const sut = merge(
      live,
      {
        spec: {
          containers: [
            { name: 'b', image: 'z' },
            { name: 'c', image: 'w' },
          ],
        },
      },
      POD_APPLY_SCHEMA,
    );
    assert.deepEqual(sut, {
      spec: {
        containers: [
          { name: 'a', image: 'x' },
          { name: 'b', image: 'z' },
          { name: 'c', image: 'w' },
        ],
      },
    });
  });

  it('prints paths as the API server does, and keeps atomic lists whole', () => {
    assert.equal(
      pathString(['f:spec', 'f:containers', 'k:{"containerPort":80,"protocol":"TCP"}', 'f:x', 'v:"a"']),
      '.spec.containers[containerPort=80,protocol="TCP"].x[="a"]',
    );
    const set = toFieldSet({ spec: { containers: [{ name: 'a', command: ['sh', '-c'] }] } }, POD_APPLY_SCHEMA);
    const expected = new FieldSet();
    expected.insert(['f:spec', 'f:containers', 'k:{"name":"a"}']);
    expected.insert(['f:spec', 'f:containers', 'k:{"name":"a"}', 'f:name']);
    expected.insert(['f:spec', 'f:containers', 'k:{"name":"a"}', 'f:command']);
    assert.ok(set.equals(expected));
  });
});
