import { Inject, Injectable, Logger } from '@nestjs/common';
import { BUS, type Bus } from '#bus';
import { STREAMS, SUBJECTS, type PodStatus } from '#contracts';
import type { PodRef } from '#domain/reconcile';
import { podRef } from '#observability';
import { AGENT_CONFIG } from '../agent.constants.js';
import type { AgentConfig } from '../agent.config.js';
import { PodStartTracker } from './pod-start-tracker.js';

/** How many pods' removal reports are remembered; an older one's is looked up on the bus again. */
export const REMOVED_MEMORY = 4096;

/** Publishes a pod's status when it changes, and the final "removed" report once. */
@Injectable()
export class StatusReporter {
  private readonly logger = new Logger(StatusReporter.name);
  private readonly lastReported = new Map<string, string>();
  private readonly lastStatus = new Map<string, PodStatus>();
  /** The newest REMOVED_MEMORY pods reported removed, oldest first: a node's churn does not grow it. */
  private readonly removed = new Set<string>();

  constructor(
    @Inject(AGENT_CONFIG) private readonly config: AgentConfig,
    @Inject(BUS) private readonly bus: Bus,
    private readonly starts: PodStartTracker,
  ) {}

  /** The last status computed for a pod, reported or not. */
  previous(uid: string): PodStatus | undefined {
    return this.lastStatus.get(uid);
  }

  async report(pod: PodRef, status: PodStatus): Promise<void> {
    const previous = this.lastStatus.get(pod.uid);
    // A stopped sandbox has no address any more; the pod keeps the IP it had, as in Kubernetes.
    if (!status.podIP && previous?.podIP) Object.assign(status, { podIP: previous.podIP, podIPs: previous.podIPs });
    // Each report carries its conditions' transition times, as the kubelet's status manager
    // sets them: the newest report alone (all the stream keeps) then rebuilds the same view.
    if (status.conditions) {
      let now: string | undefined;
      const nowIso = (): string => (now ??= new Date().toISOString().replace(/\.\d+Z$/, 'Z'));
      status.conditions = status.conditions.map((c) => {
        const before = previous?.conditions?.find((p) => p.type === c.type);
        return {
          ...c,
          lastTransitionTime:
            before?.status === c.status ? (before.lastTransitionTime ?? c.lastTransitionTime ?? nowIso()) : (c.lastTransitionTime ?? nowIso()),
        };
      });
    }
    this.lastStatus.set(pod.uid, status);
    this.starts.statusComputed(pod.uid, status);
    const json = JSON.stringify(status);
    if (this.lastReported.get(pod.uid) === json) return;
    await this.publish(pod, status, false);
    this.lastReported.set(pod.uid, json);
  }

  /**
   * Says the pod is gone from this node. After a restart the agent does not know whether
   * it already did, so it reads the subject's last report first: a tombstone is reported once.
   */
  async reportRemoved(pod: PodRef): Promise<void> {
    if (this.removed.has(pod.uid)) return;
    const subject = SUBJECTS.podStatus(this.config.NODE_NAME, pod.uid);
    const last = await this.bus.lastMessage(STREAMS.pods, subject).catch(() => undefined);
    if (!(last?.envelope.type === 'PodStatusReported' && last.envelope.data.removed)) {
      const previous = last?.envelope.type === 'PodStatusReported' ? last.envelope.data.status : undefined;
      await this.publish(pod, previous ?? { phase: 'Succeeded' }, true);
      this.logger.log(`removed ${podRef(pod)}`);
    }
    this.removed.add(pod.uid);
    for (const oldest of this.removed) {
      if (this.removed.size <= REMOVED_MEMORY) break;
      this.removed.delete(oldest);
    }
    this.lastReported.delete(pod.uid);
    this.lastStatus.delete(pod.uid);
    this.starts.forget(pod.uid);
  }

  private async publish(pod: PodRef, status: PodStatus, removed: boolean): Promise<void> {
    const nodeName = this.config.NODE_NAME;
    const subject = SUBJECTS.podStatus(nodeName, pod.uid);
    await this.bus.publish(
      subject,
      'PodStatusReported',
      { uid: pod.uid, namespace: pod.namespace, name: pod.name, nodeName, status, removed },
      { correlationId: pod.uid },
    );
    // Only the newest status rebuilds anything: the older ones go, so the pods stream grows with pods, not with reports.
    this.bus.compactSoon(STREAMS.pods, subject);
  }
}
