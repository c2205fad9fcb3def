import { Module } from '@nestjs/common';
import { EventsModule } from '../events/events.module.js';
import { NodeModule } from '../node/node.module.js';
import { StatusModule } from '../status/status.module.js';
import { HandlerRunner } from './handler-runner.js';
import { PodAdmission } from './pod-admission.js';
import { TerminationMessages } from './termination-messages.js';

/** Admission, lifecycle hooks and termination messages, as the kubelet's lifecycle package. */
@Module({
  imports: [NodeModule, StatusModule, EventsModule],
  providers: [HandlerRunner, TerminationMessages, PodAdmission],
  exports: [HandlerRunner, TerminationMessages, PodAdmission],
})
export class LifecycleModule {}
