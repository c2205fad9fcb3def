import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { Container } from '#contracts';
import { BackoffBook } from '#domain/backoff';
import { podContainers } from '#domain/init-containers';
import { computePodStatus, evictedStatus, isDead, runtimeDownStatus } from '#domain/pod-status';
import { planReconcile, type Action, type DesiredPod } from '#domain/reconcile';
import { podRef } from '#observability';
import { CoalescingQueue } from '#workqueue';
import { LABELS, type ContainerRuntime, type RuntimeContainer } from '#runtime';
import { AGENT_CONFIG, RUNTIME } from '../agent.constants.js';
import type { AgentConfig } from '../agent.config.js';
import { DesiredStateService } from '../config/desired-state.service.js';
import { EventRecorder } from '../events/event-recorder.service.js';
import { PodAdmission } from '../lifecycle/pod-admission.js';
import { EvictionManager } from '../eviction/eviction-manager.service.js';
import { TerminationMessages } from '../lifecycle/termination-messages.js';
import { ProberService } from '../prober/prober.service.js';
import { NodeService } from '../node/node.service.js';
import { StatusReporter } from '../status/status-reporter.service.js';
import { AgentMetrics } from '../agent.metrics.js';
import { PlegHealth } from '../pleg/pleg-health.js';
import { PodExecutor } from '../pod-workers/pod-executor.js';
import { VolumeManager } from '../volumemanager/volume-manager.service.js';

function groupByUid(observed: RuntimeContainer[]): Map<string, RuntimeContainer[]> {
  const byUid = new Map<string, RuntimeContainer[]>();
  for (const c of observed) {
    const uid = c.labels[LABELS.podUid];
    if (!uid) continue;
    const pod = byUid.get(uid);
    if (pod) pod.push(c);
    else byUid.set(uid, [c]);
  }
  return byUid;
}

/**
 * What a pod's status was computed from, when nothing else can move it: every container of
 * the pod running (so no back-off, clock or termination message counts), no waiting reason,
 * no eviction. The runtime hands out the same container object while a container's state
 * stands, so a pass that finds the same objects, spec, node address, probe results and last
 * reported status would compute and report the very same status again.
 */
export function steadyInputs(
  pod: DesiredPod,
  observed: RuntimeContainer[],
  hostIP: string,
  probes: ReadonlyMap<string, { started?: boolean; ready?: boolean }>,
  reported: unknown,
): unknown[] | undefined {
  const inputs: unknown[] = [pod.manifest, hostIP, reported];
  for (const c of observed) {
    if (c.state !== 'running') return undefined;
    const probe = probes.get(c.id);
    inputs.push(c, probe?.started, probe?.ready);
  }
  return inputs;
}

export const sameInputs = (a: unknown[] | undefined, b: unknown[]): boolean => a !== undefined && a.length === b.length && a.every((x, i) => x === b[i]);

/**
 * The sync loop: on a desired-state change, a runtime event, a back-off running out or
 * the periodic resync it lists the node's containers, plans, hands each pod's actions to
 * that pod's worker (one pod's steps run in order; pods run side by side) and reports
 * statuses that changed.
 */
@Injectable()
export class ReconcilerService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(ReconcilerService.name);
  private readonly workers = new Map<string, Promise<void>>();
  /** Pods whose actions were skipped while their worker was busy. */
  private readonly deferred = new Set<string>();
  /** Each pod's steady inputs (see steadyInputs) as of its last status report. */
  private readonly steady = new Map<string, unknown[]>();
  private readonly backoff: BackoffBook;
  /** Passes: never two at once, and every trigger during one folds into one pass after it. */
  private readonly passes: CoalescingQueue;
  private resync?: NodeJS.Timeout;
  private wake?: { timer: NodeJS.Timeout; atMs: number };
  private stopped = false;
  /** ms since the epoch of the last completed pass, for health checks. */
  lastPassMs = 0;

  constructor(
    @Inject(AGENT_CONFIG) private readonly config: AgentConfig,
    @Inject(RUNTIME) private readonly runtime: ContainerRuntime,
    private readonly desired: DesiredStateService,
    private readonly executor: PodExecutor,
    private readonly status: StatusReporter,
    private readonly node: NodeService,
    private readonly events: EventRecorder,
    private readonly prober: ProberService,
    private readonly messages: TerminationMessages,
    private readonly admission: PodAdmission,
    private readonly metrics: AgentMetrics,
    private readonly pleg: PlegHealth,
    private readonly volumes: VolumeManager,
    private readonly eviction: EvictionManager,
  ) {
    this.passes = new CoalescingQueue(
      async () => {
        const end = this.metrics.reconcileDuration.startTimer();
        try {
          await this.pass();
        } finally {
          end();
        }
      },
      (error) => this.logger.error(`reconcile pass failed: ${(error as Error).stack ?? String(error)}`),
    );
    this.backoff = new BackoffBook({ baseMs: config.BACKOFF_BASE_SECONDS * 1000, capMs: config.BACKOFF_CAP_SECONDS * 1000 });
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.desired.caughtUp;
    this.logger.log(`desired state rebuilt: ${this.desired.list().length} pod(s) for ${this.config.NODE_NAME}`);
    this.desired.onChange(() => this.trigger());
    this.executor.onWake((atMs) => this.wakeAt(atMs));
    this.prober.onResult(() => this.trigger());
    this.eviction.onEviction(() => this.trigger());
    this.resync = setInterval(() => {
      this.trigger();
      // ConfigMap, Secret and downward API volumes follow their sources once per sync period.
      void this.volumes.resync(this.desired.list());
    }, this.config.RESYNC_SECONDS * 1000);
    this.passes.start();
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    clearInterval(this.resync);
    clearTimeout(this.wake?.timer);
    await this.passes.stop();
    await Promise.all(this.workers.values());
  }

  /** Asks for a pass; passes never overlap, and triggers during one coalesce into the next. */
  trigger(): void {
    if (this.stopped) return;
    this.passes.add();
  }

  /** A pass at `atMs` (the earliest asked for wins). */
  private wakeAt(atMs: number): void {
    if (this.wake && this.wake.atMs <= atMs && this.wake.atMs > Date.now()) return;
    clearTimeout(this.wake?.timer);
    this.wake = { atMs, timer: setTimeout(() => this.trigger(), Math.max(0, atMs - Date.now()) + 10) };
  }

  private async pass(): Promise<void> {
    let observed: RuntimeContainer[];
    try {
      observed = await this.pleg.relist(() => this.runtime.listContainers({ [LABELS.node]: this.config.NODE_NAME }));
    } catch (error) {
      await this.reportRuntimeDown();
      throw error;
    }
    const byUid = groupByUid(observed);
    // Pods that do not fit the node are refused here (reported Failed once) and never planned.
    // Pods the node evicted are marked, so they are stopped for good and reported Evicted.
    const desired = await this.eviction.mark(await this.admission.admit(this.desired.list(), byUid), byUid);
    const nowMs = Date.now();
    this.backoff.gc(nowMs);
    this.executor.startBackoff.gc(nowMs);
    const plan = planReconcile({
      desired,
      observed,
      nowMs,
      backoff: this.backoff,
      startBackoff: this.executor.startBackoff,
      orphanGraceSeconds: 30,
      probes: this.prober.results(),
    });

    const byPod = new Map<string, Action[]>();
    for (const action of plan.actions) {
      const uid = action.pod.uid;
      byPod.set(uid, [...(byPod.get(uid) ?? []), action]);
    }
    for (const [uid, actions] of byPod) {
      if (this.workers.has(uid)) {
        // Its worker asks for a pass when done, so these actions are planned again then.
        this.deferred.add(uid);
        continue;
      }
      // Otherwise a finished worker asks for nothing: what it changed in Docker comes back as
      // runtime events, and a pod waiting on a back-off has its wake-up. Re-planning after
      // every worker would spin on a pod that cannot progress (a failing pull, a bad image).
      const work = this.runWorker(actions).finally(() => {
        this.workers.delete(uid);
        if (this.deferred.delete(uid)) this.trigger();
      });
      this.workers.set(uid, work);
    }

    this.prober.sync(desired, byUid);
    const specs = new Map<string, Container>(desired.flatMap((p) => podContainers(p.manifest.spec).map((c) => [`${p.uid}/${c.name}`, c] as const)));
    const dead = observed.filter((c) => c.labels[LABELS.kind] === 'container' && isDead(c));
    await this.messages.collect(specs, dead).catch((error: unknown) => this.logger.warn(`termination messages not read: ${(error as Error).message}`));
    await this.reportStatuses(desired, byUid, nowMs);
    if (plan.wakeAtMs !== undefined) this.wakeAt(plan.wakeAtMs);
    this.metrics.runningPods.set(
      desired.filter((p) => !p.terminating && byUid.get(p.uid)?.some((c) => c.labels[LABELS.kind] === 'sandbox' && c.state === 'running')).length,
    );
    this.metrics.runningContainers.set(observed.filter((c) => c.state === 'running' && c.labels[LABELS.kind] === 'container').length);
    this.lastPassMs = Date.now();
  }

  private async runWorker(actions: Action[]): Promise<void> {
    for (const action of actions) {
      this.metrics.actions.inc({ kind: action.kind });
      // A new pod's first containers start with its sandbox: each is still a start.
      if (action.kind === 'RunSandbox' && action.containers?.length) this.metrics.actions.inc({ kind: 'StartContainer' }, action.containers.length);
      try {
        switch (action.kind) {
          case 'ReportRemoved':
            await this.status.reportRemoved(action.pod);
            this.executor.forget(action.pod.uid);
            this.desired.forget(action.pod.uid);
            this.admission.forget(action.pod.uid);
            this.eviction.forget(action.pod.uid);
            this.backoff.forget(`${action.pod.uid}/`);
            break;
          case 'FinalizePod':
            await this.finalize(action.pod);
            break;
          case 'StartContainer':
            if (action.restart?.fresh) this.backoff.reset(action.restart.key);
            if (action.restart) {
              const nowMs = Date.now();
              const delayMs = this.backoff.next(action.restart.key, action.restart.deathMs, nowMs);
              this.events.backoff(action.pod, {
                containerName: action.container.name,
                kind: 'CrashLoop',
                failedAt: new Date(action.restart.deathMs).toISOString(),
                recordedAt: new Date(nowMs).toISOString(),
                delayMs,
                ...this.backoff.policy,
                restartCount: action.attempt,
                ...(action.restart.fresh ? { fresh: true } : {}),
              });
            }
            await this.executor.apply(action);
            break;
          default:
            await this.executor.apply(action);
        }
      } catch (error) {
        this.logger.error(`${action.kind} for ${podRef(action.pod)} failed: ${(error as Error).message}`);
        return;
      }
    }
  }

  /**
   * A deleted pod's containers have stopped: its terminal status goes out before they are removed.
   * The pass's listing may predate an earlier finalize of the same pod, so the containers are
   * listed again: when they are gone, so are their termination messages, and the terminal
   * status already went out (the next pass reports the removal).
   */
  private async finalize(pod: DesiredPod): Promise<void> {
    const observed = await this.runtime.listContainers({ [LABELS.podUid]: pod.uid });
    // Still running (started again behind the pass's back): the next pass kills it first.
    if (observed.length === 0 || observed.some((c) => c.state === 'running')) return;
    const ids = observed.map((c) => c.id);
    const computed = computePodStatus({
      pod,
      manifest: pod.manifest,
      observed,
      hostIP: this.node.nodeIP,
      nowMs: Date.now(),
      backoff: this.backoff,
      terminal: true,
      messages: await this.messages.collect(new Map(podContainers(pod.manifest.spec).map((c) => [`${pod.uid}/${c.name}`, c])), observed.filter(isDead)),
    });
    const eviction = this.eviction.evictionOf(pod.uid);
    await this.status.report(pod, eviction ? evictedStatus(computed, eviction.message) : computed);
    await this.executor.removeAll(pod, ids);
  }

  /**
   * Past the grace of a runtime outage, every pod's last status goes out again as not Ready:
   * the node cannot vouch for containers it cannot see. The next pass that lists the
   * containers reports the truth again.
   */
  private async reportRuntimeDown(): Promise<void> {
    const why = this.pleg.runtimeDown();
    if (why === undefined) return;
    const nowIso = new Date().toISOString();
    for (const pod of this.desired.list()) {
      const last = this.status.previous(pod.uid);
      if (pod.terminating || !last) continue;
      await this.status.report(pod, runtimeDownStatus(last, why, nowIso)).catch((error: unknown) => {
        this.logger.warn(`status of ${podRef(pod)} not reported: ${(error as Error).message}`);
      });
    }
  }

  private async reportStatuses(desired: DesiredPod[], byUid: Map<string, RuntimeContainer[]>, nowMs: number): Promise<void> {
    const probes = this.prober.results();
    const live = new Set(desired.map((pod) => pod.uid));
    for (const uid of this.steady.keys()) if (!live.has(uid)) this.steady.delete(uid);
    await Promise.all(
      desired
        .filter((pod) => !pod.terminating)
        .map(async (pod) => {
          const waiting = this.executor.waitingReasons(pod.uid);
          const eviction = this.eviction.evictionOf(pod.uid);
          const observed = byUid.get(pod.uid) ?? [];
          const inputs = !eviction && !waiting?.size ? steadyInputs(pod, observed, this.node.nodeIP, probes, this.status.previous(pod.uid)) : undefined;
          // Nothing the status is computed from moved since it was reported: it stands.
          if (inputs && sameInputs(this.steady.get(pod.uid), inputs)) return;
          this.steady.delete(pod.uid);
          const computed = computePodStatus({
            pod,
            manifest: pod.manifest,
            observed,
            hostIP: this.node.nodeIP,
            nowMs,
            backoff: this.backoff,
            ...(waiting ? { waiting } : {}),
            probes,
            messages: this.messages.known(),
            // An evicted pod's containers are stopped for good: no back-off, no restart to wait for.
            ...(eviction ? { terminal: true } : {}),
          });
          const status = eviction ? evictedStatus(computed, eviction.message) : computed;
          for (const s of [...(status.initContainerStatuses ?? []), ...(status.containerStatuses ?? [])]) {
            if (s.state.waiting?.reason !== 'CrashLoopBackOff') continue;
            const previous = this.status.previous(pod.uid);
            const before = [...(previous?.initContainerStatuses ?? []), ...(previous?.containerStatuses ?? [])].find((p) => p.name === s.name);
            if (before?.state.waiting?.reason !== 'CrashLoopBackOff') {
              this.events.warning(pod, 'BackOff', `Back-off restarting failed container ${s.name} in pod ${pod.name}_${pod.namespace}(${pod.uid})`, s.name);
            }
          }
          try {
            await this.status.report(pod, status);
            // Kept with the status now reported: any other report of the pod (runtime down, evicted, finalized) replaces it and so breaks the match.
            if (inputs) this.steady.set(pod.uid, [...inputs.slice(0, 2), this.status.previous(pod.uid), ...inputs.slice(3)]);
          } catch (error) {
            this.logger.warn(`status of ${podRef(pod)} not reported: ${(error as Error).message}`);
          }
        }),
    );
  }
}
