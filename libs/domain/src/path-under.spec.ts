import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pathUnder, PathOutsideRootError } from './path-under.js';

describe('pathUnder', () => {
  it('joins plain segments under the root', () => {
    assert.equal(pathUnder('/var/lib/jetlet', 'pods', '6f1c2b1e', 'containers'), '/var/lib/jetlet/pods/6f1c2b1e/containers');
    assert.equal(pathUnder('/var/lib/jetlet/', 'pods', 'a.b..c'), '/var/lib/jetlet/pods/a.b..c');
  });

  it('refuses every segment that is not one plain path component', () => {
    for (const bad of ['..', '.', '', '../x', 'a/b', '/etc', 'a\\b', 'a\0b'])
      assert.throws(() => pathUnder('/var/lib/jetlet', 'pods', bad), PathOutsideRootError, JSON.stringify(bad));
  });

  it('never names the root itself', () => {
    assert.throws(() => pathUnder('/var/lib/jetlet'), PathOutsideRootError);
  });
});
