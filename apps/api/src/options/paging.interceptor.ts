import { Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import type { Request } from 'express';
import { map, of, type Observable } from 'rxjs';
import { KubeStatusException } from '../errors/kube-status.exception.js';
import { WatchService } from '../watch/watch.service.js';
import { parseListOptions, queryValue, selected } from './list-options.js';

/** A list as the controllers answer it. */
interface KubeList {
  kind: string;
  apiVersion: string;
  metadata: { resourceVersion?: string; continue?: string; remainingItemCount?: number };
  items: Array<{ metadata: { name: string; namespace?: string } }>;
}

/** Where a continued list resumes: the resourceVersion of its snapshot (-1: the newest) and the last key served. */
interface ContinueToken {
  rv: number;
  start: string;
}

const EXPIRED_MESSAGE =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, ' +
  'or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an ' +
  'inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';

/** A continue token as the API server makes them: base64 of JSON naming its version, snapshot and start. */
export function encodeContinue(token: ContinueToken): string {
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv: token.rv, start: token.start })).toString('base64url');
}

export function decodeContinue(raw: string): ContinueToken {
  try {
    const value = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as { v?: unknown; rv?: unknown; start?: unknown };
    if (value.v !== 'meta.k8s.io/v1' || typeof value.start !== 'string' || !Number.isSafeInteger(value.rv) || (value.rv as number) < -1 || value.rv === 0)
      throw new Error('unknown shape');
    return { rv: value.rv as number, start: value.start };
  } catch {
    throw KubeStatusException.badRequest(`continue key is not valid: ${JSON.stringify(raw.slice(0, 64))}`);
  }
}

const keyOf = (item: KubeList['items'][number]): string => `${item.metadata.namespace ?? ''}/${item.metadata.name}`;

function isList(value: unknown): value is KubeList {
  const v = value as Partial<KubeList> | null;
  return typeof v === 'object' && v !== null && typeof v.kind === 'string' && v.kind.endsWith('List') && Array.isArray(v.items);
}

/**
 * `limit` and `continue` on every list, as the API server pages: items in key order
 * (namespace/name), at most `limit` of them, and a continue token bound to the list's
 * resourceVersion. A continued page is read from the watch cache's snapshot at that version,
 * so pages never mix two states; once the cache no longer reaches back that far it is the
 * API server's 410 `Expired`, with a token to go on inconsistently from the newest state.
 */
@Injectable()
export class PagingInterceptor implements NestInterceptor {
  constructor(private readonly watches: WatchService) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http') return next.handle();
    const request = context.switchToHttp().getRequest<Request>();
    if (request.method !== 'GET') return next.handle();
    const rawLimit = queryValue(request.query, 'limit');
    const rawContinue = queryValue(request.query, 'continue') || undefined;
    if ((rawLimit === undefined || rawLimit === '') && rawContinue === undefined) return next.handle();
    if (rawLimit !== undefined && rawLimit !== '' && !/^-?\d+$/.test(rawLimit))
      throw KubeStatusException.badRequest(`strconv.ParseInt: parsing ${JSON.stringify(rawLimit)}: invalid syntax`);
    const limit = rawLimit ? Math.max(0, Number(rawLimit)) : 0;
    if (rawContinue === undefined) return next.handle().pipe(map((value: unknown) => (isList(value) ? page(value, limit) : value)));

    const token = decodeContinue(rawContinue);
    if (queryValue(request.query, 'resourceVersion')) throw KubeStatusException.badRequest('specifying resource version is not allowed when using continue');
    const continued = this.snapshot(request, token);
    if (!continued) return next.handle();
    return of(page(continued, limit, token.start));
  }

  /** The list the first page was cut from, at its resourceVersion; undefined for a route that is not a watchable list. */
  private snapshot(request: Request, token: ContinueToken): KubeList | undefined {
    const segments = new URL(request.originalUrl, 'http://localhost').pathname.split('/').filter(Boolean).map(decodeURIComponent);
    const resource = segments.at(-1) ?? '';
    const namespace = segments.length === 5 && segments[2] === 'namespaces' ? segments[3] : undefined;
    const source = this.watches.source(resource);
    if (!source || segments[0] !== 'api' || segments[1] !== 'v1') return undefined;
    const options = parseListOptions(request.query, source.selectableFields);
    const objects = token.rv === -1 ? source.cache.snapshot() : source.cache.snapshotAt(token.rv);
    if (!objects) {
      throw new KubeStatusException(410, 'Expired', EXPIRED_MESSAGE, undefined, {
        continue: encodeContinue({ rv: -1, start: token.start }),
      });
    }
    const items = objects
      .filter((o) => namespace === undefined || source.namespaceOf(o) === namespace)
      .filter((o) => selected(options, source.labelsOf(o), () => source.fieldsOf(o)))
      .map((o) => source.render(o) as KubeList['items'][number]);
    const resourceVersion = String(token.rv === -1 ? source.cache.lastSeq : token.rv);
    return { kind: `${source.kind}List`, apiVersion: 'v1', metadata: { resourceVersion }, items };
  }
}

/** One page of a list: the items after `start` in key order, at most `limit` (0: all). */
function page(list: KubeList, limit: number, start = ''): KubeList {
  const sorted = list.items.filter((item) => keyOf(item) > start).sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : 0));
  if (limit <= 0 || sorted.length <= limit) return { ...list, metadata: { resourceVersion: list.metadata.resourceVersion }, items: sorted };
  const items = sorted.slice(0, limit);
  const rv = Number(list.metadata.resourceVersion ?? 0);
  return {
    ...list,
    metadata: {
      resourceVersion: list.metadata.resourceVersion,
      continue: encodeContinue({ rv: rv > 0 ? rv : -1, start: keyOf(items[items.length - 1]) }),
      remainingItemCount: sorted.length - limit,
    },
    items,
  };
}
