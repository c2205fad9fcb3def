import { Controller, Get, Res } from '@nestjs/common';
import type { Response } from 'express';
import { AlerterService } from '../alerting/alerter.service.js';

/** `/healthz` (200 once the alerts are rebuilt from the log and the bus is connected) and `/alerts` (what the alerter holds). */
@Controller()
export class AlerterHttpController {
  constructor(private readonly alerter: AlerterService) {}

  @Get('healthz')
  healthz(@Res() res: Response): void {
    const healthy = this.alerter.healthy;
    res
      .status(healthy ? 200 : 503)
      .type('text/plain')
      .send(healthy ? 'ok' : 'not ready: rebuilding alerts from the log, or the bus is unreachable');
  }

  @Get('alerts')
  alerts(): object {
    return this.alerter.alerts().map((a) => ({
      labels: a.labels,
      annotations: a.annotations,
      startsAt: new Date(a.startsAt).toISOString(),
      ...(a.endsAt === undefined ? {} : { endsAt: new Date(a.endsAt).toISOString() }),
    }));
  }
}
