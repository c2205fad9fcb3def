import { Backoff, systemClock } from '#workqueue';
import { Logger } from '@nestjs/common';
import type { MessageData, MessageType } from '#contracts';
import { busMetrics } from '#observability';
import type { PublishOptions } from './bus.js';

/** One message waiting to be published, its envelope id and time already fixed. */
export interface OutboxMessage<T extends MessageType = MessageType> {
  subject: string;
  type: T;
  data: MessageData<T>;
  options: PublishOptions;
}

export interface OutboxOptions {
  /** Most messages kept; when full the oldest is dropped (and counted). Default 1000. */
  capacity?: number;
  /**
   * Most messages sent and not yet acknowledged (64). One at a time, a busy process's outbox
   * fell behind its writes (each waits its ack's turn on the event loop) and overflowed.
   */
  inFlight?: number;
  /** First and longest wait between attempts while the bus does not answer, ms. */
  firstDelayMs?: number;
  maxDelayMs?: number;
}

/**
 * A bounded, ordered buffer of publishes that must outlive a bus outage. Messages go out in
 * the order they were added, up to `inFlight` at once (one connection keeps their order), but
 * never two of one subject at once: a subject's messages are stored in the order they were
 * added even when one of them has to be retried. While the bus is unavailable the unsent ones
 * are retried with capped back-off (or at once on `wake()`, when the connection returns). A
 * message JetStream refuses is dropped, and so is the oldest one when the buffer is full:
 * both are counted in `jetlet_bus_outbox_dropped_total` and logged.
 */
export class Outbox {
  private readonly logger = new Logger(Outbox.name);
  private readonly queue: OutboxMessage[] = [];
  private readonly capacity: number;
  private readonly firstDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly inFlight: number;
  private draining?: Promise<void>;
  private interrupt: () => void = () => undefined;
  private closed = false;
  /** Overflow drops not yet logged: one line per outage, not one per message. */
  private unloggedDrops = 0;

  constructor(
    private readonly send: (message: OutboxMessage) => Promise<unknown>,
    private readonly retryable: (error: unknown) => boolean,
    options: OutboxOptions = {},
  ) {
    this.capacity = options.capacity ?? 1000;
    this.firstDelayMs = options.firstDelayMs ?? 250;
    this.maxDelayMs = options.maxDelayMs ?? 5000;
    this.inFlight = options.inFlight ?? 64;
  }

  /** Messages waiting. */
  get size(): number {
    return this.queue.length;
  }

  add(message: OutboxMessage): void {
    if (this.closed) {
      this.dropped(message, 'rejected', 'the bus is closing');
      return;
    }
    if (this.queue.length >= this.capacity) {
      const oldest = this.queue.shift();
      busMetrics.outboxPending.dec();
      if (oldest) {
        busMetrics.outboxDropped.inc({ type: oldest.type, reason: 'overflow' });
        this.unloggedDrops++;
      }
    }
    this.queue.push(message);
    busMetrics.outboxPending.inc();
    this.draining ??= this.drain().finally(() => (this.draining = undefined));
  }

  /** Retries now instead of at the end of the current back-off (the connection is back). */
  wake(): void {
    this.interrupt();
  }

  /** Stops taking messages and waits up to `timeoutMs` for the ones held to go out. */
  async close(timeoutMs: number): Promise<void> {
    this.closed = true;
    if (this.draining && timeoutMs > 0) await Promise.race([this.draining, new Promise((resolve) => setTimeout(resolve, timeoutMs).unref())]);
    if (this.queue.length > 0) this.logger.warn(`${this.queue.length} message(s) not published before shutdown`);
    this.interrupt();
  }

  private async drain(): Promise<void> {
    const backoff = new Backoff({ initialMs: this.firstDelayMs, maxMs: this.maxDelayMs });
    while (this.queue.length > 0) {
      const window = this.window();
      const results = await Promise.allSettled(window.map((m) => this.send(m)));
      let unavailable = false;
      results.forEach((result, i) => {
        const message = window[i];
        if (result.status === 'fulfilled') this.remove(message);
        else if (!this.retryable(result.reason)) {
          this.remove(message);
          this.dropped(message, 'rejected', (result.reason as Error).message);
        } else unavailable = true;
      });
      if (!unavailable) {
        backoff.reset();
        if (this.unloggedDrops > 0) {
          this.logger.warn(`the outbox was full: dropped the ${this.unloggedDrops} oldest message(s)`);
          this.unloggedDrops = 0;
        }
        continue;
      }
      if (this.closed) return;
      const wait = new AbortController();
      this.interrupt = () => wait.abort();
      await systemClock.sleep(backoff.next(), wait.signal);
      this.interrupt = () => undefined;
    }
  }

  /** The messages to send now: the oldest ones, up to `inFlight`, stopping at the second of any subject. */
  private window(): OutboxMessage[] {
    const subjects = new Set<string>();
    const window: OutboxMessage[] = [];
    for (const message of this.queue) {
      if (window.length >= this.inFlight || subjects.has(message.subject)) break;
      subjects.add(message.subject);
      window.push(message);
    }
    return window;
  }

  /** Takes `message` out of the queue, unless overflow already did. */
  private remove(message: OutboxMessage): void {
    const at = this.queue.indexOf(message);
    if (at < 0) return;
    this.queue.splice(at, 1);
    busMetrics.outboxPending.dec();
  }

  private dropped(message: OutboxMessage, reason: 'overflow' | 'rejected', why: string): void {
    busMetrics.outboxDropped.inc({ type: message.type, reason });
    this.logger.warn(`dropped ${message.type} for ${message.subject}: ${why}`);
  }
}
