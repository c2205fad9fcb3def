import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { bodyShapeProblem } from './request-shape.js';

function nested(depth: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = i % 2 ? { a: value } : [value];
  return value;
}

describe('bodyShapeProblem', () => {
  it('accepts a pod manifest and plain values', () => {
    assert.equal(
      bodyShapeProblem({ metadata: { name: 'a', labels: { x: 'y' } }, spec: { containers: [{ name: 'c', image: 'i', command: ['a'] }] } }),
      undefined,
    );
    assert.equal(bodyShapeProblem(undefined), undefined);
    assert.equal(bodyShapeProblem('text'), undefined);
  });

  it('names input deeper than the limit, without exhausting the stack', () => {
    assert.equal(bodyShapeProblem(nested(100)), undefined);
    assert.match(bodyShapeProblem(nested(101)) ?? '', /deeper than 100/);
    assert.match(bodyShapeProblem(nested(200_000)) ?? '', /deeper than 100/);
  });

  it('names an array longer than the limit, wherever it sits', () => {
    assert.equal(bodyShapeProblem({ a: Array.from({ length: 10_000 }, () => 1) }), undefined);
    assert.match(bodyShapeProblem({ a: [{ b: Array.from({ length: 100_000 }, () => 1) }] }) ?? '', /100000 elements/);
  });
});
