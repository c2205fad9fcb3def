import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { BUS, type Bus } from '#bus';
import { SUBJECTS, type NodeObject } from '#contracts';
import { parseQuantity } from '#domain';
import type { ContainerRuntime, RuntimeInfo } from '#runtime';
import { AGENT_CONFIG, RUNTIME } from '../agent.constants.js';
import type { AgentConfig } from '../agent.config.js';
import { DesiredStateService } from '../desired/desired-state.service.js';
import { allocatableFrom, parseNodeLabels, parseTaints, pressureConditions, takeReadings } from './node-conditions.js';
import { describeNode, detectNodeIP } from './node-info.js';

const UNKNOWN_RUNTIME: RuntimeInfo = { name: 'docker', version: 'unknown', apiVersion: 'unknown', os: 'unknown', kernelVersion: 'unknown' };

export const AGENT_VERSION = '0.1.0';

/** Registers this node and keeps its heartbeat going. */
@Injectable()
export class NodeService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(NodeService.name);
  private heartbeat?: NodeJS.Timeout;
  private runtimeInfo?: RuntimeInfo;
  private lastReport?: { atMs: number; conditions: string };
  private readonly unknownReported = new Set<string>();
  readonly nodeIP: string;

  constructor(
    @Inject(AGENT_CONFIG) private readonly config: AgentConfig,
    @Inject(BUS) private readonly bus: Bus,
    @Inject(RUNTIME) private readonly runtime: ContainerRuntime,
    private readonly desired: DesiredStateService,
  ) {
    this.nodeIP = config.NODE_IP ?? detectNodeIP();
  }

  async onApplicationBootstrap(): Promise<void> {
    const name = this.config.NODE_NAME;
    this.runtimeInfo = await this.runtime.info();
    const node = await this.report();
    this.logger.log(`registered node ${name} (${this.nodeIP}, ${node.status.capacity.cpu} CPU, ${node.status.capacity.memory} memory)`);
    await this.beat();
    this.heartbeat = setInterval(() => void this.beat(), this.config.HEARTBEAT_SECONDS * 1000);
  }

  /** The node as it is now: capacity, labels, taints, and pressure conditions from fresh readings. */
  private describe(): NodeObject {
    const node = describeNode(this.config.NODE_NAME, this.nodeIP, this.config.MAX_PODS, this.runtimeInfo ?? UNKNOWN_RUNTIME, AGENT_VERSION);
    const taints = parseTaints(this.config.REGISTER_WITH_TAINTS);
    return {
      ...node,
      metadata: { ...node.metadata, labels: { ...parseNodeLabels(this.config.NODE_LABELS), ...node.metadata.labels } },
      spec: { ...node.spec, ...(taints.length ? { taints } : {}) },
      status: {
        ...node.status,
        allocatable: allocatableFrom(node.status.capacity, this.config.SYSTEM_RESERVED, parseQuantity),
        conditions: pressureConditions(takeReadings(this.config.AGENT_ROOT_DIR)),
      },
    };
  }

  /** Publishes the full node status; says once why a condition cannot be determined. */
  private async report(): Promise<NodeObject> {
    const name = this.config.NODE_NAME;
    const node = this.describe();
    await this.bus.publish(SUBJECTS.nodeRegistration(name), 'NodeRegistered', { nodeName: name, node }, { correlationId: name });
    this.lastReport = { atMs: Date.now(), conditions: JSON.stringify(node.status.conditions?.map((c) => [c.type, c.status])) };
    for (const c of node.status.conditions ?? []) {
      if (c.status !== 'Unknown' || this.unknownReported.has(c.type)) continue;
      this.unknownReported.add(c.type);
      this.logger.warn(`${c.type} ${c.message ?? ''}`);
      this.bus.publishBuffered(
        SUBJECTS.nodeEvents(name),
        'NodeEvent',
        {
          nodeName: name,
          eventType: 'Warning',
          reason: 'NodeConditionUnknown',
          message: `${c.type} ${c.message ?? ''}`,
          observedAt: new Date().toISOString(),
        },
        { correlationId: name },
      );
    }
    return node;
  }

  onModuleDestroy(): void {
    clearInterval(this.heartbeat);
  }

  private async beat(): Promise<void> {
    const name = this.config.NODE_NAME;
    try {
      // The full status goes out when a condition moved, and at least every NODE_STATUS_REPORT_SECONDS.
      const conditions = JSON.stringify(this.describe().status.conditions?.map((c) => [c.type, c.status]));
      const due = Date.now() - (this.lastReport?.atMs ?? 0) >= this.config.NODE_STATUS_REPORT_SECONDS * 1000;
      if (due || conditions !== this.lastReport?.conditions) await this.report();
      await this.bus.publish(
        SUBJECTS.nodeHeartbeat(name),
        'NodeHeartbeat',
        { nodeName: name, renewTime: new Date().toISOString(), runningPods: this.desired.runningCount() },
        { correlationId: name },
      );
    } catch (error) {
      this.logger.warn(`heartbeat failed: ${(error as Error).message}`);
    }
  }
}
