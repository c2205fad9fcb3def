import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import Docker from 'dockerode';
import type { Identity, Pod } from '#contracts';
import { busTls, credentialOptions, tlsOptions } from '#bus/credentials';
import { addHollowCredentials, addNodeCredentials, seedFileName, writeNatsConfig } from '../../apps/cli/src/nats-config.js';
import { writeNatsTls, type NatsTlsFiles } from '../../apps/cli/src/nats-tls.js';
import { ApiCredentials, type TestUser } from './auth.js';
import { freePort, ManagedProcess, NatsServer, ROOT, waitFor } from './processes.js';
import { parsePrometheusText, type Exposition } from './prometheus.js';

/** The agent as it ships, one file (scripts/bundle.mjs). */
export const AGENT_BUNDLE = join(ROOT, 'dist/bundle/agent.mjs');
/** The agent's compiled entry point, its modules loaded file by file: the bundle's baseline in the benches. */
export const AGENT_MODULES = join(ROOT, 'dist/apps/agent/src/main.js');
/** Each app's entry point. */
const APP = (name: string): string => (name === 'agent' ? AGENT_BUNDLE : join(ROOT, 'dist/apps', name, 'src/main.js'));

/** Settings short enough for tests; each can be overridden per process. */
const FAST = { HEARTBEAT_SECONDS: '1', RESYNC_SECONDS: '2', BACKOFF_BASE_SECONDS: '1', BACKOFF_CAP_SECONDS: '4' };

/** Mount points under `root`, deepest first (the node's tmpfs volumes), from this process's mount table. */
export function mountsUnder(root: string): string[] {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[4] ?? '')
    .filter((p) => p.startsWith(`${root}/`))
    .sort((a, b) => b.length - a.length);
}

/** A unique, valid node name per test run, so containers of other runs never interfere. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${randomBytes(4).toString('hex')}`;
}

/**
 * Node flags for every process the harness starts: with JETLET_PROFILE_DIR set, each writes
 * a CPU profile there when it exits (how the benchmarks find where the time goes).
 */
export function profileArgs(): string[] {
  const dir = process.env.JETLET_PROFILE_DIR;
  return dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : [];
}

/** NATS_TLS_* for a process that reaches NATS over TLS: the CA and, when the server verifies clients, the client certificate. */
export function natsTlsEnv(tls: NatsTlsFiles | undefined): Record<string, string> {
  if (!tls) return {};
  const env: Record<string, string> = { NATS_TLS_CA_FILE: tls.caFile };
  if (tls.clientCertFile && tls.clientKeyFile) Object.assign(env, { NATS_TLS_CERT_FILE: tls.clientCertFile, NATS_TLS_KEY_FILE: tls.clientKeyFile });
  return env;
}

/**
 * Node flags of the API process, as every launcher gives them (docker-compose.yml and
 * scripts/lab.sh too). Each request leaves tens of KiB of short-lived objects: with V8's
 * default 16 MiB semi-spaces, 50 creates in flight promoted many of them to the old
 * generation, whose collection then cost CPU and tail latency; 32 MiB lets them die young
 * at no resident cost seen at 10,000 pods (64 MiB cost about 70 MiB more for no further gain).
 */
export const API_NODE_FLAGS = ['--max-semi-space-size=32'];

/** How a process is started: Node's flags and the environment it is given beside its configuration. */
export interface Launch {
  nodeFlags: readonly string[];
  env: Readonly<Record<string, string>>;
}

/** Node's and glibc's defaults, for a bench's baseline. */
export const NODE_DEFAULTS: Launch = { nodeFlags: [], env: {} };

/**
 * How every launcher starts the agent (scripts/lab.sh and the lab's node image alike), for
 * its resident memory: one V8 worker thread instead of four (an agent is idle most of the
 * time), glibc's malloc in two arenas instead of eight per core, and a fixed threshold for
 * giving freed memory back instead of one that rises after each large free. Measured on 110
 * running pods: about 91 MiB with the defaults, about 78 with these.
 */
export const AGENT_LAUNCH: Launch = {
  nodeFlags: ['--v8-pool-size=1'],
  env: { MALLOC_ARENA_MAX: '2', MALLOC_MMAP_THRESHOLD_: '131072', MALLOC_TRIM_THRESHOLD_: '131072' },
};

function startApp(
  name: string,
  label: string,
  env: Record<string, string>,
  entry = APP(name),
  nodeFlags: readonly string[] = name === 'api' ? API_NODE_FLAGS : [],
): ManagedProcess {
  const child = spawn(process.execPath, [...profileArgs(), ...nodeFlags, entry], {
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
  readonly agents = new Map<string, { process: ManagedProcess; port: number; rootDir: string }>();
  private readonly extraSchedulers: ManagedProcess[] = [];
  private constructor(
    readonly nats: NatsServer,
    public api: ManagedProcess,
    readonly apiUrl: string,
    readonly scheduler: ManagedProcess,
    private readonly apiEnv: Record<string, string>,
    private readonly env: Record<string, string>,
    /** The tokens, role bindings and certificate of a secured API; undefined when it runs unsecured. */
    readonly credentials?: ApiCredentials,
    /** The API's HTTPS address (kubectl sends tokens only over TLS); `apiUrl` is its authenticated plain HTTP one. */
    readonly secureUrl?: string,
  ) {}

  /** The seed file of `id` when NATS runs secured (`secureNats`), else undefined. */
  seedFile(id: Identity): string | undefined {
    return this.nats.authDir ? join(this.nats.authDir, seedFileName(id)) : undefined;
  }

  /** NATS_NKEY_SEED_FILE for a process of `id`, when NATS runs secured, and NATS_TLS_* when it requires TLS. */
  private natsEnv(id: Identity): Record<string, string> {
    const seed = this.seedFile(id);
    return { ...(seed ? { NATS_NKEY_SEED_FILE: seed } : {}), ...natsTlsEnv(this.nats.tls) };
  }

  /** Connection options that authenticate as `id` (a test acting as that component, or as an attacker holding its seed), over TLS when the server requires it. */
  natsOptions(id: Identity): ReturnType<typeof credentialOptions> & ReturnType<typeof tlsOptions> {
    return { ...credentialOptions({ identity: id, seedFile: this.seedFile(id) }, { warn: () => undefined }), ...tlsOptions(busTls(natsTlsEnv(this.nats.tls))) };
  }

  /**
   * `env` goes to the API and the scheduler (shortened node grace and eviction times, say).
   * `secure` starts the API with tokens, RBAC and TLS (see ApiCredentials); `request`,
   * `authHeaders` and `jetctl` then act as the admin. `natsTls` makes NATS require TLS with
   * `jetctl nats-tls`'s files (`verify`: and client certificates), given to every process.
   */
  static async start(env: Record<string, string> = {}, options: { secure?: boolean; secureNats?: boolean; natsTls?: 'tls' | 'verify' } = {}): Promise<Cluster> {
    // `secureNats`: identities and permissions from `jetctl nats-config`; nodes are added as their agents start.
    const authDir = options.secureNats ? mkdtempSync(join(tmpdir(), 'jetlet-nats-auth-')) : undefined;
    if (authDir) writeNatsConfig(authDir, []);
    const tls = options.natsTls ? writeNatsTls(mkdtempSync(join(tmpdir(), 'jetlet-nats-tls-')), { verify: options.natsTls === 'verify' }) : undefined;
    const seed = (id: Identity): Record<string, string> => ({
      ...(authDir ? { NATS_NKEY_SEED_FILE: join(authDir, seedFileName(id)) } : {}),
      ...natsTlsEnv(tls),
    });
    const nats = await NatsServer.start({ ...(authDir ? { authDir } : {}), ...(tls ? { tls } : {}) }).catch((error: unknown) => {
      if (authDir) rmSync(authDir, { recursive: true, force: true });
      if (tls) rmSync(dirname(tls.confFile), { recursive: true, force: true });
      throw error;
    });
    const apiPort = await freePort();
    const credentials = options.secure ? ApiCredentials.create() : undefined;
    const httpPort = credentials ? await freePort() : apiPort;
    const apiEnv = {
      NATS_URL: nats.url,
      API_PORT: String(apiPort),
      ...(credentials ? credentials.env(httpPort) : { API_INSECURE: 'true' }),
      ...seed({ kind: 'api' }),
    };
    const api = startApp('api', 'api', { ...apiEnv, ...env });
    const scheduler = startApp('scheduler', 'scheduler', { NATS_URL: nats.url, METRICS_PORT: '0', ...FAST, ...seed({ kind: 'scheduler' }), ...env });
    try {
      await Promise.all([api.waitForLine(/API serving on/), scheduler.waitForLine(/scheduler running/)]);
    } catch (error) {
      // A cluster that never came up is not handed to the test, so it is stopped here.
      await Promise.all([api.stop(), scheduler.stop()]);
      await nats.stop();
      if (authDir) rmSync(authDir, { recursive: true, force: true });
      if (tls) rmSync(dirname(tls.confFile), { recursive: true, force: true });
      credentials?.dispose();
      throw error;
    }
    const secureUrl = credentials ? `https://127.0.0.1:${apiPort}` : undefined;
    return new Cluster(nats, api, `http://127.0.0.1:${httpPort}`, scheduler, apiEnv, env, credentials, secureUrl);
  }

  /** The Authorization header of `user` (admin by default) on a secured API; none on an unsecured one. */
  authHeaders(user: TestUser = 'admin'): Record<string, string> {
    return this.credentials ? { authorization: `Bearer ${this.credentials.tokens[user]}` } : {};
  }

  /** A kubeconfig for `user` on the HTTPS address of a secured API (on an unsecured one: its HTTP address, no credentials). */
  kubeconfig(user: TestUser = 'admin'): string {
    if (this.credentials && this.secureUrl) return this.credentials.kubeconfig(this.secureUrl, user);
    return `apiVersion: v1\nkind: Config\nclusters: [{name: jetlet, cluster: {server: "${this.apiUrl}"}}]\nusers: [{name: u, user: {}}]\ncontexts: [{name: jetlet, context: {cluster: jetlet, user: u}}]\ncurrent-context: jetlet\n`;
  }

  /** Starts one more scheduler against the same NATS (stopped with the cluster); `onSpawned` hears of its process before it is up. */
  async startExtraScheduler(env: Record<string, string> = {}, timeoutMs = 30_000, onSpawned?: (scheduler: ManagedProcess) => void): Promise<ManagedProcess> {
    const scheduler = startApp('scheduler', `scheduler ${this.extraSchedulers.length + 2}`, {
      NATS_URL: this.nats.url,
      METRICS_PORT: '0',
      ...FAST,
      ...this.natsEnv({ kind: 'scheduler' }),
      ...env,
    });
    this.extraSchedulers.push(scheduler);
    onSpawned?.(scheduler);
    await scheduler.waitForLine(/scheduler running/, timeoutMs);
    return scheduler;
  }

  /** Stops the API and starts a fresh one on the same port: its projection is rebuilt from the log. */
  async restartApi(): Promise<void> {
    await this.api.stop();
    this.api = startApp('api', 'api', { ...this.apiEnv, ...this.env });
    await this.api.waitForLine(/API serving on/);
  }

  /** Starts (or restarts) the agent of `node` and waits until its sync loop runs; `entry` is the bundle unless a bench asks for its baseline. */
  async startAgent(
    node: string,
    env: Record<string, string> = {},
    waitUntilRunning = true,
    entry = AGENT_BUNDLE,
    launch: Launch = AGENT_LAUNCH,
  ): Promise<ManagedProcess> {
    const port = this.agents.get(node)?.port ?? (await freePort());
    // Each node keeps its files in a directory of its own, kept across restarts of its agent.
    const rootDir = this.agents.get(node)?.rootDir ?? mkdtempSync(join(tmpdir(), `jetlet-${node}-`));
    // A node new to a secured server gets its credentials, as `jetctl node credentials` does, and the server reloads.
    if (this.nats.authDir && !existsSync(join(this.nats.authDir, seedFileName({ kind: 'node', node })))) {
      addNodeCredentials(this.nats.authDir, node);
      await this.nats.reload();
    }
    const agent = startApp(
      'agent',
      `agent ${node}`,
      {
        ...launch.env,
        NATS_URL: this.nats.url,
        NODE_NAME: node,
        ...this.natsEnv({ kind: 'node', node }),
        AGENT_PORT: String(port),
        AGENT_ROOT_DIR: rootDir,
        // The suite shares its engine and its loaded test images: no agent of it collects images.
        IMAGE_GC_HIGH_THRESHOLD_PERCENT: '100',
        ...FAST,
        ...env,
      },
      entry,
      launch.nodeFlags,
    );
    this.agents.set(node, { process: agent, port, rootDir });
    if (waitUntilRunning) await agent.waitForLine(/desired state rebuilt/);
    return agent;
  }

  /**
   * The environment a process of hollow nodes `${prefix}-${first}` ... needs on this cluster's
   * NATS: when it runs secured, the process's own credentials (as `jetctl hollow credentials`
   * makes them, then the server reloads); otherwise only NATS_URL.
   */
  async hollowEnv(prefix: string, count: number, first = 0): Promise<Record<string, string>> {
    if (!this.nats.authDir) return { NATS_URL: this.nats.url, ...natsTlsEnv(this.nats.tls) };
    const id: Identity = { kind: 'hollow', prefix, first, count };
    if (!existsSync(join(this.nats.authDir, seedFileName(id)))) {
      addHollowCredentials(this.nats.authDir, prefix, first, count);
      await this.nats.reload();
    }
    return { NATS_URL: this.nats.url, ...this.natsEnv(id) };
  }

  agentUrl(node: string): string {
    const agent = this.agents.get(node);
    if (!agent) throw new Error(`no agent for ${node}`);
    return `http://127.0.0.1:${agent.port}`;
  }

  /** The node's agent's metrics, parsed. */
  async agentMetrics(node: string): Promise<Exposition> {
    const response = await fetch(`${this.agentUrl(node)}/metrics`);
    if (!response.ok) throw new Error(`agent metrics of ${node}: HTTP ${response.status}`);
    return parsePrometheusText(await response.text());
  }

  /** Sum of a metric's samples on the node's agent, over all label sets (0 when absent). */
  async agentMetricTotal(node: string, name: string, labels: Record<string, string> = {}): Promise<number> {
    const samples = (await this.agentMetrics(node)).samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
    return samples.reduce((sum, s) => sum + s.value, 0);
  }

  /**
   * Waits until the node's agent has finished `passes` more reconcile passes than now: what
   * a test that checks that nothing (wrongly) happens waits for, instead of a fixed time.
   */
  async waitForPasses(node: string, passes: number, timeoutMs = 60_000): Promise<void> {
    const count = (): Promise<number> => this.agentMetricTotal(node, 'jetlet_reconcile_duration_seconds_count');
    // An agent just started may not serve its metrics yet: its first count is waited for too.
    const start = await waitFor(`${node}'s agent to serve its metrics`, count, timeoutMs);
    await waitFor(`${passes} reconcile passes of ${node}`, async () => (await count()) >= start + passes, timeoutMs);
  }

  async request<T = unknown>(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<HttpResult<T>> {
    const response = await fetch(`${this.apiUrl}${path}`, {
      method,
      headers: { ...this.authHeaders(), ...(body === undefined ? {} : { 'content-type': contentType }) },
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
      env: {
        ...process.env,
        JETLET_SERVER: this.apiUrl,
        ...(this.credentials ? { JETLET_TOKEN: this.credentials.tokens.admin } : {}),
        ...this.natsEnv({ kind: 'jetctl' }),
      },
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
    await Promise.all([this.api.stop(), this.scheduler.stop(), ...this.extraSchedulers.map((s) => s.stop())]);
    for (const node of this.agents.keys()) {
      for (const c of await this.containersOf(node))
        await this.docker
          .getContainer(c.Id)
          .remove({ force: true })
          .catch(() => undefined);
    }
    for (const agent of this.agents.values()) {
      // Pods still on the node keep their in-memory volumes (tmpfs) mounted under its root.
      for (const point of mountsUnder(agent.rootDir)) spawnSync('umount', [point]);
      rmSync(agent.rootDir, { recursive: true, force: true });
    }
    await this.nats.stop();
    if (this.nats.authDir) rmSync(this.nats.authDir, { recursive: true, force: true });
    if (this.nats.tls) rmSync(dirname(this.nats.tls.confFile), { recursive: true, force: true });
    this.credentials?.dispose();
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

  // ---- Helpers for the agent's end-to-end suites (test/e2e/agent-*.e2e-spec.ts) ----

  /** Creates the namespace unless it exists (a pod in a namespace that does not exist is a 404, as in Kubernetes). */
  async ensureNamespace(namespace: string): Promise<void> {
    const { status, body } = await this.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
    if (status !== 201 && status !== 409) throw new Error(`creating namespace ${namespace} answered ${status}: ${JSON.stringify(body)}`);
  }

  /** Creates a pod through the API; throws unless the API answers 201. */
  async createPod(namespace: string, manifest: object): Promise<Pod> {
    await this.ensureNamespace(namespace);
    const { status, body } = await this.request<Pod>('POST', `/api/v1/namespaces/${namespace}/pods`, manifest);
    if (status !== 201) throw new Error(`creating a pod in ${namespace} answered ${status}: ${JSON.stringify(body)}`);
    return body;
  }

  /**
   * Polls the pod until `predicate` holds and returns that snapshot. A timeout names the
   * last status seen and adds the last lines of the pod's node's agent.
   */
  async waitForPod(namespace: string, name: string, what: string, predicate: (pod: Pod) => boolean, timeoutMs = 60_000): Promise<Pod> {
    let last: Pod | undefined;
    try {
      return await waitFor(
        `${namespace}/${name} ${what}`,
        async () => {
          last = await this.getPod(namespace, name);
          return last !== undefined && predicate(last) ? last : undefined;
        },
        timeoutMs,
        200,
      );
    } catch (error) {
      const node = last?.spec.nodeName;
      const agentLines = node && this.agents.has(node) ? `\n--- agent ${node}\n${this.agentLog(node)}` : '';
      throw new Error(`${(error as Error).message}\nlast status seen: ${JSON.stringify(last?.status)}${agentLines}`, { cause: error });
    }
  }

  /** The last lines of one agent's output (every run of it in this cluster, newest last). */
  agentLog(node: string, lines = 40): string {
    return this.agents.get(node)?.process.tail(lines) ?? `(no agent for ${node})`;
  }

  /** Every container (running or not) of one pod on `node`, sandbox included. */
  async podContainers(node: string, uid: string): Promise<Docker.ContainerInfo[]> {
    return this.docker.listContainers({ all: true, filters: { label: [`io.jetlet.node=${node}`, `io.jetlet.pod.uid=${uid}`] } });
  }

  /** Removes every container labelled for `node`, whatever its state. */
  async removeContainersOf(node: string): Promise<void> {
    for (const c of await this.containersOf(node))
      await this.docker
        .getContainer(c.Id)
        .remove({ force: true })
        .catch(() => undefined);
  }

  /** A test's clean-up: stops the agent of `node` (if it runs) and removes every container labelled for it. */
  async stopAgentAndClean(node: string): Promise<void> {
    await this.agents.get(node)?.process.stop();
    await this.removeContainersOf(node);
  }

  /**
   * Registers a test's clean-up for `node`: afterwards its agent is stopped and its containers
   * removed; when the test failed, the agent's last lines are printed first as a diagnostic.
   */
  cleanUpAfter(t: { readonly passed?: boolean; after(fn: () => Promise<void>): void; diagnostic(message: string): void }, node: string): void {
    t.after(async () => {
      if (t.passed === false) t.diagnostic(`--- agent ${node} (last lines)\n${this.agentLog(node, 60)}`);
      await this.stopAgentAndClean(node);
    });
  }

  /** Runs the docker CLI; never throws for a non-zero exit. */
  async dockerCli(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const child = spawn('docker', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const code = await new Promise<number | null>((r) => child.once('close', r));
    return { code, stdout, stderr };
  }

  /**
   * Collects every ContainerEvent the agent of `node` publishes from now on, through a core
   * NATS subscription to `jetlet.events.<node>.>` (the subscription is in place on return).
   */
  async watchContainerEvents(node: string): Promise<ContainerEventWatch> {
    const { connect } = await import('@nats-io/transport-node');
    const { token } = await import('#contracts');
    const nc = await connect({ servers: this.nats.url });
    const events: ContainerEventEnvelope[] = [];
    nc.subscribe(`jetlet.events.${token(node)}.>`, {
      callback: (error, msg) => {
        if (error) return;
        try {
          const envelope = msg.json<ContainerEventEnvelope>();
          if (envelope.type === 'ContainerEvent') events.push(envelope);
        } catch {
          // not JSON: not a ContainerEvent either
        }
      },
    });
    await nc.flush();
    return {
      events,
      waitFor: async (what, predicate, timeoutMs = 30_000) => {
        try {
          return await waitFor(`a ContainerEvent: ${what}`, () => events.find(predicate), timeoutMs);
        } catch (error) {
          const seen = events.map((e) => `${e.data.reason}(${e.data.containerName}, ${e.data.containerID.slice(9, 21)}, exit ${e.data.exitCode ?? '-'})`);
          throw new Error(`${(error as Error).message}\nevents seen: ${seen.join(' ') || '(none)'}\n--- agent ${node}\n${this.agentLog(node)}`, {
            cause: error,
          });
        }
      },
      close: async () => {
        await nc.close();
      },
    };
  }

  /**
   * Collects every PodStatusReported the agent of `node` publishes from now on (a core NATS
   * subscription to `jetlet.podstatus.<node>.>`), in order: each status the agent reported,
   * including ones the API replaced before a poll could see them.
   */
  async watchPodStatuses(node: string): Promise<{ readonly reports: Array<{ uid: string; status: Pod['status']; removed: boolean }>; close(): Promise<void> }> {
    const { connect } = await import('@nats-io/transport-node');
    const { token } = await import('#contracts');
    const nc = await connect({ servers: this.nats.url });
    const reports: Array<{ uid: string; status: Pod['status']; removed: boolean }> = [];
    nc.subscribe(`jetlet.podstatus.${token(node)}.>`, {
      callback: (error, msg) => {
        if (error) return;
        try {
          const envelope = msg.json<{ type: string; data: { uid: string; status: Pod['status']; removed?: boolean } }>();
          if (envelope.type === 'PodStatusReported')
            reports.push({ uid: envelope.data.uid, status: envelope.data.status, removed: envelope.data.removed ?? false });
        } catch {
          // not JSON: not a status report either
        }
      },
    });
    await nc.flush();
    return {
      reports,
      close: async () => {
        await nc.close();
      },
    };
  }
}

/** A ContainerEvent as it travels on the bus: the envelope and its payload. */
export interface ContainerEventEnvelope {
  id: string;
  type: string;
  correlationId: string;
  data: { uid: string; namespace: string; name: string; containerName: string; containerID: string; reason: string; exitCode?: number; observedAt: string };
}

/** ContainerEvents collected from a node's subjects; see Cluster.watchContainerEvents. */
export interface ContainerEventWatch {
  readonly events: ContainerEventEnvelope[];
  waitFor(what: string, predicate: (event: ContainerEventEnvelope) => boolean, timeoutMs?: number): Promise<ContainerEventEnvelope>;
  close(): Promise<void>;
}
