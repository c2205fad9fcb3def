import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { nkeys } from '@nats-io/transport-node';
import { authorizationConfig, clusterIdentities, identityName, token, untoken, type Identity } from '#contracts';

/** The server's include file, beside the seeds. */
export const AUTH_FILE = 'auth.conf';
const SEED_SUFFIX = '.nk';

/** The seed file's name of an identity: `api.nk`, …, `node-<token>.nk`. */
export function seedFileName(id: Identity): string {
  if (id.kind === 'hollow') return `hollow-${token(id.prefix)}-${id.first}-${id.count}${SEED_SUFFIX}`;
  return `${id.kind === 'node' ? `node-${token(id.node)}` : id.kind}${SEED_SUFFIX}`;
}

function identityOfFile(file: string): Identity | undefined {
  if (!file.endsWith(SEED_SUFFIX)) return undefined;
  const base = file.slice(0, -SEED_SUFFIX.length);
  const hollow = /^hollow-(.+)-(\d+)-(\d+)$/.exec(base);
  if (hollow) {
    try {
      return { kind: 'hollow', prefix: untoken(hollow[1] ?? ''), first: Number(hollow[2]), count: Number(hollow[3]) };
    } catch {
      return undefined;
    }
  }
  if (base.startsWith('node-')) {
    try {
      return { kind: 'node', node: untoken(base.slice(5)) };
    } catch {
      return undefined;
    }
  }
  return (['api', 'scheduler', 'alerter', 'jetctl', 'admin'] as const).includes(base as never) ? ({ kind: base } as Identity) : undefined;
}

/** The identity's seed in `dir`, created (mode 600) when it has none yet; returns its public key. */
function ensureSeed(dir: string, id: Identity): string {
  const path = join(dir, seedFileName(id));
  if (!existsSync(path)) {
    const pair = nkeys.createUser();
    writeFileSync(path, `${new TextDecoder().decode(pair.getSeed())}\n`, { mode: 0o600 });
  }
  chmodSync(path, 0o600);
  return nkeys.fromSeed(new TextEncoder().encode(readFileSync(path, 'utf8').trim())).getPublicKey();
}

/** Writes the server's authorization include file for every identity with a seed in `dir`. */
function writeAuthFile(dir: string): { identity: Identity; nkey: string }[] {
  const users = readdirSync(dir)
    .sort()
    .flatMap((file) => {
      const identity = identityOfFile(file);
      return identity ? [{ identity, nkey: ensureSeed(dir, identity) }] : [];
    });
  writeFileSync(join(dir, AUTH_FILE), authorizationConfig(users), { mode: 0o644 });
  return users;
}

/**
 * Credentials for a cluster with these nodes: each component's and each node's seed (kept if
 * already there, so running it again rotates nothing) and the server's `auth.conf`.
 */
export function writeNatsConfig(dir: string, nodes: readonly string[]): { identity: string; seedFile: string; nkey: string }[] {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  for (const id of clusterIdentities(nodes)) ensureSeed(dir, id);
  return writeAuthFile(dir).map(({ identity, nkey }) => ({ identity: identityName(identity), seedFile: join(dir, seedFileName(identity)), nkey }));
}

/**
 * Adds the seed of one process of hollow nodes, allowed exactly what its `count` nodes
 * `${prefix}-${first}` ... are, and writes `auth.conf` again (reload the server to apply it).
 */
export function addHollowCredentials(dir: string, prefix: string, first: number, count: number): { identity: string; seedFile: string; nkey: string } {
  if (!existsSync(dir)) throw new Error(`${dir} does not exist: run jetctl nats-config first`);
  const id: Identity = { kind: 'hollow', prefix, first, count };
  const nkey = ensureSeed(dir, id);
  writeAuthFile(dir);
  return { identity: identityName(id), seedFile: join(dir, seedFileName(id)), nkey };
}

/** Adds one node's seed to `dir` and writes `auth.conf` again (reload the server to apply it). */
export function addNodeCredentials(dir: string, node: string): { seedFile: string; nkey: string } {
  if (!existsSync(dir)) throw new Error(`${dir} does not exist: run jetctl nats-config first`);
  const id: Identity = { kind: 'node', node };
  const nkey = ensureSeed(dir, id);
  writeAuthFile(dir);
  return { seedFile: join(dir, seedFileName(id)), nkey };
}
