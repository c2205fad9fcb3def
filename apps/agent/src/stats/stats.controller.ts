import { Controller, Get, Header, UseGuards } from '@nestjs/common';
import type { StatsSummary } from '#contracts';
import { AgentTokenGuard } from '../server/agent-token.guard.js';
import { StatsCollector } from './stats-collector.service.js';

/** A Prometheus text line; label values escaped as the format asks. */
function sample(name: string, labels: Record<string, string>, value: number, timeMs: number): string {
  const pairs = Object.entries(labels).map(([k, v]) => `${k}="${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`);
  return `${name}${pairs.length ? `{${pairs.join(',')}}` : ''} ${value} ${timeMs}`;
}

/**
 * The kubelet's resource metrics endpoint, from the last summary: the series metrics-server
 * reads (node, pod and container CPU seconds and memory working set), with the sample time.
 */
export function resourceMetricsText(summary: StatsSummary): string {
  const lines: string[] = [];
  const family = (name: string, type: string, help: string): void => void lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
  const ms = (time: string): number => Date.parse(time);
  family('node_cpu_usage_seconds_total', 'counter', 'Cumulative cpu time consumed by the node in core-seconds');
  lines.push(sample('node_cpu_usage_seconds_total', {}, summary.node.cpu.usageCoreNanoSeconds / 1e9, ms(summary.node.cpu.time)));
  family('node_memory_working_set_bytes', 'gauge', 'Current working set of the node in bytes');
  lines.push(sample('node_memory_working_set_bytes', {}, summary.node.memory.workingSetBytes, ms(summary.node.memory.time)));
  family('container_cpu_usage_seconds_total', 'counter', 'Cumulative cpu time consumed by the container in core-seconds');
  for (const pod of summary.pods)
    for (const c of pod.containers)
      lines.push(
        sample(
          'container_cpu_usage_seconds_total',
          { container: c.name, namespace: pod.podRef.namespace, pod: pod.podRef.name },
          c.cpu.usageCoreNanoSeconds / 1e9,
          ms(c.cpu.time),
        ),
      );
  family('container_memory_working_set_bytes', 'gauge', 'Current working set of the container in bytes');
  for (const pod of summary.pods)
    for (const c of pod.containers)
      lines.push(
        sample(
          'container_memory_working_set_bytes',
          { container: c.name, namespace: pod.podRef.namespace, pod: pod.podRef.name },
          c.memory.workingSetBytes,
          ms(c.memory.time),
        ),
      );
  const pods = summary.pods.filter((pod) => pod.containers.length > 0);
  const podSample = (pod: StatsSummary['pods'][number], name: string, value: (c: StatsSummary['pods'][number]['containers'][number]) => number): string =>
    sample(
      name,
      { namespace: pod.podRef.namespace, pod: pod.podRef.name },
      pod.containers.reduce((sum, c) => sum + value(c), 0),
      Math.max(...pod.containers.map((c) => ms(c.cpu.time))),
    );
  family('pod_cpu_usage_seconds_total', 'counter', 'Cumulative cpu time consumed by the pod in core-seconds');
  for (const pod of pods) lines.push(podSample(pod, 'pod_cpu_usage_seconds_total', (c) => c.cpu.usageCoreNanoSeconds / 1e9));
  family('pod_memory_working_set_bytes', 'gauge', 'Current working set of the pod in bytes');
  for (const pod of pods) lines.push(podSample(pod, 'pod_memory_working_set_bytes', (c) => c.memory.workingSetBytes));
  return `${lines.join('\n')}\n`;
}

/** `/stats/summary` and `/metrics/resource`, behind the agent's bearer token as its other endpoints. */
@Controller()
@UseGuards(AgentTokenGuard)
export class StatsController {
  constructor(private readonly stats: StatsCollector) {}

  @Get('stats/summary')
  summary(): Promise<StatsSummary> {
    return this.stats.summary();
  }

  @Get('metrics/resource')
  @Header('content-type', 'text/plain; version=0.0.4; charset=utf-8')
  async resource(): Promise<string> {
    return resourceMetricsText(await this.stats.summary());
  }
}
