import { Controller, Get, Header } from '@nestjs/common';
import { enableProcessMetrics, metricsRegistry } from './metrics.js';

/** `GET /metrics` in Prometheus' text format, for every Nest HTTP app of jetlet. */
@Controller()
export class MetricsController {
  constructor() {
    enableProcessMetrics();
  }

  @Get('metrics')
  @Header('Content-Type', metricsRegistry.contentType)
  async metrics(): Promise<string> {
    return metricsRegistry.metrics();
  }
}
