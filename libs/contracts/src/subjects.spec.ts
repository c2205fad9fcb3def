import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DNS1123_SUBDOMAIN } from './names.js';
import { podOfSubject, SUBJECTS, token, untoken } from './subjects.js';

/** Any string, including astral and lone-surrogate-free unicode, '.', '_', '~', wildcards and white space. */
const anyName = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 12 }),
  fc.string({ unit: fc.constantFrom('.', '_', '~', 'a', 'Z', '-', '>', '*', ' ', '/'), maxLength: 12 }),
);

describe('token', () => {
  it('keeps apart the names that used to collide', () => {
    assert.notEqual(token('rel.x'), token('rel_x'));
    assert.notEqual(SUBJECTS.pod('rel.x', 'a'), SUBJECTS.pod('rel_x', 'a'));
    assert.notEqual(SUBJECTS.pod('a', 'b.c'), SUBJECTS.pod('a.b', 'c'));
  });

  it('is injective: different names never share a token', () => {
    fc.assert(
      fc.property(anyName, anyName, (a, b) => {
        fc.pre(a !== b);
        assert.notEqual(token(a), token(b));
      }),
      { numRuns: 2000 },
    );
  });

  it('reads back: untoken(token(name)) is the name', () => {
    fc.assert(
      fc.property(anyName, (name) => {
        assert.equal(untoken(token(name)), name);
      }),
      { numRuns: 2000 },
    );
  });

  it('always gives exactly one token free of separators, wildcards and white space', () => {
    fc.assert(
      fc.property(anyName, (name) => {
        assert.match(token(name), /^[a-z0-9_~-]+$/);
      }),
      { numRuns: 2000 },
    );
  });

  it('gives a DNS-1123 name the token it always had, so stored subjects stay where they are', () => {
    const dnsName = fc.stringMatching(DNS1123_SUBDOMAIN, { size: 'small' });
    fc.assert(
      fc.property(dnsName, (name) => {
        assert.equal(token(name), name.replaceAll('.', '_'));
      }),
      { numRuns: 500 },
    );
  });

  it('refuses what token() cannot produce', () => {
    for (const bad of ['a.b', 'a~', 'a~0', 'a~zz', 'A', '~2e']) {
      assert.throws(() => untoken(bad), RangeError, bad);
    }
  });

  it('finds the pod of a pod subject and nothing else', () => {
    fc.assert(
      fc.property(anyName, anyName, (namespace, name) => {
        assert.deepEqual(podOfSubject(SUBJECTS.pod(namespace, name)), { namespace, name });
      }),
      { numRuns: 500 },
    );
    assert.equal(podOfSubject(SUBJECTS.podStatus('n', 'u')), undefined);
    assert.equal(podOfSubject('jetlet.pods.a.b.c'), undefined);
  });
});
