import type { Container, ContainerState, ContainerStatus, PodCondition, PodManifest, PodPhase, PodStatus, RestartPolicy } from '#contracts';
import { LABELS, type RuntimeContainer } from '#runtime/port';
import { crashKey, goDuration, type BackoffBook } from './backoff.js';
import { containerRestartPolicy, isSidecar } from './init-containers.js';
import { qosClass } from './qos.js';
import { shouldRestart } from './restart-policy.js';
import { compareText } from './compare-text.js';

export { shouldRestart };

/** A waiting reason the executor hit (ErrImagePull, CreateContainerError...), keyed by container name. */
export type WaitingReasons = Map<string, { reason: string; message: string }>;

export function attemptOf(c: RuntimeContainer): number {
  return Number(c.labels[LABELS.restartCount] ?? 0);
}

/** The pod's app containers of one spec name, newest attempt first. */
export function attemptsOf(observed: RuntimeContainer[], name: string): RuntimeContainer[] {
  return observed
    .filter((c) => c.labels[LABELS.kind] === 'container' && c.labels[LABELS.containerName] === name)
    .sort((a, b) => attemptOf(b) - attemptOf(a) || compareText(b.createdAt, a.createdAt));
}

/**
 * A container that ran and ended, or that the engine could not start at all (Docker
 * leaves those "created" with exit code 127 or 126 and an error).
 */
export function isDead(c: RuntimeContainer): boolean {
  return c.state === 'exited' || (c.state === 'created' && (c.exitCode !== undefined || c.error !== undefined));
}

/** A sandbox that exists and is not dead: running, or created and about to start. At most one per pod. */
export function isLiveSandbox(c: RuntimeContainer): boolean {
  return c.labels[LABELS.kind] === 'sandbox' && (c.state === 'running' || (c.state === 'created' && !isDead(c)));
}

/**
 * The pod's running sandboxes, the one the pod lives in first: the one most running app
 * containers joined, then most app containers of any state, then the oldest attempt. Any
 * other running sandbox is extra and goes.
 */
export function runningSandboxes(observed: RuntimeContainer[]): RuntimeContainer[] {
  const joined = (s: RuntimeContainer, running: boolean): number =>
    observed.filter((c) => c.labels[LABELS.kind] === 'container' && c.networkOf === s.id && (!running || c.state === 'running')).length;
  return observed
    .filter((c) => c.labels[LABELS.kind] === 'sandbox' && c.state === 'running')
    .sort(
      (a, b) =>
        joined(b, true) - joined(a, true) ||
        joined(b, false) - joined(a, false) ||
        attemptOf(a) - attemptOf(b) ||
        compareText(a.createdAt, b.createdAt) ||
        compareText(a.id, b.id),
    );
}

/** When a dead container ended, for back-off: its finish time, else (never started) its creation. */
export function deathTimeMs(c: RuntimeContainer): number {
  return Date.parse(c.finishedAt ?? c.createdAt);
}

export function terminatedState(c: RuntimeContainer, message?: string): ContainerState {
  const cannotRun = c.state === 'created';
  const exitCode = c.exitCode ?? (cannotRun ? 128 : 0);
  const reason = c.oomKilled ? 'OOMKilled' : cannotRun ? 'ContainerCannotRun' : exitCode === 0 ? 'Completed' : 'Error';
  return {
    terminated: {
      exitCode,
      reason,
      ...(message ? { message } : c.error ? { message: c.error } : {}),
      ...(c.startedAt ? { startedAt: c.startedAt } : {}),
      ...(c.finishedAt ? { finishedAt: c.finishedAt } : {}),
      containerID: `docker://${c.id}`,
    },
  };
}

export interface StatusInput {
  pod: { namespace: string; name: string; uid: string };
  manifest: PodManifest;
  /** Every container the runtime has for this pod, sandbox included. */
  observed: RuntimeContainer[];
  hostIP: string;
  nowMs: number;
  backoff: BackoffBook;
  waiting?: WaitingReasons;
  /** The pod is being deleted and its containers were stopped for good. */
  terminal?: boolean;
  /** Probe results by container id: startup passed, readiness passed. */
  probes?: Map<string, { started?: boolean; ready?: boolean }>;
  /** Termination messages of dead containers, by container id. */
  messages?: Map<string, string>;
}

/** How one container's status is computed: the restart policy it lives by, and what it waits for before it is created. */
interface ContainerRole {
  policy: RestartPolicy;
  /** ContainerCreating, or PodInitializing in a pod with init containers (the kubelet's default waiting state). */
  waitingReason: string;
  /** An ordinary init container: ready once it has completed. */
  runToCompletion?: boolean;
  /** The pod's containers have finished for good: nothing restarts, so nothing backs off. */
  final?: boolean;
}

function containerStatus(input: StatusInput, spec: Container, role: ContainerRole): ContainerStatus {
  const [latest, previous] = attemptsOf(input.observed, spec.name);
  const base = { name: spec.name, image: spec.image, imageID: latest?.imageId ?? '', ready: false, restartCount: latest ? attemptOf(latest) : 0 };
  const lastState: ContainerState = previous && isDead(previous) ? terminatedState(previous, input.messages?.get(previous.id)) : {};
  const pending = input.waiting?.get(spec.name);
  if (!latest || (latest.state !== 'running' && !isDead(latest))) {
    return { ...base, state: { waiting: pending ?? { reason: role.waitingReason } }, lastState, started: false };
  }
  const containerID = `docker://${latest.id}`;
  if (latest.state === 'running') {
    // A probe not yet run counts as its initial result: not started, not ready.
    const probed = input.probes?.get(latest.id);
    const started = spec.startupProbe ? (probed?.started ?? false) : true;
    const ready = !role.runToCompletion && started && (spec.readinessProbe ? (probed?.ready ?? false) : true);
    return {
      ...base,
      containerID,
      ready,
      started,
      state: { running: { ...(latest.startedAt ? { startedAt: latest.startedAt } : {}) } },
      lastState,
    };
  }
  const terminated = terminatedState(latest, input.messages?.get(latest.id));
  const exitCode = terminated.terminated?.exitCode ?? 0;
  if (!input.terminal && !role.final && shouldRestart(role.policy, exitCode)) {
    if (pending) return { ...base, containerID, state: { waiting: pending }, lastState: terminated, started: false };
    const key = crashKey(input.pod.uid, spec.name);
    if (input.backoff.inBackoffSince(key, deathTimeMs(latest), input.nowMs)) {
      const podRef = `${input.pod.name}_${input.pod.namespace}(${input.pod.uid})`;
      const message = `back-off ${goDuration(input.backoff.delay(key))} restarting failed container=${spec.name} pod=${podRef}`;
      return { ...base, containerID, started: false, state: { waiting: { reason: 'CrashLoopBackOff', message } }, lastState: terminated };
    }
  }
  return { ...base, containerID, ready: role.runToCompletion === true && exitCode === 0, started: false, state: terminated, lastState };
}

/** Whether a container has run (running, ended, or waiting to run again): the kubelet's HasAnyRegularContainerStarted, per status. */
function hasRun(s: ContainerStatus): boolean {
  return s.state.running !== undefined || s.state.terminated !== undefined || (s.state.waiting !== undefined && s.lastState.terminated !== undefined);
}

/**
 * The kubelet's phase rules (`getPhase`) over container states. Ordinary init containers
 * still running or not yet run keep the pod Pending, and with policy Never a failed one
 * fails it; sidecars count as running containers once initialisation is over. A terminal
 * pod (deleted, containers stopped) ends Succeeded when every container exited 0 and
 * Failed otherwise, whatever its restart policy.
 */
export function podPhase(
  statuses: ContainerStatus[],
  policy: RestartPolicy,
  terminal = false,
  init: { statuses: ContainerStatus[]; sidecars: ReadonlySet<string> } = { statuses: [], sidecars: new Set() },
): PodPhase {
  let pendingInitialization = 0;
  let failedInitialization = 0;
  let waiting = 0;
  let running = 0;
  let stopped = 0;
  let succeeded = 0;
  for (const s of init.statuses) {
    if (init.sidecars.has(s.name)) {
      if (s.state.running) {
        if (!s.started) pendingInitialization++;
        running++;
      } else if (s.state.waiting && !s.lastState.terminated) pendingInitialization++;
      continue;
    }
    if (s.state.running) pendingInitialization++;
    else if (s.state.terminated) {
      if (s.state.terminated.exitCode !== 0) failedInitialization++;
    } else if (s.lastState.terminated) {
      if (s.lastState.terminated.exitCode !== 0) failedInitialization++;
    } else pendingInitialization++;
  }
  for (const s of statuses) {
    if (s.state.running) running++;
    else if (s.state.terminated) {
      stopped++;
      if (s.state.terminated.exitCode === 0) succeeded++;
    } else if (s.state.waiting && s.lastState.terminated) stopped++;
    else waiting++;
  }
  if (failedInitialization > 0 && policy === 'Never') return 'Failed';
  if (terminal && running === 0) return stopped > 0 && stopped === succeeded && waiting === 0 ? 'Succeeded' : 'Failed';
  if ((pendingInitialization > 0 && !statuses.some(hasRun)) || waiting > 0) return 'Pending';
  if (running > 0) return 'Running';
  if (stopped > 0) {
    if (policy === 'Always') return 'Running';
    if (stopped === succeeded) return 'Succeeded';
    if (policy === 'OnFailure') return 'Running';
    return 'Failed';
  }
  return 'Pending';
}

/**
 * The kubelet's Initialized condition: True once a container has run, or every ordinary init
 * container completed and every sidecar started; else False, naming the incomplete ones.
 */
function initializedCondition(phase: PodPhase, inits: ContainerStatus[], statuses: ContainerStatus[], sidecars: ReadonlySet<string>): PodCondition {
  if (phase === 'Succeeded') return { type: 'Initialized', status: 'True', reason: 'PodCompleted' };
  if (statuses.some(hasRun)) return { type: 'Initialized', status: 'True' };
  const incomplete = inits.filter((s) => (sidecars.has(s.name) ? !s.started : s.state.terminated?.exitCode !== 0)).map((s) => s.name);
  return incomplete.length === 0
    ? { type: 'Initialized', status: 'True' }
    : { type: 'Initialized', status: 'False', reason: 'ContainersNotInitialized', message: `containers with incomplete status: [${incomplete.join(' ')}]` };
}

/**
 * Whether a pod's containers are all done for good: each one's newest run ended and its
 * policy starts none again. Its sidecars are then stopped, as the kubelet ends such a pod.
 */
export function containersFinished(spec: PodManifest['spec'], observed: RuntimeContainer[]): boolean {
  const policy = spec.restartPolicy ?? 'Always';
  return spec.containers.every((c) => {
    const latest = attemptsOf(observed, c.name)[0];
    return latest !== undefined && isDead(latest) && !shouldRestart(policy, latest.exitCode ?? (latest.state === 'created' ? 128 : 0));
  });
}

/** QoS classes by pod spec: a spec's resources never change in place, and every pass asks again for each pod. */
const qosBySpec = new WeakMap<PodManifest['spec'], PodStatus['qosClass']>();

function qosOf(spec: PodManifest['spec']): PodStatus['qosClass'] {
  let qos = qosBySpec.get(spec);
  if (qos === undefined) qosBySpec.set(spec, (qos = qosClass(spec)));
  return qos;
}

/**
 * Whether the pod is past Running for good (Succeeded or Failed), as `computePodStatus`'s
 * phase says, without computing the rest of its status when the answer is plain: a pod
 * without init containers whose every container's newest run is running is Running.
 */
export function podFinished(input: Omit<StatusInput, 'hostIP'>): boolean {
  const spec = input.manifest.spec;
  if (!spec.initContainers?.length && spec.containers.every((c) => attemptsOf(input.observed, c.name)[0]?.state === 'running')) return false;
  const phase = computePodStatus({ ...input, hostIP: '' }).phase;
  return phase === 'Succeeded' || phase === 'Failed';
}

/** The pod status the agent reports, computed from what the runtime shows. */
export function computePodStatus(input: StatusInput): PodStatus {
  const sandbox = runningSandboxes(input.observed)[0];
  const anySandbox = sandbox ?? input.observed.find((c) => c.labels[LABELS.kind] === 'sandbox');
  const spec = input.manifest.spec;
  const policy = spec.restartPolicy ?? 'Always';
  const initSpecs = spec.initContainers ?? [];
  const waitingReason = initSpecs.length > 0 ? 'PodInitializing' : 'ContainerCreating';
  const final = initSpecs.some(isSidecar) && containersFinished(spec, input.observed);
  const sidecars = new Set(initSpecs.filter(isSidecar).map((c) => c.name));
  const initStatuses = initSpecs.map((c) =>
    containerStatus(input, c, { policy: containerRestartPolicy(policy, c, true), waitingReason, runToCompletion: !isSidecar(c), final }),
  );
  const statuses = spec.containers.map((c) => containerStatus(input, c, { policy, waitingReason }));
  // Ephemeral containers run once and never count towards the pod's phase or readiness.
  const ephemeralStatuses = (spec.ephemeralContainers ?? []).map((c) => ({
    ...containerStatus(input, c, { policy: 'Never', waitingReason: 'ContainerCreating' }),
    ready: false,
  }));
  const phase = podPhase(statuses, policy, input.terminal, { statuses: initStatuses, sidecars });
  // Sidecars count towards readiness, as in Kubernetes 1.29+.
  const readinessOf = [...initStatuses.filter((s) => sidecars.has(s.name)), ...statuses];
  const allReady = readinessOf.every((s) => s.ready);
  const notReady = readinessOf.filter((s) => !s.ready).map((s) => s.name);
  const terminalReason = phase === 'Succeeded' ? 'PodCompleted' : 'PodFailed';
  const readiness = allReady
    ? { status: 'True' as const }
    : phase === 'Succeeded' || phase === 'Failed'
      ? { status: 'False' as const, reason: terminalReason }
      : { status: 'False' as const, reason: 'ContainersNotReady', message: `containers with unready status: [${notReady.join(' ')}]` };
  const podIP = sandbox?.ip ?? (input.terminal ? anySandbox?.ip : undefined);
  return {
    phase,
    conditions: [
      initSpecs.length > 0 ? initializedCondition(phase, initStatuses, statuses, sidecars) : { type: 'Initialized', status: 'True' },
      { type: 'ContainersReady', ...readiness },
      { type: 'Ready', ...readiness },
    ],
    hostIP: input.hostIP,
    ...(podIP ? { podIP, podIPs: [{ ip: podIP }] } : {}),
    ...(anySandbox?.createdAt ? { startTime: anySandbox.createdAt } : {}),
    ...(initSpecs.length > 0 ? { initContainerStatuses: initStatuses } : {}),
    containerStatuses: statuses,
    ...(ephemeralStatuses.length > 0 ? { ephemeralContainerStatuses: ephemeralStatuses } : {}),
    qosClass: qosOf(spec),
  };
}

/**
 * A pod's last status while its node's container runtime is down: nothing about its
 * containers can be known, so it is no longer Ready (as the node lifecycle controller marks
 * the pods of a NotReady node); its phase and container states stay as last seen.
 */
export function runtimeDownStatus(status: PodStatus, why: string, nowIso: string): PodStatus {
  const notReady = (c: PodCondition): PodCondition =>
    c.type === 'Ready' || c.type === 'ContainersReady'
      ? {
          ...c,
          status: 'False',
          reason: 'ContainerRuntimeDown',
          message: `container runtime is down: ${why}`,
          lastTransitionTime: c.status === 'False' && c.lastTransitionTime ? c.lastTransitionTime : nowIso,
        }
      : c;
  return {
    ...status,
    ...(status.conditions ? { conditions: status.conditions.map(notReady) } : {}),
    ...(status.containerStatuses ? { containerStatuses: status.containerStatuses.map((s) => ({ ...s, ready: false })) } : {}),
  };
}

/**
 * The status of a pod the node evicted, as the kubelet's eviction manager sets it: Failed,
 * reason Evicted with its message, and DisruptionTarget=True (TerminationByKubelet).
 */
export function evictedStatus(status: PodStatus, message: string): PodStatus {
  const notReady = (c: PodCondition): PodCondition =>
    c.type === 'Ready' || c.type === 'ContainersReady'
      ? { type: c.type, status: 'False', reason: 'PodFailed', ...(c.lastTransitionTime ? { lastTransitionTime: c.lastTransitionTime } : {}) }
      : c;
  return {
    ...status,
    phase: 'Failed',
    reason: 'Evicted',
    message,
    conditions: [
      ...(status.conditions ?? []).filter((c) => c.type !== 'DisruptionTarget').map(notReady),
      { type: 'DisruptionTarget', status: 'True', reason: 'TerminationByKubelet', message },
    ],
  };
}
