import { Inject, Injectable, Logger, Optional, type OnModuleDestroy } from '@nestjs/common';
import { BUS, type Bus } from '#bus';
import { SUBJECTS, type BackoffRecordedEvent, type ImagePullProgressEvent, type MessageData, type ProbeResultChangedEvent } from '#contracts';
import { EventCorrelator, type EventEmission } from '#domain/event-correlator';
import type { PodRef } from '#domain/reconcile';
import { CLOCK, systemClock, type Clock, type TimerHandle } from '#workqueue';
import { AGENT_CONFIG } from '../agent.constants.js';
import type { AgentConfig } from '../agent.config.js';

/**
 * Records Kubernetes Events about pods on the bus, as the kubelet's recorder does: identical
 * repeats are aggregated into one series (an Event whose count grows) and published at
 * doubling intervals (EventCorrelator), so a crash-looping pod adds a few messages an hour,
 * not one per repeat. Never throws; an outage delays, not loses, them.
 */
@Injectable()
export class EventRecorder implements OnModuleDestroy {
  private readonly logger = new Logger(EventRecorder.name);
  private readonly correlator = new EventCorrelator();
  private timer: TimerHandle | undefined;
  private timerAt: number | undefined;

  constructor(
    @Inject(AGENT_CONFIG) private readonly config: AgentConfig,
    @Inject(BUS) private readonly bus: Bus,
    @Optional() @Inject(CLOCK) private readonly clock: Clock = systemClock,
  ) {}

  /** Publishes what is held back, so a stopping agent leaves the latest counts in the log. */
  onModuleDestroy(): void {
    this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    for (const emission of this.correlator.due(Number.MAX_SAFE_INTEGER)) this.publish(emission);
  }

  /** Forgets the series of a pod that is gone. */
  forget(uid: string): void {
    this.correlator.forget(uid);
  }

  normal(pod: PodRef, reason: string, message: string, container?: string): void {
    this.record(pod, 'Normal', reason, message, container);
  }

  warning(pod: PodRef, reason: string, message: string, container?: string): void {
    this.record(pod, 'Warning', reason, message, container);
  }

  /**
   * Publishes a change of the back-off book as a fact, so what the next restart or pull
   * waits for can be explained from the log. Never throws.
   */
  backoff(pod: PodRef, fact: Omit<BackoffRecordedEvent, 'uid' | 'namespace' | 'name' | 'nodeName'>): void {
    this.fact('BackoffRecorded', pod, fact);
  }

  /** Publishes a probe result that crossed its threshold, as a fact. Never throws. */
  probeResult(pod: PodRef, fact: Omit<ProbeResultChangedEvent, 'uid' | 'namespace' | 'name' | 'nodeName'>): void {
    this.fact('ProbeResultChanged', pod, fact);
  }

  /**
   * Publishes how far a pull has got. A figure is stale once the next one exists, so it is not
   * kept in the outbox: one the bus cannot take now is dropped, and the `Pulled` event still
   * comes. Never throws.
   */
  pullProgress(pod: PodRef, progress: Omit<ImagePullProgressEvent, 'uid' | 'namespace' | 'name' | 'nodeName'>): void {
    const nodeName = this.config.NODE_NAME;
    const data = { ...progress, uid: pod.uid, namespace: pod.namespace, name: pod.name, nodeName };
    this.bus.publish(SUBJECTS.containerEvents(nodeName, pod.uid), 'ImagePullProgress', data, { correlationId: pod.uid }).catch((error: unknown) => {
      this.logger.debug(`pull progress of ${pod.namespace}/${pod.name} not published: ${(error as Error).message}`);
    });
  }

  private fact<T extends 'BackoffRecorded' | 'ProbeResultChanged'>(
    type: T,
    pod: PodRef,
    fact: Omit<MessageData<T>, 'uid' | 'namespace' | 'name' | 'nodeName'>,
  ): void {
    const nodeName = this.config.NODE_NAME;
    const data = { ...fact, uid: pod.uid, namespace: pod.namespace, name: pod.name, nodeName } as MessageData<T>;
    this.bus.publishBuffered(SUBJECTS.containerEvents(nodeName, pod.uid), type, data, { correlationId: pod.uid });
  }

  /** Kept in the bus's outbox while the bus is unreachable, and sent when it returns. */
  private record(pod: PodRef, eventType: 'Normal' | 'Warning', reason: string, message: string, container?: string): void {
    const emission = this.correlator.observe(
      {
        uid: pod.uid,
        namespace: pod.namespace,
        name: pod.name,
        type: eventType,
        reason,
        message,
        ...(container ? { fieldPath: `spec.containers{${container}}` } : {}),
      },
      this.clock.now(),
    );
    if (emission) this.publish(emission);
    this.schedule();
  }

  /** Arms one timer for the next held repeat. */
  private schedule(): void {
    const due = this.correlator.nextDueMs();
    if (due === undefined || (this.timer !== undefined && this.timerAt !== undefined && this.timerAt <= due)) return;
    this.clock.clearTimeout(this.timer);
    this.timerAt = due;
    this.timer = this.clock.setTimeout(
      () => {
        this.timer = undefined;
        this.timerAt = undefined;
        for (const emission of this.correlator.due(this.clock.now())) this.publish(emission);
        this.schedule();
      },
      Math.max(0, due - this.clock.now()),
    );
    this.timer.unref?.();
  }

  private publish(e: EventEmission): void {
    const nodeName = this.config.NODE_NAME;
    this.bus.publishBuffered(
      SUBJECTS.containerEvents(nodeName, e.uid),
      'PodEvent',
      {
        uid: e.uid,
        namespace: e.namespace,
        name: e.name,
        nodeName,
        eventType: e.type,
        reason: e.reason,
        message: e.message,
        ...(e.fieldPath ? { fieldPath: e.fieldPath } : {}),
        observedAt: new Date(e.lastMs).toISOString(),
        series: e.series,
        count: e.count,
        firstObservedAt: new Date(e.firstMs).toISOString(),
      },
      { correlationId: e.uid },
    );
  }
}
