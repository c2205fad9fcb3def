import type { PullProgressSnapshot } from './pull-progress.js';
/**
 * The container-runtime port: what the agent needs from a container engine, shaped
 * after the CRI (sandbox + containers). The Docker adapter implements it; a hollow
 * node's in-memory runtime will too. Every call is idempotent where the CRI's is:
 * creating what exists returns it, stopping what is stopped or removing what is gone
 * succeeds.
 */

/** Labels every jetlet container carries; keys are declared once, here. */
export const LABELS = {
  managed: 'io.jetlet.managed',
  node: 'io.jetlet.node',
  podNamespace: 'io.jetlet.pod.namespace',
  podName: 'io.jetlet.pod.name',
  podUid: 'io.jetlet.pod.uid',
  containerName: 'io.jetlet.container.name',
  /** 'sandbox' for the pod's pause container, 'container' for an app container. */
  kind: 'io.jetlet.kind',
  specHash: 'io.jetlet.container.hash',
  restartCount: 'io.jetlet.container.restart-count',
  /** The pod's termination grace, so an orphan is stopped as gently as its pod would have been. */
  grace: 'io.jetlet.pod.grace',
} as const;

export type ContainerKind = 'sandbox' | 'container';

export type RuntimeContainerState = 'created' | 'running' | 'exited' | 'unknown';

/** A container as the runtime reports it. */
export interface RuntimeContainer {
  id: string;
  name: string;
  image: string;
  /** Content-addressed image id (sha256:...). */
  imageId: string;
  labels: Record<string, string>;
  state: RuntimeContainerState;
  /** ISO time; undefined while never started. */
  createdAt: string;
  startedAt?: string;
  finishedAt?: string;
  exitCode?: number;
  oomKilled: boolean;
  /** The engine's error when it could not run the process (e.g. executable not found). */
  error?: string;
  /** The IPv4 address on the default bridge (sandboxes only). */
  ip?: string;
  /** The id of the container whose network namespace this one joined (app containers: their sandbox). */
  networkOf?: string;
}

export interface SandboxConfig {
  /** Deterministic name; creating an existing one returns the existing sandbox. */
  name: string;
  image: string;
  labels: Record<string, string>;
  hostname: string;
  /** Ports published on the node (the pod's hostPorts), bound on every address of the node. */
  portMappings?: Array<{ containerPort: number; hostPort: number; protocol: 'tcp' | 'udp' | 'sctp' }>;
  /** The pod's network sysctls, set in the network namespace the sandbox owns. */
  sysctls?: Record<string, string>;
}

export interface ContainerConfig {
  /** Deterministic name; creating an existing one returns the existing container. */
  name: string;
  image: string;
  /** Replaces the image's ENTRYPOINT when set (Kubernetes `command`). */
  entrypoint?: string[];
  /** Replaces the image's CMD when set (Kubernetes `args`). */
  cmd?: string[];
  env: Array<{ name: string; value: string }>;
  workingDir?: string;
  labels: Record<string, string>;
  /** Memory limit in bytes; undefined = unlimited. */
  memoryLimitBytes?: number;
  /** CPU limit in nano-CPUs (1 CPU = 1e9); undefined = unlimited. */
  nanoCpus?: number;
  /** CPU shares derived from requests.cpu (Kubernetes: milliCPU * 1024 / 1000, min 2). */
  cpuShares?: number;
  /** Host files or directories bind-mounted into the container (the termination message file, the pod's volumes). */
  mounts?: Array<{ hostPath: string; containerPath: string; readOnly?: boolean }>;
  /** The process's `uid[:gid]`; the image's USER when unset. */
  user?: string;
  /** More groups of the process (fsGroup, supplementalGroups). */
  groupAdd?: string[];
  readOnlyRootFilesystem?: boolean;
  /** Capabilities added to / dropped from the engine's default set (names without CAP_, or ALL). */
  capAdd?: string[];
  capDrop?: string[];
  privileged?: boolean;
  /** Sets no_new_privs, so no process can gain privileges (setuid binaries) beyond its parent's. */
  noNewPrivileges?: boolean;
  /** Namespaced sysctls of the container's own (IPC) namespaces. */
  sysctls?: Record<string, string>;
  /** Keep the main process's stdin open for attaching clients (Kubernetes `stdin`). */
  openStdin?: boolean;
  /** Close that stdin when the first attached client disconnects (Kubernetes `stdinOnce`). */
  stdinOnce?: boolean;
  /** A pseudo-terminal for the main process (Kubernetes `tty`). */
  tty?: boolean;
  /** Join the PID namespace of this container (an ephemeral container's target) instead of having its own. */
  pidOf?: string;
}

export interface RuntimeEvent {
  containerId: string;
  /** start, die, oom, kill, stop, destroy, create ... as the engine names them. */
  action: string;
  labels: Record<string, string>;
  exitCode?: number;
  /** Event time in ms since the epoch. */
  timeMs: number;
  /**
   * The same each time the engine sends this event again (a stream opened again asks for its
   * last events once more), different for any other; absent when nothing tells it apart.
   */
  id?: string;
}

export interface RuntimeInfo {
  name: string;
  version: string;
  apiVersion: string;
  os: string;
  kernelVersion: string;
}

/** Bytes a container uses on the node's disk. */
export interface ContainerDiskUsage {
  rootfsBytes: number;
  logBytes: number;
}

/** Registry credentials for one pull, as the engine's X-Registry-Auth header carries them. */
export interface PullAuth {
  username?: string;
  password?: string;
  serveraddress: string;
  identitytoken?: string;
  registrytoken?: string;
}

export interface ContainerRuntime {
  info(): Promise<RuntimeInfo>;
  imagePresent(image: string): Promise<boolean>;
  /** Every image the engine holds, by id, with its size in bytes (for image garbage collection). */
  listImages(): Promise<Array<{ id: string; size: number; tags: string[] }>>;
  /** The image id a reference resolves to; undefined when the engine does not have it. */
  imageId(image: string): Promise<string | undefined>;
  /** Removes an image by id, never by force: an image a container uses stays, and that is an error. */
  removeImage(id: string): Promise<void>;
  /** The image's USER (`uid`, `uid:gid`, `name`...; '' when it sets none), for runAsNonRoot. */
  imageUser(image: string): Promise<string>;
  /**
   * Pulls `image`; `onProgress` hears the whole pull's progress each time it moves. With
   * `auth` the engine presents those credentials to the registry (never logged).
   */
  pullImage(image: string, onProgress?: (progress: PullProgressSnapshot) => void, auth?: PullAuth): Promise<void>;
  /**
   * Creates and starts the sandbox; returns it with its IP. `onCreated` hears its id once it
   * is created, before it starts, so containers that join it can be created meanwhile;
   * `onStarted` hears that it runs, before it is looked at for its IP, so they can start.
   */
  runPodSandbox(config: SandboxConfig, onCreated?: (id: string) => void, onStarted?: () => void): Promise<RuntimeContainer>;
  /** Creates an app container inside the sandbox's network namespace; returns its id. */
  createContainer(sandboxId: string, config: ContainerConfig): Promise<string>;
  startContainer(id: string): Promise<void>;
  /** SIGTERM, then SIGKILL after `graceSeconds`. */
  stopContainer(id: string, graceSeconds: number): Promise<void>;
  removeContainer(id: string): Promise<void>;
  inspectContainer(id: string): Promise<RuntimeContainer | undefined>;
  /**
   * What the container holds on the node's disk: its writable layer (the engine's own
   * figure) and its log file (0 when the engine keeps it where this process cannot look).
   * Costly for the engine: ask only for containers that have a storage limit.
   */
  containerDiskUsage(id: string): Promise<ContainerDiskUsage | undefined>;
  /** All containers (running or not) whose labels include every given pair. */
  listContainers(labels: Record<string, string>): Promise<RuntimeContainer[]>;
  /** Container events whose labels include every given pair, until the signal aborts. */
  /** `onSubscribed` runs once the engine is streaming, so a caller can relist without a gap. */
  events(labels: Record<string, string>, signal: AbortSignal, onSubscribed?: () => void): AsyncIterable<RuntimeEvent>;
  logs(id: string, opts: { tailLines?: number; timestamps?: boolean }): Promise<string>;
  /** Runs a command inside a running container; `timedOut` when it had not finished after `timeoutMs`. */
  exec(id: string, command: string[], timeoutMs: number): Promise<ExecResult>;
  /**
   * A container's log as text, in chunks as the engine delivers them (stdout and stderr
   * interleaved). With `follow` it goes on until the container stops; an abort of `signal`
   * ends it quietly. A container the engine does not know fails with status code 404.
   */
  streamLogs(id: string, opts: LogStreamOptions, signal: AbortSignal): AsyncIterable<string>;
  /** Starts `command` in a running container with the standard streams asked for (`kubectl exec`). */
  execStream(id: string, command: string[], opts: ProcessStreamOptions): Promise<ProcessStream>;
  /** One sample of a running container's resource use (cAdvisor's, as the kubelet reads it). */
  containerStats(id: string): Promise<ContainerStats>;
  /** Connects to the standard streams of a running container's main process (`kubectl attach`). */
  attach(id: string, opts: ProcessStreamOptions): Promise<ProcessStream>;
}

/** Which standard streams of a process to connect, and whether it has a terminal. */
export interface ProcessStreamOptions {
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  /** A pseudo-terminal: stdout and stderr arrive as one stream, on stdout. */
  tty: boolean;
}

/** Output of a process: `channel` 1 is stdout, 2 stderr. */
export interface ProcessOutput {
  channel: 1 | 2;
  data: Buffer;
}

/** A live connection to a process's standard streams, with back-pressure both ways. */
export interface ProcessStream {
  /** The output as it comes; ends when the process closes its output. Not reading it slows the process. */
  readonly output: AsyncIterable<ProcessOutput>;
  /** Writes to stdin; resolves once the engine has taken the bytes. */
  write(data: Buffer): Promise<void>;
  /** Closes stdin (the process reads end of file); output goes on. */
  closeStdin(): void;
  /** Tells the terminal its new size, in character cells. */
  resize(width: number, height: number): Promise<void>;
  /** After the output has ended: the exit code of an exec'd process; undefined for an attach or when unknown. */
  exitCode(): Promise<number | undefined>;
  /** Ends the connection. An exec'd process still running is killed, so none outlives its client; an attached one runs on. */
  close(): Promise<void>;
  /** Whether an exec'd process is still running (false for an attach). */
  running(): Promise<boolean>;
}

export interface ExecResult {
  exitCode: number;
  /** stdout and stderr, interleaved, at most 10 KiB. */
  output: string;
  timedOut: boolean;
}

/** What part of a container's log to read, as Kubernetes' PodLogOptions say it. */
export interface LogStreamOptions {
  /** Keep streaming new output until the container stops. */
  follow?: boolean;
  /** Only the last N lines (before following); all when undefined. */
  tailLines?: number;
  /** Only output of the last N seconds; all when undefined. */
  sinceSeconds?: number;
  /** Prefix each line with its RFC 3339 nanosecond time, as `kubectl logs --timestamps`. */
  timestamps?: boolean;
}

/** A container's resource use at one moment; CPU is cumulative, so a rate needs two samples. */
export interface ContainerStats {
  /** When the engine read it, ms since the epoch. */
  timeMs: number;
  /** CPU time used since the container started, in nanoseconds. */
  cpuUsageNanoseconds: number;
  /** Memory charged to the container, page cache included, bytes. */
  memoryUsageBytes: number;
  /** Memory that cannot be reclaimed: usage − inactive file cache (the kubelet's working set), bytes. */
  memoryWorkingSetBytes: number;
}
