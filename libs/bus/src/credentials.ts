import { readFileSync } from 'node:fs';
import { createInbox, nkeyAuthenticator, type NatsConnection } from '@nats-io/transport-node';
import { identityName, inboxPrefix, type Identity } from '#contracts';

export interface BusCredentials {
  identity: Identity;
  /** The nkey seed file (`jetctl nats-config` writes it); unset, the connection is anonymous. */
  seedFile?: string;
}

let warnedAnonymous = false;

/** The connection options that authenticate as `credentials` and keep replies in its own inboxes. */
export function credentialOptions(credentials: BusCredentials | undefined, logger: { warn(message: string): void }): { authenticator?: ReturnType<typeof nkeyAuthenticator>; inboxPrefix?: string } {
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
