import { Inject, Injectable, Logger } from '@nestjs/common';
import { BUS, type Bus } from '#bus';
import { SUBJECTS } from '#contracts';
import type { PodRef } from '#domain';
import { AGENT_CONFIG } from '../agent.constants.js';
import type { AgentConfig } from '../agent.config.js';

/** Records Kubernetes Events about pods on the bus, as the kubelet's recorder does. Never throws. */
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

  private record(pod: PodRef, eventType: 'Normal' | 'Warning', reason: string, message: string, container?: string): void {
    const nodeName = this.config.NODE_NAME;
    this.bus
      .publish(
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
      )
      .catch((error: unknown) => this.logger.warn(`event ${reason} not recorded: ${(error as Error).message}`));
  }
}
