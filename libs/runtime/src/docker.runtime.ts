import { stat } from 'node:fs/promises';
import { readCgroupStats } from './cgroup-stats.js';
import { loadDockerode } from './dockerode.js';
import { Readable, type Duplex } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import type Docker from 'dockerode';
import type DockerModem from 'docker-modem';
import type {
  ContainerConfig,
  ContainerRuntime,
  ExecResult,
  ContainerStats,
  ProcessStream,
  ProcessStreamOptions,
  RuntimeContainer,
  RuntimeContainerState,
  RuntimeEvent,
  RuntimeInfo,
  SandboxConfig,
  LogStreamOptions,
  PullAuth,
  ContainerDiskUsage,
} from './container-runtime.port.js';
import { LogFrameDemuxer } from './log-frames.js';
import { DockerProcessStream } from './docker-process-stream.js';
import { PullProgress, type PullProgressSnapshot } from './pull-progress.js';
import { runtimeMetrics } from '#observability';
import { RuntimeError, statusCodeOf } from './runtime.errors.js';

/**
 * The subset of Docker's `GET /containers/{id}/json` answer the mapping reads. Declared
 * here rather than using @types/dockerode's ContainerInspectInfo because the engine sends
 * `null` for several of these (Labels, Networks) and the mapping must not trust the
 * typings on that; ContainerInspectInfo is assignable to it.
 */
export interface DockerContainerJson {
  Id: string;
  Name: string;
  Created: string;
  Image: string;
  State: {
    Status: string;
    ExitCode?: number | null;
    OOMKilled?: boolean | null;
    Error?: string | null;
    StartedAt?: string | null;
    FinishedAt?: string | null;
  };
  Config?: {
    Image?: string | null;
    Labels?: Record<string, string> | null;
    Tty?: boolean | null;
  } | null;
  HostConfig?: {
    NetworkMode?: string | null;
  } | null;
  NetworkSettings?: {
    IPAddress?: string | null;
    Networks?: Record<string, { IPAddress?: string | null } | undefined> | null;
  } | null;
}

/** The part of Docker's `GET /containers/{id}/stats` answer the mapping reads. */
export interface DockerStatsJson {
  read?: string;
  cpu_stats?: { cpu_usage?: { total_usage?: number } };
  memory_stats?: { usage?: number; stats?: Record<string, number | undefined> };
}

/**
 * Docker's stats as the kubelet reads cAdvisor's: cumulative CPU, and the memory working set
 * = usage − inactive file cache (`total_inactive_file` on cgroup v1, `inactive_file` on v2),
 * never below zero.
 */
export function toContainerStats(stats: DockerStatsJson): ContainerStats {
  const usage = stats.memory_stats?.usage ?? 0;
  const memory = stats.memory_stats?.stats ?? {};
  const inactiveFile = memory['total_inactive_file'] ?? memory['inactive_file'] ?? 0;
  const readMs = stats.read ? Date.parse(stats.read) : NaN;
  return {
    timeMs: Number.isFinite(readMs) && readMs > 0 ? readMs : Date.now(),
    cpuUsageNanoseconds: stats.cpu_stats?.cpu_usage?.total_usage ?? 0,
    memoryUsageBytes: usage,
    memoryWorkingSetBytes: Math.max(0, usage - inactiveFile),
  };
}

/** Docker's status words mapped onto the port's smaller state set. */
export function toRuntimeState(status: string): RuntimeContainerState {
  switch (status) {
    case 'created':
      return 'created';
    // A paused container still has its process; jetlet never pauses, so treat it as up.
    case 'running':
    case 'paused':
      return 'running';
    // No process is running in any of these, and ExitCode/FinishedAt describe the last run.
    case 'exited':
    case 'restarting':
    case 'removing':
    case 'dead':
      return 'exited';
    default:
      return 'unknown';
  }
}

/**
 * Normalises Docker's RFC 3339 nano timestamps to `Date#toISOString()` form, so times
 * from different calls have one fixed width and compare as strings. Docker reports
 * "0001-01-01T00:00:00Z" (Go's zero time) for "never"; that becomes undefined.
 */
export function toIsoTime(raw: string | null | undefined): string | undefined {
  if (!raw || raw.startsWith('0001-01-01')) return undefined;
  const ms = Date.parse(raw);
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
}

/** Maps a Docker inspect answer onto the port's container shape. */
/** How many containers' OOM events the runtime remembers (see DockerRuntime.oomSeen). */
const OOM_MEMORY = 4096;

export function toRuntimeContainer(info: DockerContainerJson): RuntimeContainer {
  const state = toRuntimeState(info.State.Status);
  const rawExitCode = info.State.ExitCode ?? 0;
  const networks = info.NetworkSettings?.Networks ?? {};
  const ip = info.NetworkSettings?.IPAddress || networks['bridge']?.IPAddress || undefined;
  const container: RuntimeContainer = {
    id: info.Id,
    name: info.Name.replace(/^\//, ''),
    image: info.Config?.Image ?? '',
    imageId: info.Image,
    labels: { ...(info.Config?.Labels ?? {}) },
    state,
    createdAt: toIsoTime(info.Created) ?? info.Created,
    oomKilled: info.State.OOMKilled ?? false,
  };
  const startedAt = toIsoTime(info.State.StartedAt);
  if (startedAt !== undefined) container.startedAt = startedAt;
  const finishedAt = toIsoTime(info.State.FinishedAt);
  if (finishedAt !== undefined) container.finishedAt = finishedAt;
  // Docker reports 0 for containers that never ran; a non-zero code on a 'created'
  // container is a failed start (127/126: executable not found / not executable).
  if (state === 'exited' || rawExitCode !== 0) container.exitCode = rawExitCode;
  if (info.State.Error) container.error = info.State.Error;
  if (ip) container.ip = ip;
  const joined = /^container:(.+)$/.exec(info.HostConfig?.NetworkMode ?? '')?.[1];
  if (joined) container.networkOf = joined;
  return container;
}

/** Docker's `label` filter values for "has every one of these pairs". */
export function toLabelFilters(labels: Record<string, string>): string[] {
  return Object.entries(labels).map(([key, value]) => `${key}=${value}`);
}

/**
 * Keys Docker puts into a container event's Actor.Attributes next to the container's
 * labels. A label with one of these names is indistinguishable and gets dropped; jetlet's
 * own labels are all namespaced (io.jetlet.*), so that costs nothing.
 */
const NON_LABEL_ATTRIBUTES = new Set(['name', 'image', 'exitCode', 'signal', 'execID', 'oldName']);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Parses one line of Docker's event stream. Returns undefined for lines that are not a
 * container event (or not JSON at all) instead of throwing, so one odd line cannot take
 * down the watch.
 */
export function parseEventLine(line: string): RuntimeEvent | undefined {
  return parseEvent(line)?.event;
}

/**
 * `parseEventLine`, with the engine's time of the event in ns as far as a double holds it
 * (undefined when the line has no time): what a stream opened again resumes from.
 */
function parseEvent(line: string): { event: RuntimeEvent; timeNano: number | undefined } | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (!isRecord(raw)) return undefined;
  const type = raw['Type'];
  if (type !== undefined && type !== 'container') return undefined;

  const actor = isRecord(raw['Actor']) ? raw['Actor'] : {};
  const attributes = isRecord(actor['Attributes']) ? actor['Attributes'] : {};
  const id = typeof actor['ID'] === 'string' ? actor['ID'] : raw['id'];
  // Pre-1.22 engines only sent `status`; keep reading it as a fallback.
  const rawAction = typeof raw['Action'] === 'string' ? raw['Action'] : raw['status'];
  if (typeof id !== 'string' || id === '' || typeof rawAction !== 'string') return undefined;
  // exec_start/exec_create/health_status carry detail after a colon ("exec_start: sh -c ...").
  const action = rawAction.split(':', 1)[0].trim();
  if (action === '') return undefined;

  const labels: Record<string, string> = {};
  for (const [key, value] of Object.entries(attributes)) {
    if (!NON_LABEL_ATTRIBUTES.has(key) && typeof value === 'string') labels[key] = value;
  }

  // timeNano exceeds 2^53 so JSON.parse rounds it, but only below the microsecond.
  const timeNano = typeof raw['timeNano'] === 'number' ? raw['timeNano'] : typeof raw['time'] === 'number' ? raw['time'] * 1e9 : undefined;
  const timeMs = timeNano === undefined ? Date.now() : Math.floor(timeNano / 1e6);

  const event: RuntimeEvent = { containerId: id, action, labels, timeMs, ...(timeNano === undefined ? {} : { id: `${id}.${action}.${timeNano}` }) };
  // exec_die also carries an exitCode, but that is the exec's, not the container's.
  if (action === 'die' && typeof attributes['exitCode'] === 'string') {
    const exitCode = Number.parseInt(attributes['exitCode'], 10);
    if (Number.isFinite(exitCode)) event.exitCode = exitCode;
  }
  return { event, timeNano };
}

/** How many events delivered a stream of one label filter remembers: above the engine's own 256. */
const DELIVERED_MEMORY = 1024;
/** How long the ping that reads the engine's clock before a first stream may take; without its answer the stream asks for nothing before it. */
const PING_TIMEOUT_MS = 2000;
/** How far before its resume point a stream opened again asks: the engine stamps an event before it orders it. */
const RESUME_MARGIN_NANO = 1e9;

/**
 * Where the streams of one label filter have got to, by the engine's clock: the last event
 * delivered, or before any, the first stream's opening (its `Date` header). A stream opened again asks
 * the engine for everything from a second before there (the engine keeps its last 256 events)
 * and skips exactly the events it delivered already. Nothing is skipped for being older than
 * another: the engine reads its clock before it takes its lock, so two events may come in the
 * other order, and its clock may be stepped back.
 */
class EventResume {
  private resumeNano: number | undefined;
  /** The events delivered, as `id action timeNano`, oldest first. */
  private readonly delivered = new Set<string>();

  /**
   * The engine's `since` for the next stream, in seconds, or undefined while nothing tells
   * where by the engine's clock (this process's clock is not the engine's): the relist after
   * the stream opens then stands for what came before it.
   */
  since(): number | undefined {
    return this.resumeNano === undefined ? undefined : (this.resumeNano - RESUME_MARGIN_NANO) / 1e9;
  }

  /**
   * The engine's time in the `Date` header of an answer: of a stream that opened, where to
   * resume while no event was delivered yet; of a ping before the first stream, where that
   * stream starts. Never past an event delivered: the events this stream was asked to send
   * again may not be read before it breaks.
   */
  opened(dateHeader: string | undefined): void {
    const ms = dateHeader === undefined ? Number.NaN : Date.parse(dateHeader);
    if (Number.isFinite(ms)) this.resumeNano ??= ms * 1e6;
  }

  /** False for an event delivered before (one the engine sends again since `since`); else notes it. */
  take(event: RuntimeEvent, timeNano: number | undefined): boolean {
    // With no time in the line nothing tells it apart from what came before: always new.
    if (timeNano === undefined) return true;
    const key = `${event.containerId} ${event.action} ${timeNano}`;
    if (this.delivered.has(key)) return false;
    this.delivered.add(key);
    for (const oldest of this.delivered) {
      if (this.delivered.size <= DELIVERED_MEMORY) break;
      this.delivered.delete(oldest);
    }
    // The last delivered, not the newest: after a clock stepped back, the engine's next events are older.
    this.resumeNano = timeNano;
    return true;
  }
}

/**
 * Splits a byte stream into lines regardless of how the transport cut it: a chunk may
 * hold half a line, several lines, or end inside a multi-byte UTF-8 character. Blank
 * lines are skipped; a final line without a newline is still yielded.
 */
export async function* splitLines(chunks: AsyncIterable<Buffer | string>): AsyncGenerator<string> {
  const decoder = new StringDecoder('utf8');
  let pending = '';
  for await (const chunk of chunks) {
    pending += typeof chunk === 'string' ? chunk : decoder.write(chunk);
    let newline: number;
    while ((newline = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, newline).trim();
      pending = pending.slice(newline + 1);
      if (line !== '') yield line;
    }
  }
  const rest = (pending + decoder.end()).trim();
  if (rest !== '') yield rest;
}

/**
 * Turns a non-TTY container's log stream into text. Docker multiplexes stdout and stderr
 * into frames of an 8-byte header ([stream, 0, 0, 0, size as uint32 BE]) plus payload;
 * the frames are concatenated in the order Docker sent them. A truncated last frame
 * contributes what it has.
 */
export function demuxLogFrames(data: Buffer): string {
  const parts: Buffer[] = [];
  let offset = 0;
  while (offset + 8 <= data.length) {
    const size = data.readUInt32BE(offset + 4);
    const start = offset + 8;
    const end = Math.min(start + size, data.length);
    parts.push(data.subarray(start, end));
    offset = start + size;
  }
  return Buffer.concat(parts).toString('utf8');
}

type DockerOrOptions = Docker | Docker.DockerOptions;

/** The kubelet's evented PLEG relists every 300 s; a shorter period bounds what a lost event could hide. */
export const DEFAULT_RELIST_SECONDS = 60;

export interface DockerRuntimeOptions {
  /** How long a list kept while the event stream is open stands at most, seconds. */
  relistSeconds?: number;
  /** The clock lists are timed by (injected by tests). */
  now?: () => number;
}

interface ListedAt {
  stamp: string;
  atMs: number;
  containers: RuntimeContainer[];
}

function isDockerode(value: DockerOrOptions): value is Docker {
  // Duck-typed as well, so an instance from another copy of dockerode works.
  return value instanceof loadDockerode() || typeof (value as Partial<Docker>).getContainer === 'function';
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message.trim() : String(err);
}

/**
 * The Docker Engine adapter of the container-runtime port (API 1.41 / Docker 20.10+).
 * Idempotency follows the CRI: creating an existing name returns it, stopping a stopped
 * or missing container and removing a missing one succeed.
 */
export class DockerRuntime implements ContainerRuntime {
  private readonly docker: Docker;
  /**
   * Inspect answers by container id, with the list state they were taken in. A listed
   * container whose state is unchanged (and that had no event since) is not inspected
   * again, so an idle pass costs one list call, not one call per container.
   */
  private readonly inspected = new Map<string, { state: string; container: RuntimeContainer }>();
  /**
   * Containers the engine sent an `oom` event for. With containerd, the engine marks a
   * container OOMKilled only when the OOM reaches it before the exit; when the two race the
   * other way, `State.OOMKilled` stays false although its own `oom` event follows the `die`.
   * Remembered here (the newest OOM_MEMORY), so the kill is reported as what it was.
   */
  private readonly oomSeen = new Set<string>();
  /**
   * Event streams open now, by label filter, each with an id of its own and a count bumped
   * by every event it delivers; this process's own creates, starts, stops and removes bump
   * `changes`. A list taken while its filter's stream was open stands until
   * either count moves (see `listContainers`).
   */
  private readonly watches = new Map<string, { id: number; changes: number }>();
  private watchIds = 0;
  private changes = 0;
  private readonly lists = new Map<string, ListedAt>();
  /** By label filter: where its event streams have got to (see EventResume). */
  private readonly resumes = new Map<string, EventResume>();
  private readonly relistMs: number;
  private readonly now: () => number;

  /** Without an argument dockerode's defaults apply: DOCKER_HOST, else /var/run/docker.sock. */
  constructor(docker?: DockerOrOptions, options: DockerRuntimeOptions = {}) {
    const Dockerode = loadDockerode();
    if (docker === undefined) this.docker = new Dockerode();
    else if (isDockerode(docker)) this.docker = docker;
    else this.docker = new Dockerode(docker);
    this.relistMs = (options.relistSeconds ?? DEFAULT_RELIST_SECONDS) * 1000;
    // Monotonic: a wall clock stepped back would keep a list that long past relistSeconds.
    this.now = options.now ?? (() => performance.now());
  }

  async info(): Promise<RuntimeInfo> {
    try {
      call('version', 'info');
      const [version, info] = await Promise.all([this.docker.version(), this.docker.info() as Promise<unknown>]);
      const details = isRecord(info) ? info : {};
      const str = (value: unknown, fallback: string): string => (typeof value === 'string' && value !== '' ? value : fallback);
      return {
        name: 'docker',
        version: version.Version,
        apiVersion: version.ApiVersion,
        // The distribution ("Debian GNU/Linux 12 (bookworm)") says more than GOOS ("linux").
        os: str(details['OperatingSystem'], version.Os),
        kernelVersion: str(details['KernelVersion'], version.KernelVersion),
      };
    } catch (err) {
      throw this.wrap(err, 'query engine info');
    }
  }

  async imagePresent(image: string): Promise<boolean> {
    try {
      call('image_inspect');
      await this.docker.getImage(image).inspect();
      return true;
    } catch (err) {
      if (statusCodeOf(err) === 404) return false;
      throw this.wrap(err, `inspect image ${image}`);
    }
  }

  async listImages(): Promise<Array<{ id: string; size: number; tags: string[] }>> {
    try {
      call('image_list');
      const images = await this.docker.listImages({ all: false });
      return images.map((i) => ({ id: i.Id, size: i.Size, tags: (i.RepoTags ?? []).filter((t) => t !== '<none>:<none>') }));
    } catch (err) {
      throw this.wrap(err, 'list images');
    }
  }

  async imageId(image: string): Promise<string | undefined> {
    try {
      call('image_inspect');
      return (await this.docker.getImage(image).inspect()).Id;
    } catch (err) {
      if (statusCodeOf(err) === 404) return undefined;
      throw this.wrap(err, `inspect image ${image}`);
    }
  }

  async removeImage(id: string): Promise<void> {
    try {
      call('image_remove');
      await this.docker.getImage(id).remove({ force: false, noprune: false });
    } catch (err) {
      if (statusCodeOf(err) === 404) return;
      throw this.wrap(err, `remove image ${id}`);
    }
  }

  async imageUser(image: string): Promise<string> {
    try {
      call('image_inspect');
      const info = (await this.docker.getImage(image).inspect()) as { Config?: { User?: string } | null };
      return info.Config?.User ?? '';
    } catch (err) {
      throw this.wrap(err, `inspect image ${image}`);
    }
  }

  async pullImage(image: string, onProgress?: (progress: PullProgressSnapshot) => void, auth?: PullAuth): Promise<void> {
    let stream: NodeJS.ReadableStream;
    try {
      // dockerode adds ':latest' when the reference has no tag; without it the engine would pull every tag.
      call('image_pull');
      stream = await this.docker.pull(image, auth ? { authconfig: { ...auth } } : {});
    } catch (err) {
      throw this.wrap(err, `pull image ${image}`);
    }
    const progress = new PullProgress();
    const onMessage = (message: unknown): void => {
      if (progress.observe(message)) onProgress?.(progress.snapshot());
    };
    await new Promise<void>((resolve, reject) => {
      this.docker.modem.followProgress(
        stream,
        (err, output) => {
          if (err) {
            reject(this.wrap(err, `pull image ${image}`));
            return;
          }
          // The engine answers 200 and then reports failures (unknown manifest, auth,
          // network) as a progress message, so completion alone does not mean success.
          const failure = output.map(progressError).find((message) => message !== undefined);
          if (failure !== undefined) reject(new RuntimeError(`docker pull image ${image} failed: ${failure}`));
          else resolve();
        },
        onMessage,
      );
    });
  }

  async runPodSandbox(config: SandboxConfig, onCreated?: (id: string) => void, onStarted?: () => void): Promise<RuntimeContainer> {
    const id = await this.createOrAdopt(config.name, {
      name: config.name,
      Image: config.image,
      Hostname: config.hostname,
      Labels: { ...config.labels },
      // hostPorts are Docker port bindings on the sandbox, which owns the pod's network namespace.
      ...(config.portMappings?.length ? { ExposedPorts: Object.fromEntries(config.portMappings.map((m) => [`${m.containerPort}/${m.protocol}`, {}])) } : {}),
      HostConfig: {
        NetworkMode: 'bridge',
        ...(config.sysctls && Object.keys(config.sysctls).length > 0 ? { Sysctls: { ...config.sysctls } } : {}),
        ...(config.portMappings?.length
          ? {
              PortBindings: Object.fromEntries(
                config.portMappings.map((m) => [`${m.containerPort}/${m.protocol}`, [{ HostIp: '', HostPort: String(m.hostPort) }]]),
              ),
            }
          : {}),
      },
    });
    onCreated?.(id);
    // Also covers an adopted sandbox that exists but is not running; 304 = already running.
    await this.startContainer(id);
    onStarted?.();
    const sandbox = await this.inspectContainer(id);
    if (sandbox === undefined) {
      throw new RuntimeError(`docker run sandbox ${config.name} failed: container ${id} vanished after start`, {
        statusCode: 404,
      });
    }
    return sandbox;
  }

  async createContainer(sandboxId: string, config: ContainerConfig): Promise<string> {
    const hostConfig: Docker.HostConfig = { NetworkMode: `container:${sandboxId}` };
    if (config.memoryLimitBytes !== undefined) hostConfig.Memory = config.memoryLimitBytes;
    if (config.nanoCpus !== undefined) hostConfig.NanoCpus = config.nanoCpus;
    if (config.cpuShares !== undefined) hostConfig.CpuShares = config.cpuShares;
    // Mounts, not Binds: a path may hold ':' and a missing source is an error, not a new directory.
    if (config.mounts?.length)
      hostConfig.Mounts = config.mounts.map((m) => ({ Type: 'bind' as const, Source: m.hostPath, Target: m.containerPath, ReadOnly: m.readOnly === true }));

    if (config.groupAdd?.length) hostConfig.GroupAdd = [...config.groupAdd];
    if (config.readOnlyRootFilesystem) hostConfig.ReadonlyRootfs = true;
    if (config.capAdd?.length) hostConfig.CapAdd = [...config.capAdd];
    if (config.capDrop?.length) hostConfig.CapDrop = [...config.capDrop];
    if (config.privileged) hostConfig.Privileged = true;
    if (config.noNewPrivileges) hostConfig.SecurityOpt = ['no-new-privileges'];
    if (config.sysctls && Object.keys(config.sysctls).length > 0) hostConfig.Sysctls = { ...config.sysctls };
    if (config.pidOf !== undefined) hostConfig.PidMode = `container:${config.pidOf}`;

    const options: Docker.ContainerCreateOptions = {
      name: config.name,
      Image: config.image,
      ...(config.user !== undefined ? { User: config.user } : {}),
      Env: config.env.map(({ name, value }) => `${name}=${value}`),
      Labels: { ...config.labels },
      HostConfig: hostConfig,
      // As dockershim: the stdin stays open for `kubectl attach -i` only when the spec asks for it.
      ...(config.openStdin ? { OpenStdin: true, StdinOnce: config.stdinOnce === true } : {}),
      ...(config.tty ? { Tty: true } : {}),
    };
    // Kubernetes semantics: command replaces ENTRYPOINT, args replace CMD, and an empty
    // list means "not set". Cmd is deliberately left out when only the entrypoint is
    // given: the engine (verified on 20.10) inherits the image CMD only when Entrypoint
    // is unset too, so the image CMD is not appended. Sending Cmd: [] would not help
    // either way, since the engine treats an empty Cmd as unset.
    if (config.entrypoint !== undefined && config.entrypoint.length > 0) options.Entrypoint = [...config.entrypoint];
    if (config.cmd !== undefined && config.cmd.length > 0) options.Cmd = [...config.cmd];
    if (config.workingDir) options.WorkingDir = config.workingDir;
    return this.createOrAdopt(config.name, options);
  }

  async startContainer(id: string): Promise<void> {
    try {
      call('container_start');
      this.changed(id);
      await this.docker.getContainer(id).start();
    } catch (err) {
      if (statusCodeOf(err) === 304) return;
      throw this.wrap(err, `start container ${id}`);
    }
  }

  async stopContainer(id: string, graceSeconds: number): Promise<void> {
    try {
      // The engine wants whole seconds; round up so the process never gets less grace than asked.
      call('container_stop');
      this.changed(id);
      await this.docker.getContainer(id).stop({ t: Math.max(0, Math.ceil(graceSeconds)) });
    } catch (err) {
      const status = statusCodeOf(err);
      if (status === 304 || status === 404) return;
      throw this.wrap(err, `stop container ${id}`);
    } finally {
      // A list taken during the grace period saw it running, and its die may not be read yet.
      this.changed(id);
    }
  }

  async removeContainer(id: string): Promise<void> {
    try {
      // v: anonymous volumes would otherwise leak with every removed container (dockershim did the same).
      call('container_remove');
      this.changed(id);
      await this.docker.getContainer(id).remove({ force: true, v: true });
    } catch (err) {
      const status = statusCodeOf(err);
      if (status === 404) return;
      // A concurrent remove of the same container: the outcome we want is already under way.
      if (status === 409 && /already in progress/i.test(errorMessage(err))) return;
      throw this.wrap(err, `remove container ${id}`);
    }
  }

  async inspectContainer(id: string): Promise<RuntimeContainer | undefined> {
    const info = await this.inspectRaw(id);
    return info === undefined ? undefined : this.toContainer(info);
  }

  /** The port's view of an inspect, with an OOM kill the engine announced but did not record. */
  private toContainer(info: DockerContainerJson): RuntimeContainer {
    const container = toRuntimeContainer(info);
    if (!container.oomKilled && this.oomSeen.has(container.id) && container.state === 'exited') container.oomKilled = true;
    return container;
  }

  private rememberOom(id: string): void {
    this.oomSeen.add(id);
    // Oldest first: a Set iterates in insertion order.
    for (const old of this.oomSeen) {
      if (this.oomSeen.size <= OOM_MEMORY) break;
      this.oomSeen.delete(old);
    }
  }

  async containerDiskUsage(id: string): Promise<ContainerDiskUsage | undefined> {
    let info: { SizeRw?: number; LogPath?: string };
    try {
      call('container_inspect');
      // `size=1` makes the engine compute the writable layer's size; dockerode sends it as a query parameter.
      info = await this.docker.getContainer(id).inspect({ size: true } as Docker.ContainerInspectOptions);
    } catch (err) {
      if (statusCodeOf(err) === 404) return undefined;
      throw this.wrap(err, `inspect the size of container ${id}`);
    }
    const logBytes = info.LogPath
      ? await stat(info.LogPath).then(
          (s) => s.size,
          () => 0,
        )
      : 0;
    return { rootfsBytes: info.SizeRw ?? 0, logBytes };
  }

  /**
   * The containers with `labels`. While an event stream with the same labels is open, as the
   * agent's PLEG keeps one, the last list stands as long as no event came and this process
   * changed no container since it was asked for, up to `relistSeconds` (the kubelet's evented
   * PLEG relists every 300 s): an idle pass then asks the engine nothing. A list holding a
   * container in a passing state (created, restarting, removing) is not kept: a failed start
   * changes only what an inspect says.
   *
   * The inspects behind a list are kept on the same terms: none taken before the event stream
   * opened or after it ended (each event drops its container's), and none past a relist that
   * `relistSeconds` asked for. An event lost with a broken stream (a change that keeps the
   * listed state, such as an `oom` that follows its `die`, or a container started again in
   * place and dead again) is so seen by the first list under the next stream.
   */
  async listContainers(labels: Record<string, string>): Promise<RuntimeContainer[]> {
    const key = describeLabels(labels);
    const stamp = this.stamp(key);
    const kept = this.lists.get(key);
    const current = stamp !== undefined && kept?.stamp === stamp;
    if (current && this.now() - kept.atMs < this.relistMs) return [...kept.containers];
    // The relist of a list that stood relistSeconds: everything is inspected again. (With
    // relistSeconds 0 no list is kept, and the inspects stand as long as the listed states do.)
    if (current && this.relistMs > 0) this.inspected.clear();
    this.lists.delete(key);
    let listed: Docker.ContainerInfo[];
    const atMs = this.now();
    try {
      call('container_list');
      listed = await this.docker.listContainers({ all: true, filters: { label: toLabelFilters(labels) } });
    } catch (err) {
      throw this.wrap(err, `list containers with labels ${describeLabels(labels)}`);
    }
    const containers = await this.inspectListed(listed.map((c) => ({ id: c.Id, state: c.State })));
    const settled = listed.every((c) => c.State === 'running' || c.State === 'exited');
    if (stamp !== undefined && settled && this.stamp(key) === stamp) this.lists.set(key, { stamp, atMs, containers });
    return [...containers];
  }

  /** What a kept list of `key` must match: undefined while no event stream with those labels is open. */
  private stamp(key: string): string | undefined {
    const watch = this.watches.get(key);
    return watch === undefined ? undefined : `${watch.id}.${watch.changes}/${this.changes}`;
  }

  /** This process changed container `id`: its inspect and every kept list are stale. */
  private changed(id: string): void {
    this.inspected.delete(id);
    this.changes++;
  }

  async *events(labels: Record<string, string>, signal: AbortSignal, onSubscribed?: () => void): AsyncGenerator<RuntimeEvent> {
    if (signal.aborted) return;
    const key = describeLabels(labels);
    const what = `watch events with labels ${key}`;
    const resume = this.resumes.get(key) ?? new EventResume();
    this.resumes.set(key, resume);
    // The engine answers a stream before it subscribes it: the first stream too asks for what
    // came from a second before the engine's clock read just now, or an event in that instant
    // would be known from the relist alone.
    if (resume.since() === undefined) resume.opened(await this.engineDate(signal));
    if (signal.aborted) return;
    const since = resume.since();
    let source: NodeJS.ReadableStream;
    try {
      // No abortSignal for dockerode: aborting its request makes the response emit an
      // error after we are gone; destroying the stream ourselves is quieter.
      call('events');
      source = await this.docker.getEvents({
        // Every event while an earlier stream was down, and in the moment between the engine's
        // answer and its subscription, is sent again on the next.
        ...(since === undefined ? {} : { since }),
        filters: { type: ['container'], label: toLabelFilters(labels) },
      });
    } catch (err) {
      if (signal.aborted) return;
      throw this.wrap(err, what);
    }
    const stream = source instanceof Readable ? source : new Readable().wrap(source);
    resume.opened((source as { headers?: Record<string, string | undefined> }).headers?.['date']);
    // From here on every change of a container with these labels comes as an event: a list taken now can be kept until one does.
    // A stream of its own: a list asked for under an earlier one never matches it.
    const watch = { id: ++this.watchIds, changes: 0 };
    this.watches.set(key, watch);
    // What was inspected with no stream open may have changed unseen.
    this.inspected.clear();
    onSubscribed?.();
    const onAbort = (): void => {
      stream.destroy();
    };
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      if (signal.aborted) return;
      for await (const line of splitLines(stream)) {
        const parsed = parseEvent(line);
        if (parsed === undefined || !resume.take(parsed.event, parsed.timeNano)) continue;
        const { event } = parsed;
        // Whatever happened, the cached inspect of this container and the kept list may be stale now.
        this.inspected.delete(event.containerId);
        watch.changes++;
        if (event.action === 'oom') this.rememberOom(event.containerId);
        else if (event.action === 'destroy') this.oomSeen.delete(event.containerId);
        yield event;
      }
    } catch (err) {
      if (signal.aborted) return;
      throw this.wrap(err, what);
    } finally {
      // Without the stream nothing tells of changes: lists, and what they inspected, are asked for again.
      if (this.watches.get(key) === watch) this.watches.delete(key);
      this.lists.delete(key);
      this.inspected.clear();
      signal.removeEventListener('abort', onAbort);
      // A destroyed socket can still report a reset afterwards; with no listener left
      // that would be an uncaught 'error' event.
      stream.on('error', () => undefined);
      stream.destroy();
    }
    if (signal.aborted) return;
    // The engine never ends the stream on its own while it is up (daemon restart, proxy
    // timeout): surface it so the caller reconnects and relists.
    throw new RuntimeError(`docker ${what} failed: event stream ended unexpectedly`);
  }

  async logs(id: string, opts: { tailLines?: number; timestamps?: boolean }): Promise<string> {
    const info = await this.inspectRaw(id);
    if (info === undefined) {
      throw new RuntimeError(`docker read logs of container ${id} failed: no such container`, { statusCode: 404 });
    }
    let data: Buffer;
    try {
      call('container_logs');
      data = await this.readStream({
        path: `/containers/${encodeURIComponent(id)}/logs?`,
        method: 'GET',
        options: {
          stdout: true,
          stderr: true,
          follow: false,
          timestamps: opts.timestamps ?? false,
          tail: opts.tailLines === undefined ? 'all' : String(Math.max(0, Math.floor(opts.tailLines))),
        },
        // Read as a raw stream: dockerode's buffered mode JSON-parses the body and would
        // hand back a number or object for a TTY container that printed valid JSON.
        isStream: true,
        statusCodes: { 200: true, 404: 'no such container', 500: 'server error' },
      });
    } catch (err) {
      throw this.wrap(err, `read logs of container ${id}`);
    }
    return info.Config?.Tty ? data.toString('utf8') : demuxLogFrames(data);
  }

  async exec(id: string, command: string[], timeoutMs: number): Promise<ExecResult> {
    let exec: Docker.Exec;
    let stream: NodeJS.ReadableStream;
    try {
      call('exec_create', 'exec_start');
      exec = await this.docker.getContainer(id).exec({ Cmd: command, AttachStdout: true, AttachStderr: true, Tty: false });
      stream = await exec.start({ hijack: true, stdin: false });
    } catch (err) {
      throw this.wrap(err, `exec in container ${id}`);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const finished = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      stream.on('data', (chunk: Buffer) => {
        // Keep a little more than 10 KiB of frames: the output is cut to 10 KiB after demuxing.
        if (size < 16 * 1024) chunks.push(chunk);
        size += chunk.length;
      });
      stream.once('end', () => (clearTimeout(timer), resolve(true)));
      stream.once('error', () => (clearTimeout(timer), resolve(true)));
    });
    if (!finished) {
      // The process may go on inside the container, as with any runtime; the caller sees a timeout.
      (stream as Readable).destroy?.();
      return { exitCode: -1, output: '', timedOut: true };
    }
    const output = demuxLogFrames(Buffer.concat(chunks)).slice(0, 10 * 1024);
    try {
      call('exec_inspect');
      const info = await exec.inspect();
      return { exitCode: info.ExitCode ?? -1, output, timedOut: false };
    } catch (err) {
      throw this.wrap(err, `inspect exec in container ${id}`);
    }
  }

  async execStream(id: string, command: string[], opts: ProcessStreamOptions): Promise<ProcessStream> {
    let exec: Docker.Exec;
    let socket: Duplex;
    try {
      call('exec_create', 'exec_start');
      exec = await this.docker.getContainer(id).exec({
        Cmd: command,
        AttachStdin: opts.stdin,
        AttachStdout: opts.stdout,
        AttachStderr: opts.stderr,
        Tty: opts.tty,
      });
      socket = await exec.start({ hijack: true, stdin: opts.stdin, Tty: opts.tty });
    } catch (err) {
      throw this.wrap(err, `exec in container ${id}`);
    }
    return new DockerProcessStream(socket, opts.tty, {
      resize: async (width, height) => {
        call('exec_resize');
        await exec.resize({ w: width, h: height });
      },
      inspect: async () => {
        call('exec_inspect');
        const info = await exec.inspect();
        return { running: info.Running, ...(info.ExitCode !== null ? { exitCode: info.ExitCode } : {}), ...(info.Pid ? { pid: info.Pid } : {}) };
      },
      kill: (pid) => {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Gone already, or not in this process's pid namespace: nothing more can be done here.
        }
      },
    });
  }

  async containerStats(id: string): Promise<ContainerStats> {
    // The cgroup's own files when they are on this host (no engine call); else the engine's stats.
    const local = readCgroupStats(id);
    if (local) return local;
    let stats: DockerStatsJson;
    try {
      call('container_stats');
      // one-shot: the engine answers at once instead of waiting a second for a second sample.
      const options = { stream: false, 'one-shot': true } as const;
      stats = await this.docker.getContainer(id).stats(options);
    } catch (err) {
      throw this.wrap(err, `read stats of container ${id}`);
    }
    return toContainerStats(stats);
  }

  async attach(id: string, opts: ProcessStreamOptions): Promise<ProcessStream> {
    const container = this.docker.getContainer(id);
    // Whether the output is one raw stream or multiplexed is the container's, not the client's.
    const info = await this.inspectRaw(id);
    if (info === undefined) throw new RuntimeError(`docker attach to container ${id} failed: no such container`, { statusCode: 404 });
    const tty = info.Config?.Tty ?? false;
    let socket: Duplex;
    try {
      call('container_attach');
      socket = (await container.attach({ stream: true, stdin: opts.stdin, stdout: opts.stdout, stderr: opts.stderr, hijack: true })) as Duplex;
    } catch (err) {
      throw this.wrap(err, `attach to container ${id}`);
    }
    return new DockerProcessStream(socket, tty, {
      resize: async (width, height) => {
        call('container_resize');
        await container.resize({ w: width, h: height });
      },
    });
  }

  /** Inspects by id or name; undefined when the engine does not know it. */
  private async inspectRaw(idOrName: string): Promise<DockerContainerJson | undefined> {
    try {
      call('container_inspect');
      return await this.docker.getContainer(idOrName).inspect();
    } catch (err) {
      if (statusCodeOf(err) === 404) return undefined;
      throw this.wrap(err, `inspect container ${idOrName}`);
    }
  }

  /**
   * Turns list results into full containers. The list answer has no start/finish times,
   * exit code, OOM flag or error, so a container is inspected when it is new to us or its
   * state moved; otherwise the cached inspect stands. Containers removed between list and
   * inspect are dropped, and so are cache entries of containers no longer listed.
   */
  private async inspectListed(listed: Array<{ id: string; state: string }>): Promise<RuntimeContainer[]> {
    const containers = await Promise.all(
      listed.map(async ({ id, state }) => {
        const cached = this.inspected.get(id);
        if (cached?.state === state) return cached.container;
        const info = await this.inspectRaw(id);
        if (info === undefined) return undefined;
        const container = this.toContainer(info);
        // Cache under the state the list saw only if the inspect agrees, so a move between the two calls is seen next time.
        // 'created' is not cached: a failed start leaves that state and only changes the exit code and error.
        if (info.State.Status === state && state !== 'created') this.inspected.set(id, { state, container });
        return container;
      }),
    );
    const present = new Set(listed.map((c) => c.id));
    for (const id of this.inspected.keys()) if (!present.has(id)) this.inspected.delete(id);
    return containers.filter((c) => c !== undefined);
  }

  /**
   * Creates a container under a deterministic name; if the name is taken (409) the
   * existing container is adopted, since that means an earlier attempt already created
   * it (SwarmKit's approach). Returns the container id.
   */
  private async createOrAdopt(name: string, options: Docker.ContainerCreateOptions): Promise<string> {
    try {
      call('container_create');
      this.changes++;
      const created = await this.docker.createContainer(options);
      return created.id;
    } catch (err) {
      if (statusCodeOf(err) !== 409) throw this.wrap(err, `create container ${name}`);
      const existing = await this.inspectRaw(name);
      // Removed between our conflict and the inspect: report the conflict rather than loop.
      if (existing === undefined) throw this.wrap(err, `create container ${name}`);
      return existing.Id;
    }
  }

  /**
   * The engine's clock now, as the `Date` header of its `/_ping` answer (to the second), or
   * undefined if it gave none within PING_TIMEOUT_MS or `signal` aborted.
   */
  private async engineDate(signal: AbortSignal): Promise<string | undefined> {
    call('ping');
    try {
      const answer = await new Promise<unknown>((resolve, reject) => {
        this.docker.modem.dial(
          {
            path: '/_ping?',
            method: 'GET',
            isStream: true,
            statusCodes: { 200: true, 500: 'server error' },
            abortSignal: AbortSignal.any([signal, AbortSignal.timeout(PING_TIMEOUT_MS)]),
          },
          (err, result) => (err ? reject(err) : resolve(result)),
        );
      });
      if (!(answer instanceof Readable)) return undefined;
      answer.resume();
      return (answer as Readable & { headers?: Record<string, string | undefined> }).headers?.['date'];
    } catch {
      // The stream's own answer says whether the engine is there.
      return undefined;
    }
  }

  private readStream(dialOptions: DockerModem.DialOptions): Promise<Buffer> {
    return new Promise<Buffer>((resolve, reject) => {
      this.docker.modem.dial(dialOptions, (err, result) => {
        if (err) {
          reject(err);
          return;
        }
        if (Buffer.isBuffer(result)) {
          resolve(result);
          return;
        }
        if (!(result instanceof Readable)) {
          reject(new Error('engine answered without a readable body'));
          return;
        }
        const chunks: Buffer[] = [];
        result.on('data', (chunk: Buffer | string) => {
          chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
        });
        result.once('error', reject);
        result.once('end', () => resolve(Buffer.concat(chunks)));
      });
    });
  }

  private wrap(err: unknown, operation: string): RuntimeError {
    if (err instanceof RuntimeError) return err;
    return new RuntimeError(`docker ${operation} failed: ${errorMessage(err)}`, {
      cause: err,
      statusCode: statusCodeOf(err),
    });
  }

  async *streamLogs(id: string, opts: LogStreamOptions, signal: AbortSignal): AsyncGenerator<string> {
    if (signal.aborted) return;
    const what = `stream logs of container ${id}`;
    const info = await this.inspectRaw(id);
    if (info === undefined) throw new RuntimeError(`docker ${what} failed: no such container`, { statusCode: 404 });
    const options: Record<string, unknown> = {
      stdout: true,
      stderr: true,
      follow: opts.follow ?? false,
      timestamps: opts.timestamps ?? false,
      tail: opts.tailLines === undefined ? 'all' : String(Math.max(0, Math.floor(opts.tailLines))),
    };
    if (opts.sinceSeconds !== undefined) {
      // The engine reads "seconds.fraction"; whole seconds would let up to a second too much through.
      const sinceMs = Date.now() - opts.sinceSeconds * 1000;
      options['since'] = `${Math.floor(sinceMs / 1000)}.${String(sinceMs % 1000).padStart(3, '0')}`;
    }
    let source: Readable;
    try {
      call('container_logs');
      source = await this.openStream({
        path: `/containers/${encodeURIComponent(id)}/logs?`,
        method: 'GET',
        options,
        isStream: true,
        statusCodes: { 200: true, 404: 'no such container', 500: 'server error' },
      });
    } catch (err) {
      if (signal.aborted) return;
      throw this.wrap(err, what);
    }
    const onAbort = (): void => {
      source.destroy();
    };
    signal.addEventListener('abort', onAbort, { once: true });
    const demuxer = info.Config?.Tty ? undefined : new LogFrameDemuxer();
    const raw = new StringDecoder('utf8');
    try {
      if (signal.aborted) return;
      for await (const chunk of source) {
        const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
        const text = demuxer ? demuxer.push(bytes) : raw.write(bytes);
        if (text !== '') yield text;
      }
      const rest = demuxer ? demuxer.end() : raw.end();
      if (rest !== '') yield rest;
    } catch (err) {
      if (signal.aborted) return;
      throw this.wrap(err, what);
    } finally {
      signal.removeEventListener('abort', onAbort);
      source.on('error', () => undefined);
      source.destroy();
    }
  }

  /** Opens an engine response as a stream, without reading it. */
  private openStream(dialOptions: DockerModem.DialOptions): Promise<Readable> {
    return new Promise<Readable>((resolve, reject) => {
      this.docker.modem.dial(dialOptions, (err, result) => {
        if (err) reject(err);
        else if (result instanceof Readable) resolve(result);
        else if (Buffer.isBuffer(result)) resolve(Readable.from([result]));
        else reject(new Error('engine answered without a readable body'));
      });
    });
  }
}

/** Counts Docker API calls, so a benchmark can report calls per reconcile pass. */
function call(...names: string[]): void {
  for (const name of names) runtimeMetrics.dockerCalls.inc({ call: name });
}

function describeLabels(labels: Record<string, string>): string {
  const pairs = toLabelFilters(labels);
  return pairs.length === 0 ? '(any)' : pairs.join(',');
}

/** The error text of one pull progress message, if it reports a failure. */
function progressError(message: unknown): string | undefined {
  if (!isRecord(message)) return undefined;
  if (typeof message['error'] === 'string' && message['error'] !== '') return message['error'];
  const detail = message['errorDetail'];
  if (isRecord(detail) && typeof detail['message'] === 'string' && detail['message'] !== '') return detail['message'];
  return undefined;
}
