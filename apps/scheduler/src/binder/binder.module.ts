import { Module } from '@nestjs/common';
import { AssignmentsModule } from '../assignments/assignments.module.js';
import { CacheModule } from '../cache/cache.module.js';
import { LeaderModule } from '../leader/leader.module.js';
import { NodeLifecycleModule } from '../node-lifecycle/node-lifecycle.module.js';
import { SchedulingService } from './scheduling.service.js';

/** The scheduling pass: node lifecycle, then a node for each pending pod and node work for each bound one. */
@Module({
  imports: [CacheModule, AssignmentsModule, NodeLifecycleModule, LeaderModule],
  providers: [SchedulingService],
})
export class BinderModule {}
