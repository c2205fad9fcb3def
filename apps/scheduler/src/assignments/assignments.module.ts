import { Module } from '@nestjs/common';
import { CacheModule } from '../cache/cache.module.js';
import { AssignmentsController } from './assignments.controller.js';
import { AssignmentsService } from './assignments.service.js';

/** Node work: bound pods sent to their nodes, deleted ones taken back, and spent tombstones purged. */
@Module({
  imports: [CacheModule],
  controllers: [AssignmentsController],
  providers: [AssignmentsService],
  exports: [AssignmentsService],
})
export class AssignmentsModule {}
