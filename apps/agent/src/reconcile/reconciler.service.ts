import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { computePodStatus, planReconcile, type Action, type BackoffPolicy, type DesiredPod } from '#domain';
import { podRef } from '#observability';
import { LABELS, type ContainerRuntime, type RuntimeContainer } from '#runtime';
import { AGENT_CONFIG, RUNTIME } from '../agent.constants.js';
import type { AgentConfig } from '../agent.config.js';
import { DesiredStateService } from '../desired/desired-state.service.js';
import { NodeService } from '../node/node.service.js';
import { StatusReporter } from '../status/status-reporter.service.js';
import { PodExecutor } from './pod-executor.js';

/**
 * The sync loop: on a desired-state change, a runtime event or the periodic resync it
 * lists the node's containers, plans, hands each pod's actions to that pod's worker (one
 * pod's steps run in order; pods run side by side) and reports statuses that changed.
 */
@Injectable()
export class ReconcilerService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(ReconcilerService.name);
  private readonly workers = new Map<string, Promise<void>>();
  private readonly backoff: BackoffPolicy;
  private dirty = false;
  private running?: Promise<void>;
  private resync?: NodeJS.Timeout;
  private wake?: NodeJS.Timeout;
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
  ) {
    this.backoff = { baseMs: config.BACKOFF_BASE_SECONDS * 1000, capMs: config.BACKOFF_CAP_SECONDS * 1000 };
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.desired.caughtUp;
    this.logger.log(`desired state rebuilt: ${this.desired.list().length} pod(s) for ${this.config.NODE_NAME}`);
    this.desired.onChange(() => this.trigger());
    this.resync = setInterval(() => this.trigger(), this.config.RESYNC_SECONDS * 1000);
    this.trigger();
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    clearInterval(this.resync);
    clearTimeout(this.wake);
    await this.running;
    await Promise.all(this.workers.values());
  }

  /** Asks for a pass; passes never overlap, and triggers during one coalesce into the next. */
  trigger(): void {
    if (this.stopped) return;
    this.dirty = true;
    if (this.running) return;
    this.running = (async () => {
      while (this.dirty && !this.stopped) {
        this.dirty = false;
        try {
          await this.pass();
        } catch (error) {
          this.logger.error(`reconcile pass failed: ${(error as Error).stack ?? String(error)}`);
        }
      }
    })().finally(() => (this.running = undefined));
  }

  private async pass(): Promise<void> {
    const observed = await this.runtime.listContainers({ [LABELS.node]: this.config.NODE_NAME });
    const desired = this.desired.list();
    const nowMs = Date.now();
    const plan = planReconcile({ desired, observed, nowMs, backoff: this.backoff, orphanGraceSeconds: 30 });

    const byPod = new Map<string, Action[]>();
    for (const action of plan.actions) {
      const uid = action.pod.uid;
      byPod.set(uid, [...(byPod.get(uid) ?? []), action]);
    }
    for (const [uid, actions] of byPod) {
      if (this.workers.has(uid)) continue; // its worker re-triggers a pass when done
      const work = this.runWorker(actions).finally(() => {
        this.workers.delete(uid);
        this.trigger();
      });
      this.workers.set(uid, work);
    }

    await this.reportStatuses(desired, observed, nowMs);
    clearTimeout(this.wake);
    if (plan.wakeAtMs !== undefined) this.wake = setTimeout(() => this.trigger(), Math.max(0, plan.wakeAtMs - Date.now()) + 10);
    this.lastPassMs = Date.now();
  }

  private async runWorker(actions: Action[]): Promise<void> {
    for (const action of actions) {
      try {
        if (action.kind === 'ReportRemoved') {
          await this.status.reportRemoved(action.pod, undefined);
          this.desired.forget(action.pod.uid);
        } else {
          await this.executor.apply(action);
        }
      } catch (error) {
        this.logger.error(`${action.kind} for ${podRef(action.pod)} failed: ${(error as Error).message}`);
        return;
      }
    }
  }

  private async reportStatuses(desired: DesiredPod[], observed: RuntimeContainer[], nowMs: number): Promise<void> {
    const byUid = new Map<string, RuntimeContainer[]>();
    for (const c of observed) {
      const uid = c.labels[LABELS.podUid];
      if (uid) byUid.set(uid, [...(byUid.get(uid) ?? []), c]);
    }
    await Promise.all(
      desired
        .filter((pod) => !pod.terminating)
        .map(async (pod) => {
          const waiting = this.executor.waitingReasons(pod.uid);
          const status = computePodStatus({
            pod,
            manifest: pod.manifest,
            observed: byUid.get(pod.uid) ?? [],
            hostIP: this.node.nodeIP,
            nowMs,
            backoff: this.backoff,
            ...(waiting ? { waiting } : {}),
          });
          try {
            await this.status.report(pod, status);
          } catch (error) {
            this.logger.warn(`status of ${podRef(pod)} not reported: ${(error as Error).message}`);
          }
        }),
    );
  }
}
