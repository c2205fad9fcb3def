import { Controller, Get, Header, Inject, Param, Query, Res } from '@nestjs/common';
import type { Response } from 'express';
import { BUS, type Bus } from '#bus';
import { KubeStatusException } from '../errors/kube-status.exception.js';
import { ProjectionService } from '../projection/projection.service.js';

type Check = { name: string; run: () => string | undefined };

/**
 * The API server's health endpoints: `/healthz`, `/livez`, `/readyz`, each with `?verbose`
 * and `/<endpoint>/<check>`. A check returns why it fails, or undefined.
 */
@Controller()
export class HealthController {
  constructor(
    @Inject(BUS) private readonly bus: Bus,
    private readonly projection: ProjectionService,
  ) {}

  private checks(endpoint: string): Check[] {
    const live: Check[] = [{ name: 'ping', run: () => undefined }];
    if (endpoint === 'livez') return live;
    return [
      ...live,
      { name: 'nats', run: () => (this.bus.connected ? undefined : 'NATS is unreachable') },
      { name: 'projection-synced', run: () => (this.projection.synced ? undefined : 'the projections have not caught up with the streams yet') },
    ];
  }

  @Get(['healthz', 'livez', 'readyz'])
  @Header('content-type', 'text/plain; charset=utf-8')
  @Header('x-content-type-options', 'nosniff')
  all(@Res() response: Response, @Query('verbose') verbose?: string, @Query('exclude') exclude?: string | string[]): void {
    const endpoint = response.req.path.replace(/^\/|\/$/g, '');
    const excluded = new Set([exclude ?? []].flat());
    this.answer(
      response,
      endpoint,
      this.checks(endpoint).filter((c) => !excluded.has(c.name)),
      verbose !== undefined,
    );
  }

  @Get(['healthz/:check', 'livez/:check', 'readyz/:check'])
  one(@Res() response: Response, @Param('check') check: string): void {
    const endpoint = response.req.path.split('/')[1] ?? '';
    const found = this.checks(endpoint).find((c) => c.name === check);
    if (!found) throw new KubeStatusException(404, 'NotFound', 'the server could not find the requested resource', {});
    const failure = found.run();
    response
      .status(failure ? 500 : 200)
      .type('text/plain')
      .send(failure ? `internal server error: ${failure}\n` : 'ok');
  }

  private answer(response: Response, endpoint: string, checks: Check[], verbose: boolean): void {
    const results = checks.map((c) => ({ name: c.name, failure: c.run() }));
    const failed = results.some((r) => r.failure);
    response.status(failed ? 500 : 200).type('text/plain');
    if (!verbose && !failed) {
      response.send('ok');
      return;
    }
    const lines = results.map((r) => (r.failure ? `[-]${r.name} failed: reason withheld` : `[+]${r.name} ok`));
    response.send(`${lines.join('\n')}\n${endpoint} check ${failed ? 'failed' : 'passed'}\n`);
  }
}
