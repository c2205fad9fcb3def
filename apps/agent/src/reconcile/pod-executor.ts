import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Container } from '#contracts';
import { containerName, containerSpecHash, cpuMillis, memoryBytes, sandboxName, type Action, type DesiredPod, type WaitingReasons } from '#domain';
import { podRef } from '#observability';
import { LABELS, type ContainerRuntime } from '#runtime';
import { AGENT_CONFIG, RUNTIME } from '../agent.constants.js';
import type { AgentConfig } from '../agent.config.js';

/** Applies reconcile actions through the runtime port; every step is idempotent. */
@Injectable()
export class PodExecutor {
  private readonly logger = new Logger(PodExecutor.name);
  /** Why a container could not start, shown as its waiting reason until it does. */
  private readonly waiting = new Map<string, WaitingReasons>();

  constructor(
    @Inject(AGENT_CONFIG) private readonly config: AgentConfig,
    @Inject(RUNTIME) private readonly runtime: ContainerRuntime,
  ) {}

  waitingReasons(uid: string): WaitingReasons | undefined {
    return this.waiting.get(uid);
  }

  async apply(action: Action): Promise<void> {
    switch (action.kind) {
      case 'RunSandbox':
        return this.runSandbox(action.pod);
      case 'StartContainer':
        return this.startContainer(action.pod, action.container, action.attempt, action.sandboxId);
      case 'KillPod': {
        this.logger.log(`killing ${podRef(action.pod)} (${action.reason}, grace ${action.graceSeconds}s)`);
        // App containers first, within the grace period; the sandbox goes last.
        await Promise.all(action.containerIds.map((id) => this.runtime.stopContainer(id, action.graceSeconds)));
        await Promise.all(action.sandboxIds.map((id) => this.runtime.stopContainer(id, action.graceSeconds)));
        await Promise.all([...action.containerIds, ...action.sandboxIds].map((id) => this.runtime.removeContainer(id)));
        this.waiting.delete(action.pod.uid);
        return;
      }
      case 'RemoveContainer':
        return this.runtime.removeContainer(action.containerId);
      case 'ReportRemoved':
        return; // the reconciler reports it: it needs the bus, not the runtime
    }
  }

  private podLabels(pod: DesiredPod): Record<string, string> {
    return {
      [LABELS.managed]: 'true',
      [LABELS.node]: this.config.NODE_NAME,
      [LABELS.podNamespace]: pod.namespace,
      [LABELS.podName]: pod.name,
      [LABELS.podUid]: pod.uid,
      [LABELS.grace]: String(pod.manifest.spec.terminationGracePeriodSeconds ?? 30),
    };
  }

  private async runSandbox(pod: DesiredPod): Promise<void> {
    const image = this.config.POD_INFRA_IMAGE;
    if (!(await this.runtime.imagePresent(image))) await this.runtime.pullImage(image);
    const sandbox = await this.runtime.runPodSandbox({
      name: sandboxName(pod),
      image,
      hostname: pod.name.slice(0, 63),
      labels: { ...this.podLabels(pod), [LABELS.kind]: 'sandbox' },
    });
    this.logger.log(`sandbox of ${podRef(pod)} running with IP ${sandbox.ip ?? '(none)'}`);
  }

  private setWaiting(pod: DesiredPod, container: string, reason: string, message: string): void {
    const reasons: WaitingReasons = this.waiting.get(pod.uid) ?? new Map<string, { reason: string; message: string }>();
    reasons.set(container, { reason, message });
    this.waiting.set(pod.uid, reasons);
    this.logger.warn(`${podRef(pod)} container ${container}: ${reason}: ${message}`);
  }

  private async ensureImage(pod: DesiredPod, container: Container): Promise<boolean> {
    const policy = container.imagePullPolicy ?? 'IfNotPresent';
    const present = policy === 'Always' ? false : await this.runtime.imagePresent(container.image);
    if (present) return true;
    if (policy === 'Never') {
      this.setWaiting(pod, container.name, 'ErrImageNeverPull', `Container image "${container.image}" is not present with pull policy of Never`);
      return false;
    }
    try {
      await this.runtime.pullImage(container.image);
      return true;
    } catch (error) {
      this.setWaiting(pod, container.name, 'ErrImagePull', (error as Error).message);
      return false;
    }
  }

  private async startContainer(pod: DesiredPod, container: Container, attempt: number, sandboxId: string): Promise<void> {
    if (!(await this.ensureImage(pod, container))) return;
    const limits = container.resources?.limits ?? {};
    const requests = container.resources?.requests ?? {};
    let id: string;
    try {
      id = await this.runtime.createContainer(sandboxId, {
        name: containerName(pod, container.name, attempt),
        image: container.image,
        ...(container.command ? { entrypoint: container.command } : {}),
        ...(container.args ? { cmd: container.args } : {}),
        env: (container.env ?? []).map((e) => ({ name: e.name, value: e.value ?? '' })),
        ...(container.workingDir ? { workingDir: container.workingDir } : {}),
        labels: {
          ...this.podLabels(pod),
          [LABELS.kind]: 'container',
          [LABELS.containerName]: container.name,
          [LABELS.restartCount]: String(attempt),
          [LABELS.specHash]: containerSpecHash(container),
        },
        ...(limits.memory !== undefined ? { memoryLimitBytes: memoryBytes(limits.memory) } : {}),
        ...(limits.cpu !== undefined ? { nanoCpus: cpuMillis(limits.cpu) * 1e6 } : {}),
        ...(requests.cpu !== undefined ? { cpuShares: Math.max(2, Math.floor((cpuMillis(requests.cpu) * 1024) / 1000)) } : {}),
      });
    } catch (error) {
      this.setWaiting(pod, container.name, 'CreateContainerError', (error as Error).message);
      return;
    }
    try {
      await this.runtime.startContainer(id);
      this.waiting.get(pod.uid)?.delete(container.name);
      this.logger.log(`started ${podRef(pod)} container ${container.name} (attempt ${attempt})`);
    } catch (error) {
      this.setWaiting(pod, container.name, 'RunContainerError', (error as Error).message);
    }
  }
}
