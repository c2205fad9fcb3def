import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type Docker from 'dockerode';
import { freePort, ManagedProcess, ROOT } from '../test/harness/processes.js';
import { AGENT_BUNDLE, AGENT_LAUNCH, type Cluster, type Launch } from '../test/harness/cluster.js';

/**
 * How long to wait for `items` units of work (pods started, pods deleted): a base for the
 * set-up plus a share per item, so a bigger run or a busier machine is not cut off by a
 * budget sized for a small one. 2 s per pod is about ten times what a pod start costs here.
 */
export function workTimeoutMs(items: number, perItemMs = 2000, baseMs = 60_000): number {
  return baseMs + items * perItemMs;
}

export function quantile(sorted: number[], q: number): number {
  const i = Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1);
  return sorted[Math.max(0, i)] ?? NaN;
}

export function summary(samples: number[]): { p50: number; p99: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  return { p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99) };
}

/** Prints a small aligned table: a one-line title, a header, then rows (first column left-aligned, as wide as its longest label). */
export function printTable(title: string, header: string[], rows: (string | number)[][]): void {
  const firstWidth = Math.max(...rows.map((r) => String(r[0] ?? '').length));
  const cell = (value: string | number, i: number): string => (i === 0 ? String(value).padEnd(firstWidth) : String(value).padStart(9));
  console.log(`\n${title}`);
  console.log(['', ...header].map(cell).join(' '));
  for (const row of rows) console.log(row.map(cell).join(' '));
}

/** A number for a table cell: fixed decimals, '-' when it is not a number. */
export function fmt(value: number | undefined, digits = 0): string {
  return value === undefined || !Number.isFinite(value) ? '-' : value.toFixed(digits);
}

/** Resolves with performance.now() at the moment a line matching `pattern` arrives on the child's output. */
export function lineTime(proc: ManagedProcess, pattern: RegExp, timeoutMs = 60_000): Promise<number> {
  return new Promise((resolve, reject) => {
    const streams = [proc.child.stdout, proc.child.stderr].filter((s) => s !== null);
    const pending = new Map<unknown, string>();
    const finish = (error?: Error, at?: number): void => {
      clearTimeout(timer);
      for (const { stream, onData } of listeners) stream.off('data', onData);
      proc.child.off('exit', onExit);
      if (error) reject(error);
      else resolve(at ?? performance.now());
    };
    // One listener per stream, each keeping its own unfinished last line.
    const listeners = streams.map((stream) => {
      const onData = (chunk: Buffer): void => {
        const at = performance.now();
        const lines = ((pending.get(stream) ?? '') + chunk.toString()).split('\n');
        const last = lines.pop() ?? '';
        pending.set(stream, last);
        if (lines.some((l) => pattern.test(l)) || pattern.test(last)) finish(undefined, at);
      };
      stream.on('data', onData);
      return { stream, onData };
    });
    const onExit = (code: number | null): void => finish(new Error(`${proc.name} exited with ${code} before printing ${pattern}:\n${proc.tail()}`));
    const timer = setTimeout(() => finish(new Error(`${proc.name} did not print ${pattern} within ${timeoutMs} ms:\n${proc.tail()}`)), timeoutMs);
    proc.child.once('exit', onExit);
  });
}

/** Spawns an agent against `natsUrl` the way the test harness does (without waiting for anything); `spawnedAt` is performance.now() just before the spawn. */
export async function spawnAgent(
  natsUrl: string,
  node: string,
  env: Record<string, string> = {},
  entry: string = AGENT_BUNDLE,
  launch: Launch = AGENT_LAUNCH,
): Promise<{ process: ManagedProcess; url: string; spawnedAt: number }> {
  const port = await freePort();
  const spawnedAt = performance.now();
  const child = spawn(process.execPath, [...launch.nodeFlags, entry], {
    cwd: ROOT,
    env: {
      ...process.env,
      ...launch.env,
      NO_COLOR: '1',
      NATS_URL: natsUrl,
      NODE_NAME: node,
      AGENT_PORT: String(port),
      IMAGE_GC_HIGH_THRESHOLD_PERCENT: '100',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return { process: new ManagedProcess(`agent ${node}`, child), url: `http://127.0.0.1:${port}`, spawnedAt };
}

/** Removes every container labelled for `node`; returns how many there were. */
export async function removeNodeContainers(docker: Docker, node: string): Promise<number> {
  const containers = await docker.listContainers({ all: true, filters: { label: [`io.jetlet.node=${node}`] } });
  await Promise.all(
    containers.map((c) =>
      docker
        .getContainer(c.Id)
        .remove({ force: true })
        .catch(() => undefined),
    ),
  );
  return containers.length;
}

/** Clock ticks per second of /proc/<pid>/stat's times (USER_HZ, 100 on Linux). */
const CLK_TCK = 100;

/** CPU time a process has used, utime + stime, in seconds (/proc/<pid>/stat fields 14 and 15). */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may hold spaces; the fields after its closing parenthesis start at field 3.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
}

/** Resident set size of a process, in KiB (VmRSS from /proc/<pid>/status). */
export function rssKiB(pid: number): number {
  const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match?.[1]) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(match[1]);
}

/** One sample of a Prometheus text exposition: metric name, labels and value. */
export interface MetricSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses the Prometheus text format (what /metrics serves) into samples. */
export function parseMetrics(text: string): MetricSample[] {
  const samples: MetricSample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!match?.[1] || match[3] === undefined) continue;
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1] ?? ''] = pair[2] ?? '';
    samples.push({ name: match[1], labels, value: Number(match[3]) });
  }
  return samples;
}

/** Sum of every sample of `name` (over all label sets) that `filter` accepts. */
export function sumMetric(samples: MetricSample[], name: string, filter: (labels: Record<string, string>) => boolean = () => true): number {
  return samples.filter((s) => s.name === name && filter(s.labels)).reduce((total, s) => total + s.value, 0);
}

/** GETs a /metrics page and parses it. */
export async function scrape(url: string): Promise<MetricSample[]> {
  const response = await fetch(`${url}/metrics`);
  if (!response.ok) throw new Error(`GET ${url}/metrics answered ${response.status}`);
  return parseMetrics(await response.text());
}

/** Docker's RFC 3339 timestamps carry nanoseconds; this keeps sub-millisecond precision (ms since the epoch). */
export function dockerTimeMs(iso: string): number {
  const match = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$/.exec(iso);
  if (!match?.[1]) return Date.parse(iso);
  const fraction = Number(`0.${match[2] ?? '0'}`);
  return Date.parse(`${match[1]}${match[3]}`) + fraction * 1000;
}

/**
 * Creates pods through the API with at most `inFlight` requests at a time, as a client would:
 * a 503 (the event store did not take the write in time, on a busy machine) is retried, and a
 * 409 on a retry means the first try was stored after all.
 */
export async function createPods(cluster: Cluster, namespace: string, manifests: object[], inFlight = 10): Promise<void> {
  await cluster.ensureNamespace(namespace);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < manifests.length) {
      const manifest = manifests[next++];
      for (let attempt = 1; ; attempt++) {
        const { status, body } = await cluster.request('POST', `/api/v1/namespaces/${namespace}/pods`, manifest);
        if (status === 201 || (status === 409 && attempt > 1)) break;
        if (status !== 503 || attempt === 5) throw new Error(`creating a pod in ${namespace} answered ${status}: ${JSON.stringify(body)}`);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(inFlight, manifests.length) }, worker));
}
