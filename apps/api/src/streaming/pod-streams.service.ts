import { randomUUID } from 'node:crypto';
import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import { JetStreamClient } from '#bus';
import type { PodStreamKind, PodStreamRequest } from '#contracts';
import { logContainerName, type PodRecord } from '#domain';
import { KubeStatusException } from '../errors/kube-status.exception.js';
import { ProjectionService } from '../projection/projection.service.js';
import { PodStream, PodStreamError } from './pod-stream.js';
import type { PortForwardConnection } from './port-forward.js';

/** `kubectl exec`'s and `attach`'s query: the command and which streams, as PodExecOptions / PodAttachOptions. */
export interface RemoteCommandOptions {
  container?: string;
  command: string[];
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  tty: boolean;
}

/** A query parameter's values: Express gives a string, or an array when the parameter repeats. */
const asList = (value: unknown): string[] => (Array.isArray(value) ? value : [value]).filter((v): v is string => typeof v === 'string');

/** A query boolean as the API server's parameter codec reads it. */
function asBoolean(query: Record<string, unknown>, key: string): boolean {
  const text = asList(query[key])[0] ?? '';
  if (text === '' || text === 'false' || text === '0') return false;
  if (text === 'true' || text === '1') return true;
  throw KubeStatusException.badRequest(`invalid value for ${key}: ${JSON.stringify(text)}: strconv.ParseBool: parsing ${JSON.stringify(text)}: invalid syntax`);
}

/** Parses an exec or attach query; 400 for what does not parse. */
export function parseRemoteCommandQuery(query: Record<string, unknown>): RemoteCommandOptions {
  const container = asList(query['container'])[0];
  const tty = asBoolean(query, 'tty');
  return {
    ...(container ? { container } : {}),
    command: asList(query['command']),
    stdin: asBoolean(query, 'stdin'),
    stdout: asBoolean(query, 'stdout'),
    // With a terminal, stderr is part of stdout (the kubelet's rule).
    stderr: asBoolean(query, 'stderr') && !tty,
    tty,
  };
}

/**
 * Exec, attach and port-forward, as the API server's pod subresources: the API checks the
 * request against the pod it knows (container, bound, still running) and asks the agent of
 * the pod's node, over NATS, for the stream. The API never connects to a node.
 */
@Injectable()
export class PodStreamsService implements OnModuleDestroy {
  /** Streams being served, so a shutdown ends them instead of waiting for clients. */
  private readonly open = new Set<PodStream>();
  /** Port-forward connections being served. */
  private readonly connections = new Set<PortForwardConnection>();

  constructor(
    private readonly client: JetStreamClient,
    private readonly projection: ProjectionService,
  ) {}

  onModuleDestroy(): void {
    for (const connection of this.connections) connection.close();
    for (const stream of this.open) stream.cancel();
  }

  /** Ends `connection` when the API stops; forgets it once it is over. */
  track(connection: PortForwardConnection): void {
    this.connections.add(connection);
    void connection.closed().then(() => this.connections.delete(connection));
  }

  /** Streams open now. */
  get count(): number {
    return this.open.size;
  }

  /** Checks an exec or attach against the pod; every refusal is a KubeStatusException. Returns the request to open. */
  checkRemoteCommand(
    namespace: string,
    name: string,
    kind: Extract<PodStreamKind, 'exec' | 'attach'>,
    options: RemoteCommandOptions,
  ): { node: string; request: PodStreamRequest } {
    const record = this.streamablePod(namespace, name, kind);
    const container = logContainerName(
      name,
      record.manifest.spec.containers.map((c) => c.name),
      options.container,
      (record.manifest.spec.initContainers ?? []).map((c) => c.name),
      (record.manifest.spec.ephemeralContainers ?? []).map((c) => c.name),
    );
    if (!container.ok) throw KubeStatusException.badRequest(container.message);
    if (kind === 'exec' && options.command.length === 0) throw KubeStatusException.badRequest('you must specify at least one command for the container');
    if (!options.stdin && !options.stdout && !options.stderr) throw KubeStatusException.badRequest('you must specify at least 1 of stdin, stdout, stderr');
    const request: PodStreamRequest = {
      version: 1,
      streamId: randomUUID(),
      kind,
      namespace,
      name,
      uid: record.uid,
      container: container.value,
      ...(kind === 'exec' ? { command: options.command } : {}),
      stdin: options.stdin,
      stdout: options.stdout,
      stderr: options.stderr,
      tty: options.tty,
    };
    return { node: record.nodeName, request };
  }

  /**
   * Checks a port-forward against the pod; every refusal is a KubeStatusException. Returns
   * the node and a request for each forwarded connection to a port.
   */
  checkPortForward(namespace: string, name: string): { node: string; uid: string; request: (port: number) => PodStreamRequest } {
    const record = this.streamablePod(namespace, name, 'portforward');
    const { nodeName: node, uid } = record;
    return {
      node,
      uid,
      request: (port) => ({ version: 1, streamId: randomUUID(), kind: 'portforward', namespace, name, uid, port }),
    };
  }

  /** The pod, if a stream to it can be served: it exists, is bound, and has not completed. */
  private streamablePod(namespace: string, name: string, kind: PodStreamKind): PodRecord & { nodeName: string } {
    const record = this.projection.pods.get(namespace, name);
    if (!record || record.removed) throw KubeStatusException.notFound('pods', name);
    const phase = record.status?.phase;
    if (phase === 'Succeeded' || phase === 'Failed') {
      const what = kind === 'portforward' ? 'forward ports of' : `${kind} into a container in`;
      throw KubeStatusException.badRequest(`cannot ${what} a completed pod; current phase is ${phase}`);
    }
    if (!record.nodeName) throw KubeStatusException.badRequest(`pod ${name} does not have a host assigned`);
    return record as PodRecord & { nodeName: string };
  }

  /** Asks the agent of `node` for the stream; its refusal (or absence) is a KubeStatusException. */
  async openStream(node: string, request: PodStreamRequest): Promise<PodStream> {
    const stream = new PodStream(this.client, node, request);
    try {
      await stream.open();
    } catch (error) {
      if (!(error instanceof PodStreamError)) throw error;
      if (error.code === 404) throw KubeStatusException.notFound('pods', request.name);
      throw new KubeStatusException(error.code, error.reason, error.message);
    }
    this.open.add(stream);
    stream.attachCloseListener(() => this.open.delete(stream));
    return stream;
  }
}
