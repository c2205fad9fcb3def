import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { AckPolicy, DeliverPolicy } from '@nats-io/jetstream';
import { Bus, MessageTooLargeError, SequenceConflictError } from '#bus';
import { ContractValidationError, STREAMS, SUBJECTS, type AnyEnvelope, type PodManifest } from '#contracts';
import { busMetrics } from '#observability';
import { NatsServer, waitFor } from '../harness/processes.js';

const UID = '7d3f5b3e-1f6a-4a53-9d0e-0a0b0c0d0e0f';

/** The JetStream adapter against a real nats-server. */
describe('Bus', () => {
  let nats: NatsServer;
  let sut: Bus;

  before(async () => {
    nats = await NatsServer.start();
    sut = await Bus.connect({ servers: nats.url, name: 'bus-test', source: { component: 'scheduler' } });
    await sut.ensureStreams();
  });

  after(async () => {
    await sut?.close();
    await nats?.stop();
  });

  it('creates every stream idempotently', async () => {
    await sut.ensureStreams();
    const names: string[] = [];
    for await (const s of sut.jsm.streams.list()) names.push(s.config.name);
    assert.deepEqual(names.sort(), Object.values(STREAMS).sort());
  });

  it('stores a retried publish once: the envelope id is the Nats-Msg-Id', async () => {
    const subject = SUBJECTS.assignment('dedupe-node', UID);
    const data = { uid: UID, namespace: 'default', name: 'p', gracePeriodSeconds: 1 };
    const first = await sut.publish(subject, 'PodUnassigned', data, { correlationId: UID, id: 'fixed-id' });
    const second = await sut.publish(subject, 'PodUnassigned', data, { correlationId: UID, id: 'fixed-id' });
    assert.equal(first.duplicate, false);
    assert.equal(second.duplicate, true);
    assert.equal(second.seq, first.seq);
    const info = await sut.jsm.streams.info(STREAMS.assign, { deleted_details: false });
    assert.equal(info.state.messages, 1);
  });

  it('writes a complete envelope', async () => {
    const subject = SUBJECTS.pod('default', 'envelope');
    const { seq, envelope } = await sut.publish(subject, 'PodScheduled', { uid: UID, nodeName: 'n1' }, { correlationId: UID, causationId: 'cause-1' });
    const stored = await sut.lastMessage(STREAMS.pods, subject);
    assert.equal(stored?.seq, seq);
    assert.deepEqual(JSON.parse(JSON.stringify(stored?.envelope)), envelope);
    assert.equal(envelope.type, 'PodScheduled');
    assert.equal(envelope.version, 1);
    assert.equal(envelope.correlationId, UID);
    assert.equal(envelope.causationId, 'cause-1');
    assert.deepEqual(envelope.source, { component: 'scheduler' });
  });

  it('lets only one of two writers with the same expected sequence win', async () => {
    const subject = SUBJECTS.pod('default', 'race');
    const base = await sut.publish(subject, 'PodScheduled', { uid: UID, nodeName: 'n0' }, { correlationId: UID, expectedLastSubjectSequence: 0 });
    const results = await Promise.allSettled(
      ['n1', 'n2'].map((nodeName) =>
        sut.publish(subject, 'PodScheduled', { uid: UID, nodeName }, { correlationId: UID, expectedLastSubjectSequence: base.seq }),
      ),
    );
    assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
    const rejected = results.find((r) => r.status === 'rejected');
    assert.ok(rejected?.status === 'rejected' && rejected.reason instanceof SequenceConflictError);
    assert.equal(await sut.lastSubjectSequence(STREAMS.pods, subject), base.seq + 1);
  });

  it('terminates an invalid message, counts it, and goes on with the next one', async () => {
    const node = 'term-node';
    const subject = SUBJECTS.assignment(node, randomUUID());
    const seen: AnyEnvelope[] = [];
    const consumerName = `test-${randomUUID().slice(0, 8)}`;
    const terminatedBefore = (await busMetrics.terminated.get()).values.find((v) => v.labels.consumer === consumerName)?.value ?? 0;
    const sub = await sut.consume(STREAMS.assign, { durable: consumerName, filterSubject: SUBJECTS.nodeAssignments(node), from: 'all' }, (e) => {
      seen.push(e);
    });
    await sut.js.publish(subject, 'not json at all');
    await sut.js.publish(
      subject,
      JSON.stringify({
        id: 'x',
        type: 'PodUnassigned',
        version: 1,
        time: new Date().toISOString(),
        source: { component: 'scheduler' },
        correlationId: UID,
        data: { uid: 'nope' },
      }),
    );
    await sut.publish(subject, 'PodUnassigned', { uid: UID, namespace: 'default', name: 'ok', gracePeriodSeconds: 2 }, { correlationId: UID });
    await waitFor('the valid message', () => seen.length === 1);
    const terminated = await waitFor('two terminations', async () => {
      const value = (await busMetrics.terminated.get()).values.find((v) => v.labels.consumer === consumerName)?.value ?? 0;
      return value - terminatedBefore === 2 ? value : undefined;
    });
    assert.ok(terminated);
    // term and ack are sent without waiting for the server; give it a moment to record them.
    const info = await waitFor(
      'acks to settle',
      async () => {
        const i = await sut.jsm.consumers.info(STREAMS.assign, consumerName);
        return i.num_ack_pending === 0 ? i : undefined;
      },
      5000,
    );
    assert.equal(info.ack_floor.stream_seq, info.delivered.stream_seq, 'nothing left to redeliver');
    assert.equal(info.num_redelivered, 0);
    await sub.stop();
  });

  it('replays the last message per subject, then follows new ones', async () => {
    const node = 'replay-node';
    const uids = [randomUUID(), randomUUID()];
    for (const uid of uids) {
      for (const grace of [1, 2, 3]) {
        await sut.publish(
          SUBJECTS.assignment(node, uid),
          'PodUnassigned',
          { uid, namespace: 'default', name: 'r', gracePeriodSeconds: grace },
          { correlationId: uid },
        );
      }
    }
    const seen: number[] = [];
    const sub = await sut.follow(STREAMS.assign, { filterSubject: SUBJECTS.nodeAssignments(node), from: 'last_per_subject' }, (e) => {
      if (e.type === 'PodUnassigned') seen.push(e.data.gracePeriodSeconds);
    });
    await sub.caughtUp;
    assert.deepEqual(seen, [3, 3]);
    await sut.publish(
      SUBJECTS.assignment(node, uids[0] ?? ''),
      'PodUnassigned',
      { uid: uids[0] ?? '', namespace: 'default', name: 'r', gracePeriodSeconds: 9 },
      { correlationId: UID },
    );
    await waitFor('the live message', () => seen.length === 3);
    assert.equal(seen[2], 9);
    await sub.stop();
  });
  it('counts an ordered consumer caught up once it has handled what the stream held at its open, though writes keep coming', { timeout: 60_000 }, async () => {
    const node = 'busy-node';
    const publish = async (count: number): Promise<void> => {
      for (let i = 0; i < count; i += 50)
        await Promise.all(
          Array.from({ length: Math.min(50, count - i) }, () => {
            const uid = randomUUID();
            return sut.publish(
              SUBJECTS.assignment(node, uid),
              'PodUnassigned',
              { uid, namespace: 'default', name: 'b', gracePeriodSeconds: 1 },
              { correlationId: uid },
            );
          }),
        );
    };
    const HELD = 1000;
    await publish(HELD);
    // While the first message is handled, as many again are written: the ones held at the open
    // that the server delivers after that say more are pending after them.
    let handled = 0;
    let handledAtCaughtUp = 0;
    const sub = await sut.follow(STREAMS.assign, { filterSubject: SUBJECTS.nodeAssignments(node), from: 'all' }, async () => {
      if (++handled === 1) await publish(HELD);
    });
    try {
      await sub.caughtUp.then(() => (handledAtCaughtUp = handled));
      assert.ok(handledAtCaughtUp >= HELD && handledAtCaughtUp < 2 * HELD, `caught up after ${handledAtCaughtUp} messages; ${HELD} were held at the open`);
    } finally {
      await sub.stop();
    }
  });

  it('replays a whole stream across purged sequences without taking them for skipped messages', async () => {
    const node = 'gap-node';
    const uids = [randomUUID(), randomUUID(), randomUUID()];
    for (const uid of uids) {
      for (const grace of [1, 2]) {
        await sut.publish(
          SUBJECTS.assignment(node, uid),
          'PodUnassigned',
          { uid, namespace: 'default', name: 'g', gracePeriodSeconds: grace },
          { correlationId: uid },
        );
      }
    }
    // The middle pod's messages leave a hole in the stream's sequences.
    await sut.purgeSubject(STREAMS.assign, SUBJECTS.assignment(node, uids[1] ?? ''));
    const stored = (await sut.jsm.streams.info(STREAMS.assign)).state.messages;
    const gapsBefore = (await busMetrics.orderedGaps.get()).values.reduce((sum, v) => sum + v.value, 0);
    const seqs: number[] = [];
    const sub = await sut.open({ stream: STREAMS.assign, filterSubject: '>', from: 'all' }, async (m) => {
      seqs.push(m.seq);
    });
    await sub.caughtUp;
    await sub.stop();
    assert.equal(seqs.length, stored, 'every stored message, each once');
    assert.ok(
      seqs.every((seq, i) => i === 0 || seq > (seqs[i - 1] ?? 0)),
      'in stream order',
    );
    const gapsAfter = (await busMetrics.orderedGaps.get()).values.reduce((sum, v) => sum + v.value, 0);
    assert.equal(gapsAfter, gapsBefore, 'a purge is not a skipped message');
  });

  it('leaves a consumer that is still behind where it is when a subject is compacted or purged', async () => {
    // nats-server 2.9 moves every consumer whose filter covers a purged subject past the
    // purge; a fresh scheduler or a rebuilding agent would pass over the messages between.
    const node = 'behind-node';
    const [a, b] = [randomUUID(), randomUUID()];
    const write = async (uid: string, grace: number): Promise<number> =>
      (
        await sut.publish(
          SUBJECTS.assignment(node, uid),
          'PodUnassigned',
          { uid, namespace: 'default', name: 'b', gracePeriodSeconds: grace },
          { correlationId: uid },
        )
      ).seq;
    await write(a, 1);
    await write(b, 1);
    const b2 = await write(b, 2);
    await write(a, 2);
    const b3 = await write(b, 3);
    const a3 = await write(a, 3);
    const durable = `behind-${randomUUID().slice(0, 8)}`;
    await sut.jsm.consumers.add(STREAMS.assign, {
      durable_name: durable,
      ack_policy: AckPolicy.None,
      deliver_policy: DeliverPolicy.All,
      filter_subject: SUBJECTS.nodeAssignments(node),
    });
    try {
      await sut.compactSubject(STREAMS.assign, SUBJECTS.assignment(node, a));
      await sut.purgeSubject(STREAMS.assign, SUBJECTS.assignment(node, b), { upToSeq: b2 });
      const consumer = await sut.js.consumers.get(STREAMS.assign, durable);
      const seqs: number[] = [];
      for await (const m of await consumer.fetch({ max_messages: 2, expires: 5000 })) seqs.push(m.seq);
      assert.deepEqual(seqs, [b3, a3], 'each message still stored, in order');
      assert.equal((await consumer.info()).num_pending, 0);
    } finally {
      await sut.jsm.consumers.delete(STREAMS.assign, durable);
    }
  });

  it('counts a consumer caught up once the server has nothing more for it, though no delivered message said so', { timeout: 20_000 }, async () => {
    // The count given at the open took in messages removed before their delivery (a purge):
    // the last one delivered still says one is pending after it.
    let close: () => void = () => undefined;
    const closed = new Promise<void>((resolve) => (close = resolve));
    const messages = {
      async *[Symbol.asyncIterator]() {
        yield { seq: 7, info: { pending: 1 } };
        await closed;
      },
      close: () => {
        close();
        return Promise.resolve();
      },
      // No status to tell: it ends with the consumer.
      status: () => ({
        [Symbol.asyncIterator]: () => ({ next: () => closed.then(() => ({ done: true as const, value: undefined })) }),
      }),
    };
    const asked: number[] = [];
    const drained = (handledSeq: number): Promise<boolean> => {
      asked.push(handledSeq);
      return Promise.resolve(handledSeq >= 7);
    };
    const handled: number[] = [];
    type Supervise = (
      stream: string,
      name: string,
      open: () => Promise<unknown>,
      onMessage: (m: { seq: number }) => Promise<void>,
    ) => Promise<{ caughtUp: Promise<void>; stop(): Promise<void> }>;
    const supervise = (sut as unknown as { supervise: Supervise }).supervise.bind(sut);
    const subscription = await supervise(
      STREAMS.pods,
      'caught-up-test',
      () => Promise.resolve({ messages, pending: 2, drained }),
      (m) => {
        handled.push(m.seq);
        return Promise.resolve();
      },
    );
    try {
      await subscription.caughtUp;
      assert.deepEqual(handled, [7]);
      assert.equal(asked.at(-1), 7);
    } finally {
      await subscription.stop();
    }
  });

  it('stops while a reopen is opening the consumer again, though nothing reads the messages it opened', { timeout: 20_000 }, async () => {
    /** Messages as nats.js gives them: a close settles only once the loop reading them takes the stop it queued. */
    const queuedMessages = () => {
      let wake: () => void = () => undefined;
      let stopQueued = false;
      let closedResolve: () => void = () => undefined;
      const closed = new Promise<void>((resolve) => (closedResolve = resolve));
      const statuses: Array<{ type: string }> = [];
      let statusWake: () => void = () => undefined;
      return {
        stopQueued: () => stopQueued,
        pushStatus(status: { type: string }) {
          statuses.push(status);
          statusWake();
        },
        // Delivers nothing: it ends when it takes the stop.
        [Symbol.asyncIterator]: () => ({
          next: async (): Promise<IteratorResult<never>> => {
            while (!stopQueued) await new Promise<void>((resolve) => (wake = resolve));
            closedResolve();
            return { done: true, value: undefined };
          },
        }),
        close(): Promise<void> {
          stopQueued = true;
          wake();
          return closed;
        },
        status: () => ({
          async *[Symbol.asyncIterator]() {
            for (;;) {
              const next = statuses.shift();
              if (next) yield next;
              else if (stopQueued) return;
              else await new Promise<void>((resolve) => (statusWake = resolve));
            }
          },
        }),
      };
    };
    type Opened = { messages: ReturnType<typeof queuedMessages>; pending: number; drained: () => Promise<boolean>; inOrder: boolean };
    type Supervise = (
      stream: string,
      name: string,
      open: (first: boolean) => Promise<Opened>,
      onMessage: () => Promise<void>,
    ) => Promise<{ caughtUp: Promise<void>; stop(): Promise<void> }>;
    const supervise = (sut as unknown as { supervise: Supervise }).supervise.bind(sut);
    const first = queuedMessages();
    const second = queuedMessages();
    let openAgain: (opened: Opened) => void = () => undefined;
    let opens = 0;
    const subscription = await supervise(
      STREAMS.pods,
      'stop-during-reopen-test',
      (isFirst) => {
        opens++;
        const opened = (messages: ReturnType<typeof queuedMessages>): Opened => ({
          messages,
          pending: 0,
          drained: () => Promise.resolve(true),
          inOrder: false,
        });
        return isFirst ? Promise.resolve(opened(first)) : new Promise<Opened>((resolve) => (openAgain = () => resolve(opened(second))));
      },
      () => Promise.resolve(),
    );
    first.pushStatus({ type: 'consumer_deleted' });
    await waitFor('the consumer being opened again', () => opens === 2);
    const stopped = subscription.stop();
    openAgain({} as Opened);
    await stopped;
    assert.equal(first.stopQueued(), true);
    assert.equal(second.stopQueued(), true, 'the messages opened while it stopped are stopped too');
  });

  /** Publishes a PodUnassigned named `name` on `node`'s assignments: a message a test's consumer can tell apart. */
  const unassign = (node: string, name: string): Promise<unknown> =>
    sut.publish(
      SUBJECTS.assignment(node, randomUUID()),
      'PodUnassigned',
      { uid: UID, namespace: 'default', name, gracePeriodSeconds: 1 },
      { correlationId: UID },
    );

  it('creates a durable consumer again when it is deleted under it, and keeps delivering', async () => {
    const node = 'recreate-node';
    const seen: string[] = [];
    const durable = `test-${randomUUID().slice(0, 8)}`;
    const sub = await sut.consume(STREAMS.assign, { durable, filterSubject: SUBJECTS.nodeAssignments(node), from: 'all' }, (e) => {
      if (e.type === 'PodUnassigned') seen.push(e.data.name);
    });
    const send = (name: string): Promise<unknown> => unassign(node, name);
    await send('before');
    await waitFor('the first message', () => seen.includes('before'));
    await sut.jsm.consumers.delete(STREAMS.assign, durable);
    await send('after');
    await waitFor('a message sent after the deletion', () => seen.includes('after'), 20_000);
    const recreated = (await busMetrics.consumerRecreated.get()).values.find((v) => v.labels.consumer === durable)?.value ?? 0;
    assert.equal(recreated, 1);
    await sub.stop();
  });

  it('opens a deleted durable consumer again while its handler is still held up', { timeout: 30_000 }, async () => {
    const node = 'held-node';
    const durable = `test-${randomUUID().slice(0, 8)}`;
    const seen: string[] = [];
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const sub = await sut.consume(STREAMS.assign, { durable, filterSubject: SUBJECTS.nodeAssignments(node), from: 'all' }, async (e) => {
      if (e.type !== 'PodUnassigned') return;
      seen.push(e.data.name);
      if (e.data.name === 'held') await held;
    });
    const send = (name: string): Promise<unknown> => unassign(node, name);
    const exists = (): Promise<boolean> =>
      sut.jsm.consumers.info(STREAMS.assign, durable).then(
        () => true,
        () => false,
      );
    try {
      await send('held');
      await waitFor('the handler to hold the first message', () => seen.includes('held'));
      await sut.jsm.consumers.delete(STREAMS.assign, durable);
      // The old messages cannot close until the handler returns: the consumer comes back regardless.
      await waitFor('the consumer created again while the handler holds', exists, 20_000);
      assert.deepEqual(seen, ['held'], 'the handler is still on its first message');
      await send('after');
      release();
      await waitFor('a message sent after the deletion', () => seen.includes('after'), 20_000);
    } finally {
      release();
      await sub.stop();
      await sut.jsm.consumers.delete(STREAMS.assign, durable).catch(() => undefined);
    }
  });

  it('refuses to publish what a reader would reject, and stores nothing', async () => {
    const subject = SUBJECTS.pod('default', 'refused');
    const pod = (memory: unknown): PodManifest =>
      ({
        metadata: { name: 'refused', namespace: 'default', uid: UID },
        spec: { containers: [{ name: 'main', image: 'jetlet/busybox:1.35', resources: { limits: { memory } } }] },
      }) as PodManifest;
    // Infinity is what JSON.parse makes of 1e400, and JSON.stringify writes it as null.
    await assert.rejects(sut.publish(subject, 'PodCreated', { pod: pod(Infinity) }, { correlationId: UID }), ContractValidationError);
    await assert.rejects(sut.publish(subject, 'PodScheduled', { uid: UID, nodeName: 'Not A Node' }, { correlationId: UID }), ContractValidationError);
    // A node's subject carrying another node's message is what consumers reject too.
    await assert.rejects(
      sut.publish(SUBJECTS.nodeSpec('node-a'), 'NodeSpecChanged', { nodeName: 'node-b', unschedulable: true }, { correlationId: 'node-a' }),
      ContractValidationError,
    );
    const huge = pod('64Mi');
    huge.spec.containers[0].env = [{ name: 'BLOB', value: 'x'.repeat(sut.maxMessageBytes) }];
    await assert.rejects(sut.publish(subject, 'PodCreated', { pod: huge }, { correlationId: UID }), MessageTooLargeError);
    assert.equal(await sut.lastSubjectSequence(STREAMS.pods, subject), 0);
    const ok = await sut.publish(subject, 'PodCreated', { pod: pod('64Mi') }, { correlationId: UID });
    assert.ok(ok.seq > 0);
  });

  it('tells a follower of each message it skips, with its subject and sequence', async () => {
    const subject = SUBJECTS.pod('default', 'skipped');
    const ack = await sut.js.publish(subject, 'not json at all');
    const skipped: Array<{ subject: string; seq: number }> = [];
    const sub = await sut.follow(STREAMS.pods, { filterSubject: subject, from: 'all', onSkip: (d) => skipped.push({ subject: d.subject, seq: d.seq }) }, () => {
      assert.fail('an invalid message reached the handler');
    });
    await sub.caughtUp;
    assert.deepEqual(skipped, [{ subject, seq: ack.seq }]);
    await sub.stop();
  });

  it("keeps a Bus riding another's connection current with it across a server restart, and its consumers back", async () => {
    const nodeName = `rider-${randomUUID().slice(0, 8)}`;
    const rider = await Bus.connect({ servers: nats.url, name: 'bus-rider', source: { component: 'agent', node: nodeName }, shareConnectionOf: sut });
    const seen: string[] = [];
    const subscription = await rider.follow(STREAMS.nodes, { filterSubject: SUBJECTS.nodeHeartbeat(nodeName), from: 'new' }, (envelope) => {
      seen.push(envelope.id);
    });
    try {
      assert.equal(rider.connected, true);
      await nats.kill();
      await waitFor('the rider to hear that the connection is lost', () => !rider.connected);
      await nats.restart();
      await waitFor('the owner and its rider to be connected again', () => sut.connected && rider.connected);
      // The rider's consumer, opened again when the rider heard the connection came back, delivers what it publishes.
      const published = await waitFor('a publish through the rider to be taken', () =>
        rider
          .publish(
            SUBJECTS.nodeHeartbeat(nodeName),
            'NodeHeartbeat',
            { nodeName, renewTime: new Date().toISOString(), runningPods: 0 },
            { correlationId: nodeName },
          )
          .catch(() => undefined),
      );
      await waitFor("the heartbeat to reach the rider's consumer", () => seen.includes(published.envelope.id));
    } finally {
      await subscription.stop();
      await rider.close();
    }
  });
});
