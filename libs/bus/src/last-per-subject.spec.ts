import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import type { ConsumerMessages, ConsumerNotification, JsMsg, StoredMsg } from '@nats-io/jetstream';
import { StartedConsumerMessages } from './last-per-subject.js';

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

const liveMsg = (seq: number): JsMsg => ({ seq, subject: `live.${seq}`, info: { pending: 0, deliveryCount: 1 } }) as unknown as JsMsg;

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
