import { Controller, Get, Header, HttpException, HttpStatus, Inject } from '@nestjs/common';
import { metricsRegistry } from '#observability';
import { AGENT_CONFIG } from '../agent.constants.js';
import type { AgentConfig } from '../agent.config.js';
import { ReconcilerService } from '../reconcile/reconciler.service.js';

/** The agent's own HTTP surface: health and metrics. */
@Controller()
export class AgentHttpController {
  constructor(
    @Inject(AGENT_CONFIG) private readonly config: AgentConfig,
    private readonly reconciler: ReconcilerService,
  ) {}

  /** Unhealthy when the sync loop has not completed a pass for three resync periods. */
  @Get('healthz')
  @Header('Content-Type', 'text/plain')
  healthz(): string {
    const stallMs = this.config.RESYNC_SECONDS * 3000;
    const sinceSync = Date.now() - this.reconciler.lastPassMs;
    if (sinceSync > stallMs) throw new HttpException(`sync loop stalled: last pass ${Math.round(sinceSync / 1000)}s ago`, HttpStatus.INTERNAL_SERVER_ERROR);
    return 'ok';
  }

  @Get('metrics')
  @Header('Content-Type', metricsRegistry.contentType)
  async metrics(): Promise<string> {
    return metricsRegistry.metrics();
  }
}
