import type { NextFunction, Request, Response } from 'express';
import { Counter, Histogram } from 'prom-client';
import { metricsRegistry } from '#observability';

const LABELS = ['verb', 'group', 'version', 'resource', 'subresource', 'scope', 'component', 'code'] as const;

/** The API server's request metrics, with kube-apiserver's names, labels and buckets (plus `code` on the duration). */
export const apiMetrics = {
  requestDuration: new Histogram({
    name: 'apiserver_request_duration_seconds',
    help: 'Response latency distribution in seconds for each verb, group, version, resource, subresource, scope, component and code.',
    labelNames: LABELS,
    buckets: [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60],
    registers: [metricsRegistry],
  }),
  requests: new Counter({
    name: 'apiserver_request_total',
    help: 'Counter of apiserver requests broken out for each verb, group, version, resource, subresource, scope, component, and HTTP response code.',
    labelNames: LABELS,
    registers: [metricsRegistry],
  }),
};

export interface RequestInfo {
  verb: string;
  resource: string;
  subresource: string;
  scope: 'cluster' | 'namespace' | 'resource' | '';
}

/**
 * What a request does, as kube-apiserver's RequestInfo sees it: `GET /api/v1/namespaces/x/pods`
 * is LIST pods in scope namespace, with `?watch=true` WATCH; a named object is scope resource;
 * other verbs are the HTTP method (metrics.go's CanonicalVerb and cleanVerb).
 * Paths outside `/api/v1` (discovery, /metrics) have no resource.
 */
export function requestInfo(method: string, path: string, query: Record<string, unknown>): RequestInfo {
  const parts = path.split('/').filter(Boolean);
  if (parts[0] !== 'api' || parts[1] !== 'v1' || parts.length < 3) return { verb: method.toUpperCase(), resource: '', subresource: '', scope: '' };
  let rest = parts.slice(2);
  // The deprecated /api/v1/watch/... paths are watches of what follows.
  const watchPath = rest[0] === 'watch';
  if (watchPath) rest = rest.slice(1);
  let namespaced = false;
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    namespaced = true;
    rest = rest.slice(2);
  }
  const [resource = '', name, subresource = ''] = rest;
  const watch = watchPath || query.watch === 'true' || query.watch === '1';
  let verb = method.toUpperCase();
  if (watch) verb = 'WATCH';
  else if ((verb === 'GET' || verb === 'HEAD') && !name) verb = 'LIST';
  return { verb, resource, subresource, scope: name ? 'resource' : namespaced ? 'namespace' : 'cluster' };
}

/** Express middleware: times every request from arrival to the end of its response, errors included. */
export function requestMetrics(req: Request, res: Response, next: NextFunction): void {
  const stop = apiMetrics.requestDuration.startTimer();
  res.once('close', () => {
    const info = requestInfo(req.method, req.path, req.query);
    const labels = { ...info, group: '', version: info.resource ? 'v1' : '', component: 'apiserver', code: String(res.statusCode) };
    stop(labels);
    apiMetrics.requests.inc(labels);
  });
  next();
}
