import { Module } from '@nestjs/common';
import { EventsModule } from '../events/events.module.js';
import { StatusModule } from '../status/status.module.js';
import { AssignmentsController } from './assignments.controller.js';
import { DesiredStateService } from './desired-state.service.js';
import { MirrorControlController } from './mirror-control.controller.js';
import { StaticPodSource } from './static-pod-source.service.js';

/** Pod sources, as the kubelet's config: this node's assignments from the stream, and static pod files. */
@Module({
  imports: [StatusModule, EventsModule],
  controllers: [AssignmentsController, MirrorControlController],
  providers: [DesiredStateService, StaticPodSource],
  exports: [DesiredStateService, StaticPodSource],
})
export class ConfigModule {}
