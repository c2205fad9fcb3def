import { Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import type { Request } from 'express';
import { map, type Observable } from 'rxjs';
import { PagingInterceptor } from '../options/paging.interceptor.js';
import { negotiate, render } from './rendering.js';

/**
 * Server-side printing: a GET whose Accept asks for `as=Table` (kubectl get) or
 * `as=PartialObjectMetadata[List]` gets that instead of the objects, for every resource.
 * Inside it, a page is cut from a list before it becomes a Table: paging runs as part of this
 * interceptor rather than as one more of Nest's, whose every layer costs each request (a
 * write too) its own deferred Observable and async scope.
 */
@Injectable()
export class PrintingInterceptor implements NestInterceptor {
  constructor(private readonly paging: PagingInterceptor) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http') return next.handle();
    const request = context.switchToHttp().getRequest<Request>();
    if (request.method !== 'GET') return next.handle();
    const rendering = negotiate(request.headers.accept, request.query);
    const paged = this.paging.intercept(context, next);
    if (rendering.as === 'Object') return paged;
    return paged.pipe(map((value: unknown) => render(value, rendering, Date.now())));
  }
}
