import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleInit } from '@nestjs/common';
import { BUS, JetStreamServer, ListWatch, type Bus, type Delivery, type Folded } from '#bus';
import { configOfSubject, STREAMS, type AnyEnvelope, type Pod } from '#contracts';
import {
  ConfigTable,
  configView,
  SecretBox,
  type ConfigObject,
  EventLog,
  NamespaceTable,
  namespaceView,
  NodeTable,
  PodProjection,
  type NamespaceObject,
  podView,
  WatchCache,
  type KubeEvent,
  type NodeRecord,
} from '#domain';
import { API_CONFIG } from '../api.constants.js';
import type { ApiConfig } from '../api.config.js';
import { PROJECTED } from './projection.constants.js';

/** Keeps a watch cache's window in step with a projection cache: its changes, and the sequences that changed nothing. */
function feed<T>(cache: ListWatch<T>, window: WatchCache<T>): void {
  cache.on('change', (c) => window.update(c.key, c.object, c.seq, c.type !== 'delete'));
  cache.on('advance', (seq) => window.advance(seq));
}

/**
 * The API's read side: one ListWatch cache per resource, folded from the streams
 * (ProjectionController feeds them), each feeding the watch window of its resource. Dropped
 * on restart and rebuilt from the log, it comes out the same.
 */
@Injectable()
export class ProjectionService implements OnModuleInit, OnApplicationBootstrap {
  /** The folds behind the caches: every record, removed ones included, with what writes need (a pod subject's sequence). */
  readonly pods = new PodProjection();
  readonly nodes: NodeTable;
  readonly namespaces = new NamespaceTable();
  readonly events = new EventLog(10_000);
  readonly configMaps = new ConfigTable('ConfigMap');
  readonly secrets: ConfigTable;
  /** The projection caches: each resource's objects as the API shows them, by namespace/name (nodes and namespaces by name). */
  readonly podCache: ListWatch<Pod>;
  readonly namespaceCache: ListWatch<NamespaceObject>;
  /** Node records (copied at each change): a node's Ready depends on the time it is shown. */
  readonly nodeCache: ListWatch<NodeRecord>;
  readonly eventCache: ListWatch<KubeEvent>;
  readonly configMapCache: ListWatch<ConfigObject>;
  readonly secretCache: ListWatch<ConfigObject>;
  /** The watch caches: each resource's recent changes by stream sequence. */
  readonly podChanges: WatchCache<Pod>;
  readonly nodeChanges: WatchCache<NodeRecord>;
  readonly eventChanges: WatchCache<KubeEvent>;
  /** Namespaces share the pods stream, so their resourceVersions are pod sequences. */
  readonly namespaceChanges: WatchCache<NamespaceObject>;
  /** ConfigMaps' and Secrets' changes, by `JETLET_CONFIG` sequence. */
  readonly configMapChanges: WatchCache<ConfigObject>;
  readonly secretChanges: WatchCache<ConfigObject>;
  /** Seals and opens Secret values; undefined when no key is configured. */
  readonly secretBox: SecretBox | undefined;
  /** True once every projection reflects the log as it was at start. */
  synced = false;

  constructor(
    @Inject(BUS) private readonly bus: Bus,
    @Inject(API_CONFIG) config: ApiConfig,
    private readonly transport: JetStreamServer,
  ) {
    this.nodes = new NodeTable(config.NODE_GRACE_SECONDS * 1000);
    this.secretBox = SecretBox.fromConfig(config.SECRET_ENCRYPTION_KEY);
    const box = this.secretBox;
    this.secrets = new ConfigTable('Secret', box ? (sealed, name) => box.open(sealed, name) : undefined);

    this.podCache = new ListWatch<Pod>({
      fold: (envelope, delivery) => {
        const record = this.pods.apply(envelope, delivery.seq, delivery.subject);
        return record && { key: `${record.namespace}/${record.name}`, object: podView(record), exists: !record.removed };
      },
      skip: (delivery) => this.pods.skip(delivery.subject, delivery.seq),
      identity: (p) => p.metadata.uid ?? '',
    });
    this.namespaceCache = new ListWatch<NamespaceObject>({
      fold: (envelope, delivery) => {
        const namespace = this.namespaces.apply(envelope, delivery.seq);
        return namespace && { key: namespace.name, object: namespaceView(namespace), exists: !namespace.removed };
      },
      identity: (n) => n.metadata.uid,
    });
    this.nodeCache = new ListWatch<NodeRecord>({
      fold: (envelope, delivery) => {
        const record = this.nodes.apply(envelope, delivery.seq);
        return record && { key: record.name, object: { ...record }, exists: true };
      },
      identity: (r) => r.node.metadata.uid ?? r.name,
    });
    this.eventCache = new ListWatch<KubeEvent>({
      fold: (envelope, delivery) => {
        const { added, evicted } = this.events.apply(envelope, delivery.seq);
        const key = (e: KubeEvent): string => `${e.metadata.namespace}/${e.metadata.name}`;
        const changes: Array<Folded<KubeEvent>> = evicted.map((e) => ({ key: key(e), object: e, exists: false }));
        if (added) changes.push({ key: key(added), object: added, exists: true });
        return changes;
      },
      identity: (e) => e.metadata.uid,
    });
    const configCache = (table: ConfigTable, kind: 'ConfigMap' | 'Secret'): ListWatch<ConfigObject> =>
      new ListWatch<ConfigObject>({
        fold: (envelope, delivery) => {
          const record = table.apply(envelope, delivery.seq);
          return record && { key: `${record.namespace}/${record.name}`, object: configView(record), exists: !record.removed };
        },
        skip: (delivery) => {
          const object = configOfSubject(delivery.subject);
          if (object?.kind === kind) table.skip(object.namespace, object.name, delivery.seq);
        },
        identity: (c) => c.metadata.uid,
      });
    this.configMapCache = configCache(this.configMaps, 'ConfigMap');
    this.secretCache = configCache(this.secrets, 'Secret');

    this.podChanges = new WatchCache<Pod>(config.WATCH_CACHE_SIZE, (p) => p.metadata.uid ?? '');
    this.nodeChanges = new WatchCache<NodeRecord>(config.WATCH_CACHE_SIZE, (r) => r.node.metadata.uid ?? r.name);
    this.eventChanges = new WatchCache<KubeEvent>(config.WATCH_CACHE_SIZE, (e) => e.metadata.uid);
    this.namespaceChanges = new WatchCache<NamespaceObject>(config.WATCH_CACHE_SIZE, (n) => n.metadata.uid);
    this.configMapChanges = new WatchCache<ConfigObject>(config.WATCH_CACHE_SIZE, (c) => c.metadata.uid);
    this.secretChanges = new WatchCache<ConfigObject>(config.WATCH_CACHE_SIZE, (c) => c.metadata.uid);
    feed(this.podCache, this.podChanges);
    feed(this.namespaceCache, this.namespaceChanges);
    feed(this.nodeCache, this.nodeChanges);
    feed(this.eventCache, this.eventChanges);
    feed(this.configMapCache, this.configMapChanges);
    feed(this.secretCache, this.secretChanges);
  }

  /** Last pods-stream sequence applied (a pod or namespace list's resourceVersion). */
  get podsSeq(): number {
    return this.podCache.latestResourceVersion;
  }

  /** Last config-stream sequence applied (a ConfigMap or Secret list's resourceVersion). */
  get configLastSeq(): number {
    return this.secretCache.latestResourceVersion;
  }

  /** Last events-stream sequence applied (an event list's resourceVersion). */
  get eventsSeq(): number {
    return this.eventCache.latestResourceVersion;
  }

  async onModuleInit(): Promise<void> {
    // A stream replayed from its start holds every change after its first sequence; one
    // replayed from the last message per subject holds only what comes after the replay.
    const [podsInfo, eventsInfo] = await Promise.all([this.bus.jsm.streams.info(STREAMS.pods), this.bus.jsm.streams.info(STREAMS.events)]);
    this.podChanges.startAt(Math.max(0, podsInfo.state.first_seq - 1));
    this.namespaceChanges.startAt(Math.max(0, podsInfo.state.first_seq - 1));
    this.eventChanges.startAt(Math.max(0, eventsInfo.state.first_seq - 1));
  }

  async onApplicationBootstrap(): Promise<void> {
    // Serve nothing until the projection reflects the log as it was at start.
    await Promise.all(Object.values(PROJECTED).map((pattern) => this.transport.caughtUp(pattern)));
    this.nodeChanges.startAt(this.nodeChanges.lastSeq);
    this.configMapChanges.startAt(this.configLastSeq);
    this.secretChanges.startAt(this.configLastSeq);
    for (const cache of [this.podCache, this.namespaceCache, this.nodeCache, this.eventCache, this.configMapCache, this.secretCache]) cache.markSynced();
    this.synced = true;
  }

  /** A fact from the pods stream: pod and namespace aggregates, status reports. */
  applyPods(envelope: AnyEnvelope, delivery: Delivery): void {
    this.namespaceCache.apply(envelope, delivery);
    this.podCache.apply(envelope, delivery);
  }

  /** A message of the pods stream that was skipped as invalid still moves its subject and the stream on: writes expect it, and nobody waits for it. */
  skipPods(delivery: Delivery): void {
    this.podCache.skip(delivery);
    this.namespaceCache.skip(delivery);
  }

  applyNodes(envelope: AnyEnvelope, delivery: Delivery): void {
    this.nodeCache.apply(envelope, delivery);
  }

  /** A ConfigMap or Secret fact. Each config subject keeps only its newest message, so the replay is the current state and the watch window starts after it, as for nodes. */
  applyConfig(envelope: AnyEnvelope, delivery: Delivery): void {
    this.configMapCache.apply(envelope, delivery);
    this.secretCache.apply(envelope, delivery);
  }

  skipConfig(delivery: Delivery): void {
    this.configMapCache.skip(delivery);
    this.secretCache.skip(delivery);
  }

  applyEvents(envelope: AnyEnvelope, delivery: Delivery): void {
    this.eventCache.apply(envelope, delivery);
  }

  /** Resolves once the pods projection has applied sequence `seq` (read-your-writes). */
  waitForPods(seq: number, timeoutMs: number): Promise<boolean> {
    return this.podCache.waitFor(seq, timeoutMs);
  }

  /** Resolves once the config projection has applied sequence `seq`. */
  waitForConfig(seq: number, timeoutMs: number): Promise<boolean> {
    return this.secretCache.waitFor(seq, timeoutMs);
  }
}
