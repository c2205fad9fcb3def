import { Module } from '@nestjs/common';
import { ConfigModule } from '../config/config.module.js';
import { StatusModule } from '../status/status.module.js';
import { StatsCollector } from './stats-collector.service.js';
import { StatsRequestsController } from './stats-requests.controller.js';
import { StatsController } from './stats.controller.js';

/** The Summary API of this node: served on HTTP and to the Metrics API's requests. */
@Module({
  imports: [ConfigModule, StatusModule],
  controllers: [StatsController, StatsRequestsController],
  providers: [StatsCollector],
  exports: [StatsCollector],
})
export class StatsModule {}
