import { accessSync, constants, readFileSync } from 'node:fs';
import { createInbox, nkeyAuthenticator, type NatsConnection, type TlsOptions } from '@nats-io/transport-node';
import { identityName, inboxPrefix, type BusConfig, type Identity } from '#contracts';

export interface BusCredentials {
  identity: Identity;
  /** The nkey seed file (`jetctl nats-config` writes it); unset, the connection is anonymous. */
  seedFile?: string;
}

let warnedAnonymous = false;

/** The connection options that authenticate as `credentials` and keep replies in its own inboxes. */
export function credentialOptions(
  credentials: BusCredentials | undefined,
  logger: { warn(message: string): void },
): { authenticator?: ReturnType<typeof nkeyAuthenticator>; inboxPrefix?: string } {
  if (!credentials) return {};
  if (!credentials.seedFile) {
    // Once per process: a process of hollow nodes opens hundreds of connections.
    if (warnedAnonymous) return {};
    warnedAnonymous = true;
    logger.warn(
      `running WITHOUT NATS credentials as ${identityName(credentials.identity)} (NATS_NKEY_SEED_FILE unset): ` +
        'anyone who reaches this NATS server can write as this component. Run `jetctl nats-config` and set NATS_NKEY_SEED_FILE.',
    );
    return {};
  }
  const seed = new TextEncoder().encode(readFileSync(credentials.seedFile, 'utf8').trim());
  return { authenticator: nkeyAuthenticator(seed), inboxPrefix: inboxPrefix(credentials.identity) };
}

/** A fresh inbox under the connection's own prefix (`_INBOX_<identity>` when it has credentials). */
export function inboxFor(nc: NatsConnection): string {
  // The connection keeps its options (NatsConnectionImpl), though the interface does not show them.
  return createInbox((nc as NatsConnection & { options?: { inboxPrefix?: string } }).options?.inboxPrefix);
}

/** TLS to the NATS server: the CA its certificate must chain to and, for a server with `verify: true`, this process's certificate. */
export interface BusTls {
  /** The CA (PEM) of the server's certificate; without it, the system's CAs. */
  caFile?: string;
  /** This process's client certificate (PEM), with `keyFile`. */
  certFile?: string;
  keyFile?: string;
}

type TlsSettings = Pick<BusConfig, 'NATS_TLS_CA_FILE' | 'NATS_TLS_CERT_FILE' | 'NATS_TLS_KEY_FILE'>;

/** The TLS of the NATS_TLS_* settings (a validated config, or the environment as jetctl reads it); undefined when none is set. */
export function busTls(settings: TlsSettings): BusTls | undefined {
  const tls: BusTls = {
    ...(settings.NATS_TLS_CA_FILE ? { caFile: settings.NATS_TLS_CA_FILE } : {}),
    ...(settings.NATS_TLS_CERT_FILE ? { certFile: settings.NATS_TLS_CERT_FILE } : {}),
    ...(settings.NATS_TLS_KEY_FILE ? { keyFile: settings.NATS_TLS_KEY_FILE } : {}),
  };
  return Object.keys(tls).length > 0 ? tls : undefined;
}

/**
 * The connection options of `tls`: any `tls` object makes nats.js refuse a server that does not
 * offer TLS, so a configured CA never falls back to plain TCP. The files are read again on every
 * reconnect (a renewed certificate is picked up); a missing one fails here, at start, not as an
 * endless "cannot reach NATS".
 */
export function tlsOptions(tls: BusTls | undefined): { tls?: TlsOptions } {
  if (!tls) return {};
  for (const file of [tls.caFile, tls.certFile, tls.keyFile]) if (file) accessSync(file, constants.R_OK);
  return { tls: { ...tls } };
}
