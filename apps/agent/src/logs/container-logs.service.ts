import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import type { PodLogOptions } from '#contracts';
import { logContainerId, logContainerName } from '#domain/logs';
import type { DesiredPod } from '#domain/reconcile';
import type { ContainerRuntime } from '#runtime';
import { RUNTIME } from '../agent.constants.js';
import { DesiredStateService } from '../config/desired-state.service.js';
import { StatusReporter } from '../status/status-reporter.service.js';
import { LogRequestError } from './log-request.error.js';

/** A pod as a log request names it; `uid` pins one incarnation. */
export interface LogPodRef {
  namespace: string;
  name: string;
  uid?: string;
}

/**
 * Container logs as the kubelet serves them: the pod from this node's desired set, the
 * container from its spec, the run from its last computed status (the current one, or
 * the previous with `previous`), the text from the runtime. Both the NATS responder and
 * the agent's own /containerLogs go through here.
 */
@Injectable()
export class ContainerLogs implements OnModuleDestroy {
  /** Aborts every log read when the agent stops, so no followed log holds the HTTP server open. */
  private readonly shutdown = new AbortController();

  constructor(
    @Inject(RUNTIME) private readonly runtime: ContainerRuntime,
    private readonly desired: DesiredStateService,
    private readonly status: StatusReporter,
  ) {}

  /** The runtime id of the container run whose log is asked for; throws LogRequestError when there is none. */
  async resolve(ref: LogPodRef, options: PodLogOptions): Promise<string> {
    const pod = this.find(ref);
    if (!pod) throw new LogRequestError(404, 'NotFound', `pods "${ref.name}" not found`);
    const container = logContainerName(
      ref.name,
      pod.manifest.spec.containers.map((c) => c.name),
      options.container,
      (pod.manifest.spec.initContainers ?? []).map((c) => c.name),
      (pod.manifest.spec.ephemeralContainers ?? []).map((c) => c.name),
    );
    if (!container.ok) throw new LogRequestError(400, 'BadRequest', container.message);
    const previous = this.status.previous(pod.uid);
    const status = [...(previous?.initContainerStatuses ?? []), ...(previous?.containerStatuses ?? []), ...(previous?.ephemeralContainerStatuses ?? [])].find(
      (s) => s.name === container.value,
    );
    const id = logContainerId(ref.name, container.value, status, options.previous ?? false);
    if (!id.ok) throw new LogRequestError(400, 'BadRequest', id.message);
    if ((await this.runtime.inspectContainer(id.value)) === undefined) {
      throw new LogRequestError(400, 'BadRequest', `container "${container.value}" in pod "${ref.name}" has no log any more: its run was removed`);
    }
    return id.value;
  }

  onModuleDestroy(): void {
    this.shutdown.abort();
  }

  /** The container's log text, as it comes, until `signal` aborts or the agent stops; see ContainerRuntime.streamLogs. */
  stream(containerId: string, options: PodLogOptions, signal: AbortSignal): AsyncIterable<string> {
    return this.runtime.streamLogs(
      containerId,
      {
        ...(options.follow !== undefined ? { follow: options.follow } : {}),
        ...(options.tailLines !== undefined ? { tailLines: options.tailLines } : {}),
        ...(options.sinceSeconds !== undefined ? { sinceSeconds: options.sinceSeconds } : {}),
        ...(options.timestamps !== undefined ? { timestamps: options.timestamps } : {}),
      },
      AbortSignal.any([signal, this.shutdown.signal]),
    );
  }

  /** The pod of that name on this node; a live incarnation before one being torn down. */
  private find(ref: LogPodRef): DesiredPod | undefined {
    const candidates = this.desired.list().filter((p) => p.namespace === ref.namespace && p.name === ref.name && (ref.uid === undefined || p.uid === ref.uid));
    return candidates.find((p) => !p.terminating) ?? candidates[0];
  }
}
