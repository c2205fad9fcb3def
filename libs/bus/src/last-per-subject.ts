/**
 * A durable consumer's last-per-subject start, read from the stream itself.
 *
 * nats-server 2.9 finds where a filtered `last_per_subject` consumer starts by walking the
 * stream's messages for the filter: on an assignments stream of 100,110 messages, creating an
 * agent's consumer took 75–150 ms even for a node with no pods. The same start is read here
 * in three cheaper steps: the stream's info lists the filter's subjects (an in-memory index)
 * and the stream's last sequence L; a Direct Get of each subject's last message (its subject
 * in the request's subject, so a node's permissions can name its own subjects); and the
 * durable is created to deliver from L + 1. Delivery is then what the server's own policy
 * gives: the last message of each subject, in stream order, then every change after it.
 *
 * A subject whose last message is newer than L is left to the consumer, which delivers it;
 * a message removed between the info and its get is not delivered, as it would not be by
 * the server. The messages read so go through the consumer's handler like any delivery:
 * `ack` and `term` settle them, and a `nak` delivers the same message again after its delay,
 * as JetStream redelivers (up to `maxDeliver` deliveries).
 */
import type { ConsumerMessages, ConsumerNotification, DeliveryInfo, JetStreamManager, JsMsg, PullOptions, StoredMsg } from '@nats-io/jetstream';
import type { MsgHdrs } from '@nats-io/transport-node';

/** At most this many Direct Gets in flight while a start is read. */
const GETS_IN_FLIGHT = 256;

/** The most subjects nats-server lists in one stream info; past it, the list comes in pages. */
export const SUBJECTS_PER_PAGE = 100_000;

/** What `listSubjects` read: the stream's last sequence and the filter's subjects as they were listed. */
export interface SubjectListing {
  lastSeq: number;
  subjects: string[];
  /**
   * Whether a start read from this listing delivers what the server's own policy would.
   * Not when the stream is replicated: a Direct Get may be answered by a follower that has
   * not yet stored what the leader's info counts in `lastSeq`, and the newer message of a
   * subject would then be skipped for good (the durable starts after `lastSeq`). Nor when
   * the subjects came in pages: nats.js keeps the last page's sequence, newer than the first
   * pages' subjects, so a subject made in between could be missed.
   */
  readable: boolean;
}

/** The subjects matching `filter` that hold messages, and the stream's last sequence as they were listed. */
export async function listSubjects(jsm: JetStreamManager, stream: string, filter: string): Promise<SubjectListing> {
  const info = await jsm.streams.info(stream, { subjects_filter: filter });
  const subjects = Object.keys(info.state.subjects ?? {});
  const readable = (info.config.num_replicas ?? 1) <= 1 && subjects.length < SUBJECTS_PER_PAGE;
  return { lastSeq: info.state.last_seq, subjects, readable };
}

/** The last message of each subject, those at or before `lastSeq`, oldest first. */
export async function lastMessages(jsm: JetStreamManager, stream: string, subjects: readonly string[], lastSeq: number): Promise<StoredMsg[]> {
  const messages: StoredMsg[] = [];
  for (let i = 0; i < subjects.length; i += GETS_IN_FLIGHT) {
    const got = await Promise.all(subjects.slice(i, i + GETS_IN_FLIGHT).map((subject) => jsm.direct.getMessage(stream, { last_by_subj: subject })));
    for (const m of got) if (m && m.seq <= lastSeq) messages.push(m);
  }
  return messages.sort((a, b) => a.seq - b.seq);
}

/** What the stream read hands the consumer's iterator. */
export interface StartedMessages {
  stream: string;
  consumer: string;
  /** The messages read from the stream, oldest first. */
  stored: readonly StoredMsg[];
  /** What the durable had pending when it was created (delivered after `stored`). */
  livePending: number;
  /** The durable's own deliveries. */
  live: ConsumerMessages;
  /** How often a message is delivered before it is given up (-1: no limit). */
  maxDeliver: number;
}

const WAKE = Symbol('wake');

/**
 * A durable's messages after a last-per-subject start read from the stream: first the stored
 * messages, then the durable's own deliveries, with a nak'd stored message delivered again
 * among them once its delay has passed.
 */
export class StartedConsumerMessages implements ConsumerMessages {
  private readonly retries: { msg: StoredMsg; deliveryCount: number }[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  private wakeUp: () => void = () => undefined;
  private closing = false;
  private live?: AsyncIterator<JsMsg>;
  private waiting = false;
  private processed = 0;
  /** Stored messages not yet handed out once. */
  private storedAhead: number;
  /** What the durable last said it had pending (its own count, as it delivered). */
  private livePendingNow: number;
  /** Stored messages not yet settled, by sequence: still to deliver, delivered and unsettled, or waiting to be delivered again. */
  private readonly unsettled: Map<number, StoredMsg>;

  constructor(private readonly started: StartedMessages) {
    this.unsettled = new Map(started.stored.map((m) => [m.seq, m]));
    this.storedAhead = started.stored.length;
    this.livePendingNow = started.livePending;
  }

  /**
   * Whether every stored message was settled: acked, terminated, or given up after maxDeliver.
   * One still to hand out, handed out and not settled, nak'd, or waiting to be delivered again
   * when the messages were closed, is not: the durable starts after them and never delivers it.
   */
  get storedSettled(): boolean {
    return this.unsettled.size === 0;
  }

  /** The stored messages not settled, oldest first: what the next open of the same durable must still deliver. */
  unsettledStored(): StoredMsg[] {
    return [...this.unsettled.values()].sort((a, b) => a.seq - b.seq);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<JsMsg> {
    const { stored, livePending } = this.started;
    for (let i = 0; i < stored.length && !this.closing; i++) {
      yield* this.dueRetries();
      if (this.closing) return;
      this.storedAhead = stored.length - 1 - i;
      yield this.deliver(stored[i], 1, this.storedAhead + livePending);
    }
    const live = this.liveIterator();
    let next: Promise<IteratorResult<JsMsg>> | undefined;
    while (!this.closing) {
      yield* this.dueRetries();
      if (this.closing) return;
      next ??= this.nextLive(live);
      // A retry that came due while the generator was between its checks wakes it at once.
      const woke = new Promise<typeof WAKE>((resolve) => {
        this.wakeUp = () => resolve(WAKE);
        if (this.retries.length > 0 || this.closing) resolve(WAKE);
      });
      const got = await Promise.race([next, woke]);
      if (got === WAKE) continue;
      next = undefined;
      if (got.done) return;
      this.livePendingNow = got.value.info.pending;
      yield got.value;
    }
  }

  private liveIterator(): AsyncIterator<JsMsg> {
    return (this.live ??= this.started.live[Symbol.asyncIterator]());
  }

  /** The durable's next delivery; `waiting` says whether one is asked for. */
  private nextLive(live: AsyncIterator<JsMsg>): Promise<IteratorResult<JsMsg>> {
    this.waiting = true;
    return live.next().finally(() => (this.waiting = false));
  }

  /**
   * The stored messages due again. Each says what is still to come as JetStream's own
   * redelivery would: the stored messages not yet handed out and what the durable has
   * pending, so a retry is never taken for the last message before the rest arrive.
   */
  private *dueRetries(): Generator<JsMsg> {
    while (this.retries.length > 0 && !this.closing) {
      const { msg, deliveryCount } = this.retries.shift() as { msg: StoredMsg; deliveryCount: number };
      yield this.deliver(msg, deliveryCount, this.storedAhead + this.livePendingNow);
    }
  }

  private deliver(msg: StoredMsg, deliveryCount: number, pending: number): JsMsg {
    this.processed++;
    return new StoredDelivery(msg, { stream: this.started.stream, consumer: this.started.consumer, deliveryCount, pending }, (outcome, delayMs) =>
      this.settle(msg, deliveryCount, outcome, delayMs),
    );
  }

  private settle(msg: StoredMsg, deliveryCount: number, outcome: 'done' | 'again', delayMs: number): void {
    const { maxDeliver } = this.started;
    if (outcome === 'done' || (maxDeliver > 0 && deliveryCount >= maxDeliver)) {
      this.unsettled.delete(msg.seq);
      return;
    }
    // Nak'd as the messages close: left unsettled, for the next open to read again.
    if (this.closing) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.retries.push({ msg, deliveryCount: deliveryCount + 1 });
      this.wakeUp();
    }, delayMs);
    this.timers.add(timer);
  }

  stop(err?: Error): void {
    void this.close();
    this.started.live.stop(err);
  }

  async close(): Promise<void | Error> {
    this.closing = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.wakeUp();
    const closed = this.started.live.close();
    // nats.js settles a close once an iteration takes the stop it queued. A delivery asked for
    // takes it; else (closed while stored messages were handed out, or between two asks) it is
    // taken here, with what the durable had buffered, which the server delivers again.
    if (!this.waiting) {
      const live = this.liveIterator();
      void (async () => {
        while (!(await live.next()).done);
      })().catch(() => undefined);
    }
    return closed;
  }

  closed(): Promise<void | Error> {
    return this.started.live.closed();
  }

  status(): AsyncIterable<ConsumerNotification> {
    return this.started.live.status();
  }

  getProcessed(): number {
    return this.processed + this.started.live.getProcessed();
  }

  getPending(): number {
    return this.unsettled.size + this.started.live.getPending();
  }

  getReceived(): number {
    return this.started.stored.length + this.started.live.getReceived();
  }
}

/** A stored message handed to a consumer's handler as a delivery: settling it tells the iterator. */
class StoredDelivery implements JsMsg {
  readonly info: DeliveryInfo;
  private settled = false;

  constructor(
    private readonly msg: StoredMsg,
    where: { stream: string; consumer: string; deliveryCount: number; pending: number },
    private readonly onSettle: (outcome: 'done' | 'again', delayMs: number) => void,
  ) {
    this.info = {
      domain: '',
      stream: where.stream,
      consumer: where.consumer,
      deliveryCount: where.deliveryCount,
      streamSequence: msg.seq,
      deliverySequence: 0,
      timestampNanos: Number(msg.time.getTime()) * 1e6,
      pending: where.pending,
      redelivered: where.deliveryCount > 1,
    };
  }

  get redelivered(): boolean {
    return this.info.redelivered;
  }
  get seq(): number {
    return this.msg.seq;
  }
  get headers(): MsgHdrs | undefined {
    return this.msg.header;
  }
  get data(): Uint8Array {
    return this.msg.data;
  }
  get subject(): string {
    return this.msg.subject;
  }
  get sid(): number {
    return 0;
  }
  get time(): Date {
    return this.msg.time;
  }
  get timestamp(): string {
    return this.msg.timestamp;
  }
  get timestampNanos(): bigint {
    return BigInt(this.msg.time.getTime()) * 1_000_000n;
  }

  ack(): void {
    this.finish('done', 0);
  }
  nak(millis = 0): void {
    this.finish('again', millis);
  }
  term(): void {
    this.finish('done', 0);
  }
  working(): void {
    // Nothing waits on it: a stored message has no ack deadline.
  }
  next(_subj: string, _ro?: Partial<PullOptions>): void {
    this.ack();
  }
  ackAck(): Promise<boolean> {
    const first = !this.settled;
    this.ack();
    return Promise.resolve(first);
  }
  json<T>(): T {
    return this.msg.json<T>();
  }
  string(): string {
    return this.msg.string();
  }

  private finish(outcome: 'done' | 'again', delayMs: number): void {
    if (this.settled) return;
    this.settled = true;
    this.onSettle(outcome, delayMs);
  }
}
