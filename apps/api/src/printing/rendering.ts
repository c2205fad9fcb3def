import { partialObjectMetadata, toTable, type IncludeObject, type KubeObject } from '#domain';
import { KubeStatusException } from '../errors/kube-status.exception.js';

/** How a GET or watch answers: the object itself, a Table, or metadata alone, as the Accept header asks. */
export type Rendering =
  | { as: 'Object' }
  | { as: 'Table'; apiVersion: string; includeObject: IncludeObject }
  | { as: 'PartialObjectMetadata' | 'PartialObjectMetadataList'; apiVersion: string };

const META_VERSIONS = new Set(['v1', 'v1beta1']);

/**
 * Content negotiation as the API server's: the first media range it can serve wins.
 * kubectl get sends `application/json;as=Table;v=v1;g=meta.k8s.io,...,application/json`.
 */
export function negotiate(accept: string | undefined, query: Record<string, unknown> = {}): Rendering {
  if (!accept) return { as: 'Object' };
  for (const range of accept.split(',')) {
    const [type = '', ...paramParts] = range.split(';').map((p) => p.trim());
    if (type !== 'application/json' && type !== 'application/*' && type !== '*/*') continue;
    const params = Object.fromEntries(paramParts.map((p) => p.split('=', 2).map((s) => s.trim()) as [string, string]));
    if (params.as === undefined) return { as: 'Object' };
    if (params.g !== 'meta.k8s.io' || !META_VERSIONS.has(params.v ?? '')) continue;
    const apiVersion = `meta.k8s.io/${params.v ?? 'v1'}`;
    if (params.as === 'Table') return { as: 'Table', apiVersion, includeObject: includeObject(query) };
    if (params.as === 'PartialObjectMetadata' || params.as === 'PartialObjectMetadataList') return { as: params.as, apiVersion };
  }
  // Nothing it can print (text/plain for logs, an unknown Table version): the object, as the server falls back to.
  return { as: 'Object' };
}

function includeObject(query: Record<string, unknown>): IncludeObject {
  const raw = Array.isArray(query.includeObject) ? (query.includeObject as unknown[])[0] : query.includeObject;
  if (raw === undefined || raw === '') return 'Metadata';
  if (raw === 'None' || raw === 'Metadata' || raw === 'Object') return raw;
  throw KubeStatusException.badRequest(`includeObject: Unsupported value: ${JSON.stringify(raw)}: supported values: "Metadata", "None", "Object"`);
}

function isList(
  value: object,
): value is { kind: string; metadata?: { resourceVersion?: string; continue?: string; remainingItemCount?: number }; items: KubeObject[] } {
  const v = value as { kind?: unknown; items?: unknown };
  return typeof v.kind === 'string' && v.kind.endsWith('List') && Array.isArray(v.items);
}

function isObject(value: object): value is KubeObject & { kind: string } {
  const v = value as { kind?: unknown; metadata?: unknown };
  return typeof v.kind === 'string' && typeof v.metadata === 'object' && v.metadata !== null;
}

/** Turns an object or a list into what `rendering` asks for; anything else (a Status, a log) passes through. */
export function render(value: unknown, rendering: Rendering, nowMs: number): unknown {
  if (rendering.as === 'Object' || typeof value !== 'object' || value === null) return value;
  if (isList(value)) {
    const kind = value.kind.slice(0, -'List'.length);
    const resourceVersion = value.metadata?.resourceVersion;
    // A page keeps its continue token (and count) whatever it is rendered as: kubectl pages through Tables.
    const paging = {
      ...(value.metadata?.continue ? { continue: value.metadata.continue } : {}),
      ...(value.metadata?.remainingItemCount !== undefined ? { remainingItemCount: value.metadata.remainingItemCount } : {}),
    };
    if (rendering.as === 'Table') {
      const table = toTable(kind, value.items, {
        nowMs,
        includeObject: rendering.includeObject,
        apiVersion: rendering.apiVersion,
        ...(resourceVersion ? { resourceVersion } : {}),
      });
      return { ...table, metadata: { ...(table as { metadata: object }).metadata, ...paging } };
    }
    return {
      kind: 'PartialObjectMetadataList',
      apiVersion: rendering.apiVersion,
      metadata: { ...(resourceVersion ? { resourceVersion } : {}), ...paging },
      items: value.items.map((o) => ({ ...partialObjectMetadata(o), apiVersion: rendering.apiVersion })),
    };
  }
  if (!isObject(value) || value.kind === 'Status') return value;
  if (rendering.as === 'Table') {
    const resourceVersion = typeof value.metadata.resourceVersion === 'string' ? value.metadata.resourceVersion : undefined;
    return toTable(value.kind, [value], {
      nowMs,
      includeObject: rendering.includeObject,
      apiVersion: rendering.apiVersion,
      ...(resourceVersion ? { resourceVersion } : {}),
    });
  }
  return { ...partialObjectMetadata(value), apiVersion: rendering.apiVersion };
}
