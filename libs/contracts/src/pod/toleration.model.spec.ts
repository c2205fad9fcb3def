import 'reflect-metadata';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ContractValidationError, parseContract, type FieldCause } from '../validation.js';
import { PodManifest } from './pod.model.js';

function withTolerations(tolerations: unknown): unknown {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'gpu-job' },
    spec: { containers: [{ name: 'main', image: 'jetlet/busybox:1.35' }], tolerations },
  };
}

function causesOf(plain: unknown): FieldCause[] {
  try {
    parseContract(PodManifest, plain);
  } catch (error) {
    assert.ok(error instanceof ContractValidationError, `expected a ContractValidationError, got ${String(error)}`);
    return error.causes;
  }
  assert.fail('the manifest was accepted');
}

describe('spec.tolerations', () => {
  it('accepts the Kubernetes forms: Equal, Exists with or without a key, and NoExecute with tolerationSeconds', () => {
    const tolerations = [
      { key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' },
      { key: 'dedicated', value: 'gpu' },
      { key: 'spot', operator: 'Exists', effect: 'PreferNoSchedule' },
      { operator: 'Exists' },
      { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
    ];

    const sut = parseContract(PodManifest, withTolerations(tolerations));

    assert.deepEqual(
      sut.spec.tolerations?.map((t) => ({ ...t })),
      tolerations,
    );
  });

  it('lists every invalid toleration field', () => {
    const causes = causesOf(
      withTolerations([
        { operator: 'Equal', value: 'x' },
        { key: 'a', operator: 'In', effect: 'NoRun' },
        { key: 'b', operator: 'Exists', value: 'x' },
        { key: 'c', effect: 'NoSchedule', tolerationSeconds: 60 },
      ]),
    );

    assert.deepEqual(
      causes.map((c) => [c.field, c.reason]),
      [
        ['spec.tolerations[0].key', 'FieldValueRequired'],
        ['spec.tolerations[1].operator', 'FieldValueNotSupported'],
        ['spec.tolerations[1].effect', 'FieldValueNotSupported'],
        ['spec.tolerations[2].value', 'FieldValueInvalid'],
        ['spec.tolerations[3].tolerationSeconds', 'FieldValueInvalid'],
      ],
    );
    assert.match(causes[3].message, /value must be empty when operator is Exists/);
    assert.match(causes[4].message, /effect must be 'NoExecute' when tolerationSeconds is set/);
  });

  it('rejects tolerations that are not a list', () => {
    assert.deepEqual(
      causesOf(withTolerations({ key: 'a' })).map((c) => c.field),
      ['spec.tolerations'],
    );
  });
});
