import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join, resolve } from 'node:path';

/** The server's include file, beside the certificates. */
export const TLS_FILE = 'tls.conf';
/** How long the certificates are valid. */
const DAYS = '825';
/** Every server certificate names loopback, where the lab and the tests reach NATS. */
const LOOPBACK = ['127.0.0.1', 'localhost'];
const KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

/** A failure to make the certificates, said for a person. */
export class NatsTlsError extends Error {
  override readonly name = 'NatsTlsError';
}

/** What `writeNatsTls` wrote: absolute paths. */
export interface NatsTlsFiles {
  /** The CA every client checks the server against (NATS_TLS_CA_FILE). */
  caFile: string;
  serverCertFile: string;
  serverKeyFile: string;
  /** With `verify`: the client certificate and key (NATS_TLS_CERT_FILE, NATS_TLS_KEY_FILE). */
  clientCertFile?: string;
  clientKeyFile?: string;
  /** The `tls { ... }` block for the server's configuration. */
  confFile: string;
}

function openssl(args: string[]): void {
  try {
    execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (error) {
    const e = error as NodeJS.ErrnoException & { stderr?: Buffer };
    if (e.code === 'ENOENT') throw new NatsTlsError('openssl is not installed: it makes the certificates', { cause: error });
    throw new NatsTlsError(`openssl ${args[0]} failed: ${e.stderr?.toString().trim() ?? e.message}`, { cause: error });
  }
}

/** The subjectAltName of a server certificate for `hosts` (IP addresses and DNS names), loopback included. */
export function subjectAltName(hosts: readonly string[]): string {
  const names = [...new Set([...LOOPBACK, ...hosts])];
  for (const h of names)
    if (isIP(h) === 0 && !/^(\*\.)?[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$/.test(h))
      throw new NatsTlsError(`"${h}" is neither an IP address nor a DNS name`);
  return names.map((h) => (isIP(h) === 0 ? `DNS:${h}` : `IP:${h}`)).join(',');
}

/**
 * Makes, with openssl, a CA for a lab's NATS and a server certificate signed by it for
 * 127.0.0.1, localhost and `hosts`, and writes `tls.conf`, the server's `tls { }` block. The CA
 * is kept when `dir` already has one (clients that trust it go on trusting the server); the
 * server certificate is made again, so new names take effect. With `verify`, also a client
 * certificate (one for every component: who a client is stays its nkey), and the server
 * refuses a client without a certificate from this CA.
 */
export function writeNatsTls(dir: string, options: { hosts?: readonly string[]; verify?: boolean } = {}): NatsTlsFiles {
  const san = subjectAltName(options.hosts ?? []);
  const abs = resolve(dir);
  mkdirSync(abs, { recursive: true, mode: 0o700 });
  const files: NatsTlsFiles = {
    caFile: join(abs, 'ca.crt'),
    serverCertFile: join(abs, 'server.crt'),
    serverKeyFile: join(abs, 'server.key'),
    confFile: join(abs, TLS_FILE),
  };
  const caKey = join(abs, 'ca.key');
  if (!existsSync(files.caFile) || !existsSync(caKey)) {
    openssl([
      'req',
      '-x509',
      ...KEY,
      '-days',
      DAYS,
      '-subj',
      '/CN=jetlet-nats-ca',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
      '-keyout',
      caKey,
      '-out',
      files.caFile,
    ]);
  }
  const issue = (subject: string, cert: string, key: string, ...extensions: string[]): void => {
    openssl([
      'req',
      '-x509',
      '-CA',
      files.caFile,
      '-CAkey',
      caKey,
      ...KEY,
      '-days',
      DAYS,
      '-subj',
      subject,
      '-addext',
      'basicConstraints=critical,CA:FALSE',
      ...extensions.flatMap((e) => ['-addext', e]),
      '-keyout',
      key,
      '-out',
      cert,
    ]);
  };
  issue('/CN=jetlet-nats', files.serverCertFile, files.serverKeyFile, `subjectAltName=${san}`, 'extendedKeyUsage=serverAuth');
  if (options.verify) {
    files.clientCertFile = join(abs, 'client.crt');
    files.clientKeyFile = join(abs, 'client.key');
    issue('/CN=jetlet', files.clientCertFile, files.clientKeyFile, 'extendedKeyUsage=clientAuth');
  }
  for (const key of [caKey, files.serverKeyFile, files.clientKeyFile]) if (key) chmodSync(key, 0o600);
  chmodSync(files.caFile, 0o644);
  writeFileSync(files.confFile, tlsBlock(files, options.verify ?? false), { mode: 0o644 });
  return files;
}

/** nats-server's `tls { }` block: absolute paths, as the server opens them from its own working directory. */
function tlsBlock(files: NatsTlsFiles, verify: boolean): string {
  return [
    '# Written by jetctl nats-tls: include it from the nats-server configuration.',
    'tls {',
    `  cert_file: ${JSON.stringify(files.serverCertFile)}`,
    `  key_file: ${JSON.stringify(files.serverKeyFile)}`,
    `  ca_file: ${JSON.stringify(files.caFile)}`,
    // Every client must show a certificate from this CA (mutual TLS); who it is stays its nkey.
    ...(verify ? ['  verify: true'] : []),
    // Many agents (a process of hollow nodes) handshake at once: longer than nats-server's default on a busy host.
    '  timeout: 5',
    '}',
    '',
  ].join('\n');
}
