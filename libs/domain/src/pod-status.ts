import type { Container, ContainerState, ContainerStatus, PodManifest, PodPhase, PodStatus, RestartPolicy } from '#contracts';
import { LABELS, type RuntimeContainer } from '#runtime';

/** Crash back-off settings (Kubernetes: 10 s doubling to 300 s). */
export interface BackoffPolicy {
  baseMs: number;
  capMs: number;
}

export const KUBERNETES_BACKOFF: BackoffPolicy = { baseMs: 10_000, capMs: 300_000 };

/** A waiting reason the executor hit (ErrImagePull, CreateContainerError...), keyed by container name. */
export type WaitingReasons = Map<string, { reason: string; message: string }>;

export function attemptOf(c: RuntimeContainer): number {
  return Number(c.labels[LABELS.restartCount] ?? 0);
}

/** The pod's app containers of one spec name, newest attempt first. */
export function attemptsOf(observed: RuntimeContainer[], name: string): RuntimeContainer[] {
  return observed
    .filter((c) => c.labels[LABELS.kind] === 'container' && c.labels[LABELS.containerName] === name)
    .sort((a, b) => attemptOf(b) - attemptOf(a) || b.createdAt.localeCompare(a.createdAt));
}

export function shouldRestart(policy: RestartPolicy, exitCode: number): boolean {
  switch (policy) {
    case 'Always':
      return true;
    case 'OnFailure':
      return exitCode !== 0;
    case 'Never':
      return false;
  }
}

/**
 * How long after its last exit a container may start again: the first restart is
 * immediate, then base doubling up to the cap, as the kubelet's back-off does.
 */
export function restartDelayMs(restartsSoFar: number, policy: BackoffPolicy): number {
  if (restartsSoFar === 0) return 0;
  return Math.min(policy.baseMs * 2 ** (restartsSoFar - 1), policy.capMs);
}

/** A duration as Go prints it, which is how the kubelet's messages show it: 10s, 1m20s, 5m0s. */
export function goDuration(ms: number): string {
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m${seconds % 60}s`;
  return `${Math.floor(minutes / 60)}h${minutes % 60}m${seconds % 60}s`;
}

function terminatedState(c: RuntimeContainer): ContainerState {
  const exitCode = c.exitCode ?? 0;
  const reason = c.oomKilled ? 'OOMKilled' : c.error ? 'ContainerCannotRun' : exitCode === 0 ? 'Completed' : 'Error';
  return {
    terminated: {
      exitCode,
      reason,
      ...(c.error ? { message: c.error } : {}),
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
  backoff: BackoffPolicy;
  waiting?: WaitingReasons;
}

function containerStatus(input: StatusInput, spec: Container): ContainerStatus {
  const [latest, previous] = attemptsOf(input.observed, spec.name);
  const base = { name: spec.name, image: spec.image, imageID: latest?.imageId ?? '', ready: false, restartCount: latest ? attemptOf(latest) : 0 };
  const lastState: ContainerState = previous && previous.state === 'exited' ? terminatedState(previous) : {};
  const pending = input.waiting?.get(spec.name);
  if (!latest || latest.state === 'created' || latest.state === 'unknown') {
    return { ...base, state: { waiting: pending ?? { reason: 'ContainerCreating' } }, lastState, started: false };
  }
  const containerID = `docker://${latest.id}`;
  if (latest.state === 'running') {
    return {
      ...base,
      containerID,
      ready: true,
      started: true,
      state: { running: { ...(latest.startedAt ? { startedAt: latest.startedAt } : {}) } },
      lastState,
    };
  }
  const terminated = terminatedState(latest);
  const policy = input.manifest.spec.restartPolicy ?? 'Always';
  if (shouldRestart(policy, latest.exitCode ?? 0)) {
    const delay = restartDelayMs(attemptOf(latest), input.backoff);
    const finished = latest.finishedAt ? Date.parse(latest.finishedAt) : input.nowMs;
    if (pending) return { ...base, containerID, state: { waiting: pending }, lastState: terminated, started: false };
    if (input.nowMs < finished + delay) {
      const podRef = `${input.pod.name}_${input.pod.namespace}(${input.pod.uid})`;
      return {
        ...base,
        containerID,
        started: false,
        state: { waiting: { reason: 'CrashLoopBackOff', message: `back-off ${goDuration(delay)} restarting failed container=${spec.name} pod=${podRef}` } },
        lastState: terminated,
      };
    }
  }
  return { ...base, containerID, started: false, state: terminated, lastState };
}

/** The kubelet's phase rules over container states. */
export function podPhase(statuses: ContainerStatus[], policy: RestartPolicy): PodPhase {
  let waiting = 0;
  let running = 0;
  let stopped = 0;
  let succeeded = 0;
  for (const s of statuses) {
    if (s.state.running) running++;
    else if (s.state.terminated) {
      stopped++;
      if (s.state.terminated.exitCode === 0) succeeded++;
    } else if (s.state.waiting && s.lastState.terminated) stopped++;
    else waiting++;
  }
  if (waiting > 0) return 'Pending';
  if (running > 0) return 'Running';
  if (stopped > 0) {
    if (policy === 'Always') return 'Running';
    if (stopped === succeeded) return 'Succeeded';
    if (policy === 'OnFailure') return 'Running';
    return 'Failed';
  }
  return 'Pending';
}

/** The pod status the agent reports, computed from what the runtime shows. */
export function computePodStatus(input: StatusInput): PodStatus {
  const sandbox = input.observed.find((c) => c.labels[LABELS.kind] === 'sandbox' && c.state === 'running');
  const statuses = input.manifest.spec.containers.map((c) => containerStatus(input, c));
  const phase = podPhase(statuses, input.manifest.spec.restartPolicy ?? 'Always');
  const allReady = statuses.every((s) => s.ready);
  const notReady = statuses.filter((s) => !s.ready).map((s) => s.name);
  const readiness = allReady
    ? { status: 'True' as const }
    : { status: 'False' as const, reason: 'ContainersNotReady', message: `containers with unready status: [${notReady.join(' ')}]` };
  return {
    phase,
    conditions: [
      { type: 'Initialized', status: 'True' },
      { type: 'ContainersReady', ...readiness },
      { type: 'Ready', ...readiness },
    ],
    hostIP: input.hostIP,
    ...(sandbox?.ip ? { podIP: sandbox.ip, podIPs: [{ ip: sandbox.ip }] } : {}),
    ...(sandbox?.createdAt ? { startTime: sandbox.createdAt } : {}),
    containerStatuses: statuses,
  };
}
