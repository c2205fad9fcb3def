import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { BUS, type Bus } from '#bus';
import { SUBJECTS, type ContainerEventReason } from '#contracts';
import { LABELS, type ContainerRuntime, type RuntimeEvent } from '#runtime';
import { Backoff, systemClock } from '#workqueue';
import { AGENT_CONFIG, RUNTIME } from '../agent.constants.js';
import type { AgentConfig } from '../agent.config.js';
import { ReconcilerService } from '../kubelet/reconciler.service.js';
import { PlegHealth } from './pleg-health.js';

const REASONS: Record<string, ContainerEventReason> = { start: 'Started', die: 'Died', oom: 'OOMKilled' };
/** How long a new event stream must stay open before it counts as connected. */
const STREAM_SETTLE_MS = 1000;

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
    private readonly health: PlegHealth,
  ) {}

  onApplicationBootstrap(): void {
    this.loop = this.watch();
  }

  async onModuleDestroy(): Promise<void> {
    this.abort.abort();
    await this.loop;
  }

  private async watch(): Promise<void> {
    const backoff = new Backoff({ initialMs: 250, maxMs: 10_000 });
    while (!this.abort.signal.aborted) {
      let delay: number | undefined;
      // The stream says nothing when it connects: one that has not failed for a while is up.
      const settled = setTimeout(() => this.health.eventStreamUp(), STREAM_SETTLE_MS);
      try {
        // Relist once the stream is subscribed: anything that happened before is in the list, anything after in the stream.
        const events = this.runtime.events({ [LABELS.node]: this.config.NODE_NAME }, this.abort.signal, () => this.reconciler.trigger());
        for await (const event of events) {
          backoff.reset();
          this.lastSeenMs = Date.now();
          this.health.eventStreamUp();
          // Buffered, not awaited: a slow bus must not hold up the event stream (publishes keep their order).
          this.handle(event);
        }
      } catch (error) {
        if (this.abort.signal.aborted) return;
        this.health.eventStreamDown((error as Error).message);
        delay = backoff.next();
        this.logger.warn(`runtime event stream broke: ${(error as Error).message}; reconnecting in ${delay} ms`);
      } finally {
        clearTimeout(settled);
      }
      if (this.abort.signal.aborted) return;
      // A stream that ended without an error is opened again after the same back-off.
      await systemClock.sleep(delay ?? backoff.next(), this.abort.signal);
    }
  }

  private handle(event: RuntimeEvent): void {
    // Every change of a container of this node is a reason to reconcile (a removal too).
    this.reconciler.trigger();
    const reason = REASONS[event.action];
    if (!reason) return;
    // Docker sends 'oom' just before 'die': remember it so the death is reported as OOMKilled.
    const oomKilled = this.oomKilled.has(event.containerId);
    if (event.action === 'oom') this.oomKilled.add(event.containerId);
    // And forgotten with its death, or with the container (an `oom` may follow its `die`).
    if (event.action === 'die' || event.action === 'destroy') this.oomKilled.delete(event.containerId);
    const exitReason = event.action !== 'die' ? undefined : oomKilled ? 'OOMKilled' : event.exitCode === 0 ? 'Completed' : 'Error';
    const labels = event.labels;
    const uid = labels[LABELS.podUid];
    if (labels[LABELS.kind] !== 'container' || !uid) return;
    const nodeName = this.config.NODE_NAME;
    // Through the outbox: a death seen while the bus is down is still told once it is back.
    this.bus.publishBuffered(
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
      // The engine's mark of the event: told again (a first stream asks for the second before
      // it, which an agent restarted at once told already), it is a duplicate the stream drops.
      { correlationId: uid, ...(event.id === undefined ? {} : { id: `container-event.${event.id}` }) },
    );
  }
}
