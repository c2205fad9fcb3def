import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { DEFAULT_SERVER, kubeconfigFor, kubeconfigServer, resolveConnection, resolveServer } from './kubeconfig.js';

const dir = mkdtempSync(join(tmpdir(), 'kubeconfig-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('kubeconfig', () => {
  it('writes a kubeconfig whose current context is the given server, and reads it back', () => {
    const file = join(dir, 'lab');
    writeFileSync(file, kubeconfigFor('http://127.0.0.1:18001'));
    assert.equal(kubeconfigServer({ KUBECONFIG: file }), 'http://127.0.0.1:18001');
  });

  it('takes the first file of $KUBECONFIG that names a current context, as kubectl does', () => {
    const empty = join(dir, 'empty');
    writeFileSync(empty, 'apiVersion: v1\nkind: Config\n');
    const other = join(dir, 'other');
    writeFileSync(other, kubeconfigFor('http://127.0.0.1:19000', 'other'));
    assert.equal(kubeconfigServer({ KUBECONFIG: [join(dir, 'missing'), empty, other].join(delimiter) }), 'http://127.0.0.1:19000');
    assert.equal(kubeconfigServer({ KUBECONFIG: empty }), undefined);
  });

  it('prefers --server, then $JETLET_SERVER, then the kubeconfig, then the default', () => {
    const file = join(dir, 'lab');
    assert.equal(resolveServer('http://flag', { JETLET_SERVER: 'http://env', KUBECONFIG: file }), 'http://flag');
    assert.equal(resolveServer(undefined, { JETLET_SERVER: 'http://env', KUBECONFIG: file }), 'http://env');
    assert.equal(resolveServer(undefined, { KUBECONFIG: file }), 'http://127.0.0.1:18001');
    assert.equal(resolveServer(undefined, { KUBECONFIG: join(dir, 'missing') }), DEFAULT_SERVER);
  });

  it('writes and reads back the token and certificate authority; flags and environment win over the file', () => {
    const file = join(dir, 'secure');
    const ca = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
    writeFileSync(file, kubeconfigFor('https://127.0.0.1:18443', 'jetlet', { token: 's3cret', ca }));
    assert.deepEqual(resolveConnection({}, { KUBECONFIG: file }), { server: 'https://127.0.0.1:18443', token: 's3cret', ca });
    assert.deepEqual(resolveConnection({ token: 'flag' }, { KUBECONFIG: file, JETLET_TOKEN: 'env' }), { server: 'https://127.0.0.1:18443', token: 'flag', ca });
    assert.deepEqual(resolveConnection({}, { KUBECONFIG: file, JETLET_SERVER: 'http://other', JETLET_TOKEN: 'env' }), { server: 'http://other', token: 'env' });
    assert.deepEqual(resolveConnection({}, { KUBECONFIG: join(dir, 'missing') }), { server: DEFAULT_SERVER });
  });
});
