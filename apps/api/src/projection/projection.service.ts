import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleInit } from '@nestjs/common';
import { BUS, JetStreamServer, type Bus, type Delivery } from '#bus';
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

/**
 * The API's read side: pods and nodes folded from the streams (ProjectionController feeds
 * it). Dropped on restart and rebuilt from the log, it comes out the same.
 */
@Injectable()
export class ProjectionService implements OnModuleInit, OnApplicationBootstrap {
  readonly pods = new PodProjection();
  readonly nodes: NodeTable;
  readonly namespaces = new NamespaceTable();
  readonly events = new EventLog(10_000);
  /** The watch caches: each resource's objects and its recent changes by stream sequence. */
  readonly podChanges: WatchCache<Pod>;
  /** Node records (copied at each change): a node's Ready depends on the time it is shown. */
  readonly nodeChanges: WatchCache<NodeRecord>;
  readonly eventChanges: WatchCache<KubeEvent>;
  /** Namespaces share the pods stream, so their resourceVersions are pod sequences. */
  readonly namespaceChanges: WatchCache<NamespaceObject>;
  readonly configMaps = new ConfigTable('ConfigMap');
  readonly secrets: ConfigTable;
  /** ConfigMaps' and Secrets' changes, by `JETLET_CONFIG` sequence. */
  readonly configMapChanges: WatchCache<ConfigObject>;
  readonly secretChanges: WatchCache<ConfigObject>;
  /** Seals and opens Secret values; undefined when no key is configured. */
  readonly secretBox: SecretBox | undefined;
  private configSeq = 0;
  private configWaiters: Array<{ seq: number; resolve: () => void }> = [];
  /** True once every projection reflects the log as it was at start. */
  synced = false;
  private waiters: Array<{ seq: number; resolve: () => void }> = [];

  constructor(
    @Inject(BUS) private readonly bus: Bus,
    @Inject(API_CONFIG) config: ApiConfig,
    private readonly transport: JetStreamServer,
  ) {
    this.nodes = new NodeTable(config.NODE_GRACE_SECONDS * 1000);
    this.podChanges = new WatchCache<Pod>(config.WATCH_CACHE_SIZE, (p) => p.metadata.uid ?? '');
    this.nodeChanges = new WatchCache<NodeRecord>(config.WATCH_CACHE_SIZE, (r) => r.node.metadata.uid ?? r.name);
    this.eventChanges = new WatchCache<KubeEvent>(config.WATCH_CACHE_SIZE, (e) => e.metadata.uid);
    this.namespaceChanges = new WatchCache<NamespaceObject>(config.WATCH_CACHE_SIZE, (n) => n.metadata.uid);
    this.configMapChanges = new WatchCache<ConfigObject>(config.WATCH_CACHE_SIZE, (c) => c.metadata.uid);
    this.secretChanges = new WatchCache<ConfigObject>(config.WATCH_CACHE_SIZE, (c) => c.metadata.uid);
    this.secretBox = SecretBox.fromConfig(config.SECRET_ENCRYPTION_KEY);
    const box = this.secretBox;
    this.secrets = new ConfigTable('Secret', box ? (sealed, name) => box.open(sealed, name) : undefined);
  }

  /** Last config-stream sequence applied (a ConfigMap or Secret list's resourceVersion). */
  get configLastSeq(): number {
    return this.configSeq;
  }

  /** Last events-stream sequence applied (an event list's resourceVersion). */
  get eventsSeq(): number {
    return this.eventChanges.lastSeq;
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
    this.configMapChanges.startAt(this.configSeq);
    this.secretChanges.startAt(this.configSeq);
    this.synced = true;
  }

  /** A fact from the pods stream: pod and namespace aggregates, status reports. */
  applyPods(envelope: AnyEnvelope, delivery: Delivery): void {
    const namespace = this.namespaces.apply(envelope, delivery.seq);
    if (namespace) this.namespaceChanges.update(namespace.name, namespaceView(namespace), delivery.seq, !namespace.removed);
    else this.namespaceChanges.advance(delivery.seq);
    const record = this.pods.apply(envelope, delivery.seq, delivery.subject);
    if (record) this.podChanges.update(`${record.namespace}/${record.name}`, podView(record), delivery.seq, !record.removed);
    else this.podChanges.advance(delivery.seq);
    this.release();
  }

  /** A message of the pods stream that was skipped as invalid still moves its subject and the stream on: writes expect it, and nobody waits for it. */
  skipPods(delivery: Delivery): void {
    this.pods.skip(delivery.subject, delivery.seq);
    this.podChanges.advance(delivery.seq);
    this.namespaceChanges.advance(delivery.seq);
    this.release();
  }

  applyNodes(envelope: AnyEnvelope, delivery: Delivery): void {
    const record = this.nodes.apply(envelope, delivery.seq);
    if (record) this.nodeChanges.update(record.name, { ...record }, delivery.seq, true);
    else this.nodeChanges.advance(delivery.seq);
  }

  /** A ConfigMap or Secret fact. Each config subject keeps only its newest message, so the replay is the current state and the watch window starts after it, as for nodes. */
  applyConfig(envelope: AnyEnvelope, delivery: Delivery): void {
    for (const [table, changes] of [
      [this.configMaps, this.configMapChanges],
      [this.secrets, this.secretChanges],
    ] as const) {
      const record = table.apply(envelope, delivery.seq);
      if (record) changes.update(`${record.namespace}/${record.name}`, configView(record), delivery.seq, !record.removed);
      else changes.advance(delivery.seq);
    }
    this.configSeq = Math.max(this.configSeq, delivery.seq);
    this.releaseConfig();
  }

  skipConfig(delivery: Delivery): void {
    const object = configOfSubject(delivery.subject);
    if (object) (object.kind === 'ConfigMap' ? this.configMaps : this.secrets).skip(object.namespace, object.name, delivery.seq);
    this.configMapChanges.advance(delivery.seq);
    this.secretChanges.advance(delivery.seq);
    this.configSeq = Math.max(this.configSeq, delivery.seq);
    this.releaseConfig();
  }

  applyEvents(envelope: AnyEnvelope, delivery: Delivery): void {
    const { added, evicted } = this.events.apply(envelope, delivery.seq);
    for (const e of evicted) this.eventChanges.update(`${e.metadata.namespace}/${e.metadata.name}`, e, delivery.seq, false);
    if (added) this.eventChanges.update(`${added.metadata.namespace}/${added.metadata.name}`, added, delivery.seq, true);
    else this.eventChanges.advance(delivery.seq);
  }

  /** Resolves once the pods projection has applied sequence `seq` (read-your-writes). */
  waitForPods(seq: number, timeoutMs: number): Promise<boolean> {
    if (this.pods.lastSeq >= seq) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        resolve(false);
      }, timeoutMs);
      const waiter = { seq, resolve: () => (clearTimeout(timer), resolve(true)) };
      this.waiters.push(waiter);
    });
  }

  /** Resolves once the config projection has applied sequence `seq`. */
  waitForConfig(seq: number, timeoutMs: number): Promise<boolean> {
    if (this.configSeq >= seq) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.configWaiters = this.configWaiters.filter((w) => w !== waiter);
        resolve(false);
      }, timeoutMs);
      const waiter = { seq, resolve: () => (clearTimeout(timer), resolve(true)) };
      this.configWaiters.push(waiter);
    });
  }

  private releaseConfig(): void {
    const done = this.configWaiters.filter((w) => w.seq <= this.configSeq);
    if (done.length === 0) return;
    this.configWaiters = this.configWaiters.filter((w) => w.seq > this.configSeq);
    for (const w of done) w.resolve();
  }

  private release(): void {
    const done = this.waiters.filter((w) => w.seq <= this.pods.lastSeq);
    if (done.length === 0) return;
    this.waiters = this.waiters.filter((w) => w.seq > this.pods.lastSeq);
    for (const w of done) w.resolve();
  }
}
