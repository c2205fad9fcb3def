import { Module } from '@nestjs/common';
import { BusModule, busTls } from '#bus';
import { loadConfig } from '#contracts';
import { AssignmentsModule } from './assignments/assignments.module.js';
import { BinderModule } from './binder/binder.module.js';
import { CacheModule } from './cache/cache.module.js';
import { MetricsModule } from './metrics/metrics.module.js';
import { NodeLifecycleModule } from './node-lifecycle/node-lifecycle.module.js';
import { SchedulerConfig } from './scheduler.config.js';
import { SchedulerCoreModule } from './scheduler-core.module.js';

const config = loadConfig(SchedulerConfig);

/**
 * The scheduler: the bus, what every part shares (SchedulerCoreModule), and one module per
 * folder: the cache of pods and nodes, node work (assignments), node lifecycle, the binder's
 * pass and the metrics server.
 */
@Module({
  imports: [
    BusModule.forRoot(() => ({
      servers: config.NATS_URL,
      streamReplicas: config.STREAM_REPLICAS,
      name: 'jetlet-scheduler',
      source: { component: 'scheduler' },
      credentials: { identity: { kind: 'scheduler' }, seedFile: config.NATS_NKEY_SEED_FILE },
      tls: busTls(config),
      // It reads back every write it makes (read-your-writes; its own bindings).
      reuseVerified: 4096,
    })),
    SchedulerCoreModule.forConfig(config),
    CacheModule,
    AssignmentsModule,
    NodeLifecycleModule,
    BinderModule,
    MetricsModule,
  ],
})
export class SchedulerModule {}
