import { Injectable, Logger } from '@nestjs/common';
import type { Msg } from '@nats-io/transport-node';
import { firstValueFrom, timeout } from 'rxjs';
import { JetStreamClient } from '#bus';
import { parseContract, StatsSummary, SUBJECTS } from '#contracts';
import { cpuQuantity, memoryQuantity, parseLabelSelector } from '#domain';
import { KubeStatusException } from '../errors/kube-status.exception.js';
import { ProjectionService } from '../projection/projection.service.js';

export const METRICS_GROUP_VERSION = 'metrics.k8s.io/v1beta1';
/** How long the API waits for one node's summary; a node that does not answer is left out, as metrics-server does. */
const SUMMARY_TIMEOUT_MS = 3_000;
/** The window of a rate: the agents' sampling interval. */
const WINDOW = '10s';

interface Usage {
  cpu: string;
  memory: string;
}

export interface NodeMetrics {
  kind: 'NodeMetrics';
  apiVersion: typeof METRICS_GROUP_VERSION;
  metadata: { name: string; creationTimestamp: string; labels?: Record<string, string> };
  timestamp: string;
  window: string;
  usage: Usage;
}

export interface PodMetrics {
  kind: 'PodMetrics';
  apiVersion: typeof METRICS_GROUP_VERSION;
  metadata: { name: string; namespace: string; creationTimestamp: string; labels?: Record<string, string> };
  timestamp: string;
  window: string;
  containers: Array<{ name: string; usage: Usage }>;
}

const list = <K extends string, T>(
  kind: K,
  items: T[],
): { kind: K; apiVersion: typeof METRICS_GROUP_VERSION; metadata: Record<string, never>; items: T[] } => ({
  kind,
  apiVersion: METRICS_GROUP_VERSION,
  metadata: {},
  items,
});

/**
 * The Metrics API (`metrics.k8s.io/v1beta1`) as metrics-server serves it, from the agents'
 * Summary API over NATS: each node's agent is asked (request/reply) for its last samples,
 * and a node or pod without a CPU rate yet (fewer than two samples) is left out.
 */
@Injectable()
export class ResourceMetricsService {
  private readonly logger = new Logger(ResourceMetricsService.name);

  constructor(
    private readonly client: JetStreamClient,
    private readonly projection: ProjectionService,
  ) {}

  async nodes(labelSelector?: string): Promise<ReturnType<typeof list<'NodeMetricsList', NodeMetrics>>> {
    const selector = parseSelector(labelSelector);
    const nodes = this.projection.nodes.list().filter((n) => selector.matches(n.node.metadata.labels));
    const summaries = await Promise.all(nodes.map((n) => this.summary(n.name)));
    const items: NodeMetrics[] = [];
    for (const summary of summaries) {
      const node = summary?.node;
      if (node?.cpu.usageNanoCores === undefined) continue;
      const record = nodes.find((n) => n.name === node.nodeName);
      items.push({
        kind: 'NodeMetrics',
        apiVersion: METRICS_GROUP_VERSION,
        metadata: {
          name: node.nodeName,
          creationTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
          ...(record?.node.metadata.labels ? { labels: record.node.metadata.labels } : {}),
        },
        timestamp: node.cpu.time,
        window: WINDOW,
        usage: { cpu: cpuQuantity(node.cpu.usageNanoCores), memory: memoryQuantity(node.memory.workingSetBytes) },
      });
    }
    return list('NodeMetricsList', items);
  }

  async node(name: string): Promise<NodeMetrics> {
    const found = (await this.nodes()).items.find((n) => n.metadata.name === name);
    if (!found) throw KubeStatusException.notFound('nodes.metrics.k8s.io', name);
    return found;
  }

  async pods(namespace?: string, labelSelector?: string): Promise<ReturnType<typeof list<'PodMetricsList', PodMetrics>>> {
    const selector = parseSelector(labelSelector);
    const records = this.projection.pods.list(namespace).filter((p) => !p.removed && p.nodeName && selector.matches(p.manifest.metadata.labels));
    const nodes = [...new Set(records.map((p) => p.nodeName as string))];
    const summaries = await Promise.all(nodes.map((n) => this.summary(n)));
    const byUid = new Map(summaries.flatMap((s) => s?.pods ?? []).map((p) => [p.podRef.uid, p]));
    const items: PodMetrics[] = [];
    for (const record of records) {
      const stats = byUid.get(record.uid);
      // As metrics-server: a pod is reported once every one of its running containers has a rate.
      if (!stats || stats.containers.length === 0 || stats.containers.some((c) => c.cpu.usageNanoCores === undefined)) continue;
      items.push({
        kind: 'PodMetrics',
        apiVersion: METRICS_GROUP_VERSION,
        metadata: {
          name: record.name,
          namespace: record.namespace,
          creationTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
          ...(record.manifest.metadata.labels ? { labels: record.manifest.metadata.labels } : {}),
        },
        timestamp: stats.containers.map((c) => c.cpu.time).sort()[0] ?? '',
        window: WINDOW,
        containers: stats.containers.map((c) => ({
          name: c.name,
          usage: { cpu: cpuQuantity(c.cpu.usageNanoCores ?? 0), memory: memoryQuantity(c.memory.workingSetBytes) },
        })),
      });
    }
    return list('PodMetricsList', items);
  }

  async pod(namespace: string, name: string): Promise<PodMetrics> {
    const found = (await this.pods(namespace)).items.find((p) => p.metadata.name === name);
    if (!found) throw KubeStatusException.notFound('pods.metrics.k8s.io', name);
    return found;
  }

  /** One node's summary, or undefined when its agent does not answer in time or answers nonsense. */
  private async summary(node: string): Promise<StatsSummary | undefined> {
    try {
      // The first reply; unsubscribing (firstValueFrom) ends the request.
      const reply = await firstValueFrom(this.client.send<Msg>(SUBJECTS.statsRequests(node), {}).pipe(timeout(SUMMARY_TIMEOUT_MS)));
      return parseContract(StatsSummary, reply.json(), 'StatsSummary');
    } catch (error) {
      this.logger.debug(`no stats from node ${node}: ${(error as Error).message}`);
      return undefined;
    }
  }
}

function parseSelector(input: string | undefined): ReturnType<typeof parseLabelSelector> {
  try {
    return parseLabelSelector(input);
  } catch (error) {
    throw KubeStatusException.badRequest((error as Error).message);
  }
}
