import { readFileSync } from 'node:fs';
import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { type ContainerStatsSummary, type PodStatsSummary, type StatsSummary } from '#contracts';
import { meminfoWorkingSetBytes, nanoCores, procStatBusyNanoseconds, type CpuSample } from '#domain/resource-usage';
import { runningContainerId } from '#domain/streams';
import type { ContainerRuntime } from '#runtime';
import { AGENT_CONFIG, RUNTIME } from '../agent.constants.js';
import type { AgentConfig } from '../agent.config.js';
import { DesiredStateService } from '../config/desired-state.service.js';
import { readCgroupLimits } from '../node/cgroup-limits.js';
import { StatusReporter } from '../status/status-reporter.service.js';

/** How often containers and the node are sampled (cAdvisor's housekeeping interval is of this order). */
export const STATS_INTERVAL_MS = 10_000;

const rfc3339 = (ms: number): string => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');

function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/**
 * The kubelet's stats provider in small: every STATS_INTERVAL_MS it samples the node (CPU
 * from /proc/stat, memory working set from the agent's cgroup when it has a limit, else
 * MemTotal − MemAvailable) and every running container of its pods (Docker stats), and keeps
 * the last Summary, with CPU as the rate between the last two samples. The API's Metrics
 * API asks for it over NATS (StatsRequestsController); `/stats/summary` and `/metrics/resource`
 * serve it over HTTP.
 */
@Injectable()
export class StatsCollector implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(StatsCollector.name);
  private readonly previous = new Map<string, CpuSample>();
  private latest?: StatsSummary;
  private timer?: NodeJS.Timeout;
  private collecting?: Promise<void>;

  constructor(
    @Inject(AGENT_CONFIG) private readonly config: AgentConfig,
    @Inject(RUNTIME) private readonly runtime: ContainerRuntime,
    private readonly desired: DesiredStateService,
    private readonly status: StatusReporter,
  ) {}

  onModuleInit(): void {
    this.collectInBackground();
    this.timer = setInterval(() => this.collectInBackground(), STATS_INTERVAL_MS);
  }

  async onModuleDestroy(): Promise<void> {
    clearInterval(this.timer);
    await this.collecting;
  }

  /** The last summary; the first one is collected on demand. */
  async summary(): Promise<StatsSummary> {
    if (!this.latest) await (this.collecting ?? this.collect());
    return this.latest ?? (await this.collect().then(() => this.latest as StatsSummary));
  }

  private collectInBackground(): void {
    if (this.collecting) return;
    this.collecting = this.collect()
      .catch((error: unknown) => this.logger.warn(`stats collection failed: ${(error as Error).message}`))
      .finally(() => (this.collecting = undefined));
  }

  private async collect(): Promise<void> {
    const sampled = new Set<string>(['node']);
    const pods = await Promise.all(
      this.desired
        .list()
        .filter((pod) => !pod.terminating)
        .map(async (pod): Promise<PodStatsSummary> => {
          const statuses = this.status.previous(pod.uid)?.containerStatuses ?? [];
          const containers = await Promise.all(
            statuses.map(async (s): Promise<ContainerStatsSummary | undefined> => {
              const id = runningContainerId(pod.name, s.name, s);
              if (!id.ok) return undefined;
              sampled.add(id.value);
              try {
                const stats = await this.runtime.containerStats(id.value);
                return {
                  name: s.name,
                  cpu: this.cpu(id.value, { timeMs: stats.timeMs, usageNanoseconds: stats.cpuUsageNanoseconds }),
                  memory: { time: rfc3339(stats.timeMs), workingSetBytes: stats.memoryWorkingSetBytes, usageBytes: stats.memoryUsageBytes },
                };
              } catch {
                // Stopped between the status and the sample: it has nothing to report.
                return undefined;
              }
            }),
          );
          return { podRef: { name: pod.name, namespace: pod.namespace, uid: pod.uid }, containers: containers.filter((c) => c !== undefined) };
        }),
    );
    // Containers that stopped leave no sample behind.
    for (const key of this.previous.keys()) if (!sampled.has(key)) this.previous.delete(key);
    const nowMs = Date.now();
    const busy = procStatBusyNanoseconds(readText('/proc/stat')) ?? 0;
    const limits = readCgroupLimits();
    const workingSet = limits.memoryWorkingSetBytes ?? meminfoWorkingSetBytes(readText('/proc/meminfo')) ?? 0;
    this.latest = {
      node: {
        nodeName: this.config.NODE_NAME,
        cpu: this.cpu('node', { timeMs: nowMs, usageNanoseconds: busy }),
        memory: { time: rfc3339(nowMs), workingSetBytes: workingSet, usageBytes: workingSet },
      },
      pods,
    };
  }

  /** The CPU stats of a counter, with the rate since its previous sample. */
  private cpu(key: string, sample: CpuSample): ContainerStatsSummary['cpu'] {
    const rate = nanoCores(this.previous.get(key), sample);
    this.previous.set(key, sample);
    return { time: rfc3339(sample.timeMs), usageCoreNanoSeconds: Math.round(sample.usageNanoseconds), ...(rate !== undefined ? { usageNanoCores: rate } : {}) };
  }
}
