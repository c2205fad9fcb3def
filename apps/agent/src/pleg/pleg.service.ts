import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { BUS, type Bus } from '#bus';
import { SUBJECTS, type ContainerEventReason } from '#contracts';
import { LABELS, type ContainerRuntime, type RuntimeEvent } from '#runtime';
import { AGENT_CONFIG, RUNTIME } from '../agent.constants.js';
import type { AgentConfig } from '../agent.config.js';
import { ReconcilerService } from '../reconcile/reconciler.service.js';

const REASONS: Record<string, ContainerEventReason> = { start: 'Started', die: 'Died', oom: 'OOMKilled' };

/**
 * The pod life-cycle event generator: Docker's event stream for this node's containers
 * becomes ContainerEvents on the bus and a reconcile trigger. A broken stream is
 * reconnected with capped back-off, and a relist (a reconcile pass) follows.
 */
@Injectable()
export class PlegService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(PlegService.name);
  private readonly abort = new AbortController();
  private loop?: Promise<void>;
  private readonly oomKilled = new Set<string>();
  /** ms since the epoch of the last event or (re)connect, for health checks. */
  lastSeenMs = Date.now();

  constructor(
    @Inject(AGENT_CONFIG) private readonly config: AgentConfig,
    @Inject(BUS) private readonly bus: Bus,
    @Inject(RUNTIME) private readonly runtime: ContainerRuntime,
    private readonly reconciler: ReconcilerService,
  ) {}

  onApplicationBootstrap(): void {
    this.loop = this.watch();
  }

  async onModuleDestroy(): Promise<void> {
    this.abort.abort();
    await this.loop;
  }

  private async watch(): Promise<void> {
    let delay = 250;
    while (!this.abort.signal.aborted) {
      try {
        const events = this.runtime.events({ [LABELS.node]: this.config.NODE_NAME }, this.abort.signal);
        this.reconciler.trigger(); // relist: anything missed while disconnected
        for await (const event of events) {
          delay = 250;
          this.lastSeenMs = Date.now();
          await this.handle(event);
        }
      } catch (error) {
        if (this.abort.signal.aborted) return;
        this.logger.warn(`runtime event stream broke: ${(error as Error).message}; reconnecting in ${delay} ms`);
      }
      if (this.abort.signal.aborted) return;
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay = Math.min(delay * 2, 10_000);
    }
  }

  private async handle(event: RuntimeEvent): Promise<void> {
    const reason = REASONS[event.action];
    if (!reason) return;
    // Docker sends 'oom' just before 'die': remember it so the death is reported as OOMKilled.
    const oomKilled = this.oomKilled.has(event.containerId);
    if (event.action === 'oom') this.oomKilled.add(event.containerId);
    if (event.action === 'die') this.oomKilled.delete(event.containerId);
    const exitReason = event.action !== 'die' ? undefined : oomKilled ? 'OOMKilled' : event.exitCode === 0 ? 'Completed' : 'Error';
    this.reconciler.trigger();
    const labels = event.labels;
    const uid = labels[LABELS.podUid];
    if (labels[LABELS.kind] !== 'container' || !uid) return;
    const nodeName = this.config.NODE_NAME;
    try {
      await this.bus.publish(
        SUBJECTS.containerEvents(nodeName, uid),
        'ContainerEvent',
        {
          uid,
          namespace: labels[LABELS.podNamespace] ?? '',
          name: labels[LABELS.podName] ?? '',
          nodeName,
          containerName: labels[LABELS.containerName] ?? '',
          containerID: `docker://${event.containerId}`,
          reason,
          ...(event.exitCode !== undefined ? { exitCode: event.exitCode } : {}),
          ...(exitReason ? { exitReason } : {}),
          observedAt: new Date(event.timeMs).toISOString(),
        },
        { correlationId: uid },
      );
    } catch (error) {
      this.logger.warn(`container event not published: ${(error as Error).message}`);
    }
  }
}
