import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { Request, Response } from 'express';
import {
  CONFIGMAP_SELECTABLE_FIELDS,
  configFields,
  SECRET_SELECTABLE_FIELDS,
  EVENT_SELECTABLE_FIELDS,
  NAMESPACE_SELECTABLE_FIELDS,
  namespaceFields,
  eventFields,
  isNodeReady,
  NODE_SELECTABLE_FIELDS,
  nodeFields,
  nodeView,
  POD_SELECTABLE_FIELDS,
  podFields,
  type WatchChange,
  type WatchEventType,
  type NamespaceObject,
} from '#domain';
import { API_CONFIG } from '../api.constants.js';
import type { ApiConfig } from '../api.config.js';
import { KubeStatusException, type KubeStatus } from '../errors/kube-status.exception.js';
import { parseListOptions, selected } from '../options/list-options.js';
import { negotiate, render } from '../printing/rendering.js';
import { ProjectionService } from '../projection/projection.service.js';
import type { WatchSource } from './watch-source.js';

/** The API server's default: a watch without timeoutSeconds ends after the minimum request timeout. */
const DEFAULT_TIMEOUT_SECONDS = 1800;
/** How long a watch from a resourceVersion the cache has not reached yet waits for it, as the API server. */
const FRESHNESS_WAIT_MS = 3000;
/** A client that lets this much pile up unread is cut off; it relists, as with Kubernetes' slow watchers. */
const MAX_BUFFERED_BYTES = 16 * 1024 * 1024;
/** How often node readiness (a function of heartbeat age) is re-evaluated for watchers. */
const READINESS_TICK_MS = 1000;

interface Frame {
  type: WatchEventType | 'BOOKMARK' | 'ERROR';
  object: unknown;
}

/** Where a watch request points: a resource, maybe one namespace, maybe one object. */
export interface WatchTarget {
  resource: string;
  namespace?: string;
  name?: string;
}

const errorStatus = (code: number, reason: string, message: string, details?: KubeStatus['details']): KubeStatus =>
  new KubeStatusException(code, reason, message, details).getResponse() as KubeStatus;

/**
 * Watches: a chunked stream of WatchEvent frames per request, fed from the watch caches
 * the projection keeps. Starting points, bookmarks, timeouts and 410 Expired follow the
 * API server's watch cache.
 */
@Injectable()
export class WatchService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(WatchService.name);
  private readonly sources = new Map<string, WatchSource<unknown>>();
  private readonly closers = new Set<() => void>();
  private readonly lastReady = new Map<string, boolean>();
  /** Each cached object serialized once, whatever the number of watchers (as the API server's cachingObject). */
  private readonly encoded = new WeakMap<object, string>();
  private ticker?: NodeJS.Timeout;

  constructor(
    @Inject(API_CONFIG) private readonly config: ApiConfig,
    private readonly projection: ProjectionService,
  ) {}

  onModuleInit(): void {
    const graceMs = this.config.NODE_GRACE_SECONDS * 1000;
    this.register({
      resource: 'pods',
      kind: 'Pod',
      namespaced: true,
      selectableFields: POD_SELECTABLE_FIELDS,
      cache: this.projection.podChanges,
      nameOf: (p) => p.metadata.name,
      namespaceOf: (p) => p.metadata.namespace,
      labelsOf: (p) => p.metadata.labels,
      fieldsOf: podFields,
      render: (p) => p,
    });
    this.register({
      resource: 'nodes',
      kind: 'Node',
      namespaced: false,
      selectableFields: NODE_SELECTABLE_FIELDS,
      cache: this.projection.nodeChanges,
      nameOf: (r) => r.name,
      namespaceOf: () => undefined,
      labelsOf: (r) => r.node.metadata.labels,
      fieldsOf: (r) => nodeFields(r.node),
      render: (r) => nodeView(r, Date.now(), graceMs),
    });
    this.register({
      resource: 'events',
      kind: 'Event',
      namespaced: true,
      selectableFields: EVENT_SELECTABLE_FIELDS,
      cache: this.projection.eventChanges,
      nameOf: (e) => e.metadata.name,
      namespaceOf: (e) => e.metadata.namespace,
      labelsOf: () => undefined,
      fieldsOf: eventFields,
      render: (e) => e,
    });
    this.register<NamespaceObject>({
      resource: 'namespaces',
      kind: 'Namespace',
      namespaced: false,
      selectableFields: NAMESPACE_SELECTABLE_FIELDS,
      cache: this.projection.namespaceChanges,
      nameOf: (n) => n.metadata.name,
      namespaceOf: () => undefined,
      labelsOf: (n) => n.metadata.labels,
      fieldsOf: namespaceFields,
      render: (n) => n,
    });
    for (const [resource, kind, fields, cache] of [
      ['configmaps', 'ConfigMap', CONFIGMAP_SELECTABLE_FIELDS, this.projection.configMapChanges],
      ['secrets', 'Secret', SECRET_SELECTABLE_FIELDS, this.projection.secretChanges],
    ] as const) {
      this.register({
        resource,
        kind,
        namespaced: true,
        selectableFields: fields,
        cache,
        nameOf: (o) => o.metadata.name,
        namespaceOf: (o) => o.metadata.namespace,
        labelsOf: (o) => o.metadata.labels,
        fieldsOf: configFields,
        render: (o) => o,
      });
    }
    // A node turns NotReady by the clock, with no message in the stream: tell watchers then.
    this.ticker = setInterval(() => this.checkReadiness(graceMs), READINESS_TICK_MS);
    this.ticker.unref();
  }

  onModuleDestroy(): void {
    if (this.ticker) clearInterval(this.ticker);
    // Open watches would hold the HTTP server open; clients reconnect to the next API.
    for (const close of [...this.closers]) close();
  }

  /** Makes a resource watchable (and its `/api/v1/watch/...` paths known). */
  register<T>(source: WatchSource<T>): void {
    this.sources.set(source.resource, source as WatchSource<unknown>);
  }

  /** The registered resource of this name, if any. */
  source(resource: string): WatchSource<unknown> | undefined {
    return this.sources.get(resource);
  }

  /** Serves one watch request to its end; errors before the stream starts are thrown as Status. */
  async serve(request: Request, response: Response, target: WatchTarget): Promise<void> {
    const source = this.sources.get(target.resource);
    if (!source) throw new KubeStatusException(404, 'NotFound', 'the server could not find the requested resource');
    const query = request.query as Record<string, unknown>;
    const options = parseListOptions(query, source.selectableFields);
    const rendering = negotiate(request.headers.accept, query);
    const matches = (o: unknown): boolean =>
      (target.namespace === undefined || source.namespaceOf(o) === target.namespace) &&
      (target.name === undefined || source.nameOf(o) === target.name) &&
      selected(options, source.labelsOf(o), () => source.fieldsOf(o));

    const cache = source.cache;
    const requested = options.resourceVersion === undefined || options.resourceVersion === '0' ? undefined : Number(options.resourceVersion);
    if (requested !== undefined && requested > cache.lastSeq) await this.waitUntil(() => cache.lastSeq >= requested, FRESHNESS_WAIT_MS);

    response.status(200);
    response.setHeader('Content-Type', 'application/json');
    response.setHeader('Cache-Control', 'no-cache, private');
    response.flushHeaders();
    let closed = false;
    const timers: NodeJS.Timeout[] = [];
    let unsubscribe: () => void = () => undefined;
    const close = (): void => {
      if (closed) return;
      closed = true;
      unsubscribe();
      for (const t of timers) clearTimeout(t);
      this.closers.delete(close);
      response.end();
    };
    const write = (frame: Frame): void => {
      if (closed) return;
      response.write(`${JSON.stringify(frame)}\n`);
      this.checkBacklog(response, target, close);
    };
    // A time-independent object shown as itself is serialized once for all watchers (the caches
    // never change an object they hold: every change stores a new one).
    const writeObject = (type: WatchEventType, object: unknown): void => {
      if (closed) return;
      const rendered = source.render(object);
      if (rendering.as !== 'Object' || rendered !== object || typeof object !== 'object' || object === null) {
        write({ type, object: render(rendered, rendering, Date.now()) });
        return;
      }
      let json = this.encoded.get(object);
      if (json === undefined) {
        json = JSON.stringify(object);
        this.encoded.set(object, json);
      }
      response.write(`{"type":"${type}","object":${json}}\n`);
      this.checkBacklog(response, target, close);
    };

    if (requested !== undefined && requested > cache.lastSeq) {
      write({
        type: 'ERROR',
        object: errorStatus(504, 'Timeout', `Too large resource version: ${requested}, current: ${cache.lastSeq}`, {
          causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version', field: '' }],
        }),
      });
      close();
      return;
    }

    // From here to subscribe() nothing awaits, so no change can slip between snapshot and stream.
    const sendInitial = options.sendInitialEvents ?? requested === undefined;
    let backlog: Array<WatchChange<unknown>> = [];
    if (!sendInitial && requested !== undefined) {
      const since = cache.changesSince(requested);
      if (since === undefined) {
        // As the API server's watch cache: the watch starts, then ends with 410 Expired; the client relists.
        write({ type: 'ERROR', object: errorStatus(410, 'Expired', `too old resource version: ${requested} (${cache.oldest})`) });
        close();
        return;
      }
      backlog = since;
    }
    const initial = sendInitial ? cache.snapshot().filter(matches) : [];

    const deliver = (change: WatchChange<unknown>): void => {
      const frame = this.frameFor(change, matches);
      if (frame) writeObject(frame.type, frame.object);
    };
    unsubscribe = cache.subscribe(deliver);
    const bookmark = (annotations?: Record<string, string>): void =>
      write({
        type: 'BOOKMARK',
        object: { kind: source.kind, apiVersion: 'v1', metadata: { resourceVersion: String(cache.lastSeq), ...(annotations ? { annotations } : {}) } },
      });
    this.closers.add(close);
    request.on('close', close);
    response.on('close', close);

    for (const object of initial) writeObject('ADDED', object);
    if (options.sendInitialEvents === true) bookmark({ 'k8s.io/initial-events-end': 'true' });
    for (const change of backlog) deliver(change);

    const timeoutSeconds = options.timeoutSeconds !== undefined && options.timeoutSeconds > 0 ? options.timeoutSeconds : DEFAULT_TIMEOUT_SECONDS;
    timers.push(setTimeout(close, timeoutSeconds * 1000));
    if (options.allowWatchBookmarks) timers.push(setInterval(() => bookmark(), this.config.WATCH_BOOKMARK_SECONDS * 1000));
    if (!closed) await new Promise<void>((resolve) => response.once('close', resolve));
  }

  /** A watcher that lets too much pile up unread is cut off; it relists, as with Kubernetes' slow watchers. */
  private checkBacklog(response: Response, target: WatchTarget, close: () => void): void {
    if (response.writableLength <= MAX_BUFFERED_BYTES) return;
    this.logger.warn(`closing a slow watch of ${target.resource}: ${response.writableLength} bytes unread`);
    close();
  }

  /** An object that starts or stops matching the selectors is ADDED or DELETED for this watcher, as the API server does. */
  private frameFor(change: WatchChange<unknown>, matches: (o: unknown) => boolean): { type: WatchEventType; object: unknown } | undefined {
    switch (change.type) {
      case 'ADDED':
        return matches(change.object) ? { type: 'ADDED', object: change.object } : undefined;
      case 'DELETED':
        return matches(change.previous ?? change.object) ? { type: 'DELETED', object: change.object } : undefined;
      case 'MODIFIED': {
        const was = change.previous !== undefined && matches(change.previous);
        const is = matches(change.object);
        if (was && is) return { type: 'MODIFIED', object: change.object };
        if (is) return { type: 'ADDED', object: change.object };
        if (was) return { type: 'DELETED', object: change.object };
        return undefined;
      }
    }
  }

  private checkReadiness(graceMs: number): void {
    const now = Date.now();
    for (const record of this.projection.nodes.list()) {
      const ready = isNodeReady(record, now, graceMs);
      const before = this.lastReady.get(record.name);
      this.lastReady.set(record.name, ready);
      if (before !== undefined && before !== ready) {
        const cache = this.projection.nodeChanges;
        cache.update(record.name, { ...record }, cache.lastSeq, true);
      }
    }
  }

  private async waitUntil(condition: () => boolean, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!condition() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
