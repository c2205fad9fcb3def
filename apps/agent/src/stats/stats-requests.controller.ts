import { MessagePattern } from '@nestjs/microservices';
import { MessageController, THIS_NODE } from '#bus';
import { SUBJECTS, type StatsSummary } from '#contracts';
import { StatsCollector } from './stats-collector.service.js';

/**
 * The Metrics API's requests for this node's Summary, on core NATS: the reply is the last
 * summary as JSON. A summary that cannot be had is not answered; the API's request times out
 * and leaves the node out.
 */
@MessageController()
export class StatsRequestsController {
  constructor(private readonly stats: StatsCollector) {}

  @MessagePattern(SUBJECTS.statsRequests(THIS_NODE))
  summary(): Promise<StatsSummary> {
    return this.stats.summary();
  }
}
