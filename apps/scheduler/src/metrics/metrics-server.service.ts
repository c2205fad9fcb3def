import type { Server } from 'node:http';
import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { serveMetrics } from '#observability';
import { SCHEDULER_CONFIG } from '../scheduler.constants.js';
import type { SchedulerConfig } from '../scheduler.config.js';

/** The scheduler's only HTTP: `/metrics` and `/healthz` on METRICS_ADDRESS:METRICS_PORT, as kube-scheduler serves them. */
@Injectable()
export class MetricsServer implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(MetricsServer.name);
  private server?: Server;

  constructor(@Inject(SCHEDULER_CONFIG) private readonly config: SchedulerConfig) {}

  async onModuleInit(): Promise<void> {
    this.server = await serveMetrics(this.config.METRICS_PORT, this.config.METRICS_ADDRESS);
    const address = this.server.address();
    this.logger.log(
      `metrics on http://${this.config.METRICS_ADDRESS}:${typeof address === 'object' && address ? address.port : this.config.METRICS_PORT}/metrics`,
    );
  }

  async onApplicationShutdown(): Promise<void> {
    await new Promise((resolve) => this.server?.close(resolve) ?? resolve(undefined));
  }
}
