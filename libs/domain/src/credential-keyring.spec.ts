import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CredentialKeyring, imageRepository, type PullSecret } from './credential-keyring.js';

const b64 = (value: string): string => Buffer.from(value).toString('base64');
const configJson = (name: string, auths: Record<string, object>): PullSecret => ({
  name,
  type: 'kubernetes.io/dockerconfigjson',
  data: { '.dockerconfigjson': b64(JSON.stringify({ auths })) },
});

describe('imageRepository', () => {
  it('makes the registry explicit as the kubelet does before a keyring lookup', () => {
    assert.equal(imageRepository('busybox'), 'docker.io/library/busybox');
    assert.equal(imageRepository('busybox:1.35'), 'docker.io/library/busybox');
    assert.equal(imageRepository('team/app:1'), 'docker.io/team/app');
    assert.equal(imageRepository('127.0.0.1:5000/team/app:1'), '127.0.0.1:5000/team/app');
    assert.equal(imageRepository('localhost/app@sha256:' + 'a'.repeat(64)), 'localhost/app');
    assert.equal(imageRepository('registry.example/app:2'), 'registry.example/app');
  });
});

describe('CredentialKeyring', () => {
  it('matches credentials by registry host and port, and reads user:password from auth', () => {
    const sut = CredentialKeyring.fromSecrets([
      configJson('regcred', {
        '127.0.0.1:5000': { auth: b64('alice:s3cret:with-colon') },
        '127.0.0.1:6000': { username: 'bob', password: 'pw' },
      }),
    ]);
    assert.deepEqual(sut.lookup('127.0.0.1:5000/team/app:1'), [{ serveraddress: '127.0.0.1:5000', username: 'alice', password: 's3cret:with-colon' }]);
    assert.deepEqual(sut.lookup('127.0.0.1:6000/app'), [{ serveraddress: '127.0.0.1:6000', username: 'bob', password: 'pw' }]);
    assert.deepEqual(sut.lookup('127.0.0.1:7000/app'), [], 'another port is another registry');
    assert.deepEqual(sut.lookup('busybox'), [], 'nothing for Docker Hub');
  });

  it('strips a scheme, matches host globs and path prefixes, most specific first', () => {
    const sut = CredentialKeyring.fromSecrets([
      configJson('a', {
        'https://registry.example': { username: 'host', password: 'p' },
        'registry.example/team': { username: 'team', password: 'p' },
        '*.corp.example': { username: 'glob', password: 'p' },
      }),
    ]);
    assert.deepEqual(
      sut.lookup('registry.example/team/app:1').map((c) => c.username),
      ['team', 'host'],
    );
    assert.deepEqual(
      sut.lookup('registry.example/other/app').map((c) => c.username),
      ['host'],
    );
    assert.deepEqual(
      sut.lookup('eu.corp.example/app').map((c) => c.username),
      ['glob'],
    );
    assert.deepEqual(
      sut.lookup('a.eu.corp.example/app').map((c) => c.username),
      [],
      'a glob matches one label',
    );
  });

  it('reads Docker Hub under the locations the docker CLI writes', () => {
    const sut = CredentialKeyring.fromSecrets([configJson('hub', { 'https://index.docker.io/v1/': { username: 'u', password: 'p' } })]);
    assert.deepEqual(
      sut.lookup('busybox:1.35').map((c) => c.username),
      ['u'],
    );
    assert.deepEqual(
      sut.lookup('docker.io/team/app').map((c) => c.username),
      ['u'],
    );
  });

  it('reads the legacy .dockercfg, keeps the secrets in order, and ignores other types and bad JSON', () => {
    const sut = CredentialKeyring.fromSecrets([
      { name: 'legacy', type: 'kubernetes.io/dockercfg', data: { '.dockercfg': b64(JSON.stringify({ '127.0.0.1:5000': { auth: b64('old:pw') } })) } },
      configJson('new', { '127.0.0.1:5000': { username: 'new', password: 'pw' } }),
      { name: 'opaque', type: 'Opaque', data: { '.dockerconfigjson': b64(JSON.stringify({ auths: { '127.0.0.1:5000': { username: 'x' } } })) } },
      { name: 'broken', type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': b64('{not json') } },
      { name: 'empty', type: 'kubernetes.io/dockerconfigjson' },
    ]);
    assert.deepEqual(
      sut.lookup('127.0.0.1:5000/app').map((c) => c.username),
      ['old', 'new'],
    );
  });
});
