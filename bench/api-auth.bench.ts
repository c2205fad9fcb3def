import { Cluster } from '../test/harness/cluster.js';
import { fmt, printTable, summary } from './bench-util.js';

/** Creates and deletes per run; the environment may lower it for a quick run. */
const SAMPLES = Number(process.env.BENCH_AUTH_SAMPLES ?? 300);
const NS = 'bench';

const manifest = (name: string): object => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { containers: [{ name: 'main', image: 'jetlet/busybox:1.35', command: ['sleep', '3600'] }] },
});

/** One create and one delete at a time (no node: the pods stay Pending), each timed from request to answer. */
async function mutations(cluster: Cluster, headers: Record<string, string>): Promise<{ create: number[]; remove: number[] }> {
  await cluster.ensureNamespace(NS);
  const create: number[] = [];
  const remove: number[] = [];
  const send = async (method: string, path: string, body?: object): Promise<number> => {
    const start = performance.now();
    const response = await fetch(`${cluster.apiUrl}${path}`, {
      method,
      headers: { ...headers, 'content-type': 'application/json' },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    await response.text();
    if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status}`);
    return performance.now() - start;
  };
  // A warm-up, so neither run pays for the first connection or the JIT.
  for (let i = 0; i < 20; i++) {
    await send('POST', `/api/v1/namespaces/${NS}/pods`, manifest(`warm-${i}`));
    await send('DELETE', `/api/v1/namespaces/${NS}/pods/warm-${i}`);
  }
  for (let i = 0; i < SAMPLES; i++) {
    create.push(await send('POST', `/api/v1/namespaces/${NS}/pods`, manifest(`p-${i}`)));
    remove.push(await send('DELETE', `/api/v1/namespaces/${NS}/pods/p-${i}`));
  }
  return { create, remove };
}

/**
 * API mutation latency with authentication, RBAC, Pod Security admission and audit on
 * (a secured cluster, admin token) beside the same API unsecured (API_INSECURE=true), one
 * after the other on this machine, one request at a time over plain HTTP.
 */
async function main(): Promise<void> {
  const rows: (string | number)[][] = [];
  for (const secure of [false, true]) {
    const cluster = await Cluster.start({}, { secure });
    try {
      const { create, remove } = await mutations(cluster, cluster.authHeaders());
      const c = summary(create);
      const d = summary(remove);
      rows.push([secure ? 'auth on (token, RBAC, audit)' : 'auth off (API_INSECURE)', fmt(c.p50, 1), fmt(c.p99, 1), fmt(d.p50, 1), fmt(d.p99, 1)]);
    } finally {
      await cluster.stop();
    }
  }
  printTable(`API mutation latency, ${SAMPLES} creates and deletes each, ms`, ['create p50', 'create p99', 'delete p50', 'delete p99'], rows);
}

await main();
