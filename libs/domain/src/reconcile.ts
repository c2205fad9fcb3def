import type { Container, PodManifest, RestartPolicy } from '#contracts';
import { LABELS, type RuntimeContainer } from '#runtime/port';
import { crashKey, type BackoffBook } from './backoff.js';
import { containerSpecHash } from './pod-naming.js';
import { containerRestartPolicy, isSidecar, sidecarsOf } from './init-containers.js';
import {
  attemptOf,
  attemptsOf,
  computePodStatus,
  containersFinished,
  deathTimeMs,
  isDead,
  isLiveSandbox,
  podFinished,
  runningSandboxes,
  shouldRestart,
  terminatedState,
} from './pod-status.js';

export interface PodRef {
  namespace: string;
  name: string;
  uid: string;
}

/** A pod this node must run, or (with `terminating`) must stop. */
export interface DesiredPod extends PodRef {
  manifest: PodManifest;
  /** Set once the pod is unassigned: stop it within this grace. */
  terminating?: { graceSeconds: number };
  /** Set once the node evicted it (node-pressure eviction): its containers stop within this grace and nothing starts again. */
  evicted?: { graceSeconds: number };
}

/** The kubelet never gives a container less than this to stop (minimumGracePeriodInSeconds). */
export const MINIMUM_GRACE_SECONDS = 2;

export type Action =
  /**
   * `attempt` numbers the pod's sandboxes: a dead one that cannot be removed never blocks a new
   * one. Planned only while the pod has no live sandbox, or to start the created one it has.
   */
  | {
      kind: 'RunSandbox';
      pod: DesiredPod;
      attempt: number;
      /**
       * Set for a new pod: the containers it starts first (its first init container, else its
       * containers), started in this sandbox as soon as it runs, as the kubelet's SyncPod runs
       * the sandbox and then the containers in one go, without waiting for another pass.
       */
      containers?: Container[];
    }
  /**
   * `restart` is set when this replaces a dead container: the crash back-off records it,
   * starting afresh (`fresh`) when the spec changed, as the kubelet keys back-off by spec hash.
   */
  | {
      kind: 'StartContainer';
      pod: DesiredPod;
      container: Container;
      attempt: number;
      sandboxId: string;
      restart?: { key: string; deathMs: number; fresh?: boolean };
      /** An ephemeral container's target, running: the new container joins its process namespace. */
      pidOf?: string;
    }
  /** Stops one running container, to start it again: its spec changed, or its liveness or startup probe failed. */
  | { kind: 'KillContainer'; pod: DesiredPod; containerId: string; containerName: string; graceSeconds: number; reason: 'SpecChanged' | ProbeKill }
  /**
   * Stops every container of the pod, app containers first, then the sidecars one by one in
   * `sidecarIds` order (reverse of the spec), the sandbox last; `remove` removes them too.
   */
  | {
      kind: 'KillPod';
      pod: PodRef | DesiredPod;
      containerIds: string[];
      sidecarIds?: string[];
      sandboxIds: string[];
      graceSeconds: number;
      reason: KillReason;
      remove: boolean;
    }
  /** The deleted pod's containers are all stopped: report its terminal status, then remove them. */
  | { kind: 'FinalizePod'; pod: DesiredPod; containerIds: string[] }
  | { kind: 'RemoveContainer'; pod: PodRef; containerId: string }
  | { kind: 'ReportRemoved'; pod: DesiredPod };

/**
 * Why a pod's containers are stopped: deleted, unknown here, its sandbox died, it finished,
 * (`ExtraSandbox`) a second running sandbox goes with the app containers that joined it, or
 * the node evicted it under resource pressure.
 */
export type KillReason = 'Deleted' | 'Orphaned' | 'SandboxChanged' | 'PodCompleted' | 'ExtraSandbox' | 'Evicted';

export interface PlanInput {
  desired: DesiredPod[];
  /** Every container the runtime has for this node. */
  observed: RuntimeContainer[];
  nowMs: number;
  /** Crash back-off, read only here; the caller records restarts it dispatches. */
  backoff: BackoffBook;
  /**
   * Back-off after a container could not be created or started, keyed by `startKey`; read
   * only here, the executor records the failures. No start is planned while it runs.
   */
  startBackoff?: BackoffBook;
  /** Grace for containers of pods this node does not know (or no longer knows). */
  orphanGraceSeconds: number;
  /**
   * Probe results by container id: a sidecar with a startup probe lets the next init container
   * start once it has passed; a container whose liveness or startup probe failed past its
   * threshold (`unhealthy`) is killed by its pod's worker, and its restart policy does the rest.
   */
  probes?: ReadonlyMap<string, ProbeResults>;
}

export interface Plan {
  actions: Action[];
  /** Earliest time something waits for (a back-off expiring), ms since the epoch. */
  wakeAtMs?: number;
}

/**
 * The key of the back-off after a container could not be created or started
 * (CreateContainerError, RunContainerError). By spec hash, as the kubelet keys back-off: a
 * changed spec is tried at once.
 */
export const startKey = (uid: string, container: Container): string => `${uid}/start:${container.name}:${containerSpecHash(container)}`;

/** Why a probe has a running container killed. */
export type ProbeKill = 'LivenessProbe' | 'StartupProbe';

/** What the probes say of one container: startup passed, readiness passed, or killed for a failed probe. */
export interface ProbeResults {
  started?: boolean;
  ready?: boolean;
  unhealthy?: ProbeKill;
}

const grace = (seconds: number): number => Math.max(MINIMUM_GRACE_SECONDS, seconds);

function killAll(pod: PodRef | DesiredPod, containers: RuntimeContainer[], graceSeconds: number, reason: KillReason, remove: boolean): Action {
  // Sidecars stop after the containers they serve, the last started first (Kubernetes 1.29+).
  const sidecars = 'manifest' in pod ? sidecarsOf(pod.manifest.spec).map((c) => c.name) : [];
  const sidecarRank = (c: RuntimeContainer): number => sidecars.indexOf(c.labels[LABELS.containerName] ?? '');
  const apps = containers.filter((c) => c.labels[LABELS.kind] !== 'sandbox');
  const sidecarIds = apps
    .filter((c) => sidecarRank(c) >= 0)
    .sort((a, b) => sidecarRank(b) - sidecarRank(a))
    .map((c) => c.id);
  return {
    kind: 'KillPod',
    pod,
    containerIds: apps.filter((c) => sidecarRank(c) < 0).map((c) => c.id),
    ...(sidecarIds.length > 0 ? { sidecarIds } : {}),
    sandboxIds: containers.filter((c) => c.labels[LABELS.kind] === 'sandbox').map((c) => c.id),
    graceSeconds: grace(graceSeconds),
    reason,
    remove,
  };
}

function nextSandboxAttempt(observed: RuntimeContainer[]): number {
  const attempts = observed.filter((c) => c.labels[LABELS.kind] === 'sandbox').map(attemptOf);
  return attempts.length === 0 ? 0 : Math.max(...attempts) + 1;
}

function refFromLabels(c: RuntimeContainer): PodRef {
  return { namespace: c.labels[LABELS.podNamespace] ?? '', name: c.labels[LABELS.podName] ?? '', uid: c.labels[LABELS.podUid] ?? '' };
}

/**
 * The reconcile decision, pure: desired pods and observed containers in, the actions
 * that move the node one step closer out. Applying the actions and planning again
 * converges; planning twice without applying yields the same actions.
 */
export function planReconcile(input: PlanInput): Plan {
  const actions: Action[] = [];
  let wakeAtMs: number | undefined;
  const wake = (at: number): void => {
    wakeAtMs = wakeAtMs === undefined ? at : Math.min(wakeAtMs, at);
  };

  const byUid = new Map<string, RuntimeContainer[]>();
  for (const c of input.observed) {
    const uid = c.labels[LABELS.podUid];
    if (!uid) continue;
    const pods = byUid.get(uid);
    if (pods) pods.push(c);
    else byUid.set(uid, [c]);
  }
  const desiredByUid = new Map(input.desired.map((p) => [p.uid, p]));

  for (const [uid, containers] of byUid) {
    if (desiredByUid.has(uid)) continue;
    const first = containers[0];
    if (!first) continue;
    actions.push(killAll(refFromLabels(first), containers, Number(first.labels[LABELS.grace] ?? input.orphanGraceSeconds), 'Orphaned', true));
  }

  for (const pod of input.desired) {
    const observed = byUid.get(pod.uid) ?? [];
    if (pod.terminating) {
      if (observed.length === 0) actions.push({ kind: 'ReportRemoved', pod });
      else if (observed.some((c) => c.state === 'running')) actions.push(killAll(pod, observed, pod.terminating.graceSeconds, 'Deleted', false));
      else actions.push({ kind: 'FinalizePod', pod, containerIds: observed.map((c) => c.id) });
      continue;
    }
    if (pod.evicted) {
      // An evicted pod is Failed for good: what still runs stops, its containers stay for status and logs.
      const running = observed.filter((c) => c.state === 'running');
      if (running.length > 0) actions.push(killAll(pod, running, pod.evicted.graceSeconds, 'Evicted', false));
      continue;
    }
    // Exactly one sandbox per pod: while one is running or created, no other is planned.
    const sandboxes = runningSandboxes(observed);
    const sandbox = sandboxes[0];
    const policy = pod.manifest.spec.restartPolicy ?? 'Always';
    const podGrace = pod.manifest.spec.terminationGracePeriodSeconds ?? 30;
    if (!sandbox) {
      if (observed.length > 0) {
        const status = computePodStatus({ pod, manifest: pod.manifest, observed, hostIP: '', nowMs: input.nowMs, backoff: input.backoff });
        if (status.phase === 'Succeeded' || status.phase === 'Failed') continue;
        // A dead sandbox takes the pod's network with it. The kubelet starts the pod over,
        // except a Never pod whose containers already ran: that one is only stopped, and ends Failed.
        const ran = observed.some((c) => c.labels[LABELS.kind] === 'container' && (c.state === 'running' || isDead(c)));
        const created = observed.find(isLiveSandbox);
        if (policy === 'Never' && ran)
          actions.push(
            killAll(
              pod,
              observed.filter((c) => c.state === 'running'),
              podGrace,
              'SandboxChanged',
              false,
            ),
          );
        else if (observed.some((c) => c.state === 'running')) actions.push(killAll(pod, observed, podGrace, 'SandboxChanged', true));
        // A sandbox created but not started (a worker starting it, or an agent killed between
        // create and start) is started under its own name, never joined by a second one.
        else if (created) actions.push({ kind: 'RunSandbox', pod, attempt: attemptOf(created) });
        // Everything is dead (an engine restart, or leftovers the engine would not remove): a
        // new sandbox, and the containers restart by their policy, their restart counts kept.
        else actions.push({ kind: 'RunSandbox', pod, attempt: nextSandboxAttempt(observed) });
      } else {
        const first = pod.manifest.spec.initContainers?.[0];
        actions.push({ kind: 'RunSandbox', pod, attempt: 0, containers: first ? [first] : [...pod.manifest.spec.containers] });
      }
      continue;
    }
    // Other sandboxes that are not running (dead, or created by a stale plan) go; what the
    // engine will not remove yet is tried again later.
    observed
      .filter((c) => c.labels[LABELS.kind] === 'sandbox' && c.id !== sandbox.id && c.state !== 'running')
      .forEach((c) => actions.push({ kind: 'RemoveContainer', pod, containerId: c.id }));
    if (podFinished({ pod, manifest: pod.manifest, observed, nowMs: input.nowMs, backoff: input.backoff })) {
      // Nothing runs and nothing will restart: the kubelet stops the sandbox, keeping the containers for their status and logs.
      // (A sidecar still running after an init container failed under policy Never stops with it.)
      const running = observed.filter((c) => c.labels[LABELS.kind] === 'container' && c.state === 'running');
      actions.push(killAll(pod, [...running, ...sandboxes], podGrace, 'PodCompleted', false));
      continue;
    }
    // A second running sandbox is stopped with whatever joined it (those restart by policy
    // in the pod's sandbox); once dead it is removed as above. The pod keeps one IP.
    for (const extra of sandboxes.slice(1)) {
      const joined = observed.filter((c) => c.labels[LABELS.kind] === 'container' && c.state === 'running' && c.networkOf === extra.id);
      actions.push(killAll(pod, [...joined, extra], podGrace, 'ExtraSandbox', false));
    }
    /** Plans one container by the policy it lives by; returns its newest run (after this pass's plan, as far as known). */
    const planContainer = (container: Container, policy: RestartPolicy, pidOf?: string): RuntimeContainer | undefined => {
      // The last create or start failed: nothing is tried (and no engine call made) until its back-off ends.
      const failedStart = startKey(pod.uid, container);
      const attempts = attemptsOf(observed, container.name);
      const latest = attempts[0];
      if (input.startBackoff?.inBackoffSinceUpdate(failedStart, input.nowMs)) {
        wake(input.startBackoff.updatedUntil(failedStart));
        return latest;
      }
      // Keep the newest dead run for `logs --previous`; remove older ones.
      const keepDead = latest && isDead(latest) ? 0 : 1;
      attempts
        .filter((c, i) => i > 0 && isDead(c))
        .slice(keepDead)
        .forEach((c) => actions.push({ kind: 'RemoveContainer', pod, containerId: c.id }));
      if (!latest || (latest.state === 'created' && !isDead(latest))) {
        actions.push({
          kind: 'StartContainer',
          pod,
          container,
          attempt: latest ? attemptOf(latest) : 0,
          sandboxId: sandbox.id,
          ...(pidOf !== undefined ? { pidOf } : {}),
        });
        return latest;
      }
      if (latest.state === 'running') {
        const unhealthy = input.probes?.get(latest.id)?.unhealthy;
        // A changed spec restarts a running container at once, whatever the policy: kill, then start the new spec.
        if (latest.labels[LABELS.specHash] !== containerSpecHash(container)) {
          actions.push({
            kind: 'KillContainer',
            pod,
            containerId: latest.id,
            containerName: container.name,
            graceSeconds: grace(podGrace),
            reason: 'SpecChanged',
          });
          actions.push({ kind: 'StartContainer', pod, container, attempt: attemptOf(latest) + 1, sandboxId: sandbox.id });
        } else if (unhealthy) {
          // The probe's own grace first, as the kubelet's probe-level terminationGracePeriodSeconds.
          const probe = unhealthy === 'LivenessProbe' ? container.livenessProbe : container.startupProbe;
          actions.push({
            kind: 'KillContainer',
            pod,
            containerId: latest.id,
            containerName: container.name,
            graceSeconds: grace(probe?.terminationGracePeriodSeconds ?? podGrace),
            reason: unhealthy,
          });
        }
        return latest;
      }
      if (!isDead(latest)) return latest;
      if (!shouldRestart(policy, terminatedState(latest).terminated?.exitCode ?? 0)) return latest;
      const key = crashKey(pod.uid, container.name);
      const deathMs = deathTimeMs(latest);
      if (latest.labels[LABELS.specHash] !== containerSpecHash(container)) {
        actions.push({ kind: 'StartContainer', pod, container, attempt: attemptOf(latest) + 1, sandboxId: sandbox.id, restart: { key, deathMs, fresh: true } });
        return latest;
      }
      if (input.backoff.inBackoffSince(key, deathMs, input.nowMs)) {
        wake(input.backoff.until(key, deathMs));
        return latest;
      }
      actions.push({ kind: 'StartContainer', pod, container, attempt: attemptOf(latest) + 1, sandboxId: sandbox.id, restart: { key, deathMs } });
      return latest;
    };

    const inits = pod.manifest.spec.initContainers ?? [];
    // Initialised once any container has run (so a restarted agent never runs completed init
    // containers again); until then the init containers go in order, each to completion (a
    // sidecar until it has started), the next only after the one before.
    let initialized = pod.manifest.spec.containers.some((c) => attemptsOf(observed, c.name).length > 0);
    if (!initialized) {
      initialized = true;
      for (const init of inits) {
        const latest = planContainer(init, containerRestartPolicy(policy, init, true));
        const done = isSidecar(init)
          ? latest?.state === 'running' &&
            latest.labels[LABELS.specHash] === containerSpecHash(init) &&
            (!init.startupProbe || input.probes?.get(latest.id)?.started === true)
          : latest !== undefined && isDead(latest) && latest.state === 'exited' && latest.exitCode === 0;
        if (!done) {
          initialized = false;
          break;
        }
      }
    } else if (containersFinished(pod.manifest.spec, observed)) {
      // The containers are done for good: the sidecars stop (in reverse order), then the sandbox, as the pod ends.
      const running = sidecarsOf(pod.manifest.spec).flatMap((c) => attemptsOf(observed, c.name).filter((r) => r.state === 'running'));
      if (running.length > 0) actions.push(killAll(pod, running, podGrace, 'PodCompleted', false));
      continue;
    } else {
      for (const sidecar of sidecarsOf(pod.manifest.spec)) planContainer(sidecar, 'Always');
    }
    if (!initialized) continue;
    for (const container of pod.manifest.spec.containers) planContainer(container, policy);
    // Ephemeral containers run once, never again (policy Never), each once its target runs, in that target's process namespace.
    for (const ephemeral of pod.manifest.spec.ephemeralContainers ?? []) {
      const target = ephemeral.targetContainerName;
      if (target === undefined) {
        planContainer(ephemeral, 'Never');
        continue;
      }
      const targetRun = attemptsOf(observed, target)[0];
      if (targetRun?.state === 'running') planContainer(ephemeral, 'Never', targetRun.id);
      else if (attemptsOf(observed, ephemeral.name).length > 0) planContainer(ephemeral, 'Never');
    }
  }
  return wakeAtMs === undefined ? { actions } : { actions, wakeAtMs };
}
