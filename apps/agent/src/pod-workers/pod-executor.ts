import { createHash } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Container } from '#contracts';
import { BackoffBook, pullKey } from '#domain/backoff';
import { ContainerConfigError, containerEnv, envConfigRefs, expandCommand } from '#domain/container-env';
import { CredentialKeyring, type RegistryCredentials } from '#domain/credential-keyring';
import { isValidImageReference } from '#domain/image-reference';
import { podContainers } from '#domain/init-containers';
import { containerName, containerSpecHash, sandboxName } from '#domain/pod-naming';
import { isLiveSandbox, runningSandboxes, type WaitingReasons } from '#domain/pod-status';
import { cpuMillis, memoryBytes } from '#domain/quantity';
import { MINIMUM_GRACE_SECONDS, startKey, type Action, type DesiredPod, type PodRef } from '#domain/reconcile';
import { containerSecurity, podSysctls, verifyRunAsNonRoot, type ContainerSecurity } from '#domain/security-context';
import { podRef } from '#observability';
import { LABELS, type ContainerConfig, type ContainerRuntime, type PullProgressSnapshot, type RuntimeContainer, type SandboxConfig } from '#runtime';
import { AGENT_CONFIG, RUNTIME } from '../agent.constants.js';
import type { AgentConfig } from '../agent.config.js';
import { EventRecorder } from '../events/event-recorder.service.js';
import { ConfigSource } from '../configmap/config-source.service.js';
import { HandlerRunner } from '../lifecycle/handler-runner.js';
import { NodeService } from '../node/node.service.js';
import { TerminationMessages } from '../lifecycle/termination-messages.js';
import { VolumeManager, type HostMount } from '../volumemanager/volume-manager.service.js';
import { StartQueue } from './start-queue.js';

type Waker = (atMs: number) => void;

/** A sandbox being run: its id once created, then that it started, then the sandbox with its IP (each fails if the run does before it). */
interface PendingSandbox {
  id: Promise<string>;
  started: Promise<void>;
  running: Promise<RuntimeContainer>;
}

/** Whether the container's environment holds the pod's IP (the downward API's status.podIP or status.podIPs). */
function needsPodIP(container: Container): boolean {
  return (container.env ?? []).some((e) => e.valueFrom?.fieldRef?.fieldPath === 'status.podIP' || e.valueFrom?.fieldRef?.fieldPath === 'status.podIPs');
}

/** The longest a watcher waits for news of a pull under way. */
const PULL_PROGRESS_INTERVAL_MS = 1000;

/** Applies reconcile actions through the runtime port; every step is idempotent. */
@Injectable()
export class PodExecutor {
  private readonly logger = new Logger(PodExecutor.name);
  /** Why a container could not start, shown as its waiting reason until it does. */
  private readonly waiting = new Map<string, WaitingReasons>();
  /** One pull per image at a time: later askers wait for the pull under way and hear its progress. */
  private readonly pulls = new Map<string, { done: Promise<void>; listeners: Set<(progress: PullProgressSnapshot) => void> }>();
  private readonly pullBackoff: BackoffBook;
  /** Back-off after a failed create or start (by startKey); the planner reads it, so no pass retries early. */
  readonly startBackoff: BackoffBook;
  /** The engine's starts, a few at a time, oldest pod first (a fake engine has nothing to queue for). */
  private readonly starts: StartQueue;
  private wake: Waker = () => undefined;

  constructor(
    @Inject(AGENT_CONFIG) private readonly config: AgentConfig,
    @Inject(RUNTIME) private readonly runtime: ContainerRuntime,
    private readonly events: EventRecorder,
    private readonly handlers: HandlerRunner,
    private readonly messages: TerminationMessages,
    private readonly configSource: ConfigSource,
    private readonly node: NodeService,
    private readonly volumes: VolumeManager,
  ) {
    this.pullBackoff = new BackoffBook({ baseMs: config.BACKOFF_BASE_SECONDS * 1000, capMs: config.BACKOFF_CAP_SECONDS * 1000 });
    this.startBackoff = new BackoffBook(this.pullBackoff.policy);
    this.starts = new StartQueue(config.RUNTIME === 'fake' ? 0 : config.MAX_PARALLEL_CONTAINER_STARTS);
  }

  /** Where to ask for a pass when a back-off the executor keeps runs out. */
  onWake(waker: Waker): void {
    this.wake = waker;
  }

  waitingReasons(uid: string): WaitingReasons | undefined {
    return this.waiting.get(uid);
  }

  async apply(action: Exclude<Action, { kind: 'ReportRemoved' | 'FinalizePod' }>): Promise<void> {
    switch (action.kind) {
      case 'RunSandbox':
        return this.runSandbox(action.pod, action.attempt, action.containers ?? []);
      case 'StartContainer':
        return this.startContainer(action.pod, action.container, action.attempt, action.sandboxId, action.pidOf);
      case 'KillContainer': {
        // Planned from a listing that may predate an earlier kill of the same run: one kill per run.
        if ((await this.runtime.inspectContainer(action.containerId))?.state !== 'running') return;
        // The kubelet's words: "failed liveness probe" / "failed startup probe" / "definition changed",
        // and ", will be restarted" only where the restart policy restarts it.
        const why = action.reason === 'SpecChanged' ? 'definition changed' : `failed ${action.reason === 'LivenessProbe' ? 'liveness' : 'startup'} probe`;
        const restarts = action.reason === 'SpecChanged' || action.pod.manifest.spec.restartPolicy !== 'Never';
        this.events.normal(action.pod, 'Killing', `Container ${action.containerName} ${why}${restarts ? ', will be restarted' : ''}`, action.containerName);
        return this.stopContainer(action.pod, action.containerName, action.containerId, action.graceSeconds);
      }
      case 'KillPod':
        return this.killPod(action);
      case 'RemoveContainer': {
        const removed = await this.runtime.inspectContainer(action.containerId);
        await this.runtime.removeContainer(action.containerId);
        await this.messages.removeContainer(removed, action.containerId);
        return;
      }
    }
  }

  /**
   * Stops one app container as the kubelet kills one: its preStop hook first, inside the
   * grace period, then SIGTERM and SIGKILL with what is left of the grace (at least 2 s).
   */
  async stopContainer(pod: PodRef | DesiredPod, containerName: string | undefined, id: string, graceSeconds: number): Promise<void> {
    const spec = 'manifest' in pod ? podContainers(pod.manifest.spec).find((c) => c.name === containerName) : undefined;
    const preStop = spec?.lifecycle?.preStop;
    let remaining = graceSeconds;
    if (spec && preStop) {
      const started = performance.now();
      const podIP = await this.podIP(pod.uid);
      const outcome = await this.handlers.run(preStop, { containerId: id, container: spec, ...(podIP ? { podIP } : {}) }, graceSeconds * 1000);
      if (!outcome.ok) this.events.warning(pod, 'FailedPreStopHook', `PreStopHook failed: ${outcome.message}`, spec.name);
      remaining = Math.max(MINIMUM_GRACE_SECONDS, graceSeconds - (performance.now() - started) / 1000);
    }
    await this.runtime.stopContainer(id, remaining);
  }

  /** The running sandbox's IP, for HTTP hooks. */
  private async podIP(uid: string): Promise<string | undefined> {
    return runningSandboxes(await this.runtime.listContainers({ [LABELS.podUid]: uid }))[0]?.ip;
  }

  /** Stops app containers within the grace (SIGTERM, then SIGKILL), then the sandbox; removes them when asked. */
  private async killPod(action: Extract<Action, { kind: 'KillPod' }>): Promise<void> {
    this.logger.log(`killing ${podRef(action.pod)} (${action.reason}, grace ${action.graceSeconds}s)`);
    if (action.reason === 'Deleted') this.events.normal(action.pod, 'Killing', 'Stopping pod');
    const hooks = 'manifest' in action.pod && podContainers(action.pod.manifest.spec).some((c) => c.lifecycle?.preStop);
    const stop = async (id: string, graceSeconds: number): Promise<void> => {
      // Only a pod with preStop hooks needs to know which container an id is.
      const name = hooks ? (await this.runtime.inspectContainer(id))?.labels[LABELS.containerName] : undefined;
      await this.stopContainer(action.pod, name, id, graceSeconds);
    };
    const deadline = performance.now() + action.graceSeconds * 1000;
    await Promise.all(action.containerIds.map((id) => stop(id, action.graceSeconds)));
    // Sidecars one by one once the containers they serve are down, in what is left of the grace (at least 2 s each).
    for (const id of action.sidecarIds ?? []) await stop(id, Math.max(MINIMUM_GRACE_SECONDS, Math.round((deadline - performance.now()) / 1000)));
    await Promise.all(action.sandboxIds.map((id) => this.runtime.stopContainer(id, action.graceSeconds)));
    if (action.remove) await this.removeAll(action.pod, [...action.containerIds, ...(action.sidecarIds ?? []), ...action.sandboxIds]);
  }

  /** Removes a pod's containers, as many as the engine lets go of; what it refuses is tried again by a later pass. */
  async removeAll(pod: PodRef, ids: string[]): Promise<void> {
    const results = await Promise.allSettled(ids.map((id) => this.runtime.removeContainer(id)));
    for (const r of results) if (r.status === 'rejected') this.logger.warn(`${podRef(pod)}: ${(r.reason as Error).message}`);
    // In-memory volumes are unmounted first: removing a directory with a mount on it would fail.
    await this.volumes.tearDown(pod.uid).catch((error: unknown) => this.logger.warn(`${podRef(pod)}: volumes not unmounted: ${(error as Error).message}`));
    await this.messages.removePod(pod.uid, ids);
    this.forget(pod.uid);
  }

  /** Drops what is kept for pod `uid`: also for a pod removed that never had a container to remove. */
  forget(uid: string): void {
    this.waiting.delete(uid);
    this.pullBackoff.forget(`${uid}/`);
    this.startBackoff.forget(`${uid}/`);
    this.starts.forget(uid);
  }

  private podLabels(pod: DesiredPod): Record<string, string> {
    return {
      [LABELS.managed]: 'true',
      [LABELS.node]: this.config.NODE_NAME,
      [LABELS.podNamespace]: pod.namespace,
      [LABELS.podName]: pod.name,
      [LABELS.podUid]: pod.uid,
      [LABELS.grace]: String(pod.manifest.spec.terminationGracePeriodSeconds ?? 30),
    };
  }

  /**
   * Runs the pod's sandbox, and with it `containers` (a new pod's first ones): each is made
   * ready and created while the sandbox starts (the engine lets a container join the network
   * of one that is created but not yet running), and started once the sandbox runs.
   */
  private async runSandbox(pod: DesiredPod, attempt: number, containers: Container[]): Promise<void> {
    // The plan may come from a list taken before another sandbox of the pod started: look
    // again, so a pod never gets a second one (the same name is adopted, not duplicated).
    const name = sandboxName(pod, attempt);
    const image = this.config.POD_INFRA_IMAGE;
    const [sandboxes, present] = await Promise.all([
      this.runtime.listContainers({ [LABELS.node]: this.config.NODE_NAME, [LABELS.podUid]: pod.uid, [LABELS.kind]: 'sandbox' }),
      this.runtime.imagePresent(image),
    ]);
    const live = sandboxes.find((s) => isLiveSandbox(s) && s.name !== name);
    if (live) {
      this.logger.log(`sandbox of ${podRef(pod)} not run: ${live.name} is ${live.state} already`);
      return;
    }
    if (!present) await this.pull(image);
    let created: (id: string) => void = () => undefined;
    const sandboxId = new Promise<string>((resolve) => (created = resolve));
    let started: () => void = () => undefined;
    const startedSignal = new Promise<void>((resolve) => (started = resolve));
    const sandbox: SandboxConfig = {
      name,
      image,
      hostname: pod.name.slice(0, 63),
      labels: { ...this.podLabels(pod), [LABELS.kind]: 'sandbox', [LABELS.restartCount]: String(attempt) },
      sysctls: podSysctls(pod.manifest).sandbox,
      portMappings: podContainers(pod.manifest.spec).flatMap((c) =>
        (c.ports ?? [])
          .filter((p) => p.hostPort !== undefined)
          .map((p) => ({
            containerPort: p.containerPort,
            hostPort: p.hostPort ?? p.containerPort,
            protocol: (p.protocol ?? 'TCP').toLowerCase() as 'tcp' | 'udp' | 'sctp',
          })),
      ),
    };
    const running = this.starts.run(pod.uid, () =>
      this.runtime.runPodSandbox(
        sandbox,
        (id) => created(id),
        () => started(),
      ),
    );
    // Either the id as soon as the sandbox is created, or its failure (told below, so not here too).
    const id = Promise.race([sandboxId, running.then((sandbox) => sandbox.id)]);
    void id.catch(() => undefined);
    // The containers start once the engine has started the sandbox, not after it is inspected for its IP.
    const start = Promise.race([startedSignal, running.then(() => undefined)]);
    void start.catch(() => undefined);
    const steps = containers.map((container) => this.startContainer(pod, container, 0, { id, started: start, running }));
    const [outcome, ...results] = await Promise.allSettled([running, ...steps]);
    results.forEach((result, i) => {
      if (result.status === 'rejected')
        this.logger.error(`StartContainer ${containers[i]?.name} for ${podRef(pod)} failed: ${(result.reason as Error).message}`);
    });
    if (outcome.status === 'rejected') throw outcome.reason;
    this.logger.log(`sandbox of ${podRef(pod)} running with IP ${outcome.value.ip ?? '(none)'}`);
  }

  /** Records why a container waits; true when that is news (so events and logs are not repeated every pass). */
  private setWaiting(pod: PodRef, container: string, reason: string, message: string): boolean {
    const reasons: WaitingReasons = this.waiting.get(pod.uid) ?? new Map<string, { reason: string; message: string }>();
    const previous = reasons.get(container);
    reasons.set(container, { reason, message });
    this.waiting.set(pod.uid, reasons);
    const changed = previous?.reason !== reason || previous.message !== message;
    if (changed) this.logger.warn(`${podRef(pod)} container ${container}: ${reason}: ${message}`);
    return changed;
  }

  private pull(image: string, onProgress?: (progress: PullProgressSnapshot) => void, auth?: RegistryCredentials): Promise<void> {
    // Pods pulling the same image with other credentials must not share a pull (nor its
    // failure); the key holds a digest of the credentials, never the credentials.
    const key = auth ? `${image}\0${createHash('sha256').update(JSON.stringify(auth)).digest('hex')}` : image;
    let pull = this.pulls.get(key);
    if (!pull) {
      const listeners = new Set<(progress: PullProgressSnapshot) => void>();
      const done = this.runtime
        .pullImage(
          image,
          (progress) => {
            for (const listener of listeners) listener(progress);
          },
          auth,
        )
        .finally(() => this.pulls.delete(key));
      pull = { done, listeners };
      this.pulls.set(key, pull);
    }
    if (onProgress) {
      const { listeners } = pull;
      listeners.add(onProgress);
      void pull.done.catch(() => undefined).finally(() => listeners.delete(onProgress));
    }
    return pull.done;
  }

  /**
   * The credentials of the pod's `imagePullSecrets` that match `image`'s registry (the
   * kubelet's getPullSecretsForPod + keyring lookup). A secret that cannot be read is left
   * out with a FailedToRetrieveImagePullSecret warning, and the pull is tried all the same.
   */
  private async pullCredentials(pod: DesiredPod, image: string): Promise<RegistryCredentials[]> {
    const names = [...new Set((pod.manifest.spec.imagePullSecrets ?? []).map((ref) => ref.name).filter((name) => name !== ''))];
    if (names.length === 0) return [];
    const records = await Promise.all(
      names.map(async (name) => {
        try {
          const record = await this.configSource.read('Secret', pod.namespace, name);
          return record && record.unreadable === undefined ? record : undefined;
        } catch (error) {
          this.logger.warn(`${podRef(pod)}: reading pull secret ${name} failed: ${(error as Error).message}`);
          return undefined;
        }
      }),
    );
    const failed = names.filter((_, i) => records[i] === undefined);
    if (failed.length > 0)
      this.events.warning(
        pod,
        'FailedToRetrieveImagePullSecret',
        `Unable to retrieve some image pull secrets (${failed.join(', ')}); attempting to pull the image may not succeed.`,
      );
    const secrets = records
      .filter((r) => r !== undefined)
      .map((r) => ({ name: r.name, ...(r.type ? { type: r.type } : {}), ...(r.data ? { data: r.data } : {}) }));
    return CredentialKeyring.fromSecrets(secrets).lookup(image);
  }

  /**
   * Pulls without credentials when none match, else with each matching set in turn until
   * one succeeds, as the kubelet's puller does; fails with every attempt's error.
   */
  private async pullWithCredentials(image: string, credentials: RegistryCredentials[], onProgress: (progress: PullProgressSnapshot) => void): Promise<void> {
    if (credentials.length === 0) return this.pull(image, onProgress);
    const errors: string[] = [];
    for (const auth of credentials) {
      try {
        await this.pull(image, onProgress, auth);
        return;
      } catch (error) {
        errors.push((error as Error).message);
      }
    }
    throw new Error(errors.length === 1 ? errors[0] : `[${errors.join(', ')}]`);
  }

  /**
   * Publishes a container's pull progress: the first figure that has a size, the last one, and
   * between them at most one per PULL_PROGRESS_INTERVAL_MS, so a long pull costs a message a
   * second, not one per chunk the engine reports.
   */
  private pullProgressReporter(pod: DesiredPod, container: Container): (progress: PullProgressSnapshot) => void {
    let lastMs: number | undefined;
    return (progress) => {
      const nowMs = Date.now();
      const complete = progress.layers > 0 && progress.layersDone === progress.layers;
      if (progress.totalBytes === 0 || (!complete && lastMs !== undefined && nowMs - lastMs < PULL_PROGRESS_INTERVAL_MS)) return;
      lastMs = nowMs;
      this.events.pullProgress(pod, { containerName: container.name, image: container.image, ...progress, observedAt: new Date(nowMs).toISOString() });
    };
  }

  /**
   * The kubelet's image step: policy, reference check, pull with back-off. False when the
   * container cannot be created yet; its waiting reason says why.
   */
  private async ensureImage(pod: DesiredPod, container: Container): Promise<boolean> {
    const image = container.image;
    if (!isValidImageReference(image)) {
      if (
        this.setWaiting(
          pod,
          container.name,
          'InvalidImageName',
          `Failed to apply default image tag "${image}": couldn't parse image name "${image}": invalid reference format`,
        )
      )
        this.events.warning(pod, 'InspectFailed', `Failed to apply default image tag "${image}": invalid reference format`, container.name);
      return false;
    }
    const policy = container.imagePullPolicy ?? 'IfNotPresent';
    if (policy !== 'Always' && (await this.runtime.imagePresent(image))) {
      if (!this.waiting.get(pod.uid)?.has(container.name))
        this.events.normal(pod, 'Pulled', `Container image "${image}" already present on machine`, container.name);
      return true;
    }
    if (policy === 'Never') {
      if (this.setWaiting(pod, container.name, 'ErrImageNeverPull', `Container image "${image}" is not present with pull policy of Never`))
        this.events.warning(pod, 'ErrImageNeverPull', `Container image "${image}" is not present with pull policy of Never`, container.name);
      return false;
    }
    const key = pullKey(pod.uid, image);
    const nowMs = Date.now();
    if (this.pullBackoff.inBackoffSinceUpdate(key, nowMs)) {
      if (this.setWaiting(pod, container.name, 'ImagePullBackOff', `Back-off pulling image "${image}"`))
        this.events.normal(pod, 'BackOff', `Back-off pulling image "${image}"`, container.name);
      return false;
    }
    const credentials = await this.pullCredentials(pod, image);
    this.events.normal(pod, 'Pulling', `Pulling image "${image}"`, container.name);
    const started = performance.now();
    try {
      await this.pullWithCredentials(image, credentials, this.pullProgressReporter(pod, container));
    } catch (error) {
      const failedMs = Date.now();
      const delay = this.pullBackoff.next(key, failedMs, failedMs);
      const message = (error as Error).message;
      this.setWaiting(pod, container.name, 'ErrImagePull', message);
      this.events.warning(pod, 'Failed', `Failed to pull image "${image}": ${message}`, container.name);
      const failedAt = new Date(failedMs).toISOString();
      this.events.backoff(pod, {
        containerName: container.name,
        kind: 'ImagePull',
        image,
        failedAt,
        recordedAt: failedAt,
        delayMs: delay,
        ...this.pullBackoff.policy,
      });
      this.wake(Date.now() + delay);
      return false;
    }
    this.pullBackoff.reset(key);
    const seconds = ((performance.now() - started) / 1000).toFixed(3);
    this.events.normal(pod, 'Pulled', `Successfully pulled image "${image}" in ${seconds}s`, container.name);
    return true;
  }

  /**
   * The kubelet's container step: image, volumes, configuration, create, start, postStart.
   * With a sandbox still being run, everything up to the create overlaps its start, and the
   * start waits for it to run; should it fail, the container created for it is removed.
   */
  private async startContainer(pod: DesiredPod, container: Container, attempt: number, sandbox: string | PendingSandbox, pidOf?: string): Promise<void> {
    // A plan made before the last failure was recorded: the back-off holds, no engine call.
    const backoffKey = startKey(pod.uid, container);
    if (this.startBackoff.inBackoffSinceUpdate(backoffKey, Date.now())) return;
    // A plan made from a list taken just before an earlier worker finished can ask again for
    // an attempt that already ran: starting it again would run a finished container twice.
    const existing = await this.runtime.inspectContainer(containerName(pod, container.name, attempt));
    if (existing && existing.state !== 'created') return;
    if (!(await this.ensureImage(pod, container))) return;
    const volumeMounts = await this.volumeMounts(pod, container);
    if (!volumeMounts) {
      this.backOffStart(backoffKey);
      return;
    }
    const podIP = async (): Promise<string | undefined> =>
      typeof sandbox === 'string' ? (await this.runtime.inspectContainer(sandbox))?.ip : (await sandbox.running.catch(() => undefined))?.ip;
    const config = await this.containerConfig(pod, container, podIP);
    if (!config) {
      this.backOffStart(backoffKey);
      return;
    }
    const limits = container.resources?.limits ?? {};
    const requests = container.resources?.requests ?? {};
    let id: string;
    let sandboxId: string;
    try {
      sandboxId = typeof sandbox === 'string' ? sandbox : await sandbox.id;
    } catch {
      // The sandbox did not run: its worker reports that, and a later pass starts the pod again.
      return;
    }
    try {
      const terminationMessage = await this.messages.prepare(pod, container, attempt);
      const create: ContainerConfig = {
        mounts: [terminationMessage, ...volumeMounts],
        name: containerName(pod, container.name, attempt),
        image: container.image,
        ...(config.command ? { entrypoint: config.command } : {}),
        ...(config.args ? { cmd: config.args } : {}),
        env: config.env,
        ...config.security,
        ...(container.workingDir ? { workingDir: container.workingDir } : {}),
        ...(container.stdin ? { openStdin: true, stdinOnce: container.stdinOnce === true } : {}),
        ...(container.tty ? { tty: true } : {}),
        ...(pidOf !== undefined ? { pidOf } : {}),
        labels: {
          ...this.podLabels(pod),
          [LABELS.kind]: 'container',
          [LABELS.containerName]: container.name,
          [LABELS.restartCount]: String(attempt),
          [LABELS.specHash]: containerSpecHash(container),
        },
        ...(limits.memory !== undefined ? { memoryLimitBytes: memoryBytes(limits.memory) } : {}),
        ...(limits.cpu !== undefined ? { nanoCpus: cpuMillis(limits.cpu) * 1e6 } : {}),
        ...(requests.cpu !== undefined ? { cpuShares: Math.max(2, Math.floor((cpuMillis(requests.cpu) * 1024) / 1000)) } : {}),
      };
      id = await this.starts.run(pod.uid, () => this.runtime.createContainer(sandboxId, create));
    } catch (error) {
      this.setWaiting(pod, container.name, 'CreateContainerError', (error as Error).message);
      this.events.warning(pod, 'Failed', `Error: ${(error as Error).message}`, container.name);
      this.backOffStart(backoffKey);
      return;
    }
    this.events.normal(pod, 'Created', `Created container ${container.name}`, container.name);
    if (typeof sandbox !== 'string') {
      try {
        await sandbox.started;
      } catch {
        // Joined to a sandbox that never ran, it could never start: it goes, and the pod starts again from a later pass.
        await this.runtime.removeContainer(id).catch((error: unknown) => this.logger.warn(`${podRef(pod)}: ${(error as Error).message}`));
        return;
      }
    }
    try {
      await this.starts.run(pod.uid, () => this.runtime.startContainer(id));
      this.startBackoff.reset(backoffKey);
      this.waiting.get(pod.uid)?.delete(container.name);
      this.events.normal(pod, 'Started', `Started container ${container.name}`, container.name);
      this.logger.log(`started ${podRef(pod)} container ${container.name} (attempt ${attempt})`);
    } catch (error) {
      this.setWaiting(pod, container.name, 'RunContainerError', (error as Error).message);
      this.events.warning(pod, 'Failed', `Error: ${(error as Error).message}`, container.name);
      this.backOffStart(backoffKey);
      return;
    }
    await this.postStart(pod, container, id, sandboxId);
  }

  /**
   * The kubelet's `generateContainerConfig`: the environment from env and envFrom (ConfigMaps,
   * Secrets, the downward API), the expanded command and the security settings (runAsNonRoot
   * checked against the image's user). Undefined when it cannot be made:
   * the container waits with CreateContainerConfigError and Kubernetes' message.
   */
  private async containerConfig(
    pod: DesiredPod,
    container: Container,
    podIPOf: () => Promise<string | undefined>,
  ): Promise<{ env: Array<{ name: string; value: string }>; command?: string[]; args?: string[]; security: ContainerSecurity } | undefined> {
    try {
      const user = await this.runtime.imageUser(container.image);
      verifyRunAsNonRoot(pod.manifest, pod.uid, container, user);
      const security = containerSecurity(pod.manifest, container, user);
      const refs = envConfigRefs([container]);
      const objects = await this.configSource.readAll(pod.namespace, refs);
      // Only an environment that holds the pod's IP waits for it (or costs an inspect).
      const podIP = needsPodIP(container) ? await podIPOf() : undefined;
      const env = containerEnv(container, {
        manifest: pod.manifest,
        uid: pod.uid,
        nodeName: this.config.NODE_NAME,
        hostIP: this.node.nodeIP,
        ...(podIP ? { podIP } : {}),
        allocatable: this.node.allocatable(),
        ...objects,
      });
      return { env, ...expandCommand(container, env), security };
    } catch (error) {
      const message = error instanceof ContainerConfigError ? error.message : `failed to read the pod's configuration: ${(error as Error).message}`;
      if (this.setWaiting(pod, container.name, 'CreateContainerConfigError', message)) this.events.warning(pod, 'Failed', `Error: ${message}`, container.name);
      return undefined;
    }
  }

  /**
   * The pod's volumes, set up on the node (idempotent), and this container's mounts of them.
   * Undefined when a volume cannot be made: the container waits in ContainerCreating with a
   * FailedMount event, as in Kubernetes, and is tried again after a back-off.
   */
  private async volumeMounts(pod: DesiredPod, container: Container): Promise<HostMount[] | undefined> {
    try {
      await this.volumes.setUp(pod);
      return await this.volumes.containerMounts(pod, container);
    } catch (error) {
      const message = (error as Error).message;
      if (this.setWaiting(pod, container.name, 'ContainerCreating', message)) this.events.warning(pod, 'FailedMount', message);
      return undefined;
    }
  }

  /** Records a failed create or start as a crash is recorded, and asks for a pass when its back-off ends. */
  private backOffStart(key: string): void {
    const nowMs = Date.now();
    this.wake(nowMs + this.startBackoff.next(key, nowMs));
  }

  /** The postStart hook; when it fails the container is killed, as the kubelet does, and restarts per policy. */
  private async postStart(pod: DesiredPod, container: Container, id: string, sandboxId: string): Promise<void> {
    const hook = container.lifecycle?.postStart;
    if (!hook) return;
    const podIP = (await this.runtime.inspectContainer(sandboxId))?.ip;
    const grace = pod.manifest.spec.terminationGracePeriodSeconds ?? 30;
    const outcome = await this.handlers.run(hook, { containerId: id, container, ...(podIP ? { podIP } : {}) }, grace * 1000);
    if (outcome.ok) return;
    this.events.warning(pod, 'FailedPostStartHook', `PostStartHook failed: ${outcome.message}`, container.name);
    this.logger.warn(`${podRef(pod)} container ${container.name}: postStart hook failed: ${outcome.message}`);
    await this.stopContainer(pod, container.name, id, grace);
  }
}
