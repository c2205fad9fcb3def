import { Module, type DynamicModule } from '@nestjs/common';
import { CLOCK, systemClock } from '#workqueue';
import { SCHEDULER_CONFIG } from './scheduler.constants.js';
import type { SchedulerConfig } from './scheduler.config.js';

/**
 * What every part of the scheduler shares: its config and its clock. Global within the
 * scheduler's application, as the agent's AgentCoreModule is within an agent's.
 */
@Module({})
export class SchedulerCoreModule {
  static forConfig(config: SchedulerConfig): DynamicModule {
    return {
      module: SchedulerCoreModule,
      global: true,
      providers: [
        { provide: SCHEDULER_CONFIG, useValue: config },
        { provide: CLOCK, useValue: systemClock },
      ],
      exports: [SCHEDULER_CONFIG, CLOCK],
    };
  }
}
