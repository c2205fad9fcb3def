import { Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import type { Request } from 'express';
import { map, type Observable } from 'rxjs';
import { negotiate, render } from './rendering.js';

/**
 * Server-side printing: a GET whose Accept asks for `as=Table` (kubectl get) or
 * `as=PartialObjectMetadata[List]` gets that instead of the objects, for every resource.
 */
@Injectable()
export class PrintingInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http') return next.handle();
    const request = context.switchToHttp().getRequest<Request>();
    if (request.method !== 'GET') return next.handle();
    const rendering = negotiate(request.headers.accept, request.query);
    if (rendering.as === 'Object') return next.handle();
    return next.handle().pipe(map((value: unknown) => render(value, rendering, Date.now())));
  }
}
