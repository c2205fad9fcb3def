import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { profileArgs } from './cluster.js';
import { ManagedProcess, ROOT } from './processes.js';

/** The hollow-node process (apps/agent/src/hollow.ts), compiled. */
export const HOLLOW = join(ROOT, 'dist/apps/agent/src/hollow.js');

/**
 * Spawns one process of `count` hollow agents named `${prefix}-${first}` ... against
 * `natsUrl`, without waiting; `waitForLine(HOLLOW_READY)` waits until all are up.
 */
export function spawnHollow(natsUrl: string, prefix: string, count: number, env: Record<string, string> = {}, first = 0): ManagedProcess {
  const child = spawn(process.execPath, [...profileArgs(), HOLLOW], {
    cwd: ROOT,
    env: {
      ...process.env,
      NO_COLOR: '1',
      NATS_URL: natsUrl,
      HOLLOW_NODES: String(count),
      HOLLOW_PREFIX: prefix,
      HOLLOW_FIRST_INDEX: String(first),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new ManagedProcess(`hollow ${prefix}-${first}..${first + count - 1}`, child);
}

/** The line a hollow process prints once every agent in it runs. */
export const HOLLOW_READY = /\d+ hollow nodes running/;
