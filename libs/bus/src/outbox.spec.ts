import assert from 'node:assert/strict';
import { setImmediate as tick } from 'node:timers/promises';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import { busMetrics } from '#observability';
import { Outbox, type OutboxMessage } from './outbox.js';

class Unavailable extends Error {}

const message = (n: number): OutboxMessage =>
  ({ subject: `jetlet.events.n.${n}`, type: 'PodEvent', data: {}, options: { correlationId: String(n), id: `id-${n}` } }) as unknown as OutboxMessage;

/** Lets every pending promise callback run (the outbox's loop awaits between sends). */
async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await tick();
}

async function dropped(reason: string): Promise<number> {
  const metric = await busMetrics.outboxDropped.get();
  return metric.values.filter((v) => v.labels.reason === reason).reduce((sum, v) => sum + v.value, 0);
}

describe('Outbox', () => {
  let up: boolean;
  let sent: string[];
  const send = async (m: OutboxMessage): Promise<void> => {
    if (!up) throw new Unavailable('down');
    if (m.subject.endsWith('.bad')) throw new Error('refused');
    sent.push(m.options.id ?? '');
  };

  beforeEach(() => {
    mock.timers.enable({ apis: ['setTimeout'] });
    up = true;
    sent = [];
  });
  afterEach(() => mock.timers.reset());

  it('holds messages while the bus is unavailable and sends them in order once it answers', async () => {
    up = false;
    const sut = new Outbox(send, (e) => e instanceof Unavailable, { firstDelayMs: 100, maxDelayMs: 400 });
    sut.add(message(1));
    sut.add(message(2));
    await settle();
    assert.deepEqual(sent, []);
    assert.equal(sut.size, 2);
    mock.timers.tick(100);
    await settle();
    assert.equal(sut.size, 2, 'still down: kept');
    up = true;
    mock.timers.tick(200); // the second back-off step
    await settle();
    assert.deepEqual(sent, ['id-1', 'id-2']);
    assert.equal(sut.size, 0);
  });

  it('retries at once on wake() instead of waiting out its back-off', async () => {
    up = false;
    const sut = new Outbox(send, (e) => e instanceof Unavailable, { firstDelayMs: 60_000 });
    sut.add(message(1));
    await settle();
    up = true;
    sut.wake();
    await settle();
    assert.deepEqual(sent, ['id-1']);
  });

  it('is bounded: when full the oldest message goes, and is counted', async () => {
    up = false;
    const before = await dropped('overflow');
    const sut = new Outbox(send, (e) => e instanceof Unavailable, { capacity: 3, firstDelayMs: 100 });
    for (let n = 1; n <= 5; n++) sut.add(message(n));
    assert.equal(sut.size, 3);
    assert.equal((await dropped('overflow')) - before, 2);
    up = true;
    sut.wake();
    await settle();
    assert.deepEqual(sent, ['id-3', 'id-4', 'id-5']);
  });

  it('drops and counts a message JetStream refuses, and goes on with the next', async () => {
    const before = await dropped('rejected');
    const sut = new Outbox(send, (e) => e instanceof Unavailable);
    sut.add({ ...message(1), subject: 'jetlet.events.n.bad' });
    sut.add(message(2));
    await settle();
    assert.deepEqual(sent, ['id-2']);
    assert.equal((await dropped('rejected')) - before, 1);
  });

  it('sends what waits together, up to inFlight, but never two messages of one subject at once', async () => {
    const acks: Array<() => void> = [];
    const started: string[] = [];
    const slow = (m: OutboxMessage): Promise<void> => {
      started.push(m.options.id ?? '');
      return new Promise((resolve) => acks.push(resolve));
    };
    const ackAll = async (): Promise<void> => {
      for (const ack of acks.splice(0)) ack();
      await settle();
    };
    const sut = new Outbox(slow, () => true, { inFlight: 2 });
    sut.add(message(1));
    sut.add(message(2));
    sut.add({ ...message(3), subject: message(2).subject });
    sut.add(message(4));
    await settle();
    assert.deepEqual(started, ['id-1']);
    await ackAll();
    assert.deepEqual(started, ['id-1', 'id-2'], 'the second message of a subject waits for the first');
    await ackAll();
    assert.deepEqual(started, ['id-1', 'id-2', 'id-3', 'id-4'], 'then both go, inFlight at once');
    await ackAll();
    assert.equal(sut.size, 0);
  });

  it("keeps a subject's order when one of its messages must be retried, while other subjects go on", async () => {
    let release: () => void = () => undefined;
    let failFirst = true;
    const flaky = async (m: OutboxMessage): Promise<void> => {
      if (m.options.id === 'id-0') await new Promise<void>((resolve) => (release = resolve));
      if (failFirst && m.options.id === 'id-1') {
        failFirst = false;
        throw new Unavailable('timeout');
      }
      sent.push(m.options.id ?? '');
    };
    const sut = new Outbox(flaky, (e) => e instanceof Unavailable, { firstDelayMs: 100 });
    sut.add(message(0));
    sut.add(message(1));
    sut.add(message(2));
    sut.add({ ...message(3), subject: message(1).subject });
    release();
    await settle();
    assert.deepEqual(sent, ['id-0', 'id-2']);
    mock.timers.tick(100);
    await settle();
    assert.deepEqual(sent, ['id-0', 'id-2', 'id-1', 'id-3']);
    assert.equal(sut.size, 0);
  });
});
