import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { profileArgs, type Cluster } from './cluster.js';
import { ManagedProcess, ROOT } from './processes.js';

/** The hollow-node process (apps/agent/src/hollow.ts), compiled. */
export const HOLLOW = join(ROOT, 'dist/apps/agent/src/hollow.js');

/**
 * Node flags of a hollow process, as every launcher gives them (docker-compose.yml too):
 * hundreds of agents make a large heap of long-lived objects, beside which V8's default
 * sizing keeps tens of MiB of young generation and uncollected garbage resident.
 * `--optimize-for-size` keeps the young generation small and collects the old one sooner
 * (bench/hollow-memory.bench.ts shows what it saves and what CPU it costs).
 */
export const HOLLOW_NODE_FLAGS = ['--optimize-for-size'];

/**
 * Spawns one process of `count` hollow agents named `${prefix}-${first}` ... against
 * `natsUrl`, without waiting; `waitForLine(HOLLOW_READY)` waits until all are up.
 * `nodeFlags`: HOLLOW_NODE_FLAGS unless a bench measures without them. `script`: another
 * build's hollow.js, for a bench that measures against it.
 */
export function spawnHollow(
  natsUrl: string,
  prefix: string,
  count: number,
  env: Record<string, string> = {},
  first = 0,
  nodeFlags: string[] = HOLLOW_NODE_FLAGS,
  script = HOLLOW,
): ManagedProcess {
  const child = spawn(process.execPath, [...profileArgs(), ...nodeFlags, script], {
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

/** How many nodes named `${prefix}-...` the API shows Ready. */
export async function readyHollowNodes(cluster: Cluster, prefix: string): Promise<number> {
  const { body } = await cluster.request<{ items: Array<{ metadata: { name: string }; status: { conditions?: Array<{ type: string; status: string }> } }> }>(
    'GET',
    '/api/v1/nodes',
  );
  return body.items.filter((n) => n.metadata.name.startsWith(`${prefix}-`) && n.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))
    .length;
}
