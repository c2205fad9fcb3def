import { Server, type CustomTransportStrategy, type MessageHandler, type WritePacket } from '@nestjs/microservices';
import type { JsMsg } from '@nats-io/jetstream';
import type { Msg, Subscription as CoreSubscription } from '@nats-io/transport-node';
import { isObservable, lastValueFrom } from 'rxjs';
import { busMetrics } from '#observability';
import type { Bus, ConsumerSpec, Subscription } from '../bus.js';
import { isStreamConsumer, resolveNode, skippedOf, type StreamConsumerExtras } from './consumer.options.js';
import { corePayload } from './jetstream.client.js';
import { JetStreamContext, type ConsumerRef } from './jetstream.context.js';
import { RawMessage } from './raw-message.js';

/** The transport's id: `@EventPattern(pattern, JETSTREAM, extras)` binds a handler to it alone. */
export const JETSTREAM = Symbol('JETSTREAM');

export interface JetStreamServerOptions {
  /** The node this process runs for: THIS_NODE in patterns and durable names becomes its name. */
  node?: string;
  /** The app's configuration, handed to deliver policies that depend on it. */
  config?: Readonly<Record<string, unknown>>;
  /** The clock deliver policies read. */
  now?: () => number;
  /**
   * Whether the apps' bootstrap hooks wait until every consumer has caught up (the default:
   * they may read projections). With false, they run while the consumers catch up, and a
   * hook that needs a consumer's messages waits for its `caughtUp`.
   */
  catchUpBeforeBootstrap?: boolean;
}

interface Deferred {
  promise: Promise<void>;
  resolve: () => void;
  reject: (error: unknown) => void;
}

function deferred(): Deferred {
  let resolve: () => void = () => undefined;
  let reject: (error: unknown) => void = () => undefined;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // Whoever waits on it hears of a failure; a deferred nobody waits on is no unhandled rejection.
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}

/**
 * A NestJS transport strategy on JetStream. Each `@EventPattern` whose extras name a
 * stream becomes a consumer (durable or ordered, its options from the extras, kept alive
 * through outages by `Bus.supervise`); any other `@EventPattern` or `@MessagePattern` is a
 * core NATS subscription (a request's replies go to its reply subject). Every message is
 * settled here or in the exception filter, through JetStreamContext, and nowhere else.
 * `listen` calls back once every consumer has caught up with its stream as it was at start.
 */
export class JetStreamServer extends Server implements CustomTransportStrategy {
  override readonly transportId = JETSTREAM;
  private readonly subscriptions: Subscription[] = [];
  private readonly coreSubscriptions: CoreSubscription[] = [];
  private readonly caughtUpByPattern = new Map<string, Deferred>();
  private started?: Promise<void>;
  private startError?: { error: unknown };
  private closed = false;

  constructor(
    private readonly bus: Bus,
    private readonly options: JetStreamServerOptions = {},
  ) {
    super();
  }

  /**
   * Resolves once the consumer of `pattern` has handled everything its stream held when it
   * opened; rejects with the error that kept the consumers from opening.
   */
  caughtUp(pattern: string): Promise<void> {
    return this.deferredFor(pattern).promise;
  }

  /** Whether the apps' bootstrap hooks run only once every consumer has caught up (see JetStreamServerOptions). */
  get catchesUpBeforeBootstrap(): boolean {
    return this.options.catchUpBeforeBootstrap ?? true;
  }

  /**
   * Opens every handler's consumer and resolves once each has caught up. Runs once: BusModule
   * calls it at application bootstrap when the strategy was connected before `init()`; else
   * `listen` does.
   */
  start(): Promise<void> {
    return (this.started ??= this.open().catch((error: unknown) => {
      this.startError = { error };
      for (const d of this.caughtUpByPattern.values()) d.reject(error);
      throw error;
    }));
  }

  listen(callback: (error?: unknown) => void): void {
    this.start().then(
      () => callback(),
      (error: unknown) => callback(error),
    );
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const s of this.coreSubscriptions.splice(0)) s.unsubscribe();
    await Promise.all(this.subscriptions.splice(0).map((s) => s.stop()));
  }

  on(): never {
    throw new Error('JetStreamServer has no events to listen to');
  }

  unwrap<T>(): T {
    return this.bus as T;
  }

  private deferredFor(pattern: string): Deferred {
    let d = this.caughtUpByPattern.get(pattern);
    if (!d) {
      this.caughtUpByPattern.set(pattern, (d = deferred()));
      if (this.startError) d.reject(this.startError.error);
    }
    return d;
  }

  private async open(): Promise<void> {
    const handlers = [...this.messageHandlers].filter(([pattern]) => !pattern.endsWith('#skipped'));
    const opened = await Promise.all(
      handlers.map(async ([pattern, handler]) => {
        const extras = handler.extras;
        if (handler.isEventHandler && isStreamConsumer(extras)) {
          const subscription = await this.consume(pattern, handler, extras);
          // Closed while it opened (the application's start failed elsewhere): it stops at once.
          if (this.closed) {
            await subscription.stop();
            throw new Error(`the transport closed while the consumer of ${pattern} opened`);
          }
          this.subscriptions.push(subscription);
          return { pattern, caughtUp: subscription.caughtUp };
        }
        this.subscribeCore(pattern, handler);
        return { pattern, caughtUp: Promise.resolve() };
      }),
    );
    // Core subscriptions are in place on the server before anyone is told the app is up.
    await this.bus.nc.flush();
    await Promise.all(
      opened.map(async ({ pattern, caughtUp }) => {
        await caughtUp;
        this.deferredFor(pattern).resolve();
      }),
    );
  }

  private async consume(pattern: string, handler: MessageHandler, extras: StreamConsumerExtras): Promise<Subscription> {
    const node = this.options.node;
    const deliver =
      typeof extras.deliver === 'function' ? extras.deliver({ nowMs: (this.options.now ?? Date.now)(), config: this.options.config ?? {} }) : extras.deliver;
    const durable = extras.durable === undefined ? undefined : resolveNode(extras.durable, node);
    const spec: ConsumerSpec = {
      stream: extras.stream,
      filterSubject: resolveNode(extras.filter ?? pattern, node),
      from: deliver,
      ...(durable !== undefined ? { durable } : {}),
      ...(extras.recreate !== undefined ? { recreate: extras.recreate } : {}),
      ...(extras.maxDeliver !== undefined ? { maxDeliver: extras.maxDeliver } : {}),
      ...(extras.ackWaitMs !== undefined ? { ackWaitMs: extras.ackWaitMs } : {}),
    };
    const ref: ConsumerRef = { stream: extras.stream, consumer: durable ?? 'ordered', acked: durable !== undefined };
    const onSkipped = this.getHandlerByPattern(skippedOf(pattern));
    return this.bus.open(spec, (m: JsMsg) => this.dispatch(handler, m, ref, onSkipped));
  }

  /** Runs the handler chain on one message and settles it: acked unless the filter settled it otherwise. */
  private async dispatch(handler: MessageHandler, m: JsMsg | Msg, ref: ConsumerRef, onSkipped?: MessageHandler | null): Promise<void> {
    const ctx = new JetStreamContext(m, ref);
    const raw = new RawMessage(m.subject, m.data);
    try {
      const result: unknown = await handler(raw, ctx);
      if (isObservable(result)) await lastValueFrom(result, { defaultValue: undefined });
      ctx.ack();
    } catch (error) {
      ctx.reject(error);
    }
    if (ctx.outcome === 'acked' && raw.decoded) busMetrics.consumed.inc(ref.stream, raw.decoded.type);
    if (ctx.outcome === 'terminated' && onSkipped) await onSkipped(ctx.getDelivery(), ctx);
  }

  private subscribeCore(pattern: string, handler: MessageHandler): void {
    const subject = resolveNode(pattern, this.options.node);
    const ref: ConsumerRef = { stream: 'core', consumer: subject, acked: false };
    const subscription = this.bus.nc.subscribe(subject, {
      callback: (error, msg) => {
        if (error) {
          this.logger.warn(`subscription to ${subject}: ${error.message}`);
          return;
        }
        if (this.closed) return;
        if (handler.isEventHandler) void this.dispatch(handler, msg, ref);
        else this.reply(handler, msg, ref);
      },
    });
    this.coreSubscriptions.push(subscription);
  }

  /** A request: every value the handler's stream yields is published to the request's reply subject (bytes as they are, else JSON). */
  private reply(handler: MessageHandler, msg: Msg, ref: ConsumerRef): void {
    const reply = msg.reply;
    if (!reply) {
      this.logger.warn(`request on ${msg.subject} without a reply subject dropped`);
      return;
    }
    const ctx = new JetStreamContext(msg, ref);
    const respond = (packet: WritePacket): void => {
      if (packet.err !== undefined) this.logger.warn(`request on ${msg.subject} failed: ${String(packet.err)}`);
      if (packet.response !== undefined) this.bus.nc.publish(reply, corePayload(packet.response));
    };
    (async () => this.transformToObservable(await handler(new RawMessage(msg.subject, msg.data), ctx)))().then(
      (response$) => this.send(response$, respond),
      (error: unknown) => ctx.reject(error),
    );
  }
}
