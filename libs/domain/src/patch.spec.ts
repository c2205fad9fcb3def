import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { jsonPatch, JsonPatchError, mergePatch, strategicMergePatch, StrategicMergePatchError } from './patch.js';
import { NODE_PATCH_META } from './patch-meta.js';

const pod = {
  metadata: { name: 'web', labels: { app: 'web', tier: 'front' } },
  spec: {
    containers: [
      { name: 'a', image: 'x:1', env: [{ name: 'A', value: '1' }] },
      { name: 'b', image: 'y:1' },
    ],
  },
};

describe('mergePatch (RFC 7386)', () => {
  it('merges objects, deletes with null, and replaces lists whole', () => {
    const sut = mergePatch(pod, { metadata: { labels: { tier: null, env: 'prod' } }, spec: { containers: [{ name: 'a', image: 'x:2' }] } });
    assert.deepEqual(sut, { metadata: { name: 'web', labels: { app: 'web', env: 'prod' } }, spec: { containers: [{ name: 'a', image: 'x:2' }] } });
  });

  it('leaves its inputs unchanged', () => {
    const before = JSON.stringify(pod);
    mergePatch(pod, { metadata: { labels: { app: null } } });
    assert.equal(JSON.stringify(pod), before);
  });
});

describe("patches naming Object's own properties", () => {
  const hostile = (): object => JSON.parse('{"toString":0,"__proto__":{"polluted":true},"metadata":{"constructor":"x"}}') as object;

  for (const [name, apply] of [
    ['merge patch', (target: object) => mergePatch(target, hostile())],
    ['strategic merge patch', (target: object) => strategicMergePatch(target, hostile())],
  ] as const) {
    it(`keeps them as own fields of the result under a ${name}, leaving every prototype alone`, () => {
      const sut = apply(structuredClone(pod)) as Record<string, unknown>;
      assert.equal(Object.getPrototypeOf(sut), Object.prototype);
      assert.deepEqual(Object.keys(sut).sort(), ['__proto__', 'metadata', 'spec', 'toString']);
      assert.equal(Object.getOwnPropertyDescriptor(sut, 'toString')?.value, 0);
      assert.deepEqual(Object.getOwnPropertyDescriptor(sut, '__proto__')?.value, { polluted: true });
      assert.equal((sut['metadata'] as Record<string, unknown>)['constructor'], 'x');
      assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
    });
  }
});

describe('strategicMergePatch', () => {
  it('merges containers by name, keeping the fields the patch does not name', () => {
    const sut = strategicMergePatch(pod, { spec: { containers: [{ name: 'b', image: 'y:2' }] } });
    assert.deepEqual(sut, { ...pod, spec: { containers: [pod.spec.containers[0], { name: 'b', image: 'y:2' }] } });
  });

  it('merges env by name inside a container, appends new elements and deletes with $patch: delete', () => {
    const sut = strategicMergePatch(pod, {
      spec: {
        containers: [
          { name: 'a', env: [{ name: 'B', value: '2' }] },
          { name: 'b', $patch: 'delete' },
          { name: 'c', image: 'z:1' },
        ],
      },
    }) as typeof pod;
    assert.deepEqual(sut.spec.containers, [
      {
        name: 'a',
        image: 'x:1',
        // As apimachinery orders it: a new element comes before the server's own when no order relates them.
        env: [
          { name: 'B', value: '2' },
          { name: 'A', value: '1' },
        ],
      },
      { name: 'c', image: 'z:1' },
    ]);
  });

  it('applies what `kubectl apply` sends: $setElementOrder, a changed image, a removed label', () => {
    const live = {
      metadata: { name: 'web', labels: { app: 'web', tier: 'front' }, annotations: { note: 'x' } },
      spec: {
        containers: [
          { name: 'a', image: 'x:1', ports: [{ containerPort: 80, protocol: 'TCP' }] },
          { name: 'b', image: 'y:1' },
        ],
      },
    };
    const sut = strategicMergePatch(live, {
      metadata: { labels: { tier: null } },
      spec: { '$setElementOrder/containers': [{ name: 'b' }, { name: 'a' }], containers: [{ name: 'a', image: 'x:2' }] },
    }) as typeof live;

    assert.deepEqual(sut.metadata.labels, { app: 'web' });
    assert.deepEqual(
      sut.spec.containers.map((c) => `${c.name}=${c.image}`),
      ['b=y:1', 'a=x:2'],
    );
    assert.deepEqual(sut.spec.containers[1]?.ports, [{ containerPort: 80, protocol: 'TCP' }]);
    assert.ok(!Object.keys(sut.spec).some((k) => k.startsWith('$')));
  });

  it("orders by $setElementOrder, keeping server-only elements ahead of the patch's elements that followed them", () => {
    const live = {
      spec: {
        containers: [
          { name: 'a', image: '1' },
          { name: 'server', image: '2' },
          { name: 'c', image: '3' },
        ],
      },
    };
    const sut = strategicMergePatch(live, { spec: { '$setElementOrder/containers': [{ name: 'c' }, { name: 'a' }] } }) as typeof live;

    assert.deepEqual(
      sut.spec.containers.map((c) => c.name),
      ['server', 'c', 'a'],
    );
  });

  it('replaces a map with $patch: replace, a list with a $patch: replace element, and empties a map with $patch: delete', () => {
    const live = {
      metadata: { labels: { a: '1', b: '2' } },
      spec: {
        containers: [
          { name: 'a', image: '1' },
          { name: 'b', image: '2' },
        ],
      },
    };

    const replacedMap = strategicMergePatch(live, { metadata: { labels: { c: '3', $patch: 'replace' } } }) as typeof live;
    const replacedList = strategicMergePatch(live, { spec: { containers: [{ $patch: 'replace' }, { name: 'z', image: '9' }] } }) as typeof live;
    const deleted = strategicMergePatch(live, { metadata: { labels: { $patch: 'delete' } } }) as typeof live;

    assert.deepEqual(replacedMap.metadata.labels, { c: '3' });
    assert.deepEqual(replacedList.spec.containers, [{ name: 'z', image: '9' }]);
    assert.deepEqual(deleted.metadata.labels, {});
  });

  it('clears the keys $retainKeys does not list', () => {
    const live = { spec: { volumes: [{ name: 'v', hostPath: { path: '/x' } }] } };
    const sut = strategicMergePatch(live, { spec: { volumes: [{ name: 'v', emptyDir: {}, $retainKeys: ['emptyDir', 'name'] }] } });

    assert.deepEqual(sut, { spec: { volumes: [{ name: 'v', emptyDir: {} }] } });
  });

  it('unions primitive merge lists and removes values with $deleteFromPrimitiveList', () => {
    const live = { metadata: { finalizers: ['a', 'b', 'c'] } };

    assert.deepEqual(strategicMergePatch(live, { metadata: { finalizers: ['b', 'd'] } }), { metadata: { finalizers: ['a', 'b', 'd', 'c'] } });
    assert.deepEqual(strategicMergePatch(live, { metadata: { '$deleteFromPrimitiveList/finalizers': ['b'] } }), { metadata: { finalizers: ['a', 'c'] } });
  });

  it('replaces lists without a merge strategy whole, tolerations among them', () => {
    const live = { spec: { tolerations: [{ key: 'a', operator: 'Exists' }], containers: [{ name: 'a', image: '1' }] } };
    const sut = strategicMergePatch(live, { spec: { tolerations: [{ key: 'b', operator: 'Exists' }] } });

    assert.deepEqual(sut, { spec: { tolerations: [{ key: 'b', operator: 'Exists' }], containers: [{ name: 'a', image: '1' }] } });
  });

  it('merges node conditions by type under the node schema', () => {
    const live = {
      status: {
        conditions: [
          { type: 'Ready', status: 'True' },
          { type: 'MemoryPressure', status: 'False' },
        ],
      },
    };
    const sut = strategicMergePatch(live, { status: { conditions: [{ type: 'MemoryPressure', status: 'True' }] } }, NODE_PATCH_META);

    assert.deepEqual(sut, {
      status: {
        conditions: [
          { type: 'Ready', status: 'True' },
          { type: 'MemoryPressure', status: 'True' },
        ],
      },
    });
  });

  it('rejects a malformed patch as BadRequest: an element without its merge key, an unknown directive', () => {
    const live = { spec: { containers: [{ name: 'a', image: '1' }] } };

    for (const patch of [
      { spec: { containers: [{ image: '2' }] } },
      { metadata: { $patch: 'explode' } },
      { metadata: { $retainKeys: 'x' } },
      'not an object',
    ]) {
      assert.throws(
        () => strategicMergePatch(live, patch),
        (e: unknown) => e instanceof StrategicMergePatchError && e.reason === 'BadRequest',
        JSON.stringify(patch),
      );
    }
  });

  it('leaves its inputs unchanged', () => {
    const patch = { metadata: { labels: { app: null } }, spec: { '$setElementOrder/containers': [{ name: 'a' }], containers: [{ name: 'a', image: 'q' }] } };
    const [beforePod, beforePatch] = [JSON.stringify(pod), JSON.stringify(patch)];
    strategicMergePatch(pod, patch);
    assert.equal(JSON.stringify(pod), beforePod);
    assert.equal(JSON.stringify(patch), beforePatch);
  });
});

describe('jsonPatch (RFC 6902)', () => {
  it('applies operations in order, a passing test included', () => {
    const sut = jsonPatch(pod, [
      { op: 'test', path: '/spec/containers/0/image', value: 'x:1' },
      { op: 'replace', path: '/spec/containers/0/image', value: 'x:2' },
      { op: 'add', path: '/metadata/labels/env', value: 'prod' },
      { op: 'remove', path: '/metadata/labels/tier' },
    ]) as typeof pod;

    assert.equal(sut.spec.containers[0]?.image, 'x:2');
    assert.deepEqual(sut.metadata.labels, { app: 'web', env: 'prod' });
    assert.equal(pod.spec.containers[0]?.image, 'x:1');
  });

  it('fails a failed test as Invalid and applies none of the operations', () => {
    assert.throws(
      () =>
        jsonPatch(pod, [
          { op: 'replace', path: '/metadata/name', value: 'q' },
          { op: 'test', path: '/spec/containers/0/image', value: 'nope' },
        ]),
      (e: unknown) => e instanceof JsonPatchError && e.reason === 'Invalid' && /testing value \/spec\/containers\/0\/image failed/.test(e.message),
    );
    assert.equal(pod.metadata.name, 'web');
  });

  it('rejects a malformed patch as BadRequest', () => {
    for (const patch of [{ op: 'add' }, [{ op: 'jump', path: '/a' }], [{ op: 'add', path: '/a' }]]) {
      assert.throws(
        () => jsonPatch(pod, patch),
        (e: unknown) => e instanceof JsonPatchError && e.reason === 'BadRequest',
        JSON.stringify(patch),
      );
    }
  });
});
