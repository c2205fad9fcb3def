import { Inject, Injectable, Logger } from '@nestjs/common';
import { BUS, type Bus } from '#bus';
import { STREAMS, SUBJECTS } from '#contracts';
import { ADMISSION_REASONS, admissionFailure, rejectionMessage, type AdmissionFailure } from '#domain/admission';
import type { DesiredPod } from '#domain/reconcile';
import { podRef } from '#observability';
import type { RuntimeContainer } from '#runtime';
import { AGENT_CONFIG } from '../agent.constants.js';
import type { AgentConfig } from '../agent.config.js';
import { EventRecorder } from '../events/event-recorder.service.js';
import { NodeService } from '../node/node.service.js';
import { StatusReporter } from '../status/status-reporter.service.js';
import { compareText } from '#domain/compare-text';

const byCreation = (a: DesiredPod, b: DesiredPod): number =>
  compareText(a.manifest.metadata.creationTimestamp ?? '', b.manifest.metadata.creationTimestamp ?? '') || compareText(a.name, b.name);

/**
 * The kubelet's pod admission: a pod new to this node runs only if it fits beside the pods
 * already admitted (see `admissionFailure`); otherwise it is Failed with the kubelet's reason
 * and never started. A pod with containers on the node was admitted before. After a restart,
 * a pod without containers is first looked up in its status subject: one rejected then stays
 * rejected, as a Failed pod stays Failed in Kubernetes.
 */
@Injectable()
export class PodAdmission {
  private readonly logger = new Logger(PodAdmission.name);
  private readonly admitted = new Set<string>();
  private readonly rejected = new Map<string, AdmissionFailure>();
  /** Until the first pass is through, a pod without containers may have been rejected by an earlier process. */
  private restarting = true;

  constructor(
    @Inject(AGENT_CONFIG) private readonly config: AgentConfig,
    @Inject(BUS) private readonly bus: Bus,
    private readonly node: NodeService,
    private readonly status: StatusReporter,
    private readonly events: EventRecorder,
  ) {}

  /** The desired pods this node may run (and the terminating ones, to clean up); rejects what does not fit. */
  async admit(desired: DesiredPod[], observed: Map<string, RuntimeContainer[]>): Promise<DesiredPod[]> {
    const allowed: DesiredPod[] = [];
    const candidates: DesiredPod[] = [];
    for (const pod of desired) {
      if (pod.terminating) allowed.push(pod);
      else if (this.rejected.has(pod.uid)) continue;
      else if (this.admitted.has(pod.uid) || (observed.get(pod.uid)?.length ?? 0) > 0) {
        this.admitted.add(pod.uid);
        allowed.push(pod);
      } else candidates.push(pod);
    }
    const restarting = this.restarting;
    this.restarting = false;
    for (const pod of candidates.sort(byCreation)) {
      const earlier = restarting ? await this.earlierRejection(pod) : undefined;
      const running = allowed.filter((p) => !p.terminating).map((p) => p.manifest.spec);
      const failure = earlier ?? admissionFailure(pod.manifest.spec, this.node.current(), running);
      if (!failure) {
        this.admitted.add(pod.uid);
        allowed.push(pod);
        continue;
      }
      this.rejected.set(pod.uid, failure);
      if (!earlier) await this.reject(pod, failure);
    }
    return allowed;
  }

  /** Forgets a pod that is gone from the node. */
  forget(uid: string): void {
    this.admitted.delete(uid);
    this.rejected.delete(uid);
  }

  private async reject(pod: DesiredPod, failure: AdmissionFailure): Promise<void> {
    const message = rejectionMessage(failure);
    this.logger.warn(`rejected ${podRef(pod)}: ${failure.reason}: ${failure.message}`);
    this.events.warning(pod, failure.reason, failure.message);
    await this.status.report(pod, { phase: 'Failed', reason: failure.reason, message, hostIP: this.node.nodeIP }).catch((error: unknown) => {
      this.logger.warn(`status of ${podRef(pod)} not reported: ${(error as Error).message}`);
    });
  }

  /** The rejection an earlier process of this agent reported for the pod, if that is its last status. */
  private async earlierRejection(pod: DesiredPod): Promise<AdmissionFailure | undefined> {
    const last = await this.bus.lastMessage(STREAMS.pods, SUBJECTS.podStatus(this.config.NODE_NAME, pod.uid)).catch(() => undefined);
    if (last?.envelope.type !== 'PodStatusReported' || last.envelope.data.removed) return undefined;
    const { phase, reason, message } = last.envelope.data.status;
    if (phase !== 'Failed' || !(ADMISSION_REASONS as readonly string[]).includes(reason ?? '')) return undefined;
    return { reason: reason ?? '', message: (message ?? '').replace(/^Pod was rejected: /, '') };
  }
}
