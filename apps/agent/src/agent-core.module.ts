import { mkdir } from 'node:fs/promises';
import { Logger, Module, type DynamicModule } from '@nestjs/common';
import { DockerRuntime, FakeRuntime, type ContainerRuntime } from '#runtime';
import { AGENT_CONFIG, RUNTIME } from './agent.constants.js';
import type { AgentConfig } from './agent.config.js';
import { AgentMetrics } from './agent.metrics.js';
import { EVICTION_SIGNAL_READER } from './eviction/eviction.constants.js';
import { MachineSignalReader } from './eviction/eviction-manager.service.js';
import { PlegHealth } from './pleg/pleg-health.js';

/** The runtime the config names: the Docker engine, or the in-memory one of a hollow node. */
function createRuntime(config: AgentConfig, nodeIndex: number): ContainerRuntime {
  return config.RUNTIME === 'fake' ? new FakeRuntime({ nodeIndex }) : new DockerRuntime(undefined, { relistSeconds: config.PLEG_RELIST_SECONDS });
}

/**
 * The agent's root dir, made before anything reads it, as the kubelet makes its own at start:
 * the node's ephemeral-storage and nodefs signals are read from its file system.
 */
async function makeRootDir(config: AgentConfig): Promise<AgentConfig> {
  await mkdir(config.AGENT_ROOT_DIR, { recursive: true }).catch((error: unknown) =>
    new Logger('AgentCoreModule').warn(`cannot make AGENT_ROOT_DIR ${config.AGENT_ROOT_DIR}: ${(error as Error).message}`),
  );
  return config;
}

/** Where an agent's metrics live: a registry of its own, or the hollow process's, labelled by node. */
export type AgentMetricsScope = 'own' | 'process';

/**
 * What every part of one agent shares: its config, its container runtime, its metrics, the
 * PLEG's health (read by the node's conditions, the sync loop and /healthz) and the
 * machine's signals (read by eviction and image GC). Global within one agent's application,
 * and created per agent, so hollow nodes share none of it.
 */
@Module({})
export class AgentCoreModule {
  /**
   * `nodeIndex` picks a hollow node's block of fake pod IPs; a Docker node ignores it.
   * `metrics`: `own`, a registry of this agent's own; `process`, this node's series in the
   * families a hollow process's agents share (`AgentMetrics.ofHollowNode`).
   */
  static forConfig(config: AgentConfig, nodeIndex = 0, metrics: AgentMetricsScope = 'own'): DynamicModule {
    return {
      module: AgentCoreModule,
      global: true,
      providers: [
        { provide: AGENT_CONFIG, useFactory: () => makeRootDir(config) },
        { provide: RUNTIME, useFactory: () => createRuntime(config, nodeIndex) },
        // Per agent: hollow nodes run many agents side by side, each with its own series.
        { provide: AgentMetrics, useFactory: () => (metrics === 'process' ? AgentMetrics.ofHollowNode(config.NODE_NAME) : new AgentMetrics()) },
        { provide: PlegHealth, useFactory: (metrics: AgentMetrics) => new PlegHealth(metrics), inject: [AgentMetrics] },
        { provide: EVICTION_SIGNAL_READER, useFactory: () => new MachineSignalReader(config.AGENT_ROOT_DIR, config.IMAGEFS_PATH) },
      ],
      exports: [AGENT_CONFIG, RUNTIME, AgentMetrics, PlegHealth, EVICTION_SIGNAL_READER],
    };
  }
}
