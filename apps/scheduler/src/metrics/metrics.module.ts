import { Module } from '@nestjs/common';
import { MetricsServer } from './metrics-server.service.js';

/** The scheduler's /metrics and /healthz, as kube-scheduler serves them. */
@Module({ providers: [MetricsServer] })
export class MetricsModule {}
