import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { Inject, Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { BUS, SequenceConflictError, type Bus } from '#bus';
import { ConfigError, LEASES, STREAMS, SUBJECTS, type LeaseRenewedEvent } from '#contracts';
import { CLOCK, type Clock } from '#workqueue';
import { schedulerMetrics } from '../metrics/scheduler.metrics.js';
import { SCHEDULER_CONFIG } from '../scheduler.constants.js';
import type { SchedulerConfig } from '../scheduler.config.js';
import { LeaderElector, validTimings, type LeaseStore } from './leader-elector.js';

/** The lease kube-scheduler's replicas hold, by its name. */
export const SCHEDULER_LEASE = LEASES.scheduler;

/**
 * The lease as the last message of its subject in the leases stream, written compare-and-set.
 * Once the lease exists, a write also expects the stream's last sequence: the lease is the
 * stream's only subject, and nats-server before 2.9.21 checks a subject's expected sequence
 * on a replicated stream only before it orders the write, so two writes could both pass it
 * (nats-io/nats-server#4320), while the stream's is checked where each replica applies it.
 */
export function busLeaseStore(bus: Bus, name: string): LeaseStore {
  const subject = SUBJECTS.lease(name);
  return {
    async get() {
      const last = await bus.lastMessage(STREAMS.leases, subject);
      return last?.envelope.type === 'LeaseRenewed' ? { lease: last.envelope.data, seq: last.seq } : undefined;
    },
    async put(lease: LeaseRenewedEvent, seq: number) {
      try {
        await bus.publish(subject, 'LeaseRenewed', lease, {
          correlationId: name,
          expectedLastSubjectSequence: seq,
          ...(seq > 0 ? { expectedLastSequence: seq } : {}),
        });
        return true;
      } catch (error) {
        if (error instanceof SequenceConflictError) return false;
        throw error;
      }
    },
  };
}

/**
 * kube-scheduler's `--leader-elect`: one scheduler of those running schedules, the holder
 * of the `kube-scheduler` lease; the others try every retry period and take over once it
 * expires, or at once when its holder let it go on a clean shutdown. With LEADER_ELECT
 * false every scheduler leads.
 */
@Injectable()
export class LeaderElectionService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(LeaderElectionService.name);
  private readonly elector: LeaderElector | undefined;
  private readonly abort = new AbortController();
  private loop?: Promise<void>;
  /** What the last try said, once one was made. */
  private leading: boolean | undefined;
  private readonly listeners: Array<() => void> = [];

  constructor(
    @Inject(SCHEDULER_CONFIG) private readonly config: SchedulerConfig,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(BUS) bus: Bus,
  ) {
    if (config.LEADER_ELECT !== 'true') return;
    const timings = {
      leaseDurationMs: config.LEADER_ELECT_LEASE_DURATION_SECONDS * 1000,
      renewDeadlineMs: config.LEADER_ELECT_RENEW_DEADLINE_SECONDS * 1000,
      retryPeriodMs: config.LEADER_ELECT_RETRY_PERIOD_SECONDS * 1000,
    };
    if (!validTimings(timings))
      throw new ConfigError(
        'invalid configuration:\n  LEADER_ELECT_RETRY_PERIOD_SECONDS < LEADER_ELECT_RENEW_DEADLINE_SECONDS < LEADER_ELECT_LEASE_DURATION_SECONDS must hold',
      );
    // As kube-scheduler's: the host and a process's own id, so two replicas on one host differ.
    const identity = `${hostname()}_${randomUUID()}`;
    this.elector = new LeaderElector(SCHEDULER_LEASE, identity, busLeaseStore(bus, SCHEDULER_LEASE), timings, () => performance.now());
  }

  /** Whether this scheduler may schedule now (checked again at every slice of a pass). */
  isLeader(): boolean {
    return this.elector === undefined || this.elector.isLeader();
  }

  /** `listener` runs whenever this scheduler starts leading. */
  onStartedLeading(listener: () => void): void {
    this.listeners.push(listener);
  }

  onApplicationBootstrap(): void {
    schedulerMetrics.leader.set({ name: SCHEDULER_LEASE }, this.elector === undefined ? 1 : 0);
    if (this.elector === undefined) {
      this.logger.log('leader election off (LEADER_ELECT=false): scheduling beside any other scheduler');
      return;
    }
    this.logger.log(`leader election on: ${this.elector.identity} tries the ${SCHEDULER_LEASE} lease`);
    this.loop = this.run(this.elector);
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.abort.abort();
    await this.loop;
    // After the passes stopped (onModuleDestroy) and before the bus drains: the next leader need not wait.
    if (await this.elector?.release()) this.logger.log(`let go of the ${SCHEDULER_LEASE} lease`);
  }

  private notify(listener: () => void): void {
    try {
      listener();
    } catch (error) {
      this.logger.error(`a start of leading failed: ${(error as Error).message}`);
    }
  }

  private async run(elector: LeaderElector): Promise<void> {
    const retryMs = this.config.LEADER_ELECT_RETRY_PERIOD_SECONDS * 1000;
    let error: string | undefined;
    while (!this.abort.signal.aborted) {
      const leading = await elector.tryAcquireOrRenew();
      if (this.abort.signal.aborted) return;
      if (elector.lastError !== error) {
        error = elector.lastError;
        if (error !== undefined) this.logger.warn(`${SCHEDULER_LEASE} lease: ${error}`);
      }
      // A lease that lapsed, even while this try was under way, and is held again is a new start: the pass it stopped is asked for again.
      if (leading && elector.startedTerm) for (const listener of this.listeners) this.notify(listener);
      if (leading !== this.leading) {
        this.leading = leading;
        schedulerMetrics.leader.set({ name: SCHEDULER_LEASE }, leading ? 1 : 0);
        if (leading) {
          this.logger.log(`leading: ${elector.identity} holds the ${SCHEDULER_LEASE} lease`);
        } else {
          const holder = elector.holder();
          const why = holder === '' || holder === elector.identity ? 'not renewed' : `held by ${holder}`;
          this.logger.log(`not leading: the ${SCHEDULER_LEASE} lease is ${why}; trying every ${retryMs / 1000} s`);
        }
      }
      await this.clock.sleep(retryMs, this.abort.signal);
    }
  }
}
