import { Inject, Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import type { Response } from 'express';
import type { Observable } from 'rxjs';
import { BUS, type Bus } from '#bus';

/**
 * Reads are served from the projection even while NATS is unreachable, with a Kubernetes
 * `Warning` header (shown by kubectl) saying that what the client sees is the last state
 * the API received, not necessarily the current one.
 */
@Injectable()
export class StaleReadInterceptor implements NestInterceptor {
  constructor(@Inject(BUS) private readonly bus: Bus) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (!this.bus.connected && context.getType() === 'http') {
      const since = new Date(this.bus.disconnectedSinceMs ?? Date.now()).toISOString();
      context
        .switchToHttp()
        .getResponse<Response>()
        .setHeader('Warning', `299 - "the event store is unreachable since ${since}: this is the last state the API received"`);
    }
    return next.handle();
  }
}
