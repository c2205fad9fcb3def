import { createHash, randomBytes } from 'node:crypto';
import { release } from 'node:os';
import type {
  ContainerConfig,
  ContainerRuntime,
  ContainerStats,
  ExecResult,
  LogStreamOptions,
  ProcessStream,
  RuntimeContainer,
  RuntimeEvent,
  RuntimeInfo,
  SandboxConfig,
  PullAuth,
  ContainerDiskUsage,
} from './container-runtime.port.js';
import { RuntimeError } from './runtime.errors.js';
import type { PullProgressSnapshot } from './pull-progress.js';

/** Exit code of a fake container that is stopped: it "dies" as if SIGKILLed (128 + 9). */
export const FAKE_STOP_EXIT_CODE = 137;

/**
 * How many /24 blocks the fake pod range holds: 10.192.0.0/10, one /24 per node index, so a
 * cluster of up to 16,384 hollow nodes gives each its own. Index 0 starts at 10.244.0.0
 * (kubemark's and flannel's 10.244.0.0/16 first), and the range wraps from 10.255 to 10.192.
 */
export const FAKE_POD_BLOCKS = 16_384;

/** The /24 block of pod IPs a fake runtime with this node index hands out, as its first three octets. */
export function fakePodBlock(nodeIndex: number): string {
  const block = ((nodeIndex % FAKE_POD_BLOCKS) + FAKE_POD_BLOCKS) % FAKE_POD_BLOCKS;
  return `10.${192 + ((52 + Math.floor(block / 256)) % 64)}.${block % 256}`;
}

/** True when `ip` lies in the fake pod range (10.192.0.0/10). */
export function isFakePodIP(ip: string): boolean {
  const octets = /^10\.(\d{1,3})\.\d{1,3}\.\d{1,3}$/.exec(ip);
  return octets !== null && Number(octets[1]) >= 192 && Number(octets[1]) <= 255;
}

interface FakeContainer {
  container: RuntimeContainer;
  /** Sandboxes only: the last octet of its pod IP, released on removal. */
  ipHost?: number;
}

type Listener = (event: RuntimeEvent) => void;

export interface FakeRuntimeOptions {
  /** Picks the node's /24 of pod IPs (kubemark gives each hollow node a pod CIDR too); default 0. */
  nodeIndex?: number;
  /** The clock, for tests; default Date.now. */
  now?: () => number;
}

/**
 * An in-memory container runtime for hollow nodes (kubemark's fake Docker client): no
 * engine, no processes, no network. A started container "runs" until it is stopped;
 * a stop is immediate and the container dies with exit code 137. Sandboxes get pod IPs
 * from a private range that nothing ever contacts. Images are always present, exec
 * succeeds with no output, logs are empty. Idempotency is the CRI's, as in the Docker
 * adapter: creating an existing name returns it, stopping a stopped or missing container
 * and removing a missing one succeed.
 */
export class FakeRuntime implements ContainerRuntime {
  private readonly containers = new Map<string, FakeContainer>();
  private readonly byName = new Map<string, string>();
  private readonly listeners = new Set<Listener>();
  /** Last octets of pod IPs in use in this node's block. */
  private readonly ipsInUse = new Set<number>();
  private readonly block: string;
  private readonly now: () => number;

  constructor(options: FakeRuntimeOptions = {}) {
    this.block = fakePodBlock(options.nodeIndex ?? 0);
    this.now = options.now ?? Date.now;
  }

  info(): Promise<RuntimeInfo> {
    return Promise.resolve({ name: 'fake', version: '0.1.0', apiVersion: 'fake', os: 'hollow node (in-memory runtime)', kernelVersion: release() });
  }

  imagePresent(_image: string): Promise<boolean> {
    return Promise.resolve(true);
  }

  /** A fake node holds no images of its own: nothing to list, resolve or collect. */
  listImages(): Promise<Array<{ id: string; size: number; tags: string[] }>> {
    return Promise.resolve([]);
  }

  imageId(_image: string): Promise<string | undefined> {
    return Promise.resolve(undefined);
  }

  removeImage(_id: string): Promise<void> {
    return Promise.resolve();
  }

  /** Every fake image runs as root, as images without a USER do. */
  imageUser(_image: string): Promise<string> {
    return Promise.resolve('');
  }

  pullImage(_image: string, _onProgress?: (progress: PullProgressSnapshot) => void, _auth?: PullAuth): Promise<void> {
    return Promise.resolve();
  }

  runPodSandbox(config: SandboxConfig, onCreated?: (id: string) => void, onStarted?: () => void): Promise<RuntimeContainer> {
    const id = this.createOrAdopt(config.name, config.image, config.labels, true);
    onCreated?.(id);
    this.start(id);
    onStarted?.();
    return Promise.resolve(this.copy(this.get(id, `run sandbox ${config.name}`)));
  }

  createContainer(sandboxId: string, config: ContainerConfig): Promise<string> {
    // The engine cannot join the network namespace of a container it does not know.
    if (!this.containers.has(sandboxId)) return Promise.reject(notFound(`create container ${config.name}`, sandboxId));
    const id = this.createOrAdopt(config.name, config.image, config.labels, false);
    this.get(id, `create container ${config.name}`).container.networkOf = sandboxId;
    return Promise.resolve(id);
  }

  async startContainer(id: string): Promise<void> {
    // As the engine: a container joins the network namespace of a running sandbox only.
    const networkOf = this.lookup(id)?.container.networkOf;
    if (networkOf !== undefined && this.lookup(networkOf)?.container.state !== 'running')
      throw new RuntimeError(`fake start container ${id} failed: cannot join network of a non running container: ${networkOf}`, { statusCode: 500 });
    this.start(id);
  }

  stopContainer(id: string, _graceSeconds: number): Promise<void> {
    const entry = this.lookup(id);
    // Immediate: a fake process has no SIGTERM handler to wait for.
    if (entry?.container.state === 'running') this.die(entry);
    return Promise.resolve();
  }

  removeContainer(id: string): Promise<void> {
    const entry = this.lookup(id);
    if (entry === undefined) return Promise.resolve();
    // A forced remove, as the Docker adapter's: a running container is killed first.
    if (entry.container.state === 'running') this.die(entry);
    const { container } = entry;
    this.containers.delete(container.id);
    this.byName.delete(container.name);
    if (entry.ipHost !== undefined) this.ipsInUse.delete(entry.ipHost);
    this.emit(container, 'destroy');
    return Promise.resolve();
  }

  /** Disk use a test gives a container (by id); none given reads as nothing written. */
  readonly diskUsage = new Map<string, ContainerDiskUsage>();

  containerDiskUsage(id: string): Promise<ContainerDiskUsage | undefined> {
    const entry = this.lookup(id);
    return Promise.resolve(entry ? (this.diskUsage.get(entry.container.id) ?? { rootfsBytes: 0, logBytes: 0 }) : undefined);
  }

  inspectContainer(id: string): Promise<RuntimeContainer | undefined> {
    const entry = this.lookup(id);
    return Promise.resolve(entry && this.copy(entry));
  }

  listContainers(labels: Record<string, string>): Promise<RuntimeContainer[]> {
    return Promise.resolve([...this.containers.values()].filter((e) => matches(e.container.labels, labels)).map((e) => this.copy(e)));
  }

  async *events(labels: Record<string, string>, signal: AbortSignal, onSubscribed?: () => void): AsyncGenerator<RuntimeEvent> {
    const queue: RuntimeEvent[] = [];
    let wake: (() => void) | undefined;
    const listener: Listener = (event) => {
      if (!matches(event.labels, labels)) return;
      queue.push(event);
      wake?.();
    };
    const onAbort = (): void => wake?.();
    this.listeners.add(listener);
    signal.addEventListener('abort', onAbort);
    try {
      onSubscribed?.();
      while (!signal.aborted) {
        const event = queue.shift();
        if (event !== undefined) {
          yield event;
          continue;
        }
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
      }
    } finally {
      this.listeners.delete(listener);
      signal.removeEventListener('abort', onAbort);
    }
  }

  logs(id: string, _opts: { tailLines?: number; timestamps?: boolean }): Promise<string> {
    if (this.lookup(id) === undefined) return Promise.reject(notFound('read logs of container', id));
    return Promise.resolve('');
  }

  exec(id: string, command: string[], _timeoutMs: number): Promise<ExecResult> {
    const entry = this.lookup(id);
    if (entry === undefined) return Promise.reject(notFound(`exec ${command.join(' ')} in container`, id));
    if (entry.container.state !== 'running') {
      return Promise.reject(new RuntimeError(`fake exec in container ${id} failed: container is not running`, { statusCode: 409 }));
    }
    return Promise.resolve({ exitCode: 0, output: '', timedOut: false });
  }

  /** A fake container uses nothing. */
  containerStats(id: string): Promise<ContainerStats> {
    if (this.lookup(id) === undefined) return Promise.reject(notFound('read stats of container', id));
    return Promise.resolve({ timeMs: Date.now(), cpuUsageNanoseconds: 0, memoryUsageBytes: 0, memoryWorkingSetBytes: 0 });
  }

  /** A fake container has no process to connect to. */
  execStream(id: string): Promise<ProcessStream> {
    return Promise.reject(new RuntimeError(`fake exec in container ${id} failed: the fake runtime runs no processes`, { statusCode: 501 }));
  }

  attach(id: string): Promise<ProcessStream> {
    return Promise.reject(new RuntimeError(`fake attach to container ${id} failed: the fake runtime runs no processes`, { statusCode: 501 }));
  }

  /** A fake container writes nothing: the stream is empty; with `follow` it lasts until the container stops or the caller aborts. */
  async *streamLogs(id: string, opts: LogStreamOptions, signal: AbortSignal): AsyncGenerator<string> {
    const entry = this.lookup(id);
    if (entry === undefined) throw notFound('read logs of container', id);
    if (!opts.follow || entry.container.state !== 'running' || signal.aborted) return;
    const containerId = entry.container.id;
    await new Promise<void>((resolve) => {
      const done = (): void => {
        this.listeners.delete(listener);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const listener: Listener = (event) => {
        if (event.containerId === containerId && (event.action === 'die' || event.action === 'destroy')) done();
      };
      this.listeners.add(listener);
      signal.addEventListener('abort', done);
    });
    yield* [];
  }

  private createOrAdopt(name: string, image: string, labels: Record<string, string>, sandbox: boolean): string {
    const existing = this.byName.get(name);
    if (existing !== undefined) return existing;
    const id = randomBytes(32).toString('hex');
    const container: RuntimeContainer = {
      id,
      name,
      image,
      imageId: `sha256:${createHash('sha256').update(image).digest('hex')}`,
      labels: { ...labels },
      state: 'created',
      createdAt: new Date(this.now()).toISOString(),
      oomKilled: false,
    };
    const entry: FakeContainer = { container };
    if (sandbox) {
      entry.ipHost = this.allocateIpHost(name);
      container.ip = `${this.block}.${entry.ipHost}`;
    }
    this.containers.set(id, entry);
    this.byName.set(name, id);
    this.emit(container, 'create');
    return id;
  }

  private start(id: string): void {
    const entry = this.get(id, 'start container');
    const { container } = entry;
    if (container.state === 'running') return;
    container.state = 'running';
    container.startedAt = new Date(this.now()).toISOString();
    delete container.finishedAt;
    delete container.exitCode;
    this.emit(container, 'start');
  }

  private die(entry: FakeContainer): void {
    const { container } = entry;
    container.state = 'exited';
    container.exitCode = FAKE_STOP_EXIT_CODE;
    container.finishedAt = new Date(this.now()).toISOString();
    this.emit(container, 'die', FAKE_STOP_EXIT_CODE);
    this.emit(container, 'stop');
  }

  private allocateIpHost(name: string): number {
    for (let host = 2; host < 255; host++) {
      if (!this.ipsInUse.has(host)) {
        this.ipsInUse.add(host);
        return host;
      }
    }
    throw new RuntimeError(`fake run sandbox ${name} failed: no free pod IP in ${this.block}.0/24`, { statusCode: 500 });
  }

  /** By id or name, as the engine resolves them. */
  private lookup(idOrName: string): FakeContainer | undefined {
    return this.containers.get(idOrName) ?? this.containers.get(this.byName.get(idOrName) ?? '');
  }

  private get(idOrName: string, operation: string): FakeContainer {
    const entry = this.lookup(idOrName);
    if (entry === undefined) throw notFound(operation, idOrName);
    return entry;
  }

  private copy(entry: FakeContainer): RuntimeContainer {
    return { ...entry.container, labels: { ...entry.container.labels } };
  }

  private emit(container: RuntimeContainer, action: string, exitCode?: number): void {
    const event: RuntimeEvent = {
      containerId: container.id,
      action,
      labels: { ...container.labels },
      ...(exitCode !== undefined ? { exitCode } : {}),
      timeMs: this.now(),
    };
    for (const listener of [...this.listeners]) listener(event);
  }
}

function matches(labels: Record<string, string>, wanted: Record<string, string>): boolean {
  return Object.entries(wanted).every(([key, value]) => labels[key] === value);
}

function notFound(operation: string, id: string): RuntimeError {
  return new RuntimeError(`fake ${operation} ${id} failed: no such container`, { statusCode: 404 });
}
