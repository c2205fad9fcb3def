import { Inject, Injectable, Logger } from '@nestjs/common';
import { BUS, type Bus } from '#bus';
import { SUBJECTS, type BackoffRecordedEvent, type ImagePullProgressEvent, type MessageData, type ProbeResultChangedEvent } from '#contracts';
import type { PodRef } from '#domain';
import { AGENT_CONFIG } from '../agent.constants.js';
import type { AgentConfig } from '../agent.config.js';

/** Records Kubernetes Events about pods on the bus, as the kubelet's recorder does. Never throws; an outage delays, not loses, them. */
@Injectable()
export class EventRecorder {
  private readonly logger = new Logger(EventRecorder.name);

  constructor(
    @Inject(AGENT_CONFIG) private readonly config: AgentConfig,
    @Inject(BUS) private readonly bus: Bus,
  ) {}

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
    const nodeName = this.config.NODE_NAME;
    this.bus.publishBuffered(
      SUBJECTS.containerEvents(nodeName, pod.uid),
      'PodEvent',
      {
        uid: pod.uid,
        namespace: pod.namespace,
        name: pod.name,
        nodeName,
        eventType,
        reason,
        message,
        ...(container ? { fieldPath: `spec.containers{${container}}` } : {}),
        observedAt: new Date().toISOString(),
      },
      { correlationId: pod.uid },
    );
  }
}
