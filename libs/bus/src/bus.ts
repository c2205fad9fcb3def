import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Logger } from '@nestjs/common';
import {
  AckPolicy,
  DeliverPolicy,
  JetStreamApiError,
  jetstream,
  jetstreamManager,
  RetentionPolicy,
  StorageType,
  type ConsumerInfo,
  type ConsumerMessages,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
  type MsgRequest,
  type StoredMsg,
} from '@nats-io/jetstream';
import { connect, errors as natsErrors, type NatsConnection, type Status } from '@nats-io/transport-node';
import {
  ContractValidationError,
  decodeEnvelope,
  identityName,
  MESSAGES,
  rememberVerified,
  reuseVerifiedEnvelopes,
  STREAM_DEFINITIONS,
  type StreamDefinition,
  subjectNodeMismatch,
  type AnyEnvelope,
  type Envelope,
  type MessageData,
  type MessageSource,
  type MessageType,
} from '#contracts';
import { busMetrics, consumerLag, enableProcessMetrics } from '#observability';
import { BusError, BusUnavailableError, MessageTooLargeError, SequenceConflictError } from './bus.errors.js';
import { retry } from '#workqueue';
import { credentialOptions, tlsOptions, type BusCredentials, type BusTls } from './credentials.js';
import { lastMessages, listSubjects, StartedConsumerMessages } from './last-per-subject.js';
import { Outbox, type OutboxOptions } from './outbox.js';
import { OrderedCursor, orderedDrained, reopenDelayMs, type StoredFrom } from './ordered-cursor.js';
import { JetStreamContext, type ConsumerRef, type Delivery } from './transport/jetstream.context.js';

export type { Delivery } from './transport/jetstream.context.js';

const utf8 = new TextEncoder();

/**
 * JetStream's error codes for a failed expected-last-(subject-)sequence check: 10071, and
 * 10164 from nats-server 2.11 on for a subject's expected sequence that another write in
 * flight may change.
 */
const WRONG_LAST_SEQUENCE = new Set([10071, 10164]);
/** How many compacted subjects remember where their oldest message is (a walk from the stream's start otherwise). */
const COMPACTED_HINTS = 50_000;
/** Room kept under the server's max_payload for the headers a publish sends (Nats-Msg-Id, expectations). */
const HEADER_ALLOWANCE_BYTES = 1024;
/** NATS's default max_payload, assumed until the server says otherwise. */
const DEFAULT_MAX_PAYLOAD = 1024 * 1024;

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
  /** How long a publish waits for JetStream's acknowledgement before BusUnavailableError, ms (5000). */
  publishTimeoutMs?: number;
  /** The buffer of `publishBuffered` (events published while the bus is unreachable). */
  outbox?: OutboxOptions;
  /**
   * For a process that reads back what it writes: how many envelopes validated at publish are
   * kept for the first consumer of the same bytes, which then skips validating them again (0, off).
   */
  reuseVerified?: number;
  /**
   * This component's NATS identity and the file holding its nkey seed (`jetctl nats-config`
   * writes both the seed and the server's permissions). Without a seed file the connection is
   * anonymous, which only an unsecured server accepts, and a warning says so at start.
   */
  credentials?: BusCredentials;
  /** TLS to the server (NATS_TLS_CA_FILE and, for mutual TLS, NATS_TLS_CERT_FILE/NATS_TLS_KEY_FILE); unset, plain TCP unless the server asks for TLS. */
  tls?: BusTls;
  /**
   * Another Bus whose connection to ride instead of opening one: a process of hollow nodes runs
   * all its agents over the one connection of its identity. This Bus keeps its own consumers,
   * outbox and source; it neither ensures the streams nor drains the connection at close, which
   * are the owner's. `servers`, `credentials` and `tls` are then unused.
   */
  shareConnectionOf?: Bus;
}

export interface PublishOptions {
  /** The pod's uid for a pod's life, the node name for node messages. */
  correlationId: string;
  causationId?: string;
  /** A deterministic id makes a retried publish a duplicate the stream drops. */
  id?: string;
  /** Optimistic concurrency: the subject's last sequence must be this (0 = subject empty). */
  expectedLastSubjectSequence?: number;
  /** Optimistic concurrency on the whole stream: its last sequence must be this. */
  expectedLastSequence?: number;
  /** When the fact happened, if not now (a buffered publish keeps the time it was made). */
  time?: string;
  /**
   * The writer built `data` itself from contract objects it had validated, by code whose every
   * output a spec reads back through the contract classes (the API's accepted pod: see
   * `acceptedPod`). The bus then still encodes it, checks its size and its subject's node, but
   * does not run the classes over it a second time. Never for data that came from outside the
   * process as it is (a request body, another component's message, an operator's file): that
   * goes through the full check.
   */
  prevalidated?: boolean;
}

export interface Published<T extends MessageType> {
  seq: number;
  duplicate: boolean;
  envelope: Envelope<T>;
}

export type Handler = (envelope: AnyEnvelope, delivery: Delivery) => Promise<void> | void;

/** An open consumer: its message iterator and how many messages waited when it opened. */
interface Opened {
  messages: ConsumerMessages;
  pending: number;
  /**
   * Asks the server whether the consumer has nothing more for this process: nothing pending,
   * and every message it delivered handled (`handledSeq` is the stream sequence of the last
   * one handled; a durable's are acked).
   */
  drained(handledSeq: number): Promise<boolean>;
  /**
   * An ordered consumer delivers each message once, in stream order: the first `pending`
   * messages it delivers are what the stream held at the open. (A durable's redeliveries come
   * out of order, so it has no such count.)
   */
  inOrder: boolean;
}

export type DeliverFrom = 'all' | 'last_per_subject' | 'new' | { startSeq: number } | { startTime: string };

/** One consumer on one stream: durable (acked, survives the process) when `durable` is set, else ordered. */
export interface ConsumerSpec {
  stream: string;
  filterSubject: string;
  from: DeliverFrom;
  /** Durable name; without it the consumer is ordered (ack-less, in memory) and resumes after the last sequence seen. */
  durable?: string;
  /** Delete the durable first, so delivery starts again from `from` (how an agent rebuilds). */
  recreate?: boolean;
  /** How often a message is delivered before JetStream gives up on it (-1: no limit). */
  maxDeliver?: number;
  /** How long a delivered message may stay unacknowledged before it is sent again, ms (30 s). */
  ackWaitMs?: number;
}

/** Gets every message of a consumer, raw; it settles the message itself (see JetStreamContext). */
export type RawHandler = (m: JsMsg) => Promise<void>;

export interface Subscription {
  /** Resolves once everything in the stream at subscription time has been handled. */
  caughtUp: Promise<void>;
  stop(): Promise<void>;
}

/** What an ordered consumer's handler returns to have the consumer opened again after the last message it handled. */
const REOPEN = Symbol('reopen');

function deliverConfig(from: DeliverFrom): { deliver_policy: DeliverPolicy; opt_start_seq?: number; opt_start_time?: string } {
  if (typeof from === 'object' && 'startTime' in from) return { deliver_policy: DeliverPolicy.StartTime, opt_start_time: from.startTime };
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

/**
 * A pull consumer's request lifetime, ms. Its idle heartbeat is half of it, and two missed
 * heartbeats mark the consumer dead: a consumer lost with a server restart is noticed
 * within this time even when no reconnect is seen. (nats.js defaults to 30 s, so a
 * consumer lost to a SIGKILLed server came back only after about 40 s.)
 */
export const CONSUMER_EXPIRES_MS = 4000;
/** First and longest wait between attempts to open a consumer again, ms. */
const REOPEN_FIRST_DELAY_MS = 100;
const REOPEN_MAX_DELAY_MS = 2000;
/**
 * How long a reopen waits for the old messages to close before it opens the consumer anyway,
 * ms. They are already stopped (no more pulls, no more deliveries); the wait only lets the
 * handler under way finish first, and one that does not finish cannot keep the consumer away.
 */
const REOPEN_CLOSE_WAIT_MS = 2000;
/**
 * How often a consumer not yet caught up asks the server whether it has drained. A consumer
 * is caught up when a delivered message says nothing is pending after it; when the count the
 * server gave at the open falls short (messages purged or deleted before their delivery),
 * no delivered message says so, and the server's own figures are what tells.
 */
const CAUGHT_UP_CHECK_MS = 1000;

/** True for the errors that mean "the bus is not there now", as opposed to a refusal. */
export function isUnavailable(error: unknown): boolean {
  if (error instanceof BusUnavailableError) return true;
  if (error instanceof JetStreamApiError) return error.code === 10008; // JetStream temporarily unavailable
  // No JetStream answered: the server is up but its JetStream is not (yet), as after a restart.
  // nats.js exports the class only from its internal entry point, so it is known by its name.
  if (error instanceof Error && error.name === 'JetStreamNotEnabled') return true;
  return (
    error instanceof natsErrors.TimeoutError ||
    error instanceof natsErrors.NoRespondersError ||
    error instanceof natsErrors.ClosedConnectionError ||
    error instanceof natsErrors.DrainingConnectionError ||
    error instanceof natsErrors.ConnectionError ||
    (error instanceof natsErrors.RequestError && isUnavailable(error.cause))
  );
}

/**
 * Whether nats-server `version` may store two writes to one subject of a replicated stream
 * that both expect its last sequence (nats-io/nats-server#4320): before 2.9.21. Measured on
 * 2.9.10 with three replicas: 220 of 300 races stored both writes; with one replica, none.
 */
export function subjectSequenceRaces(version: string): boolean {
  const [major, minor, patch] = version.split(/[.-]/).map((part) => Number.parseInt(part, 10));
  if (major === undefined || minor === undefined || patch === undefined || [major, minor, patch].some(Number.isNaN)) return false;
  return major < 2 || (major === 2 && (minor < 9 || (minor === 9 && patch < 21)));
}

/**
 * The JetStream adapter: envelopes in and out, streams ensured at start, durable
 * consumers that validate and `term` what is invalid, ordered consumers for replay.
 */
export class Bus {
  private readonly logger = new Logger(Bus.name);
  private readonly subscriptions = new Set<Subscription>();
  private readonly reconnectListeners = new Set<() => void>();
  /** The Buses riding this one's connection (`shareConnectionOf`): they hear of its status from here. */
  private readonly riders = new Set<Bus>();
  /** The Bus whose connection this one rides, if any. */
  private owner?: Bus;
  private readonly publishTimeoutMs: number;
  private readonly streamReplicas: number;
  /** Events and container events published while the bus is unreachable wait here. */
  readonly outbox: Outbox;

  private constructor(
    readonly nc: NatsConnection,
    readonly js: JetStreamClient,
    readonly jsm: JetStreamManager,
    private readonly source: MessageSource,
    private readonly options: BusOptions,
    /** False on a shared connection (`BusOptions.connection`): its owner drains it. */
    private readonly ownsConnection = true,
  ) {
    this.streamReplicas = options.streamReplicas ?? 1;
    this.publishTimeoutMs = options.publishTimeoutMs ?? 5000;
    if (options.reuseVerified !== undefined) reuseVerifiedEnvelopes(options.reuseVerified);
    this.outbox = new Outbox((message) => this.publish(message.subject, message.type, message.data, message.options), isUnavailable, options.outbox);
  }

  /** Connects, retrying with capped exponential back-off until the server answers or `signal` aborts. */
  static async connect(options: BusOptions, signal?: AbortSignal): Promise<Bus> {
    // Every jetlet process talks to the bus, so this is where each gets its process metrics.
    enableProcessMetrics();
    if (options.shareConnectionOf) return Bus.share(options.shareConnectionOf, options);
    const logger = new Logger(Bus.name);
    const auth = { ...credentialOptions(options.credentials, logger), ...tlsOptions(options.tls) };
    return retry(
      async (attempt) => {
        const nc = await connect({
          servers: options.servers.split(','),
          name: options.name,
          maxReconnectAttempts: -1,
          reconnectTimeWait: 500,
          // A request's error keeps its message and cause but not the caller's stack: capturing
          // that stack up front for every publish cost more than the publish's own encoding.
          noAsyncTraces: true,
          ...auth,
        });
        const jsm = await jetstreamManager(nc);
        if (options.credentials?.seedFile && !nc.info?.auth_required)
          logger.warn(`the NATS server at ${options.servers} checks no identities: anyone who reaches it can write as this component`);
        if (attempt > 1) logger.log(`connected to ${options.servers} after ${attempt} attempts`);
        const version = nc.info?.version ?? '';
        if ((options.streamReplicas ?? 1) > 1 && subjectSequenceRaces(version))
          logger.warn(
            `nats-server ${version} checks a subject's expected sequence on a replicated stream only before it orders the write: two writers that expect the same sequence may both be stored (nats-io/nats-server#4320, fixed in 2.9.21)`,
          );
        const bus = new Bus(nc, jetstream(nc), jsm, options.source, options);
        void bus.watchConnection();
        return bus;
      },
      {
        initialMs: 100,
        maxMs: options.maxRetryDelayMs ?? 5000,
        ...(signal ? { signal } : {}),
        onRetry: (error, attempt, delay) =>
          logger.warn(`cannot reach NATS at ${options.servers} (attempt ${attempt}): ${(error as Error).message}; retrying in ${delay} ms`),
      },
    ).catch((error: unknown) => {
      throw signal?.aborted ? new BusError('connect aborted', { cause: error }) : error;
    });
  }

  /** A Bus over `owner`'s connection; the owner has already checked that JetStream answers. */
  private static async share(owner: Bus, options: BusOptions): Promise<Bus> {
    const jsm = await jetstreamManager(owner.nc, { checkAPI: false });
    const bus = new Bus(owner.nc, jetstream(owner.nc), jsm, options.source, options, false);
    bus.connected = owner.connected;
    bus.disconnectedSinceMs = owner.disconnectedSinceMs;
    // The owner reads the connection's status once and tells each rider, rather than every
    // rider keeping a status iterator of its own on the one connection (hundreds in a hollow process).
    bus.owner = owner;
    owner.riders.add(bus);
    return bus;
  }

  /** Whether `ensureStreams` is this Bus's job: not on a shared connection, whose owner ensured them. */
  get ensuresStreams(): boolean {
    return this.ownsConnection;
  }

  /** False while the connection is down (the client reconnects on its own, with back-off). */
  connected = true;
  /** ms since the epoch when the connection went down; undefined while connected. */
  disconnectedSinceMs?: number;

  /** Reads the connection's status, for this Bus and every Bus riding its connection. */
  private async watchConnection(): Promise<void> {
    for await (const status of this.nc.status()) {
      this.onStatus(status);
      for (const rider of this.riders) rider.onStatus(status);
    }
  }

  /** Logs losing and regaining the server, keeps `connected` current, and tells the consumers. */
  private onStatus(status: Status): void {
    if (status.type === 'disconnect') {
      this.connected = false;
      this.disconnectedSinceMs ??= Date.now();
      this.logger.warn('lost the NATS connection; reconnecting');
    } else if (status.type === 'reconnect') {
      this.connected = true;
      this.disconnectedSinceMs = undefined;
      this.logger.log('NATS connection is back');
      for (const listener of this.reconnectListeners) listener();
      this.outbox.wake();
    } else if (status.type === 'error' && status.error instanceof natsErrors.PermissionViolationError) {
      // A refusal by the server's permissions: a bug or a forged request, never a reason to stop.
      const { operation, subject } = status.error;
      busMetrics.permissionViolations.inc({ operation });
      this.logger.error(`NATS refused ${operation} to "${subject}" for identity ${this.identity ?? 'anonymous'} (permissions violation)`);
    }
  }

  /** The NATS identity this connection authenticated as, when it has credentials. */
  get identity(): string | undefined {
    return this.options.credentials?.seedFile ? identityName(this.options.credentials.identity) : undefined;
  }

  /**
   * Whether this process creates and updates the streams: always without credentials; with
   * them, only the API and admin may (the others' permissions have no STREAM.CREATE), and the
   * rest wait until the streams exist.
   */
  private get managesStreams(): boolean {
    const kind = this.options.credentials?.seedFile ? this.options.credentials.identity.kind : undefined;
    return kind === undefined || kind === 'api' || kind === 'admin';
  }

  /**
   * Creates every stream, or updates its limits; safe to run from every process at start.
   * A cluster that is still forming (no JetStream leader yet, a request that times out while
   * several processes create replicated streams at once) is waited for, not a failed boot.
   */
  async ensureStreams(): Promise<void> {
    // Each stream on its own: one round trip's wait for all of them, not one per stream.
    await Promise.all(
      Object.values(STREAM_DEFINITIONS).map((def) =>
        retry(() => this.ensureStream(def), {
          initialMs: 250,
          maxMs: 5000,
          retryable: isUnavailable,
          onRetry: (error, _attempt, delay) => this.logger.warn(`stream ${def.name} not ensured yet (${(error as Error).message}); retrying in ${delay} ms`),
        }),
      ),
    );
  }

  private async ensureStream(def: StreamDefinition): Promise<void> {
    if (!this.managesStreams) {
      try {
        await this.jsm.streams.info(def.name);
        return;
      } catch (error) {
        if (error instanceof JetStreamApiError && error.status === 404)
          throw new BusUnavailableError(`stream ${def.name} is not created yet (the API creates it)`);
        throw error;
      }
    }
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

  /** Publishes one typed message in its envelope. Throws SequenceConflictError when an expectation fails. */
  async publish<T extends MessageType>(subject: string, type: T, data: MessageData<T>, options: PublishOptions): Promise<Published<T>> {
    const envelope: Envelope<T> = {
      id: options.id ?? randomUUID(),
      type,
      version: MESSAGES[type].version,
      time: options.time ?? new Date().toISOString(),
      source: this.source,
      correlationId: options.correlationId,
      ...(options.causationId ? { causationId: options.causationId } : {}),
      data,
    };
    return this.publishEnvelope(subject, envelope, options, options.prevalidated);
  }

  /** The largest envelope, in bytes, a publish accepts: the server's max_payload less room for headers. */
  get maxMessageBytes(): number {
    return (this.nc.info?.max_payload ?? DEFAULT_MAX_PAYLOAD) - HEADER_ALLOWANCE_BYTES;
  }

  /**
   * Encodes an envelope exactly as it will be stored, and reads it back as every consumer
   * does (the same classes, the subject's node check): what a reader would reject never
   * enters the log. With `prevalidated` (see PublishOptions) the classes are not run again:
   * its writer built it from data it had validated. Throws ContractValidationError or
   * MessageTooLargeError.
   */
  encode(subject: string, envelope: Envelope, prevalidated = false): Uint8Array {
    let json: string;
    try {
      json = JSON.stringify(envelope);
    } catch (error) {
      throw new ContractValidationError(envelope.type, [{ field: 'data', reason: 'FieldValueInvalid', message: 'cannot be encoded as JSON' }], {
        cause: error,
      });
    }
    const bytes = utf8.encode(json);
    if (bytes.length > this.maxMessageBytes) throw new MessageTooLargeError(subject, bytes.length, this.maxMessageBytes);
    if (prevalidated) {
      const mismatch = subjectNodeMismatch(subject, envelope);
      if (mismatch) throw new ContractValidationError(envelope.type, [{ field: 'data.nodeName', reason: 'FieldValueForbidden', message: mismatch }]);
      rememberVerified(json, null);
      return bytes;
    }
    const parsed = decodeEnvelope(bytes);
    const mismatch = subjectNodeMismatch(subject, parsed);
    if (mismatch) throw new ContractValidationError(parsed.type, [{ field: 'data.nodeName', reason: 'FieldValueForbidden', message: mismatch }]);
    rememberVerified(json, parsed);
    return bytes;
  }

  private async publishEnvelope<T extends MessageType>(
    subject: string,
    envelope: Envelope<T>,
    expected: Pick<PublishOptions, 'expectedLastSubjectSequence' | 'expectedLastSequence'> = {},
    prevalidated = false,
  ): Promise<Published<T>> {
    const { expectedLastSubjectSequence, expectedLastSequence } = expected;
    const bytes = this.encode(subject, envelope, prevalidated);
    // A write while the connection is down would only sit in the client's buffer until the
    // timeout: say at once that the bus is not there.
    if (!this.connected) throw new BusUnavailableError(`NATS is unreachable (since ${new Date(this.disconnectedSinceMs ?? Date.now()).toISOString()})`);
    const expect =
      expectedLastSubjectSequence === undefined && expectedLastSequence === undefined
        ? undefined
        : {
            ...(expectedLastSubjectSequence === undefined ? {} : { lastSubjectSequence: expectedLastSubjectSequence }),
            ...(expectedLastSequence === undefined ? {} : { lastSequence: expectedLastSequence }),
          };
    try {
      const ack = await this.corked(() =>
        this.js.publish(subject, bytes, {
          msgID: envelope.id,
          timeout: this.publishTimeoutMs,
          ...(expect ? { expect } : {}),
        }),
      );
      busMetrics.published.inc(envelope.type);
      return { seq: ack.seq, duplicate: ack.duplicate, envelope };
    } catch (error) {
      if (error instanceof JetStreamApiError && WRONG_LAST_SEQUENCE.has(error.code)) {
        throw new SequenceConflictError(subject, expectedLastSubjectSequence ?? -1, { cause: error });
      }
      if (isUnavailable(error)) throw new BusUnavailableError(`JetStream did not take the write: ${(error as Error).message}`, { cause: error });
      throw error;
    }
  }

  /** Publishes waiting for the end of this turn of the event loop. */
  private corkedSends: Array<() => void> = [];

  /**
   * Starts `send` at the end of this turn of the event loop, together with every other
   * publish made in it. nats.js writes what it is given within one microtask as one socket
   * write: fifty requests handled in one turn then cost one write, not fifty (the writes were
   * a tenth of the API's CPU under load). Each publish still waits for its own ack.
   */
  private corked<R>(send: () => Promise<R>): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      if (this.corkedSends.push(() => void send().then(resolve, reject)) === 1) setImmediate(() => this.uncork());
    });
  }

  private uncork(): void {
    const sends = this.corkedSends;
    this.corkedSends = [];
    for (const send of sends) send();
  }

  /**
   * Publishes a fact that must survive a bus outage but that nobody waits for (events,
   * container events): it is sent now, or kept in the bounded outbox and sent in order once
   * the bus answers again. The envelope (id, time) is fixed now, so a retry is a duplicate
   * the stream drops. Never throws.
   */
  publishBuffered<T extends MessageType>(subject: string, type: T, data: MessageData<T>, options: PublishOptions): void {
    this.outbox.add({ subject, type, data, options: { ...options, id: options.id ?? randomUUID(), time: new Date().toISOString() } });
  }

  /**
   * Removes the messages on one subject (its single writer's clean-up): every one, or those
   * up to and including `upToSeq`, so a message written later is untouched.
   *
   * Message by message (`STREAM.MSG.DELETE`), never by `STREAM.PURGE`: nats-server 2.9 moves
   * every consumer whose filter covers a purged subject past the purge, to the subject's first
   * remaining message or the stream's end. A consumer still behind (a fresh scheduler catching
   * up, an agent rebuilding, a replay) would then pass over every message in between, and a
   * durable one would count them acknowledged. A delete leaves each consumer where it is.
   */
  async purgeSubject(stream: string, subject: string, options: { upToSeq?: number; fromSeq?: number } = {}): Promise<void> {
    for (let from = options.fromSeq ?? 1; ;) {
      const seq = await this.storedFrom(stream, subject, from);
      if (seq === undefined || (options.upToSeq !== undefined && seq > options.upToSeq)) return;
      await this.deleteMessage(stream, seq);
      from = seq + 1;
    }
  }

  /** Removes one message, unless it is gone already (another clean-up got there first). */
  private async deleteMessage(stream: string, seq: number): Promise<void> {
    try {
      await this.jsm.streams.deleteMessage(stream, seq, false);
    } catch (error) {
      // nats-server answers a delete of a message removed meanwhile with a generic failure.
      if (!(error instanceof JetStreamApiError) || (await this.jsm.streams.getMessage(stream, { seq })) !== null) throw error;
    }
  }

  /** Where each compacted subject's oldest message may be: the one it kept last time. */
  private readonly compactedFrom = new Map<string, number>();

  /**
   * Keeps only the newest message of `subject`, removing the older ones one by one (see
   * `purgeSubject`). A subject compacted before is walked from the message it kept then.
   */
  async compactSubject(stream: string, subject: string): Promise<void> {
    const key = `${stream} ${subject}`;
    const last = await this.lastSubjectSequence(stream, subject);
    if (last === 0) {
      this.compactedFrom.delete(key);
      return;
    }
    await this.purgeSubject(stream, subject, { upToSeq: last - 1, fromSeq: this.compactedFrom.get(key) });
    // Insertion order is age: the hint of the subject compacted longest ago goes first.
    this.compactedFrom.delete(key);
    this.compactedFrom.set(key, last);
    if (this.compactedFrom.size > COMPACTED_HINTS) this.compactedFrom.delete(this.compactedFrom.keys().next().value as string);
  }

  private readonly compactions = new Map<string, string>();
  private compactTimer?: NodeJS.Timeout;

  /**
   * Keeps only the newest message of `subject` (its single writer's clean-up, for subjects
   * where only the last fact matters, such as a pod's status). Coalesced: done within a
   * second, once per subject however many messages were written meanwhile; retried after
   * an outage.
   */
  compactSoon(stream: string, subject: string): void {
    // A node's identity may not purge (NATS cannot limit a purge to its own subjects): its
    // statuses stay until the scheduler purges them with the pod.
    const kind = this.options.credentials?.seedFile ? this.options.credentials.identity.kind : undefined;
    if (kind === 'node' || kind === 'hollow') return;
    this.compactions.set(subject, stream);
    if (this.compactTimer) return;
    this.compactTimer = setTimeout(() => void this.compact(), 1000);
    this.compactTimer.unref();
  }

  private async compact(): Promise<void> {
    const batch = [...this.compactions];
    this.compactions.clear();
    for (const [subject, stream] of batch) {
      try {
        await this.compactSubject(stream, subject);
      } catch (error) {
        if (isUnavailable(error)) this.compactions.set(subject, stream);
        else this.logger.warn(`${subject} not compacted: ${(error as Error).message}`);
      }
    }
    this.compactTimer = undefined;
    if (this.compactions.size > 0) {
      this.compactTimer = setTimeout(() => void this.compact(), 5000);
      this.compactTimer.unref();
    }
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
   * deleted first so delivery starts again from `from` (how an agent rebuilds). A consumer
   * that dies (server restarted, consumer deleted) is opened again at once; see `supervise`.
   */
  async consume(
    stream: string,
    options: { durable: string; filterSubject: string; from: DeliverFrom; recreate?: boolean; maxDeliver?: number },
    handler: Handler,
  ): Promise<Subscription> {
    const ref: ConsumerRef = { stream, consumer: options.durable, acked: true };
    return this.open({ stream, ...options }, (m) => this.handleDecoded(m, ref, handler));
  }

  /**
   * An ordered (ack-less, in-memory) consumer for replay and projections. Opened again
   * after a failure, it resumes after the last sequence handled. `onSkip` hears of each
   * invalid message it skips, so a projection can still count its sequence.
   */
  async follow(
    stream: string,
    options: { filterSubject: string; from: DeliverFrom; onSkip?: (delivery: Delivery) => void },
    handler: Handler,
  ): Promise<Subscription> {
    const ref: ConsumerRef = { stream, consumer: 'ordered', acked: false };
    return this.open({ stream, filterSubject: options.filterSubject, from: options.from }, (m) => this.handleDecoded(m, ref, handler, options.onSkip));
  }

  /** Decodes and checks one message, runs `handler` on it and settles it. */
  private async handleDecoded(m: JsMsg, ref: ConsumerRef, handler: Handler, onSkip?: (delivery: Delivery) => void): Promise<void> {
    const ctx = new JetStreamContext(m, ref);
    try {
      const envelope = decodeEnvelope(m.data);
      const mismatch = subjectNodeMismatch(m.subject, envelope);
      if (mismatch) throw new ContractValidationError(envelope.type, [{ field: 'data.nodeName', reason: 'FieldValueForbidden', message: mismatch }]);
      await handler(envelope, ctx.getDelivery());
      busMetrics.consumed.inc(ref.stream, envelope.type);
      ctx.ack();
    } catch (error) {
      if (ctx.reject(error) === 'terminated') onSkip?.(ctx.getDelivery());
    }
  }

  /**
   * Opens the consumer `spec` describes and hands each message, raw, to `onMessage`, which
   * settles it. A durable consumer is created if missing (or afresh with `recreate`); an
   * ordered one opened again resumes after the last sequence it delivered. Kept alive by
   * `supervise`.
   */
  async open(spec: ConsumerSpec, onMessage: RawHandler): Promise<Subscription> {
    const { stream, durable } = spec;
    if (durable === undefined) {
      const cursor = new OrderedCursor(spec.from, spec.filterSubject === '>');
      const storedFrom: StoredFrom = (seq) => this.storedFrom(stream, spec.filterSubject, seq);
      const openOrdered = async (): Promise<Opened> => {
        const consumer = await this.js.consumers.get(stream, { filter_subjects: spec.filterSubject, ...deliverConfig(cursor.openFrom) });
        const info = await consumer.info(true);
        const messages = await consumer.consume({ expires: CONSUMER_EXPIRES_MS });
        // Where the server starts it: nothing delivered past this is nothing to handle.
        const startedAt = info.delivered.stream_seq;
        const drained = async (handledSeq: number): Promise<boolean> => {
          const now = await consumer.info(false);
          return orderedDrained({ pending: now.num_pending, deliveredSeq: now.delivered.stream_seq }, Math.max(handledSeq, startedAt), storedFrom);
        };
        return { messages, pending: info.num_pending, drained, inOrder: true };
      };
      const gapChecked: StoredFrom = (seq) =>
        storedFrom(seq).catch((error: unknown) => {
          // The gap then goes unchecked: say so where it can be seen.
          this.logger.warn(`could not check ${stream} for messages skipped from ${seq} on ${spec.filterSubject}: ${String(error)}`);
          return undefined;
        });
      return this.supervise(stream, 'ordered', openOrdered, async (m) => {
        const verdict = await cursor.check(m.seq, gapChecked);
        if (verdict.kind === 'reopen') {
          busMetrics.orderedGaps.inc({ stream });
          const delayMs = reopenDelayMs(verdict.attempt);
          this.logger.warn(
            `ordered consumer on ${stream} (${spec.filterSubject}) delivered ${m.seq} but never ${verdict.missed}; opening it again at ${verdict.missed}` +
              (delayMs > 0 ? ` in ${delayMs} ms (attempt ${verdict.attempt})` : ''),
          );
          if (delayMs > 0) await sleep(delayMs);
          return REOPEN;
        }
        return onMessage(m);
      });
    }
    // The start read at the last open. The durable delivers only what came after it, so what of
    // it was not settled when the consumer closed (the connection lost mid-rebuild) is handed
    // out again by the next open of the same durable, or read again with a new one.
    let lastStart: StartedConsumerMessages | undefined;
    // Set while a durable created after a start read is not yet handed that start: an open that
    // failed then (the creation's answer lost) reads the start again and makes the durable anew.
    let startOwed = false;
    const openDurable = async (first: boolean): Promise<Opened> => {
      if (startOwed) this.logger.warn(`consumer ${durable} on ${stream} was created but not opened after its start; reading its start again`);
      const recreating = (first && spec.recreate === true) || startOwed;
      // A recreated consumer's last-per-subject start lists its subjects while the old one goes.
      const listing = recreating && spec.from === 'last_per_subject' ? listSubjects(this.jsm, stream, spec.filterSubject) : undefined;
      listing?.catch(() => undefined); // awaited below, unless the deletion fails first
      if (recreating) {
        try {
          await this.jsm.consumers.delete(stream, durable);
        } catch (error) {
          if (!(error instanceof JetStreamApiError) || error.status !== 404) throw error;
        }
      }
      // Just deleted, it is not asked for. Each answer below carries the consumer's state, which
      // nats-server 2.9 counts by walking the stream's subjects: one walk an open, not two.
      const existing = recreating
        ? undefined
        : await this.jsm.consumers.info(stream, durable).catch((error: unknown) => {
            if (error instanceof JetStreamApiError && error.status === 404) return undefined;
            throw error;
          });
      // Gone after the first open: deleted by an operator, or lost with the server's state.
      // Deliveries start over from `from`; handlers are idempotent by sequence.
      const create = (deliver: ReturnType<typeof deliverConfig>): Promise<ConsumerInfo> =>
        this.jsm.consumers.add(stream, {
          durable_name: durable,
          ack_policy: AckPolicy.Explicit,
          filter_subject: spec.filterSubject,
          ack_wait: (spec.ackWaitMs ?? 30_000) * 1e6,
          max_deliver: spec.maxDeliver ?? -1,
          ...deliver,
        });
      // A last-per-subject start is read from the stream, which nats-server 2.9 answers far
      // sooner than it creates such a consumer (see last-per-subject.ts).
      let stored: StoredMsg[] | undefined;
      let info: ConsumerInfo;
      if (existing) {
        info = existing;
        if (lastStart && !lastStart.storedSettled) stored = lastStart.unsettledStored();
      } else if (spec.from === 'last_per_subject') {
        const { lastSeq, subjects, readable } = await (listing ?? listSubjects(this.jsm, stream, spec.filterSubject));
        if (readable) {
          // Read before the durable exists: a failed read leaves no consumer that a retry would
          // take for one already started, and open without these messages.
          stored = await lastMessages(this.jsm, stream, subjects, lastSeq);
          startOwed = true;
          info = await create(deliverConfig({ startSeq: lastSeq + 1 }));
        } else info = await create(deliverConfig('last_per_subject'));
      } else info = await create(deliverConfig(spec.from));
      const consumer = this.js.consumers.getConsumerFromInfo(info);
      const live = await consumer.consume({ max_messages: 256, expires: CONSUMER_EXPIRES_MS });
      const livePending = info.num_pending + info.num_ack_pending;
      const started = stored && new StartedConsumerMessages({ stream, consumer: durable, stored, livePending, live, maxDeliver: spec.maxDeliver ?? -1 });
      lastStart = started;
      startOwed = false;
      const drained = async (): Promise<boolean> => {
        if (started && !started.storedSettled) return false;
        const now = await consumer.info(false);
        return now.num_pending === 0 && now.num_ack_pending === 0;
      };
      return { messages: started ?? live, pending: (stored?.length ?? 0) + livePending, drained, inOrder: false };
    };
    return this.supervise(stream, durable, openDurable, onMessage);
  }

  /** The sequence of the first message stored at or after `seq` on `filter`, or undefined when there is none. */
  private async storedFrom(stream: string, filter: string, seq: number): Promise<number | undefined> {
    // STREAM.MSG.GET takes `next_by_subj` since nats-server 2.9; nats.js types it only for direct gets.
    const stored = await this.jsm.streams.getMessage(stream, { seq, next_by_subj: filter } as unknown as MsgRequest);
    return stored?.seq;
  }

  /**
   * Runs a consumer and keeps it alive, as a ListWatch keeps its watch: when the connection
   * comes back, when two idle heartbeats are missed, or when the server says the consumer
   * is gone, the consumer is closed and opened again at once (retrying with a short capped
   * back-off while JetStream recovers). nats.js would recover on its own only after its
   * 30 s back-off.
   */
  private async supervise(
    stream: string,
    consumerName: string,
    open: (first: boolean) => Promise<Opened>,
    onMessage: (m: JsMsg) => Promise<void | typeof REOPEN>,
  ): Promise<Subscription> {
    let isCaughtUp = false;
    let resolveCaughtUp: () => void = () => undefined;
    const caughtUp = new Promise<void>((resolve) => (resolveCaughtUp = resolve));
    const markCaughtUp = (): void => {
      isCaughtUp = true;
      resolveCaughtUp();
    };
    let stopped = false;
    const stopping = new AbortController();
    let current = await open(true);
    if (current.pending === 0) markCaughtUp();
    let reopening: Promise<void> | undefined;
    let wake: () => void = () => undefined;
    let handledSeq = 0;
    // What the stream held at the first open, for an ordered consumer: handled once this many
    // messages are, as an informer has synced once its list is, though writes keep coming.
    let heldAtOpen = current.inOrder ? current.pending : Number.POSITIVE_INFINITY;
    void (async () => {
      while (!isCaughtUp && !stopped) {
        await sleep(CAUGHT_UP_CHECK_MS, undefined, { signal: stopping.signal }).catch(() => undefined);
        if (isCaughtUp || stopped || reopening) continue;
        if (await current.drained(handledSeq).catch(() => false)) {
          this.logger.log(`consumer ${consumerName} on ${stream} caught up (the server has nothing more for it)`);
          markCaughtUp();
        }
      }
    })();

    const lag = consumerLag.cell({ stream, consumer: consumerName });
    const handleOne = async (m: JsMsg): Promise<void | typeof REOPEN> => {
      lag.set(m.info.pending);
      return onMessage(m);
    };

    /** Closes the current consumer and opens it again until that works or the subscription stops. */
    const reopen = (why: string): void => {
      if (stopped || reopening) return;
      this.logger.warn(`consumer ${consumerName} on ${stream}: ${why}; opening it again`);
      busMetrics.consumerRecreated.inc({ stream, consumer: consumerName });
      reopening = (async () => {
        // The old messages close once the loop below takes their stop, which waits for the
        // handler it is running; a handler held up must not hold the consumer's return too.
        const closing = current.messages.close().then(
          () => true,
          () => true,
        );
        const closed = await Promise.race([closing, sleep(REOPEN_CLOSE_WAIT_MS, false, { signal: stopping.signal, ref: false }).catch(() => false)]);
        if (stopped) return;
        if (!closed) {
          this.logger.warn(`consumer ${consumerName} on ${stream}: its handler is still running after ${REOPEN_CLOSE_WAIT_MS} ms; opening it again anyway`);
        }
        const next = await retry(() => open(false), {
          initialMs: REOPEN_FIRST_DELAY_MS,
          maxMs: REOPEN_MAX_DELAY_MS,
          signal: stopping.signal,
          onRetry: (error, attempt) => this.logger.warn(`consumer ${consumerName} on ${stream} not open yet (attempt ${attempt}): ${(error as Error).message}`),
        }).catch(() => undefined);
        if (!next) return;
        if (stopped) {
          // Not awaited: nats.js settles a close once a loop takes the stop it queues, and no
          // loop ever reads these. Their pulls and timers end at once all the same.
          void next.messages.close().catch(() => undefined);
          return;
        }
        current = next;
        if (next.pending === 0) markCaughtUp();
        watchStatus(next.messages);
        this.logger.log(`consumer ${consumerName} on ${stream} is back`);
        wake();
      })().finally(() => (reopening = undefined));
    };

    const watchStatus = (messages: ConsumerMessages): void => {
      void (async () => {
        for await (const status of messages.status()) {
          if (messages !== current.messages) return;
          if (status.type === 'consumer_deleted' || status.type === 'consumer_not_found' || status.type === 'stream_not_found') reopen(status.type);
          else if (status.type === 'heartbeats_missed' && status.count >= 2) reopen(`${status.count} idle heartbeats missed`);
        }
      })().catch(() => undefined);
    };
    watchStatus(current.messages);
    const onReconnect = (): void => reopen('the connection came back');
    this.reconnectListeners.add(onReconnect);

    const done = (async () => {
      while (!stopped) {
        const messages = current.messages;
        try {
          for await (const m of messages) {
            // A reopen that did not wait for the handler (REOPEN_CLOSE_WAIT_MS) has opened the
            // consumer again after it: what the old messages still hold comes again from there.
            if (messages !== current.messages) break;
            if ((await handleOne(m)) === REOPEN) {
              reopen('it skipped stored messages');
              break;
            }
            if (m.seq > handledSeq) heldAtOpen--;
            handledSeq = Math.max(handledSeq, m.seq);
            if (m.info.pending === 0 || heldAtOpen <= 0) markCaughtUp();
          }
        } catch (error) {
          if (!stopped) this.logger.warn(`consumer ${consumerName} on ${stream} ended: ${String(error)}`);
        }
        if (stopped) return;
        // The iterator ended without a stop: a reopen is under way (or must be started).
        if (messages === current.messages) reopen('its messages ended');
        await new Promise<void>((resolve) => {
          wake = resolve;
          if (messages !== current.messages || stopped) resolve();
        });
      }
    })();

    const subscription: Subscription = {
      caughtUp,
      stop: async () => {
        stopped = true;
        stopping.abort();
        lag.drop();
        this.reconnectListeners.delete(onReconnect);
        this.subscriptions.delete(subscription);
        wake();
        await reopening;
        await current.messages.close().catch(() => undefined);
        await done;
      },
    };
    this.subscriptions.add(subscription);
    return subscription;
  }

  /** Stops every consumer, sends what the outbox holds if the bus answers, then drains the connection. */
  async close(): Promise<void> {
    await Promise.all([...this.subscriptions].map((s) => s.stop()));
    clearTimeout(this.compactTimer);
    if (this.connected && this.compactions.size > 0) await this.compact().catch(() => undefined);
    clearTimeout(this.compactTimer);
    await this.outbox.close(this.connected ? 2000 : 0);
    this.owner?.riders.delete(this);
    if (this.ownsConnection && !this.nc.isClosed()) await this.nc.drain();
  }
}
