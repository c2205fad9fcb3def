import { Module } from '@nestjs/common';
import type { ContainerRuntime } from '#runtime';
import { AGENT_CONFIG, RUNTIME } from '../agent.constants.js';
import type { AgentConfig } from '../agent.config.js';
import { ConfigModule } from '../config/config.module.js';
import { EventsModule } from '../events/events.module.js';
import { ImagesModule } from '../images/images.module.js';
import { StatsModule } from '../stats/stats.module.js';
import { StatusModule } from '../status/status.module.js';
import { EvictionManager } from './eviction-manager.service.js';
import { EVICTION_STORAGE_READER } from './eviction.constants.js';
import { EnginePodStorageReader } from './pod-storage.reader.js';

/** Node-pressure eviction, as the kubelet's eviction manager (the machine's signals come from the agent's core). */
@Module({
  imports: [ConfigModule, StatusModule, EventsModule, StatsModule, ImagesModule],
  providers: [
    EvictionManager,
    {
      provide: EVICTION_STORAGE_READER,
      useFactory: (config: AgentConfig, runtime: ContainerRuntime) => new EnginePodStorageReader(runtime, config.NODE_NAME, config.AGENT_ROOT_DIR),
      inject: [AGENT_CONFIG, RUNTIME],
    },
  ],
  exports: [EvictionManager],
})
export class EvictionModule {}
