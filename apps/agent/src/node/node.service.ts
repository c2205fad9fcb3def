import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { BUS, type Bus } from '#bus';
import { SUBJECTS } from '#contracts';
import type { ContainerRuntime } from '#runtime';
import { AGENT_CONFIG, RUNTIME } from '../agent.constants.js';
import type { AgentConfig } from '../agent.config.js';
import { DesiredStateService } from '../desired/desired-state.service.js';
import { describeNode, detectNodeIP } from './node-info.js';

export const AGENT_VERSION = '0.1.0';

/** Registers this node and keeps its heartbeat going. */
@Injectable()
export class NodeService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(NodeService.name);
  private heartbeat?: NodeJS.Timeout;
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
    const node = describeNode(name, this.nodeIP, this.config.MAX_PODS, await this.runtime.info(), AGENT_VERSION);
    await this.bus.publish(SUBJECTS.nodeRegistration(name), 'NodeRegistered', { nodeName: name, node }, { correlationId: name });
    this.logger.log(`registered node ${name} (${this.nodeIP}, ${node.status.capacity.cpu} CPU, ${node.status.capacity.memory} memory)`);
    await this.beat();
    this.heartbeat = setInterval(() => void this.beat(), this.config.HEARTBEAT_SECONDS * 1000);
  }

  onModuleDestroy(): void {
    clearInterval(this.heartbeat);
  }

  private async beat(): Promise<void> {
    const name = this.config.NODE_NAME;
    try {
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
