import type { Socket } from 'node:net';
import { TLSSocket } from 'node:tls';
import { AUTHENTICATED_GROUP, type UserInfo } from '#domain';

/** A subject field as Node gives it: absent, one value, or one per repeat. */
function values(field: string | string[] | undefined): string[] {
  if (field === undefined) return [];
  return (Array.isArray(field) ? field : [field]).filter((v) => v !== '');
}

/**
 * The user of a connection's client certificate, as kube-apiserver's x509 authenticator
 * names it: the CN is the user, each O a group. Undefined when the client sent no
 * certificate (or one without a CN, which names nobody, as in Kubernetes); 'invalid' when
 * the server's client CAs did not verify it (Node checked chain, dates and purpose during
 * the handshake, `requestCert` without `rejectUnauthorized`, so a token may still be tried).
 */
export function clientCertificateUser(socket: Socket): UserInfo | 'invalid' | undefined {
  if (!(socket instanceof TLSSocket)) return undefined;
  const peer = socket.getPeerCertificate();
  if (!peer || Object.keys(peer).length === 0) return undefined;
  if (!socket.authorized) return 'invalid';
  const name = values(peer.subject?.CN)[0];
  if (name === undefined) return undefined;
  return { name, uid: '', groups: [...new Set([...values(peer.subject.O), AUTHENTICATED_GROUP])] };
}
