import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import {
  AckPolicy,
  DeliverPolicy,
  JetStreamApiError,
  jetstream,
  jetstreamManager,
  RetentionPolicy,
  StorageType,
  type ConsumerMessages,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
} from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import {
  ContractValidationError,
  decodeEnvelope,
  MESSAGES,
  STREAM_DEFINITIONS,
  subjectNodeMismatch,
  type AnyEnvelope,
  type Envelope,
  type MessageData,
  type MessageSource,
  type MessageType,
} from '#contracts';
import { busMetrics } from '#observability';
import { BusError, SequenceConflictError } from './bus.errors.js';

/** JetStream's error code for a failed expected-last-(subject-)sequence check. */
const WRONG_LAST_SEQUENCE = 10071;

export interface BusOptions {
  /** Comma-separated NATS URLs. */
  servers: string;
  /** Connection name shown by the server. */
  name: string;
  /** Who this process is, stamped on every envelope it writes. */
  source: MessageSource;
  /** Longest wait between connection attempts, ms. */
  maxRetryDelayMs?: number;
  /** Replicas of every stream `ensureStreams` creates or updates (1 by default; 3 on a three-server cluster). */
  streamReplicas?: number;
}

export interface PublishOptions {
  /** The pod's uid for a pod's life, the node name for node messages. */
  correlationId: string;
  causationId?: string;
  /** A deterministic id makes a retried publish a duplicate the stream drops. */
  id?: string;
  /** Optimistic concurrency: the subject's last sequence must be this (0 = subject empty). */
  expectedLastSubjectSequence?: number;
}

export interface Published<T extends MessageType> {
  seq: number;
  duplicate: boolean;
  envelope: Envelope<T>;
}

/** Where a message sits in its stream. */
export interface Delivery {
  subject: string;
  seq: number;
  /** Messages still to come for this consumer when this one was sent. */
  pending: number;
}

export type Handler = (envelope: AnyEnvelope, delivery: Delivery) => Promise<void> | void;

export type DeliverFrom = 'all' | 'last_per_subject' | 'new' | { startSeq: number };

export interface Subscription {
  /** Resolves once everything in the stream at subscription time has been handled. */
  caughtUp: Promise<void>;
  stop(): Promise<void>;
}

function deliverConfig(from: DeliverFrom): { deliver_policy: DeliverPolicy; opt_start_seq?: number } {
  if (typeof from === 'object') return { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: from.startSeq };
  switch (from) {
    case 'all':
      return { deliver_policy: DeliverPolicy.All };
    case 'last_per_subject':
      return { deliver_policy: DeliverPolicy.LastPerSubject };
    case 'new':
      return { deliver_policy: DeliverPolicy.New };
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The JetStream adapter: envelopes in and out, streams ensured at start, durable
 * consumers that validate and `term` what is invalid, ordered consumers for replay.
 */
export class Bus {
  private readonly logger = new Logger(Bus.name);
  private readonly subscriptions = new Set<Subscription>();

  private constructor(
    readonly nc: NatsConnection,
    readonly js: JetStreamClient,
    readonly jsm: JetStreamManager,
    private readonly source: MessageSource,
    private readonly streamReplicas: number,
  ) {}

  /** Connects, retrying with capped exponential back-off until the server answers or `signal` aborts. */
  static async connect(options: BusOptions, signal?: AbortSignal): Promise<Bus> {
    const logger = new Logger(Bus.name);
    const maxDelay = options.maxRetryDelayMs ?? 5000;
    let delay = 100;
    for (let attempt = 1; ; attempt++) {
      try {
        const nc = await connect({
          servers: options.servers.split(','),
          name: options.name,
          maxReconnectAttempts: -1,
          reconnectTimeWait: 500,
        });
        const jsm = await jetstreamManager(nc);
        if (attempt > 1) logger.log(`connected to ${options.servers} after ${attempt} attempts`);
        const bus = new Bus(nc, jetstream(nc), jsm, options.source, options.streamReplicas ?? 1);
        void bus.watchConnection();
        return bus;
      } catch (error) {
        if (signal?.aborted) throw new BusError('connect aborted', { cause: error });
        logger.warn(`cannot reach NATS at ${options.servers} (attempt ${attempt}): ${(error as Error).message}; retrying in ${delay} ms`);
        await sleep(delay);
        delay = Math.min(delay * 2, maxDelay);
      }
    }
  }

  /** False while the connection is down (the client reconnects on its own, with back-off). */
  connected = true;

  /** Logs losing and regaining the server, and keeps `connected` current. */
  private async watchConnection(): Promise<void> {
    for await (const status of this.nc.status()) {
      if (status.type === 'disconnect') {
        this.connected = false;
        this.logger.warn('lost the NATS connection; reconnecting');
      } else if (status.type === 'reconnect') {
        this.connected = true;
        this.logger.log('NATS connection is back');
      }
    }
  }

  /** Creates every stream, or updates its limits; safe to run from every process at start. */
  async ensureStreams(): Promise<void> {
    for (const def of Object.values(STREAM_DEFINITIONS)) {
      const config = {
        name: def.name,
        subjects: def.subjects,
        storage: StorageType.File,
        num_replicas: this.streamReplicas,
        retention: RetentionPolicy.Limits,
        max_msgs_per_subject: def.maxMsgsPerSubject,
        max_age: def.maxAgeSeconds * 1e9,
        allow_direct: true,
        duplicate_window: 120 * 1e9,
      };
      try {
        await this.jsm.streams.info(def.name);
        await this.jsm.streams.update(def.name, config);
      } catch (error) {
        if (!(error instanceof JetStreamApiError) || error.status !== 404) throw error;
        try {
          await this.jsm.streams.add(config);
        } catch (addError) {
          // Another process created it between our info and add.
          if (!(addError instanceof JetStreamApiError) || addError.status !== 400) throw addError;
        }
      }
    }
  }

  /** Publishes one typed message in its envelope. Throws SequenceConflictError when an expectation fails. */
  async publish<T extends MessageType>(subject: string, type: T, data: MessageData<T>, options: PublishOptions): Promise<Published<T>> {
    const envelope: Envelope<T> = {
      id: options.id ?? randomUUID(),
      type,
      version: MESSAGES[type].version,
      time: new Date().toISOString(),
      source: this.source,
      correlationId: options.correlationId,
      ...(options.causationId ? { causationId: options.causationId } : {}),
      data,
    };
    const expect = options.expectedLastSubjectSequence === undefined ? undefined : { lastSubjectSequence: options.expectedLastSubjectSequence };
    try {
      const ack = await this.js.publish(subject, JSON.stringify(envelope), { msgID: envelope.id, ...(expect ? { expect } : {}) });
      busMetrics.published.inc({ type });
      return { seq: ack.seq, duplicate: ack.duplicate, envelope };
    } catch (error) {
      if (error instanceof JetStreamApiError && error.code === WRONG_LAST_SEQUENCE) {
        throw new SequenceConflictError(subject, options.expectedLastSubjectSequence ?? -1, { cause: error });
      }
      throw error;
    }
  }

  /** Removes every message on one subject (its single writer's clean-up). */
  async purgeSubject(stream: string, subject: string): Promise<void> {
    await this.jsm.streams.purge(stream, { filter: subject });
  }

  /** Sequence of the newest message on `subject`, 0 when it has none. */
  async lastSubjectSequence(stream: string, subject: string): Promise<number> {
    const msg = await this.jsm.streams.getMessage(stream, { last_by_subj: subject });
    return msg?.seq ?? 0;
  }

  /** The newest message on `subject`, parsed, or undefined. */
  async lastMessage(stream: string, subject: string): Promise<{ envelope: AnyEnvelope; seq: number } | undefined> {
    const msg = await this.jsm.streams.getMessage(stream, { last_by_subj: subject });
    if (!msg) return undefined;
    return { envelope: decodeEnvelope(msg.data), seq: msg.seq };
  }

  /**
   * A durable pull consumer with explicit ack. Each message is decoded and validated:
   * an invalid one is terminated, counted and logged with its subject and sequence; a
   * handler failure is redelivered after a delay. With `recreate`, the consumer is
   * deleted first so delivery starts again from `from` (how an agent rebuilds).
   */
  async consume(
    stream: string,
    options: { durable: string; filterSubject: string; from: DeliverFrom; recreate?: boolean; maxDeliver?: number },
    handler: Handler,
  ): Promise<Subscription> {
    if (options.recreate) {
      try {
        await this.jsm.consumers.delete(stream, options.durable);
      } catch (error) {
        if (!(error instanceof JetStreamApiError) || error.status !== 404) throw error;
      }
    }
    const existing = await this.jsm.consumers.info(stream, options.durable).catch((error: unknown) => {
      if (error instanceof JetStreamApiError && error.status === 404) return undefined;
      throw error;
    });
    if (!existing) {
      await this.jsm.consumers.add(stream, {
        durable_name: options.durable,
        ack_policy: AckPolicy.Explicit,
        filter_subject: options.filterSubject,
        ack_wait: 30e9,
        max_deliver: options.maxDeliver ?? -1,
        ...deliverConfig(options.from),
      });
    }
    const consumer = await this.js.consumers.get(stream, options.durable);
    const info = await consumer.info(true);
    const messages = await consumer.consume({ max_messages: 256 });
    const first = this.pump(stream, options.durable, messages, info.num_pending + info.num_ack_pending, handler, true);

    // A consumer deleted under us (by an operator, or a stream reset) would leave the client
    // retrying forever while nothing arrives: create it again and go on. Deliveries start
    // over from `from`; handlers are idempotent by sequence.
    let current = first;
    let stopped = false;
    const watch = async (notifications: AsyncIterable<{ type: string }>): Promise<void> => {
      for await (const status of notifications) {
        if (stopped || (status.type !== 'consumer_deleted' && status.type !== 'consumer_not_found')) continue;
        this.logger.warn(`consumer ${options.durable} on ${stream} is gone (${status.type}); creating it again`);
        busMetrics.consumerRecreated.inc({ stream, consumer: options.durable });
        await current.stop();
        if (stopped) return;
        const again = await this.consume(stream, { ...options, recreate: false }, handler).catch((error: unknown) => {
          this.logger.error(`consumer ${options.durable} on ${stream} not recreated: ${(error as Error).message}`);
          return undefined;
        });
        if (again) current = again;
        return;
      }
    };
    void watch(messages.status());
    return {
      caughtUp: first.caughtUp,
      stop: async () => {
        stopped = true;
        await current.stop();
      },
    };
  }

  /** An ordered (ack-less, in-memory) consumer for replay and projections. */
  async follow(stream: string, options: { filterSubject: string; from: DeliverFrom }, handler: Handler): Promise<Subscription> {
    const consumer = await this.js.consumers.get(stream, { filter_subjects: options.filterSubject, ...deliverConfig(options.from) });
    const info = await consumer.info(true);
    const messages = await consumer.consume();
    return this.pump(stream, 'ordered', messages, info.num_pending, handler, false);
  }

  private pump(stream: string, consumerName: string, messages: ConsumerMessages, initialPending: number, handler: Handler, acked: boolean): Subscription {
    let markCaughtUp: () => void = () => undefined;
    const caughtUp = new Promise<void>((resolve) => (markCaughtUp = resolve));
    if (initialPending === 0) markCaughtUp();

    const handleOne = async (m: JsMsg): Promise<void> => {
      const delivery: Delivery = { subject: m.subject, seq: m.seq, pending: m.info.pending };
      let envelope: AnyEnvelope;
      try {
        envelope = decodeEnvelope(m.data);
        const mismatch = subjectNodeMismatch(m.subject, envelope);
        if (mismatch) throw new ContractValidationError(envelope.type, [{ field: 'data.nodeName', reason: 'FieldValueForbidden', message: mismatch }]);
      } catch (error) {
        busMetrics.terminated.inc({ stream, consumer: consumerName });
        const why = error instanceof ContractValidationError ? error.message : String(error);
        this.logger.warn(`${acked ? 'terminated' : 'skipped'} invalid message on ${m.subject} (stream ${stream} seq ${m.seq}): ${why}`);
        // No reason text: nats-server 2.9 only knows a bare +TERM (a reason makes it ignore the term).
        if (acked) m.term();
        return;
      }
      try {
        await handler(envelope, delivery);
        busMetrics.consumed.inc({ stream, type: envelope.type });
        if (acked) m.ack();
      } catch (error) {
        busMetrics.handlerErrors.inc({ stream, consumer: consumerName });
        this.logger.error(`handling ${envelope.type} on ${m.subject} (seq ${m.seq}) failed: ${(error as Error).stack ?? String(error)}`);
        if (acked) m.nak(Math.min(1000 * 2 ** Math.min(m.info.deliveryCount, 6), 30_000));
      }
    };

    const done = (async () => {
      for await (const m of messages) {
        await handleOne(m);
        if (m.info.pending === 0) markCaughtUp();
      }
    })().catch((error: unknown) => this.logger.error(`consumer on ${stream} ended: ${String(error)}`));

    const subscription: Subscription = {
      caughtUp,
      stop: async () => {
        this.subscriptions.delete(subscription);
        await messages.close();
        await done;
      },
    };
    this.subscriptions.add(subscription);
    return subscription;
  }

  /** Stops every consumer, then drains the connection so in-flight publishes finish. */
  async close(): Promise<void> {
    await Promise.all([...this.subscriptions].map((s) => s.stop()));
    if (!this.nc.isClosed()) await this.nc.drain();
  }
}
