import { randomUUID } from 'node:crypto';
import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import { JetStreamClient } from '#bus';
import { ContractValidationError, parsePodLogQuery, PodLogQueryError, type LogRequest, type PodLogOptions } from '#contracts';
import { logContainerName } from '#domain';
import { KubeStatusException } from '../errors/kube-status.exception.js';
import { ProjectionService } from '../projection/projection.service.js';
import { PodLogStream, PodLogStreamError } from './pod-log-stream.js';

/**
 * Pod logs, as the API server's `pods/log`: the API checks the request against the pod it
 * knows (container name, bound or not) and asks the agent of the pod's node, over NATS,
 * for the rest. The API never connects to a node.
 */
@Injectable()
export class PodLogsService implements OnModuleDestroy {
  /** Streams being served, so a shutdown ends them instead of waiting for every follow to end. */
  private readonly open = new Set<PodLogStream>();

  constructor(
    private readonly client: JetStreamClient,
    private readonly projection: ProjectionService,
  ) {}

  onModuleDestroy(): void {
    for (const stream of this.open) stream.cancel();
  }

  /** Query parameters to options: 400 for what does not parse, 422 for values out of range. */
  parseQuery(name: string, query: Record<string, unknown>): PodLogOptions {
    try {
      return parsePodLogQuery(query);
    } catch (error) {
      if (error instanceof PodLogQueryError) throw KubeStatusException.badRequest(error.message);
      if (error instanceof ContractValidationError) {
        const list = error.causes.map((c) => `${c.field}: ${c.message}`);
        throw new KubeStatusException(422, 'Invalid', `PodLogOptions "${name}" is invalid: ${list.length === 1 ? list[0] : `[${list.join(', ')}]`}`, {
          name,
          kind: 'PodLogOptions',
          causes: error.causes.map((c) => ({ reason: c.reason, message: c.message, field: c.field })),
        });
      }
      throw error;
    }
  }

  /** Opens the log of one of the pod's containers; every refusal is a KubeStatusException, thrown before any byte of the log. */
  async openStream(namespace: string, name: string, options: PodLogOptions): Promise<PodLogStream> {
    const record = this.projection.pods.get(namespace, name);
    if (!record) throw KubeStatusException.notFound('pods', name);
    const container = logContainerName(
      name,
      record.manifest.spec.containers.map((c) => c.name),
      options.container,
      (record.manifest.spec.initContainers ?? []).map((c) => c.name),
      (record.manifest.spec.ephemeralContainers ?? []).map((c) => c.name),
    );
    if (!container.ok) throw KubeStatusException.badRequest(container.message);
    const waitingToStart = KubeStatusException.badRequest(`container "${container.value}" in pod "${name}" is waiting to start: ContainerCreating`);
    if (!record.nodeName) throw waitingToStart;
    const request: LogRequest = { version: 1, streamId: randomUUID(), namespace, name, uid: record.uid, ...options, container: container.value };
    const stream = new PodLogStream(this.client, record.nodeName, request);
    try {
      await stream.open();
    } catch (error) {
      if (!(error instanceof PodLogStreamError)) throw error;
      // Bound, but the assignment has not reached the agent yet: for the user, the container is not there yet.
      if (error.code === 404) throw waitingToStart;
      throw new KubeStatusException(error.code, error.reason, error.message);
    }
    this.open.add(stream);
    stream.onClose(() => this.open.delete(stream));
    return stream;
  }
}
