import { Inject, Injectable } from '@nestjs/common';
import type { PodStreamRequest } from '#contracts';
import { podContainers } from '#domain/init-containers';
import type { DesiredPod } from '#domain/reconcile';
import { runningContainerId } from '#domain/streams';
import type { ContainerRuntime, ProcessStream } from '#runtime';
import { AGENT_CONFIG, RUNTIME } from '../agent.constants.js';
import type { AgentConfig } from '../agent.config.js';
import { DesiredStateService } from '../config/desired-state.service.js';
import { StatusReporter } from '../status/status-reporter.service.js';
import { PodPortDialer } from './pod-port-dialer.js';
import { StreamRequestError } from './stream-request.error.js';

/**
 * What an exec, attach or port-forward connects to, as the kubelet's streaming server finds
 * it: the pod from this node's desired set (the incarnation the API named), the container
 * from its spec, its running run and the pod's IP from the last computed status; the process
 * from the runtime, the port through the dialer.
 */
@Injectable()
export class ContainerStreams {
  constructor(
    @Inject(RUNTIME) private readonly runtime: ContainerRuntime,
    private readonly desired: DesiredStateService,
    private readonly status: StatusReporter,
    private readonly dialer: PodPortDialer,
    @Inject(AGENT_CONFIG) private readonly config: AgentConfig,
  ) {}

  /** Starts the exec or attaches; throws StreamRequestError when the request cannot be served. */
  async open(request: PodStreamRequest): Promise<ProcessStream> {
    const pod = this.find(request);
    if (!pod) throw new StreamRequestError(404, 'NotFound', `pods "${request.name}" not found`);
    if (request.kind === 'portforward') return this.portForward(pod, request.port);
    const name = request.container ?? pod.manifest.spec.containers[0]?.name ?? '';
    if (![...podContainers(pod.manifest.spec), ...(pod.manifest.spec.ephemeralContainers ?? [])].some((c) => c.name === name)) {
      throw new StreamRequestError(400, 'BadRequest', `container ${name} is not valid for pod ${request.name}`);
    }
    const last = this.status.previous(pod.uid);
    const id = runningContainerId(
      request.name,
      name,
      [...(last?.initContainerStatuses ?? []), ...(last?.containerStatuses ?? []), ...(last?.ephemeralContainerStatuses ?? [])].find((s) => s.name === name),
    );
    if (!id.ok) throw new StreamRequestError(400, 'BadRequest', id.message);
    const options = { stdin: request.stdin ?? false, stdout: request.stdout ?? false, stderr: request.stderr ?? false, tty: request.tty ?? false };
    if (request.kind === 'exec') {
      if (!request.command?.length) throw new StreamRequestError(400, 'BadRequest', 'you must specify at least one command for the container');
      return this.runtime.execStream(id.value, request.command, options);
    }
    return this.runtime.attach(id.value, options);
  }

  private async portForward(pod: DesiredPod, port: number | undefined): Promise<ProcessStream> {
    if (port === undefined) throw new StreamRequestError(400, 'BadRequest', 'a port is required');
    // A hollow node's pod IPs belong to no one: nothing may be sent to them.
    if (this.config.RUNTIME === 'fake') throw new StreamRequestError(501, 'NotImplemented', 'a hollow node forwards no ports');
    const ip = this.status.previous(pod.uid)?.podIP;
    if (!ip) throw new StreamRequestError(400, 'BadRequest', `pod ${pod.name} has no IP yet`);
    try {
      return await this.dialer.dial(ip, port);
    } catch (error) {
      throw new StreamRequestError(500, 'InternalError', (error as Error).message, { cause: error });
    }
  }

  /** The pod the request names, if it is on this node and not being torn down. */
  find(request: Pick<PodStreamRequest, 'namespace' | 'name' | 'uid'>): DesiredPod | undefined {
    return this.desired.list().find((p) => p.namespace === request.namespace && p.name === request.name && p.uid === request.uid && !p.terminating);
  }
}
