import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isValidImageReference as sut } from './image-reference.js';

const HEX64 = '0123456789abcdef'.repeat(4);

describe('isValidImageReference', () => {
  for (const image of [
    'busybox',
    'jetlet/busybox:1.35',
    '127.0.0.1:5000/jetlet-test/busybox:latest',
    `registry.example.com/a/b@sha256:${HEX64}`,
    `busybox:1.36@sha256:${HEX64}`,
    'localhost/busybox',
    'registry.example.com:5000/team/app_name__x/a-b--c.d:v1.2.3-rc_1',
    // The first component is taken for a registry host when it has an upper-case letter, and
    // host names may have them: distribution/reference parses this as host "UPPER", path "case".
    'UPPER/case',
  ]) {
    it(`accepts ${image}`, () => {
      assert.equal(sut(image), true);
    });
  }

  for (const [image, why] of [
    ['Not A Valid:Image', 'spaces and an upper-case repository'],
    ['Upper', 'an upper-case repository name'],
    ['UPPER/Case', 'an upper-case path after the host'],
    ['jetlet/BusyBox:1.35', 'an upper-case path component'],
    ['a//b', 'an empty path component'],
    ['busybox:', 'an empty tag'],
    ['', 'nothing'],
    ['/busybox', 'a leading slash'],
    ['busybox/', 'a trailing slash'],
    ['-busybox', 'a component starting with a separator'],
    ['busybox:-1', 'a tag starting with a dash'],
    [`busybox:${'a'.repeat(129)}`, 'a tag over 128 characters'],
    ['busybox@sha256:', 'an empty digest'],
    ['busybox@sha256:xyz', 'a digest that is not hex'],
    [' busybox', 'leading white space'],
    ['https://registry.example.com/busybox', 'a URL scheme'],
  ]) {
    it(`rejects ${JSON.stringify(image)}: ${why}`, () => {
      assert.equal(sut(image), false);
    });
  }

  // The kubelet parses with distribution/reference ParseNormalizedNamed, which also refuses these.
  it('rejects a repository name of 64 hex digits, which would read as an image id', () => {
    assert.equal(sut(HEX64), false);
  });

  it('rejects a sha256 digest whose length is not 64 hex digits', () => {
    assert.equal(sut(`busybox@sha256:${'ab'.repeat(16)}`), false);
  });
});
