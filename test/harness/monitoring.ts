import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, ManagedProcess, waitFor } from './processes.js';

/** An alert as Alertmanager's `GET /api/v2/alerts` returns it (gettableAlert, the parts tests read). */
export interface GettableAlert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  startsAt: string;
  endsAt: string;
  generatorURL?: string;
  fingerprint: string;
  status: { state: string };
}

/** Starts a server binary on a fresh data directory and waits for `ready` to answer. */
async function startServer(
  name: string,
  binary: string,
  args: (dir: string, port: number) => string[],
  config: (dir: string) => string,
): Promise<{ process: ManagedProcess; url: string; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), `jetlet-${name}-`));
  const port = await freePort();
  writeFileSync(join(dir, 'config.yml'), config(dir));
  const child = spawn(binary, args(dir, port), { stdio: ['ignore', 'pipe', 'pipe'] });
  const process = new ManagedProcess(name, child);
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitFor(`${name} to be ready`, async () => {
      if (!process.running) throw new Error(`${name} exited:\n${process.tail()}`);
      return (await fetch(`${url}/-/ready`)).ok;
    });
  } catch (error) {
    await process.stop();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return { process, url, dir };
}

/** A real Alertmanager (Debian's prometheus-alertmanager) on a free loopback port, clustering off. */
export class Alertmanager {
  private constructor(
    readonly url: string,
    readonly process: ManagedProcess,
    private readonly dir: string,
  ) {}

  static async start(): Promise<Alertmanager> {
    const { process, url, dir } = await startServer(
      'alertmanager',
      'prometheus-alertmanager',
      (d, port) => [`--config.file=${join(d, 'config.yml')}`, `--storage.path=${d}`, `--web.listen-address=127.0.0.1:${port}`, '--cluster.listen-address='],
      () => ['route:', '  receiver: sink', '  group_wait: 1s', '  group_interval: 1s', '  repeat_interval: 1h', 'receivers:', '  - name: sink', ''].join('\n'),
    );
    return new Alertmanager(url, process, dir);
  }

  /** The alerts Alertmanager holds as active now (resolved ones are not listed). */
  async alerts(filter: Record<string, string> = {}): Promise<GettableAlert[]> {
    const query = Object.entries(filter)
      .map(([k, v]) => `filter=${encodeURIComponent(`${k}="${v}"`)}`)
      .join('&');
    const response = await fetch(`${this.url}/api/v2/alerts${query ? `?${query}` : ''}`);
    if (!response.ok) throw new Error(`alertmanager answered ${response.status}`);
    return (await response.json()) as GettableAlert[];
  }

  async stop(): Promise<void> {
    await this.process.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A real Prometheus (Debian's prometheus) scraping the given targets every second. */
export class Prometheus {
  private constructor(
    readonly url: string,
    readonly process: ManagedProcess,
    private readonly dir: string,
  ) {}

  /** `jobs`: job name → `host:port` targets, scraped at `/metrics`. */
  static async start(jobs: Record<string, string[]>, ruleFiles: string[] = []): Promise<Prometheus> {
    const config = [
      'global:',
      '  scrape_interval: 1s',
      '  evaluation_interval: 1s',
      ...(ruleFiles.length ? ['rule_files:', ...ruleFiles.map((f) => `  - ${JSON.stringify(f)}`)] : []),
      'scrape_configs:',
      ...Object.entries(jobs).flatMap(([job, targets]) => [`  - job_name: ${job}`, '    static_configs:', `      - targets: ${JSON.stringify(targets)}`]),
      '',
    ].join('\n');
    const { process, url, dir } = await startServer(
      'prometheus',
      'prometheus',
      (d, port) => [`--config.file=${join(d, 'config.yml')}`, `--storage.tsdb.path=${join(d, 'data')}`, `--web.listen-address=127.0.0.1:${port}`],
      () => config,
    );
    return new Prometheus(url, process, dir);
  }

  /** Runs an instant PromQL query; returns its vector result. */
  async query(promql: string): Promise<Array<{ metric: Record<string, string>; value: [number, string] }>> {
    const response = await fetch(`${this.url}/api/v1/query?query=${encodeURIComponent(promql)}`);
    const body = (await response.json()) as {
      status: string;
      error?: string;
      data?: { result: Array<{ metric: Record<string, string>; value: [number, string] }> };
    };
    if (body.status !== 'success') throw new Error(`query ${promql} failed: ${body.error ?? response.status}`);
    return body.data?.result ?? [];
  }

  /** The rule groups Prometheus loaded, with each rule's health. */
  async rules(): Promise<Array<{ name: string; rules: Array<{ name: string; health: string; lastError?: string }> }>> {
    const body = (await (await fetch(`${this.url}/api/v1/rules`)).json()) as {
      data: { groups: Array<{ name: string; rules: Array<{ name: string; health: string; lastError?: string }> }> };
    };
    return body.data.groups;
  }

  async stop(): Promise<void> {
    await this.process.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
