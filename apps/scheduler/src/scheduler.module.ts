import { Module } from '@nestjs/common';
import { BusModule, busTls } from '#bus';
import { loadConfig } from '#contracts';
import { SCHEDULER_CONFIG } from './scheduler.constants.js';
import { SchedulerConfig } from './scheduler.config.js';
import { MetricsServer } from './metrics/metrics-server.service.js';
import { SchedulingController } from './binder/scheduling.controller.js';
import { SchedulingService } from './binder/scheduling.service.js';

const config = loadConfig(SchedulerConfig);

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
  ],
  controllers: [SchedulingController],
  providers: [{ provide: SCHEDULER_CONFIG, useValue: config }, SchedulingService, MetricsServer],
})
export class SchedulerModule {}
