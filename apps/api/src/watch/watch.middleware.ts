import { Injectable, Logger, type NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { KubeStatusException, type KubeStatus } from '../errors/kube-status.exception.js';
import { queryValue } from '../options/list-options.js';
import { WatchService, type WatchTarget } from './watch.service.js';

const TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);

/**
 * Routes watches before the list handlers see them: `?watch=true` on any list (and on one
 * object), and the `/api/v1/watch/...` paths. Everything else goes on to the controllers.
 */
@Injectable()
export class WatchMiddleware implements NestMiddleware {
  private readonly logger = new Logger(WatchMiddleware.name);

  constructor(private readonly watches: WatchService) {}

  use(request: Request, response: Response, next: NextFunction): void {
    if (request.method !== 'GET') return next();
    const path = new URL(request.originalUrl, 'http://localhost').pathname;
    const segments = path.split('/').filter(Boolean).map(decodeURIComponent);
    if (segments[0] !== 'api' || segments[1] !== 'v1') return next();
    let rest = segments.slice(2);
    const explicit = rest[0] === 'watch';
    if (explicit) rest = rest.slice(1);
    else if (!TRUE.has(queryValue(request.query, 'watch') ?? '')) return next();
    const target = this.target(rest);
    if (!target) {
      if (!explicit) return next();
      this.fail(response, new KubeStatusException(404, 'NotFound', 'the server could not find the requested resource').getResponse() as KubeStatus);
      return;
    }
    this.watches.serve(request, response, target).catch((error: unknown) => {
      if (error instanceof KubeStatusException) return this.fail(response, error.getResponse() as KubeStatus);
      this.logger.error(`watch of ${path} failed: ${(error as Error).stack ?? String(error)}`);
      this.fail(response, new KubeStatusException(500, 'InternalError', 'Internal error occurred').getResponse() as KubeStatus);
    });
  }

  /** `[namespaces, ns, resource, name?]` or `[resource, name?]`, for a registered resource. */
  private target(rest: string[]): WatchTarget | undefined {
    const [first, second, third, fourth, ...more] = rest;
    if (more.length > 0 || first === undefined) return undefined;
    if (first === 'namespaces' && second !== undefined && third !== undefined) {
      const source = this.watches.source(third);
      return source?.namespaced ? { resource: third, namespace: second, ...(fourth !== undefined ? { name: fourth } : {}) } : undefined;
    }
    const source = this.watches.source(first);
    if (!source || third !== undefined || (source.namespaced && second !== undefined)) return undefined;
    return { resource: first, ...(second !== undefined ? { name: second } : {}) };
  }

  private fail(response: Response, status: KubeStatus): void {
    if (response.headersSent) {
      response.end();
      return;
    }
    response.status(status.code).json(status);
  }
}
