import 'reflect-metadata';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ValidationError } from 'class-validator';
import { ContractValidationError, flattenValidationErrors, parseContract } from './validation.js';
import { PodManifest } from './pod/pod.model.js';

function validationError(property: string, value: unknown, constraints?: Record<string, string>, children: ValidationError[] = []): ValidationError {
  return Object.assign(new ValidationError(), { property, value, constraints, children });
}

describe('flattenValidationErrors', () => {
  it('builds dotted paths with [i] for array indexes', () => {
    const tree = [
      validationError('spec', {}, undefined, [
        validationError('containers', [], undefined, [
          validationError('2', {}, undefined, [validationError('image', 7, { isString: 'image must be a string' })]),
        ]),
      ]),
    ];

    const sut = flattenValidationErrors(tree);

    assert.deepEqual(sut, [{ field: 'spec.containers[2].image', reason: 'FieldValueInvalid', message: 'Invalid value: 7: image must be a string' }]);
  });

  it('reports an undefined or null value as FieldValueRequired with "Required value"', () => {
    const sut = flattenValidationErrors([
      validationError('name', undefined, { isString: 'name must be a string' }),
      validationError('image', null, { isString: 'image must be a string' }),
    ]);

    assert.deepEqual(sut, [
      { field: 'name', reason: 'FieldValueRequired', message: 'Required value' },
      { field: 'image', reason: 'FieldValueRequired', message: 'Required value' },
    ]);
  });

  it('joins every constraint message of one field into one cause', () => {
    const sut = flattenValidationErrors([validationError('port', 0, { min: 'port must not be less than 1', isInt: 'port must be an integer' })]);

    assert.deepEqual(sut, [{ field: 'port', reason: 'FieldValueInvalid', message: 'Invalid value: 0: port must not be less than 1; port must be an integer' }]);
  });

  it('reports a whitelist violation as FieldValueNotSupported', () => {
    const sut = flattenValidationErrors([validationError('hostPID', true, { whitelistValidation: 'property hostPID should not exist' })], 'spec');

    assert.deepEqual(sut, [{ field: 'spec.hostPID', reason: 'FieldValueNotSupported', message: 'field is not supported by jetlet' }]);
  });

  it('gives no cause for a parent that only carries children', () => {
    const sut = flattenValidationErrors([validationError('metadata', {}, {}, [])]);

    assert.deepEqual(sut, []);
  });
});

describe('parseContract', () => {
  for (const [label, plain] of [
    ['null', null],
    ['an array', [{ metadata: { name: 'x' } }]],
    ['a string', 'apiVersion: v1'],
    ['undefined', undefined],
  ] as const) {
    it(`rejects ${label} with one cause "must be an object"`, () => {
      assert.throws(
        () => parseContract(PodManifest, plain, 'pod'),
        (error: unknown) =>
          error instanceof ContractValidationError &&
          error.contract === 'pod' &&
          error.causes.length === 1 &&
          error.causes[0].field === '' &&
          error.causes[0].reason === 'FieldValueInvalid' &&
          error.causes[0].message === 'must be an object',
      );
    });
  }

  it('names the contract after the class when no name is given', () => {
    assert.throws(
      () => parseContract(PodManifest, { metadata: { name: 'Web_0' }, spec: { containers: [{ name: 'c', image: 'nginx' }] } }),
      (error: unknown) => error instanceof ContractValidationError && error.contract === 'PodManifest' && error.name === 'ContractValidationError',
    );
  });

  it('does not modify the object it parses', () => {
    const plain = { metadata: { name: 'web' }, spec: { containers: [{ name: 'c', image: 'nginx' }] } };
    const before = structuredClone(plain);

    parseContract(PodManifest, plain);

    assert.deepEqual(plain, before);
  });
});
