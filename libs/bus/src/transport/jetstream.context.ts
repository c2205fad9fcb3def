import { Logger } from '@nestjs/common';
import { BaseRpcContext } from '@nestjs/microservices';
import type { JsMsg } from '@nats-io/jetstream';
import type { Msg } from '@nats-io/transport-node';
import { ContractValidationError } from '#contracts';
import { busMetrics } from '#observability';

/** Where a message sits in its stream. */
export interface Delivery {
  subject: string;
  seq: number;
  /** Messages still to come for this consumer when this one was sent. */
  pending: number;
}

/** The consumer a message came from: its stream, its name in metrics, and whether it takes acks. */
export interface ConsumerRef {
  stream: string;
  /** The durable name, or `ordered` for an ordered consumer, or `core` for a core NATS subscription. */
  consumer: string;
  /** Durable consumers ack, nak and term; ordered consumers and core subscriptions only skip. */
  acked: boolean;
}

/** How a message was settled. */
export type Outcome = 'acked' | 'terminated' | 'retried';

const logger = new Logger('JetStreamTransport');

/** The longest wait before a message whose handler failed is delivered again, ms. */
const MAX_REDELIVERY_DELAY_MS = 30_000;

/**
 * One delivered message with its consumer, as handlers and filters see it (`@Ctx()`).
 * `ack` and `reject` are the only places a message is settled: what is invalid is
 * terminated, counted and logged; any other failure is redelivered after a capped delay.
 */
export class JetStreamContext extends BaseRpcContext<[JsMsg | Msg, ConsumerRef]> {
  /** Set once the message is settled; later calls do nothing. */
  outcome?: Outcome;

  constructor(message: JsMsg | Msg, consumer: ConsumerRef) {
    super([message, consumer]);
  }

  /** The raw message (a JetStream message on streams, a core NATS message otherwise). */
  getMessage(): JsMsg | Msg {
    return this.args[0];
  }

  getConsumer(): ConsumerRef {
    return this.args[1];
  }

  getSubject(): string {
    return this.args[0].subject;
  }

  /** Stream position and backlog; seq and pending are 0 for core NATS messages. */
  getDelivery(): Delivery {
    const m = this.args[0];
    if (!isJsMsg(m)) return { subject: m.subject, seq: 0, pending: 0 };
    return { subject: m.subject, seq: m.seq, pending: m.info.pending };
  }

  /** The handler is done with it. */
  ack(): void {
    if (this.outcome) return;
    this.outcome = 'acked';
    const m = this.args[0];
    if (this.args[1].acked && isJsMsg(m)) m.ack();
  }

  /**
   * Settles a message its handler (or the pipe before it) refused. A ContractValidationError
   * means the message itself is wrong: it is terminated (skipped on an ordered consumer),
   * counted in `jetlet_bus_messages_terminated_total` and logged with its subject and
   * sequence, and never holds up the messages behind it. Anything else is the handler's
   * failure: counted, logged and, on a durable consumer, redelivered after a capped delay.
   */
  reject(error: unknown): Outcome {
    if (this.outcome) return this.outcome;
    const m = this.args[0];
    const { stream, consumer, acked } = this.args[1];
    const where = isJsMsg(m) ? `${m.subject} (stream ${stream} seq ${m.seq})` : m.subject;
    if (error instanceof ContractValidationError) {
      this.outcome = 'terminated';
      busMetrics.terminated.inc({ stream, consumer });
      logger.warn(`${acked ? 'terminated' : 'skipped'} invalid message on ${where}: ${error.message}`);
      // No reason text: nats-server 2.9 only knows a bare +TERM (a reason makes it ignore the term).
      if (acked && isJsMsg(m)) m.term();
      return this.outcome;
    }
    this.outcome = 'retried';
    busMetrics.handlerErrors.inc({ stream, consumer });
    logger.error(`handling the message on ${where} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    if (acked && isJsMsg(m)) m.nak(Math.min(1000 * 2 ** Math.min(m.info.deliveryCount, 6), MAX_REDELIVERY_DELAY_MS));
    return this.outcome;
  }
}

function isJsMsg(m: JsMsg | Msg): m is JsMsg {
  return 'seq' in m && typeof m.ack === 'function';
}
