import 'reflect-metadata';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ValidationError } from 'class-validator';
import { Type } from 'class-transformer';
import fc from 'fast-check';
import { IsInt, IsOptional, IsString, Min, ValidateIf, ValidateNested } from './class-validator.js';
import { ContractValidationError, flattenValidationErrors, parseContract, withEveryRuleWalked, type FieldCause } from './validation.js';
import { PodManifest } from './pod/pod.model.js';
import { fixturePods, manifest } from '../../../test/fixtures/pod-manifests.js';

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

class Inner {
  @IsString()
  name: string;

  @IsOptional()
  @IsInt()
  @Min(1)
  port?: number;
}

class Outer {
  @IsOptional()
  @IsString()
  first?: string;

  @IsString()
  required: string;

  @IsOptional()
  @ValidateNested()
  @Type(() => Inner)
  inner?: Inner;

  @IsOptional()
  @IsInt()
  last?: number;
}

class Seven {
  @IsOptional() @IsString() a?: string;
  @IsOptional() @IsString() b?: string;
  @IsOptional() @IsString() c?: string;
  @IsOptional() @IsString() d?: string;
  @IsOptional() @IsString() e?: string;
  @IsOptional() @IsString() f?: string;
  @IsOptional() @IsString() g?: string;
}

function causesOf(plain: unknown): FieldCause[] {
  try {
    parseContract(Outer, plain);
    return [];
  } catch (error) {
    if (error instanceof ContractValidationError) return error.causes;
    throw error;
  }
}

// The executor is handed only the rules of the optional properties an object has: each case
// below would change if a rule of a property that is there were left out, or one left in.
describe('parseContract over optional properties', () => {
  it('checks every optional property an object has, each time, whichever others it lacks', () => {
    assert.deepEqual(causesOf({ required: 'r' }), []);
    assert.deepEqual(
      causesOf({ first: 1, required: 'r', last: 'x' }).map((c) => c.field),
      ['first', 'last'],
    );
    assert.deepEqual(
      causesOf({ required: 'r', last: 'x' }).map((c) => c.field),
      ['last'],
    );
    assert.deepEqual(
      causesOf({ first: 1, required: 'r' }).map((c) => c.field),
      ['first'],
    );
  });

  it('still reports a missing required property, and a missing one inside a nested object', () => {
    assert.deepEqual(causesOf({ inner: { port: 0 } }), [
      { field: 'required', reason: 'FieldValueRequired', message: 'Required value' },
      { field: 'inner.name', reason: 'FieldValueRequired', message: 'Required value' },
      { field: 'inner.port', reason: 'FieldValueInvalid', message: 'Invalid value: 0: port must not be less than 1' },
    ]);
  });

  it('accepts an optional property sent as null, rather than calling it an unknown field', () => {
    assert.deepEqual(causesOf({ first: null, required: 'r', inner: null }), []);
  });

  it('names an unknown field beside the bad known ones, in the order the class declares them', () => {
    assert.deepEqual(
      causesOf({ last: 'x', extra: 1, required: 2 }).map((c) => [c.field, c.reason]),
      [
        ['extra', 'FieldValueNotSupported'],
        ['required', 'FieldValueInvalid'],
        ['last', 'FieldValueInvalid'],
      ],
    );
  });

  it('gives the same answers for more shapes than it keeps (64 per class)', () => {
    const names = ['a', 'b', 'c', 'd', 'e', 'f', 'g'] as const;
    for (let round = 0; round < 2; round++) {
      for (let mask = 0; mask < 1 << names.length; mask++) {
        const plain: Record<string, unknown> = {};
        for (const [i, name] of names.entries()) if (mask & (1 << i)) plain[name] = i % 2 === 0 ? 'ok' : 7;
        const expected = names.filter((_, i) => mask & (1 << i) && i % 2 === 1);
        let fields: string[] = [];
        try {
          parseContract(Seven, plain);
        } catch (error) {
          fields = (error as ContractValidationError).causes.map((c) => c.field);
        }
        assert.deepEqual(fields, expected, `round ${round}, fields ${JSON.stringify(Object.keys(plain))}`);
      }
    }
  });
});

class Guarded {
  /** The condition reads `mode`, and throws when the object lacks it. */
  @IsOptional()
  @ValidateIf((o: Guarded) => (o.mode as string).length > 0)
  @IsString()
  guarded?: string;

  @IsOptional()
  @IsString()
  mode?: string;
}

/** What parseContract says of `plain` as `cls`: the causes, the error's name for anything else, or nothing. */
function outcome(cls: new () => object, plain: unknown): unknown {
  try {
    parseContract(cls, plain);
    return [];
  } catch (error) {
    return error instanceof ContractValidationError ? error.causes : (error as Error).name;
  }
}

type Damage = 'drop' | 'null' | 'number' | 'string' | 'object' | 'extra';

/** Every path to a value inside `value` (object keys and array indexes), parents before children. */
function pathsOf(value: unknown, at: Array<string | number> = []): Array<Array<string | number>> {
  if (typeof value !== 'object' || value === null) return [];
  const keys = Array.isArray(value) ? value.map((_, i) => i) : Object.keys(value);
  return keys.flatMap((key) => [[...at, key], ...pathsOf((value as Record<string | number, unknown>)[key], [...at, key])]);
}

/** `plain` with the value at each chosen path removed, nulled, replaced by the wrong kind, or given an unknown sibling. */
function damaged(plain: unknown, damages: Array<[number, Damage]>): unknown {
  const copy = structuredClone(plain);
  for (const [pick, damage] of damages) {
    const paths = pathsOf(copy);
    if (paths.length === 0) return copy;
    const path = paths[pick % paths.length];
    const parent = path
      .slice(0, -1)
      .reduce<Record<string | number, unknown>>((o, key) => o[key] as Record<string | number, unknown>, copy as Record<string, unknown>);
    const key = path[path.length - 1];
    if (damage === 'drop') {
      if (Array.isArray(parent)) parent.splice(Number(key), 1);
      else Reflect.deleteProperty(parent, key);
    } else if (damage === 'extra') parent[`${String(key)}Typo`] = 1;
    else parent[key] = { null: null, number: 7, string: 'x', object: {} }[damage];
  }
  return copy;
}

// rulesItCanMeet leaves out rules class-validator would only skip: against every rule walked,
// as class-validator does on its own, nothing a caller sees may differ.
describe('parseContract against class-validator walking every rule', () => {
  it('calls a condition of a missing optional property, as class-validator does, even one that throws', () => {
    let calls = 0;
    class Counted {
      @IsOptional()
      @ValidateIf(() => {
        calls++;
        return true;
      })
      @IsString()
      counted?: string;
    }
    outcome(Counted, {});
    const filtered = calls;
    calls = 0;
    withEveryRuleWalked(() => outcome(Counted, {}));
    assert.equal(filtered, 1);
    assert.equal(calls, 1);
    // A condition that throws on what the object lacks throws class-validator's TypeError either way.
    assert.equal(
      withEveryRuleWalked(() => outcome(Guarded, {})),
      'TypeError',
    );
    assert.equal(outcome(Guarded, {}), 'TypeError');
    assert.deepEqual(
      outcome(Guarded, { mode: 'm', guarded: 7 }),
      withEveryRuleWalked(() => outcome(Guarded, { mode: 'm', guarded: 7 })),
    );
    assert.equal((outcome(Guarded, { mode: 'm', guarded: 7 }) as FieldCause[])[0]?.field, 'guarded');
  });

  it('gives the same causes, in the same order, for pod manifests and every kind of damage to them', () => {
    const damage = fc.array(fc.tuple(fc.nat(), fc.constantFrom<Damage>('drop', 'null', 'number', 'string', 'object', 'extra')), { maxLength: 4 });
    const pods = fc.oneof(manifest, fc.constantFrom(...fixturePods()));
    let refused = 0;
    let accepted = 0;
    fc.assert(
      fc.property(pods, damage, (pod, damages) => {
        const plain = damaged(pod, damages);
        const expected = withEveryRuleWalked(() => outcome(PodManifest, plain));
        assert.deepEqual(outcome(PodManifest, plain), expected);
        if (Array.isArray(expected) && expected.length === 0) accepted++;
        else refused++;
      }),
      { numRuns: 400 },
    );
    // Both kinds of answer were compared, not only one.
    assert.ok(accepted > 0 && refused > 0, `accepted ${accepted}, refused ${refused}`);
  });
});
