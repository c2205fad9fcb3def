import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeApplyDuplicates, decodeFields, withFieldValidation } from '../errors/field-validation.context.js';
import { KubeStatusException } from '../errors/kube-status.exception.js';
import { jsonKeys, lineOf, yamlDuplicateKeys } from './duplicate-fields.js';

/** A pod body as kube-apiserver's field validation tests write one: repeated, unknown, and both. */
const POD = `{
\t"apiVersion": "v1",
\t"kind": "Pod",
\t"metadata": {
\t\t"name": "dupename",
\t\t"name": "web",
\t\t"labels": {"app": "a", "app": "b"},
\t\t"unknownMeta": "x"
\t},
\t"spec": {
\t\t"unknownDupe": 1, "unknownDupe": {"a": 1, "a": 2},
\t\t"containers": [{"name": "main", "image": "busybox", "imagePullPolicy": "Always", "imagePullPolicy": "Never", "wei\\u0072d": true}]
\t}
}`;

const decode = (directive: 'Strict' | 'Warn' | 'Ignore', raw = POD): { value?: unknown; warnings: string[]; error?: string } => {
  const warnings: string[] = [];
  try {
    const value = withFieldValidation(
      directive,
      (w) => {
        const out = decodeFields('Pod', 'V1Pod', JSON.parse(raw) as unknown);
        warnings.push(...w);
        return out;
      },
      raw,
    );
    return { value, warnings };
  } catch (error) {
    assert.ok(error instanceof KubeStatusException);
    return { warnings, error: (error.getResponse() as { message: string }).message };
  }
};

describe('jsonKeys', () => {
  it('lists every key in document order with its path, marking the repeats', () => {
    const sut = jsonKeys('{"a": {"b": [1, {"c": "}", "c": 2}], "b": 3, "b": "\\"{"}, "a": []}');
    assert.deepEqual(
      sut.map((k) => `${k.path}${k.duplicate ? '!' : ''}`),
      ['a', 'a.b', 'a.b[1].c', 'a.b[1].c!', 'a.b!', 'a.b!', 'a!'],
    );
    assert.equal(sut[2]?.offset, 17);
  });

  it('decodes escaped keys and ignores braces inside strings', () => {
    assert.deepEqual(
      jsonKeys('{"x\\"y": "{[,", "x\\u0022y": 1, "z": ["a", "b"]}').map((k) => [k.key, k.duplicate]),
      [
        ['x"y', false],
        ['x"y', true],
        ['z', false],
      ],
    );
  });

  it('survives nesting far deeper than any body may be', () => {
    const deep = '['.repeat(200_000) + ']'.repeat(200_000);
    assert.deepEqual(jsonKeys(deep), []);
  });
});

describe('yamlDuplicateKeys', () => {
  it('names each repeated key on the line of its repeat, as go-yaml does', () => {
    const sut = yamlDuplicateKeys(
      'apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n  name: b\nspec:\n  containers:\n  - name: m\n    image: x\n    image: y\n',
    );
    assert.deepEqual(sut, [
      { line: 5, key: 'name' },
      { line: 10, key: 'image' },
    ]);
  });

  it('finds lines in JSON text too', () => {
    const text = '{\n"a": 1,\n"a": 2}';
    assert.deepEqual(yamlDuplicateKeys(text), [{ line: 3, key: 'a' }]);
    assert.equal(lineOf(text, jsonKeys(text)[1]?.offset ?? -1), 3);
  });
});

describe('decodeFields with repeated keys', () => {
  it('Strict: one 400 listing unknown and repeated fields in document order, an unknown field only as unknown', () => {
    const { error } = decode('Strict');
    assert.equal(
      error,
      'Pod in version "v1" cannot be handled as a Pod: strict decoding error: duplicate field "metadata.name", duplicate field "metadata.labels.app", ' +
        'unknown field "metadata.unknownMeta", unknown field "spec.unknownDupe", duplicate field "spec.containers[0].imagePullPolicy", ' +
        'unknown field "spec.containers[0].weird"',
    );
  });

  it('Warn: one warning each, the last value kept, unknown fields dropped', () => {
    const { value, warnings } = decode('Warn');
    assert.deepEqual(warnings, [
      'duplicate field "metadata.name"',
      'duplicate field "metadata.labels.app"',
      'unknown field "metadata.unknownMeta"',
      'unknown field "spec.unknownDupe"',
      'duplicate field "spec.containers[0].imagePullPolicy"',
      'unknown field "spec.containers[0].weird"',
    ]);
    const pod = value as { metadata: Record<string, unknown>; spec: { containers: Array<Record<string, unknown>> } };
    assert.equal(pod.metadata.name, 'web');
    assert.equal(pod.metadata.unknownMeta, undefined);
    assert.equal(pod.spec.containers[0]?.imagePullPolicy, 'Never');
  });

  it('Ignore: the last value wins without a word', () => {
    const { value, warnings } = decode('Ignore');
    assert.deepEqual(warnings, []);
    assert.equal((value as { metadata: { name: string } }).metadata.name, 'web');
  });

  it('a body without repeats or unknown fields passes as it is', () => {
    const raw = '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a"},"spec":{"containers":[{"name":"m","image":"x"}]}}';
    assert.deepEqual(decode('Strict', raw), { value: JSON.parse(raw) as unknown, warnings: [] });
  });
});

describe('decodeApplyDuplicates', () => {
  const lines = [
    { line: 5, key: 'name' },
    { line: 10, key: 'image' },
  ];

  it("Strict: the apply patcher's 400 with every line", () => {
    assert.throws(
      () => withFieldValidation('Strict', () => decodeApplyDuplicates(lines)),
      (error: unknown) =>
        error instanceof KubeStatusException &&
        (error.getResponse() as { message: string }).message ===
          'error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:\n  line 5: key "name" already set in map\n  line 10: key "image" already set in map',
    );
  });

  it('Warn: a warning per line; Ignore: nothing', () => {
    assert.deepEqual(
      withFieldValidation('Warn', (warnings) => (decodeApplyDuplicates(lines), warnings)),
      ['line 5: key "name" already set in map', 'line 10: key "image" already set in map'],
    );
    assert.deepEqual(
      withFieldValidation('Ignore', (warnings) => (decodeApplyDuplicates(lines), warnings)),
      [],
    );
  });
});
