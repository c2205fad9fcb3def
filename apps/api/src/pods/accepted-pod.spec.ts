import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ContractValidationError, MAX_MANAGED_FIELDS, parseContract, parseEnvelope, PodManifest } from '#contracts';
import { decodeManagedFields, podSpecCauses, type Managers } from '#domain';
import { fixturePods, manifest, name } from '../../../../test/fixtures/pod-manifests.js';
import { acceptedPod, createdManagers, validByConstruction, withCreatedManagedFields, withManagedFields } from './accepted-pod.js';

const STAMP = { namespace: 'default', uid: '6f1d3c3e-4b0a-4a51-9d7e-2f2f4f5b6c7d', creationTimestamp: '2026-01-02T03:04:05Z' };

/** The manifest as the API's create validates it, or undefined when it would refuse it. */
function validated(body: unknown): PodManifest | undefined {
  try {
    const manifest = parseContract(PodManifest, body, 'Pod');
    return podSpecCauses(manifest).length === 0 ? manifest : undefined;
  } catch (error) {
    if (error instanceof ContractValidationError) return undefined;
    throw error;
  }
}

/** The pod a create stores for `body`, built as the API builds it. */
function stored(manifest: PodManifest, requested: Managers = new Map(), manager = 'kubectl'): PodManifest {
  const pod = acceptedPod(manifest, STAMP);
  return withManagedFields(pod, createdManagers(pod, requested, manager, STAMP.creationTimestamp));
}

/** Reads the PodCreated of `pod` back as every consumer does; throws ContractValidationError as the bus's full check would. */
function readBack(pod: PodManifest): unknown {
  const envelope = JSON.parse(
    JSON.stringify({
      id: 'm-1',
      type: 'PodCreated',
      version: 1,
      time: '2026-01-02T03:04:05.000Z',
      source: { component: 'api' },
      correlationId: STAMP.uid,
      data: { pod },
    }),
  ) as unknown;
  const parsed = parseEnvelope(envelope);
  assert.deepEqual(JSON.parse(JSON.stringify(parsed)), envelope, 'the contract keeps every field the API stored');
  return parsed;
}

describe('acceptedPod', () => {
  it('stores every documented pod the API accepts as a valid PodCreated, valid by construction', () => {
    const accepted = fixturePods()
      .map(validated)
      .filter((m) => m !== undefined);
    assert.ok(accepted.length >= 5, `fixture pods accepted: ${accepted.length}`);
    for (const m of accepted) {
      const pod = stored(m);
      assert.ok(validByConstruction(pod));
      readBack(pod);
    }
  });

  it('stores whatever manifest the API accepts, with whatever managers it brought, as a valid PodCreated', () => {
    let checked = 0;
    fc.assert(
      fc.property(manifest, fc.uniqueArray(name, { maxLength: 3 }), (body, managers) => {
        const m = validated(body);
        fc.pre(m !== undefined);
        // The managers a client may send: as they read back from a pod the API stored.
        const requested = decodeManagedFields(stored(m, new Map(), managers[0] ?? 'kubectl').metadata.managedFields);
        for (const other of managers.slice(1))
          for (const [key, entry] of decodeManagedFields(stored(m, new Map(), other).metadata.managedFields)) requested.set(key, entry);
        const pod = stored(m, requested, 'jetctl');
        assert.ok(validByConstruction(pod));
        readBack(pod);
        checked++;
      }),
      { numRuns: 300 },
    );
    assert.ok(checked > 100, `accepted manifests checked: ${checked}`);
  });

  it('stores validly whatever it accepts with a number JSON cannot write (1e400 parses as Infinity, YAML has .inf)', () => {
    /** Paths of the numbers in a value. */
    const numbers = (value: unknown, path: (string | number)[] = []): (string | number)[][] =>
      typeof value === 'number'
        ? [path]
        : typeof value === 'object' && value !== null
          ? Object.entries(value).flatMap(([k, v]) => numbers(v, [...path, Array.isArray(value) ? Number(k) : k]))
          : [];
    let replaced = 0;
    fc.assert(
      fc.property(manifest, fc.nat(), fc.constantFrom(Infinity, -Infinity, NaN), (body, pick, odd) => {
        const paths = numbers(body);
        fc.pre(paths.length > 0);
        const path = paths[pick % paths.length];
        let node = body as unknown as Record<string | number, unknown>;
        for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
        node[path[path.length - 1]] = odd;
        replaced++;
        const m = validated(body);
        if (m !== undefined) readBack(stored(m));
      }),
      { numRuns: 200 },
    );
    assert.ok(replaced > 100, `manifests with a number replaced: ${replaced}`);
  });

  it('leaves a pod whose own manager is one past the limit to the full check, which refuses it', () => {
    const m = validated({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'busy' }, spec: { containers: [{ name: 'main', image: 'busybox' }] } });
    assert.ok(m);
    // Each owns a label the pod no longer has, so the creator takes none of their fields and every one stays.
    const requested = decodeManagedFields(
      Array.from({ length: MAX_MANAGED_FIELDS }, (_, i) => ({
        manager: `manager-${i}`,
        operation: 'Update',
        apiVersion: 'v1',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:metadata': { 'f:labels': { [`f:gone-${i}`]: {} } } },
      })),
    );
    const pod = stored(m, requested, 'one-more');

    assert.equal(validByConstruction(pod), false);
    assert.throws(
      () => readBack(pod),
      (error: unknown) => error instanceof ContractValidationError && error.causes.some((c) => c.field === 'data.pod.metadata.managedFields'),
    );
  });
});

describe('withCreatedManagedFields', () => {
  const plain = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

  it('writes the fields createdManagers works out, for the first pod of a shape and for the next ones of it', () => {
    let checked = 0;
    fc.assert(
      fc.property(manifest, name, fc.constantFrom('kubectl', 'jetctl'), (body, otherName, manager) => {
        const m = validated(body);
        fc.pre(m !== undefined);
        for (const [podName, uid, time] of [
          [m.metadata.name, STAMP.uid, '2026-01-02T03:04:05Z'],
          [otherName, '0b7e4c2a-1d2f-4e3a-8b9c-0d1e2f3a4b5c', '2026-03-04T05:06:07Z'],
        ]) {
          const named = { ...m, metadata: { ...m.metadata, name: podName } };
          const stamp = { ...STAMP, uid, creationTimestamp: time };
          const expected = withManagedFields(acceptedPod(named, stamp), createdManagers(acceptedPod(named, stamp), new Map(), manager, time));
          const sut = withCreatedManagedFields(acceptedPod(named, stamp), undefined, manager, time);
          assert.deepEqual(plain(sut), plain(expected));
        }
        checked++;
      }),
      { numRuns: 300 },
    );
    assert.ok(checked > 100, `accepted manifests checked: ${checked}`);
  });

  it('works out the fields afresh when the request brought managers', () => {
    const m = validated({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web', labels: { app: 'web' } },
      spec: { containers: [{ name: 'main', image: 'busybox' }] },
    });
    assert.ok(m);
    const requested = decodeManagedFields([
      // It owns a label the pod does not have, so it keeps it beside the creator.
      { manager: 'before', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:labels': { 'f:gone': {} } } } },
    ]);
    const expected = withManagedFields(acceptedPod(m, STAMP), createdManagers(acceptedPod(m, STAMP), requested, 'kubectl', STAMP.creationTimestamp));
    const sut = withCreatedManagedFields(acceptedPod(m, STAMP), requested, 'kubectl', STAMP.creationTimestamp);
    assert.deepEqual(plain(sut), plain(expected));
    assert.equal(sut.metadata.managedFields?.length, 2);
  });
});
