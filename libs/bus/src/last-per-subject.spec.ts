import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import type { ConsumerMessages, ConsumerNotification, JetStreamManager, JsMsg, StoredMsg } from '@nats-io/jetstream';
import { listSubjects, StartedConsumerMessages, SUBJECTS_PER_PAGE } from './last-per-subject.js';

/** A stored message as a Direct Get answers it. */
function stored(seq: number, subject = `s.${seq}`): StoredMsg {
  const data = new TextEncoder().encode(`{"seq":${seq}}`);
  return {
    subject,
    seq,
    header: undefined as unknown as StoredMsg['header'],
    data,
    time: new Date(1_700_000_000_000 + seq),
    timestamp: new Date(1_700_000_000_000 + seq).toISOString(),
    lastSequence: 0,
    pending: 0,
    json: <T>() => JSON.parse(new TextDecoder().decode(data)) as T,
    string: () => new TextDecoder().decode(data),
  };
}

/**
 * A durable's deliveries that the test hands out one at a time. As nats.js's, its close
 * settles only once an iteration takes the stop it queued.
 */
class LiveMessages implements ConsumerMessages {
  private readonly queue: JsMsg[] = [];
  private waiting?: (r: IteratorResult<JsMsg>) => void;
  private stopQueued = false;
  private settleClose: () => void = () => undefined;
  private readonly closedPromise = new Promise<void>((resolve) => (this.settleClose = resolve));
  push(m: JsMsg): void {
    if (this.waiting) this.waiting({ value: m, done: false });
    else this.queue.push(m);
    this.waiting = undefined;
  }
  [Symbol.asyncIterator](): AsyncIterator<JsMsg> {
    return {
      next: () => {
        const m = this.queue.shift();
        if (m) return Promise.resolve({ value: m, done: false });
        if (this.stopQueued) return Promise.resolve(this.takeStop());
        return new Promise((resolve) => (this.waiting = resolve));
      },
    };
  }
  private takeStop(): IteratorResult<JsMsg> {
    this.settleClose();
    return { value: undefined, done: true };
  }
  stop(): void {
    void this.close();
  }
  close(): Promise<void> {
    this.stopQueued = true;
    if (this.waiting) this.waiting(this.takeStop());
    this.waiting = undefined;
    return this.closedPromise;
  }
  closed(): Promise<void> {
    return this.closedPromise;
  }
  status(): AsyncIterable<ConsumerNotification> {
    return { [Symbol.asyncIterator]: () => ({ next: () => new Promise(() => undefined) }) };
  }
  getProcessed(): number {
    return 0;
  }
  getPending(): number {
    return this.queue.length;
  }
  getReceived(): number {
    return 0;
  }
}

const liveMsg = (seq: number, pending = 0): JsMsg => ({ seq, subject: `live.${seq}`, info: { pending, deliveryCount: 1 } }) as unknown as JsMsg;

describe('StartedConsumerMessages', () => {
  beforeEach(() => mock.timers.enable({ apis: ['setTimeout'] }));
  afterEach(() => mock.timers.reset());

  it('hands out the stored messages in order with what is pending after each, then the live ones', async () => {
    const live = new LiveMessages();
    const sut = new StartedConsumerMessages({ stream: 'S', consumer: 'c', stored: [stored(3), stored(7)], livePending: 1, live, maxDeliver: -1 });
    const it = sut[Symbol.asyncIterator]();
    const a = (await it.next()).value as JsMsg;
    const b = (await it.next()).value as JsMsg;
    assert.deepEqual([a.seq, a.info.pending, a.info.deliveryCount, a.info.stream, a.info.consumer, a.redelivered], [3, 2, 1, 'S', 'c', false]);
    assert.deepEqual([b.seq, b.info.pending, b.subject, b.string()], [7, 1, 's.7', '{"seq":7}']);
    live.push(liveMsg(9));
    assert.equal(((await it.next()).value as JsMsg).seq, 9);
    assert.equal(sut.storedSettled, false);
    a.ack();
    b.term();
    assert.equal(sut.storedSettled, true);
    await sut.close();
    assert.equal((await it.next()).done, true);
  });

  it("delivers a nak'd stored message again once its delay has passed, between live ones, until maxDeliver", async () => {
    const live = new LiveMessages();
    const sut = new StartedConsumerMessages({ stream: 'S', consumer: 'c', stored: [stored(3)], livePending: 0, live, maxDeliver: 2 });
    const it = sut[Symbol.asyncIterator]();
    const first = (await it.next()).value as JsMsg;
    first.nak(2000);
    first.nak(1); // a message settles once
    const next = it.next();
    mock.timers.tick(1999);
    live.push(liveMsg(9));
    assert.equal(((await next).value as JsMsg).seq, 9, 'a live message goes ahead of a retry not yet due');
    const again = it.next();
    mock.timers.tick(1);
    const second = (await again).value as JsMsg;
    assert.deepEqual([second.seq, second.info.deliveryCount, second.redelivered], [3, 2, true]);
    assert.equal(sut.storedSettled, false);
    second.nak(1000);
    // The second of two deliveries: given up, as JetStream gives up at max_deliver.
    assert.equal(sut.storedSettled, true);
    const after = it.next();
    mock.timers.tick(5000);
    live.push(liveMsg(10));
    assert.equal(((await after).value as JsMsg).seq, 10);
    await sut.close();
  });

  it('closes while it still hands out stored messages, though nothing asked the durable for a delivery', async () => {
    const live = new LiveMessages();
    const sut = new StartedConsumerMessages({ stream: 'S', consumer: 'c', stored: [stored(3), stored(4)], livePending: 0, live, maxDeliver: -1 });
    const it = sut[Symbol.asyncIterator]();
    ((await it.next()).value as JsMsg).ack();
    await sut.close();
    await live.closed();
    assert.equal((await it.next()).done, true);
  });

  it('closes after its last stored message, before its iteration asked the durable for more', async () => {
    const live = new LiveMessages();
    const sut = new StartedConsumerMessages({ stream: 'S', consumer: 'c', stored: [stored(3)], livePending: 0, live, maxDeliver: -1 });
    const it = sut[Symbol.asyncIterator]();
    ((await it.next()).value as JsMsg).ack();
    await sut.close();
    assert.equal((await it.next()).done, true);
  });

  it('says, with a retry, what is still to come: the stored messages not yet handed out, then what the durable has pending', async () => {
    const live = new LiveMessages();
    const sut = new StartedConsumerMessages({ stream: 'S', consumer: 'c', stored: [stored(3), stored(4), stored(5)], livePending: 2, live, maxDeliver: -1 });
    const it = sut[Symbol.asyncIterator]();
    const first = (await it.next()).value as JsMsg;
    assert.equal(first.info.pending, 4);
    first.nak(5);
    mock.timers.tick(5);
    const retry = (await it.next()).value as JsMsg;
    // Taken for the last message (pending 0), it would mark the consumer caught up before 4 and 5.
    assert.deepEqual([retry.seq, retry.info.deliveryCount, retry.info.pending], [3, 2, 4]);
    const rest = [(await it.next()).value as JsMsg, (await it.next()).value as JsMsg];
    assert.deepEqual(
      rest.map((m) => [m.seq, m.info.pending]),
      [
        [4, 3],
        [5, 2],
      ],
    );
    rest[0]?.nak(10);
    live.push(liveMsg(9, 7));
    assert.equal(((await it.next()).value as JsMsg).seq, 9);
    const again = it.next();
    mock.timers.tick(10);
    assert.deepEqual([((await again).value as JsMsg).seq, ((await again).value as JsMsg).info.pending], [4, 7]);
    await sut.close();
  });

  it("is not settled when it closes with a stored message handed out and not settled, nak'd, or not handed out", async () => {
    const open = (n: number): { sut: StartedConsumerMessages; it: AsyncIterator<JsMsg> } => {
      const sut = new StartedConsumerMessages({
        stream: 'S',
        consumer: 'c',
        stored: Array.from({ length: n }, (_, i) => stored(i + 1)),
        livePending: 0,
        live: new LiveMessages(),
        maxDeliver: -1,
      });
      return { sut, it: sut[Symbol.asyncIterator]() };
    };
    // Handed out, and nak'd once the messages closed (its handler failed as the connection went).
    const naked = open(1);
    const m = (await naked.it.next()).value as JsMsg;
    await naked.sut.close();
    m.nak(1000);
    assert.equal(naked.sut.storedSettled, false);
    assert.deepEqual(
      naked.sut.unsettledStored().map((u) => u.seq),
      [1],
    );
    // Nak'd, its retry not yet due when they closed.
    const waiting = open(1);
    ((await waiting.it.next()).value as JsMsg).nak(1000);
    await waiting.sut.close();
    assert.equal(waiting.sut.storedSettled, false);
    // One acked, the next never handed out.
    const ahead = open(2);
    ((await ahead.it.next()).value as JsMsg).ack();
    await ahead.sut.close();
    assert.equal(ahead.sut.storedSettled, false);
    assert.deepEqual(
      ahead.sut.unsettledStored().map((u) => u.seq),
      [2],
    );
    // Handed out, and acked after they closed: settled.
    const late = open(1);
    const acked = (await late.it.next()).value as JsMsg;
    await late.sut.close();
    acked.ack();
    assert.equal(late.sut.storedSettled, true);
  });

  it('drops its retries when closed', async () => {
    const live = new LiveMessages();
    const sut = new StartedConsumerMessages({ stream: 'S', consumer: 'c', stored: [stored(3)], livePending: 0, live, maxDeliver: -1 });
    const it = sut[Symbol.asyncIterator]();
    ((await it.next()).value as JsMsg).nak(1000);
    const next = it.next();
    await sut.close();
    mock.timers.tick(1000);
    assert.equal((await next).done, true);
  });
});

describe('listSubjects', () => {
  /** A JetStreamManager whose stream info says `replicas` and lists `subjects`. */
  const manager = (replicas: number | undefined, subjects: number): JetStreamManager =>
    ({
      streams: {
        info: () =>
          Promise.resolve({
            config: { num_replicas: replicas },
            state: { last_seq: 42, subjects: Object.fromEntries(Array.from({ length: subjects }, (_, i) => [`s.${i}`, 1])) },
          }),
      },
    }) as unknown as JetStreamManager;

  it('reads a start from a stream of one replica whose subjects came in one answer', async () => {
    const listing = await listSubjects(manager(1, 3), 'S', 's.>');
    assert.deepEqual(listing, { lastSeq: 42, subjects: ['s.0', 's.1', 's.2'], readable: true });
    assert.equal((await listSubjects(manager(undefined, 0), 'S', 's.>')).readable, true);
  });

  it("leaves the start to the server's own policy on a replicated stream, or when the subjects came in pages", async () => {
    assert.equal((await listSubjects(manager(3, 3), 'S', 's.>')).readable, false);
    assert.equal((await listSubjects(manager(1, SUBJECTS_PER_PAGE), 'S', 's.>')).readable, false);
    assert.equal((await listSubjects(manager(1, SUBJECTS_PER_PAGE - 1), 'S', 's.>')).readable, true);
  });
});
