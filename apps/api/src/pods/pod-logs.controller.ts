import { Controller, Get, Logger, Param, Query, Res } from '@nestjs/common';
import type { Response } from 'express';
import { podRef } from '#observability';
import { PodLogsService } from './pod-logs.service.js';

/** Kubernetes core/v1 `pods/log`: the container's log as text/plain, chunked while it follows. */
@Controller('api/v1')
export class PodLogsController {
  private readonly logger = new Logger(PodLogsController.name);

  constructor(private readonly logs: PodLogsService) {}

  @Get('namespaces/:namespace/pods/:name/log')
  async log(@Param('namespace') namespace: string, @Param('name') name: string, @Query() query: Record<string, unknown>, @Res() res: Response): Promise<void> {
    const stream = await this.logs.openStream(namespace, name, this.logs.parseQuery(name, query));
    // The client hanging up mid-stream is the normal end of a follow: the agent is told to stop.
    const clientGone = (): void => {
      if (!res.writableFinished) stream.cancel();
    };
    res.on('close', clientGone);
    // The client may have hung up while the agent was being asked.
    if (res.destroyed) stream.cancel();
    res.status(200).type('text/plain');
    res.flushHeaders();
    try {
      for await (const chunk of stream) {
        if (!res.write(chunk)) await drained(res);
        if (res.destroyed) break;
      }
    } finally {
      res.off('close', clientGone);
      if (!res.destroyed) res.end();
    }
    if (stream.failure) this.logger.warn(`log of ${podRef({ namespace, name })} container ${stream.request.container ?? ''} broke off: ${stream.failure}`);
  }
}

/** Resolves when the response can take more, or is gone; leaves no listener behind. */
function drained(res: Response): Promise<void> {
  if (res.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
