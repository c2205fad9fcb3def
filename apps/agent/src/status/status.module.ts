import { Module } from '@nestjs/common';
import { AgentMetrics } from '../agent.metrics.js';
import { PodStartTracker } from './pod-start-tracker.js';
import { StatusReporter } from './status-reporter.service.js';

/** Pod status reports and pod start latency, as the kubelet's status manager. */
@Module({
  providers: [
    StatusReporter,
    {
      provide: PodStartTracker,
      useFactory: (metrics: AgentMetrics) => new PodStartTracker((s) => metrics.podStartDuration.observe(s)),
      inject: [AgentMetrics],
    },
  ],
  exports: [StatusReporter, PodStartTracker],
})
export class StatusModule {}
