import { Catch, Controller, UseFilters, applyDecorators, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import { EMPTY, type Observable } from 'rxjs';
import { JetStreamContext } from './jetstream.context.js';

/**
 * The exception filter of every message handler: the message is settled by
 * `JetStreamContext.reject` (an invalid one terminated, counted and logged; a failed
 * handler's redelivered later), and nothing more is said, so the next message goes on.
 */
@Catch()
export class JetStreamExceptionFilter implements ExceptionFilter {
  catch(exception: unknown, host: ArgumentsHost): Observable<never> {
    const ctx = host.switchToRpc().getContext<unknown>();
    if (ctx instanceof JetStreamContext) ctx.reject(exception);
    return EMPTY;
  }
}

/** A controller of message handlers (`@EventPattern`, `@MessagePattern`), with the transport's exception filter. */
export function MessageController(): ClassDecorator {
  return applyDecorators(Controller(), UseFilters(JetStreamExceptionFilter));
}
