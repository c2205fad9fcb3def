import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { after, describe, it } from 'node:test';
import { TLSSocket, type PeerCertificate } from 'node:tls';
import type { ApiConfig } from '../api.config.js';
import { AuthService } from './auth.service.js';
import { clientCertificateUser } from './client-certificate.js';

/** A TLS socket as the handshake leaves it: what the peer sent, and OpenSSL's verdict on it. */
function tlsSocket(peer: Partial<PeerCertificate>, authorized: boolean): TLSSocket {
  const socket = new TLSSocket(new PassThrough());
  Object.defineProperty(socket, 'authorized', { value: authorized });
  socket.getPeerCertificate = (() => peer) as TLSSocket['getPeerCertificate'];
  return socket;
}

const ADMIN = { subject: { CN: 'cert-admin', O: ['system:masters', 'ops'] } } as unknown as Partial<PeerCertificate>;

describe('clientCertificateUser', () => {
  it('names the user by CN and the groups by each O, as the x509 authenticator does', () => {
    assert.deepEqual(clientCertificateUser(tlsSocket(ADMIN, true)), { name: 'cert-admin', uid: '', groups: ['system:masters', 'ops', 'system:authenticated'] });
    const one = { subject: { CN: 'carol', O: 'developers' } } as unknown as Partial<PeerCertificate>;
    assert.deepEqual(clientCertificateUser(tlsSocket(one, true)), { name: 'carol', uid: '', groups: ['developers', 'system:authenticated'] });
  });

  it('is invalid when the client CA did not verify it, nobody without a certificate or a CN, and never on plain TCP', () => {
    assert.equal(clientCertificateUser(tlsSocket(ADMIN, false)), 'invalid');
    assert.equal(clientCertificateUser(tlsSocket({}, false)), undefined);
    assert.equal(clientCertificateUser(tlsSocket({ subject: { O: 'x' } }, true)), undefined);
    assert.equal(clientCertificateUser(new Socket()), undefined);
  });
});

describe('AuthService with client certificates', () => {
  const dir = mkdtempSync(join(tmpdir(), 'jetlet-auth-spec-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'tokens.csv'), 't-view,viewer,1001,"readers"\n');
  const config = {
    API_TOKEN_AUTH_FILE: join(dir, 'tokens.csv'),
    API_CLIENT_CA_FILE: join(dir, 'ca.crt'),
    API_TLS_CERT_FILE: join(dir, 'tls.crt'),
    API_TLS_PRIVATE_KEY_FILE: join(dir, 'tls.key'),
    API_INSECURE: 'false',
  } as ApiConfig;
  const sut = new AuthService(config);
  const request = (socket: Socket, token?: string): IncomingMessage =>
    ({ socket, headers: token ? { authorization: `Bearer ${token}` } : {} }) as IncomingMessage;

  it('takes a verified certificate first, then a token; an unverified certificate fails only when no token succeeds', () => {
    assert.equal((sut.authenticate(request(tlsSocket(ADMIN, true), 't-view')) as { name: string }).name, 'cert-admin');
    assert.equal((sut.authenticate(request(tlsSocket(ADMIN, false), 't-view')) as { name: string }).name, 'viewer');
    assert.equal(sut.authenticate(request(tlsSocket(ADMIN, false))), 'invalid');
    assert.equal(sut.authenticate(request(tlsSocket(ADMIN, false), 'wrong')), 'invalid');
    assert.equal(sut.authenticate(request(tlsSocket({}, false))), undefined);
  });

  it('refuses to start with a client CA but no TLS', () => {
    assert.throws(() => new AuthService({ ...config, API_TLS_CERT_FILE: undefined }), /API_CLIENT_CA_FILE: client certificates need HTTPS/);
  });
});
