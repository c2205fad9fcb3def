import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NatsTlsError, subjectAltName, writeNatsTls } from './nats-tls.js';

const SERVER_AUTH = '1.3.6.1.5.5.7.3.1';
const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';

function scratch(): string {
  return mkdtempSync(join(tmpdir(), 'jetlet-nats-tls-'));
}

const cert = (file: string): X509Certificate => new X509Certificate(readFileSync(file));

describe('jetctl nats-tls', () => {
  it('makes a CA and a server certificate it signed for loopback and the given names, and a tls block without verify', () => {
    const dir = scratch();
    try {
      const sut = writeNatsTls(join(dir, 'tls'), { hosts: ['nats-1', '10.0.0.7'] });
      const ca = cert(sut.caFile);
      const server = cert(sut.serverCertFile);
      assert.ok(ca.ca);
      assert.ok(server.checkIssued(ca) && server.verify(ca.publicKey));
      assert.ok(!server.ca);
      assert.equal(server.subjectAltName, 'IP Address:127.0.0.1, DNS:localhost, DNS:nats-1, IP Address:10.0.0.7');
      assert.deepEqual(server.keyUsage, [SERVER_AUTH]);
      assert.equal(statSync(sut.serverKeyFile).mode & 0o777, 0o600);
      assert.equal(statSync(join(dir, 'tls', 'ca.key')).mode & 0o777, 0o600);
      assert.equal(sut.clientCertFile, undefined);
      const conf = readFileSync(sut.confFile, 'utf8');
      assert.match(conf, /^tls \{$/m);
      for (const f of [sut.caFile, sut.serverCertFile, sut.serverKeyFile]) assert.ok(conf.includes(JSON.stringify(f)), f);
      assert.doesNotMatch(conf, /verify/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('with verify, adds a client certificate from the same CA and makes the server require one; the CA is kept when run again', () => {
    const dir = scratch();
    try {
      const first = writeNatsTls(dir);
      const before = readFileSync(first.caFile, 'utf8');
      const sut = writeNatsTls(dir, { verify: true });
      assert.equal(readFileSync(sut.caFile, 'utf8'), before);
      assert.ok(sut.clientCertFile && sut.clientKeyFile);
      const client = cert(sut.clientCertFile);
      assert.ok(client.verify(cert(sut.caFile).publicKey));
      assert.ok(cert(sut.serverCertFile).verify(cert(sut.caFile).publicKey));
      assert.deepEqual(client.keyUsage, [CLIENT_AUTH]);
      assert.equal(statSync(sut.clientKeyFile).mode & 0o777, 0o600);
      assert.match(readFileSync(sut.confFile, 'utf8'), /^ {2}verify: true$/m);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a name that is neither an IP address nor a DNS name', () => {
    assert.equal(subjectAltName(['localhost', '::1']), 'IP:127.0.0.1,DNS:localhost,IP:::1');
    for (const bad of ['a,DNS:evil', 'two words', '-x', '']) assert.throws(() => subjectAltName([bad]), NatsTlsError, bad);
  });
});
