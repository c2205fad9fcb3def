import type { Container, PodManifest } from '#contracts';
import { LABELS, type RuntimeContainer } from '#runtime';
import { attemptOf, attemptsOf, restartDelayMs, shouldRestart, computePodStatus, type BackoffPolicy } from './pod-status.js';

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
}

export type Action =
  | { kind: 'RunSandbox'; pod: DesiredPod }
  | { kind: 'StartContainer'; pod: DesiredPod; container: Container; attempt: number; sandboxId: string }
  | { kind: 'KillPod'; pod: PodRef; containerIds: string[]; sandboxIds: string[]; graceSeconds: number; reason: 'Deleted' | 'Orphaned' | 'SandboxChanged' }
  | { kind: 'RemoveContainer'; pod: PodRef; containerId: string }
  | { kind: 'ReportRemoved'; pod: DesiredPod };

export interface PlanInput {
  desired: DesiredPod[];
  /** Every container the runtime has for this node. */
  observed: RuntimeContainer[];
  nowMs: number;
  backoff: BackoffPolicy;
  /** Grace for containers of pods this node does not know (or no longer knows). */
  orphanGraceSeconds: number;
}

export interface Plan {
  actions: Action[];
  /** Earliest time something waits for (a back-off expiring), ms since the epoch. */
  wakeAtMs?: number;
}

function killAll(pod: PodRef, containers: RuntimeContainer[], graceSeconds: number, reason: 'Deleted' | 'Orphaned' | 'SandboxChanged'): Action {
  return {
    kind: 'KillPod',
    pod,
    containerIds: containers.filter((c) => c.labels[LABELS.kind] !== 'sandbox').map((c) => c.id),
    sandboxIds: containers.filter((c) => c.labels[LABELS.kind] === 'sandbox').map((c) => c.id),
    graceSeconds,
    reason,
  };
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
    byUid.set(uid, [...(byUid.get(uid) ?? []), c]);
  }
  const desiredByUid = new Map(input.desired.map((p) => [p.uid, p]));

  for (const [uid, containers] of byUid) {
    if (desiredByUid.has(uid)) continue;
    const ref = refFromLabels(containers[0]);
    const grace = Number(containers[0].labels[LABELS.grace] ?? input.orphanGraceSeconds);
    actions.push(killAll(ref, containers, grace, 'Orphaned'));
  }

  for (const pod of input.desired) {
    const observed = byUid.get(pod.uid) ?? [];
    if (pod.terminating) {
      actions.push(observed.length > 0 ? killAll(pod, observed, pod.terminating.graceSeconds, 'Deleted') : { kind: 'ReportRemoved', pod });
      continue;
    }
    const sandbox = observed.find((c) => c.labels[LABELS.kind] === 'sandbox' && c.state === 'running');
    if (!sandbox) {
      if (observed.length > 0) {
        // A dead sandbox takes the pod's network with it: start the pod over, as the kubelet does.
        const status = computePodStatus({ pod, manifest: pod.manifest, observed, hostIP: '', nowMs: input.nowMs, backoff: input.backoff });
        if (status.phase === 'Succeeded' || status.phase === 'Failed') continue;
        actions.push(killAll(pod, observed, 0, 'SandboxChanged'));
      } else {
        actions.push({ kind: 'RunSandbox', pod });
      }
      continue;
    }
    const policy = pod.manifest.spec.restartPolicy ?? 'Always';
    for (const container of pod.manifest.spec.containers) {
      const attempts = attemptsOf(observed, container.name);
      const latest = attempts[0];
      // Keep the newest dead run for `logs --previous`; remove older ones.
      const keepDead = latest?.state === 'exited' ? 0 : 1;
      attempts
        .filter((c, i) => i > 0 && c.state === 'exited')
        .slice(keepDead)
        .forEach((c) => actions.push({ kind: 'RemoveContainer', pod, containerId: c.id }));
      if (!latest || latest.state === 'created') {
        actions.push({ kind: 'StartContainer', pod, container, attempt: latest ? attemptOf(latest) : 0, sandboxId: sandbox.id });
        continue;
      }
      if (latest.state !== 'exited' || !shouldRestart(policy, latest.exitCode ?? 0)) continue;
      const restarts = attemptOf(latest);
      const finishedMs = latest.finishedAt ? Date.parse(latest.finishedAt) : input.nowMs;
      const readyAt = finishedMs + restartDelayMs(restarts, input.backoff);
      if (input.nowMs >= readyAt) actions.push({ kind: 'StartContainer', pod, container, attempt: restarts + 1, sandboxId: sandbox.id });
      else wake(readyAt);
    }
  }
  return wakeAtMs === undefined ? { actions } : { actions, wakeAtMs };
}
