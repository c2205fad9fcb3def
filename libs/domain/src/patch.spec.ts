import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mergePatch, strategicMergePatch } from './patch.js';

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
        env: [
          { name: 'A', value: '1' },
          { name: 'B', value: '2' },
        ],
      },
      { name: 'c', image: 'z:1' },
    ]);
  });
});
