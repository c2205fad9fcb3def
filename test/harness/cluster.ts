import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import Docker from 'dockerode';
import type { Pod } from '#contracts';
import { freePort, ManagedProcess, NatsServer, ROOT, waitFor } from './processes.js';

const APP = (name: string): string => join(ROOT, 'dist/apps', name, 'src/main.js');

/** Settings short enough for tests; each can be overridden per process. */
const FAST = { HEARTBEAT_SECONDS: '1', RESYNC_SECONDS: '2', BACKOFF_BASE_SECONDS: '1', BACKOFF_CAP_SECONDS: '4' };

/** A unique, valid node name per test run, so containers of other runs never interfere. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${randomBytes(4).toString('hex')}`;
}

function startApp(name: string, label: string, env: Record<string, string>): ManagedProcess {
  const child = spawn(process.execPath, [APP(name)], {
    cwd: ROOT,
    env: { ...process.env, NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new ManagedProcess(label, child);
}

export interface HttpResult<T> {
  status: number;
  body: T;
}

/**
 * A whole jetlet control plane on real processes: a NATS server of its own, the API, the
 * scheduler, and any number of agents on the real Docker engine.
 */
export class Cluster {
  readonly docker = new Docker();
  readonly agents = new Map<string, { process: ManagedProcess; port: number }>();
  private constructor(
    readonly nats: NatsServer,
    public api: ManagedProcess,
    readonly apiUrl: string,
    readonly scheduler: ManagedProcess,
  ) {}

  static async start(): Promise<Cluster> {
    const nats = await NatsServer.start();
    const apiPort = await freePort();
    const api = startApp('api', 'api', { NATS_URL: nats.url, API_PORT: String(apiPort) });
    const scheduler = startApp('scheduler', 'scheduler', { NATS_URL: nats.url, ...FAST });
    await Promise.all([api.waitForLine(/API serving on/), scheduler.waitForLine(/scheduler running/)]);
    return new Cluster(nats, api, `http://127.0.0.1:${apiPort}`, scheduler);
  }

  /** Stops the API and starts a fresh one on the same port: its projection is rebuilt from the log. */
  async restartApi(): Promise<void> {
    await this.api.stop();
    this.api = startApp('api', 'api', { NATS_URL: this.nats.url, API_PORT: new URL(this.apiUrl).port });
    await this.api.waitForLine(/API serving on/);
  }

  /** Starts (or restarts) the agent of `node` and waits until its sync loop runs. */
  async startAgent(node: string, env: Record<string, string> = {}): Promise<ManagedProcess> {
    const port = this.agents.get(node)?.port ?? (await freePort());
    const agent = startApp('agent', `agent ${node}`, { NATS_URL: this.nats.url, NODE_NAME: node, AGENT_PORT: String(port), ...FAST, ...env });
    this.agents.set(node, { process: agent, port });
    await agent.waitForLine(/desired state rebuilt/);
    return agent;
  }

  agentUrl(node: string): string {
    const agent = this.agents.get(node);
    if (!agent) throw new Error(`no agent for ${node}`);
    return `http://127.0.0.1:${agent.port}`;
  }

  async request<T = unknown>(method: string, path: string, body?: unknown): Promise<HttpResult<T>> {
    const response = await fetch(`${this.apiUrl}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, body: (text ? JSON.parse(text) : undefined) as T };
  }

  async getPod(namespace: string, name: string): Promise<Pod | undefined> {
    const { status, body } = await this.request<Pod>('GET', `/api/v1/namespaces/${namespace}/pods/${name}`);
    return status === 200 ? body : undefined;
  }

  /** Waits until the pod is Running with a pod IP and every container running. */
  async waitForRunning(namespace: string, name: string, timeoutMs = 60_000): Promise<Pod> {
    return this.withLogs(
      waitFor(
        `${namespace}/${name} to be Running`,
        async () => {
          const pod = await this.getPod(namespace, name);
          const running = pod?.status.phase === 'Running' && pod.status.podIP && (pod.status.containerStatuses ?? []).every((s) => s.state.running);
          return running ? pod : undefined;
        },
        timeoutMs,
      ),
    );
  }

  async waitForGone(namespace: string, name: string, timeoutMs = 60_000): Promise<void> {
    await this.withLogs(waitFor(`${namespace}/${name} to leave the API`, async () => (await this.getPod(namespace, name)) === undefined, timeoutMs));
  }

  /** Every container (running or not) labelled for `node`. */
  async containersOf(node: string): Promise<Docker.ContainerInfo[]> {
    return this.docker.listContainers({ all: true, filters: { label: [`io.jetlet.node=${node}`] } });
  }

  /** Runs jetctl against this cluster's API. */
  async jetctl(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const child = spawn(process.execPath, [APP('cli'), ...args], {
      cwd: ROOT,
      env: { ...process.env, JETLET_SERVER: this.apiUrl },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const code = await new Promise<number | null>((r) => child.once('exit', r));
    return { code, stdout, stderr };
  }

  /** Removes every container of the given nodes, then stops all processes and NATS. */
  async stop(): Promise<void> {
    await Promise.all([...this.agents.values()].map((a) => a.process.stop()));
    await Promise.all([this.api.stop(), this.scheduler.stop()]);
    for (const node of this.agents.keys()) {
      for (const c of await this.containersOf(node))
        await this.docker
          .getContainer(c.Id)
          .remove({ force: true })
          .catch(() => undefined);
    }
    await this.nats.stop();
  }

  /** Adds the processes' last lines to a failure, so a red test says what the cluster did. */
  async withLogs<T>(work: Promise<T>): Promise<T> {
    try {
      return await work;
    } catch (error) {
      throw new Error(`${(error as Error).message}\n${this.logs()}`, { cause: error });
    }
  }

  /** The processes' last lines, for a failing test's report. */
  logs(): string {
    return [this.api, this.scheduler, ...[...this.agents.values()].map((a) => a.process)].map((p) => `--- ${p.name}\n${p.tail()}`).join('\n');
  }
}
