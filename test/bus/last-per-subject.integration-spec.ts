import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { DeliverPolicy } from '@nats-io/jetstream';
import { Bus, type Delivery } from '#bus';
import { STREAMS, SUBJECTS, type AnyEnvelope } from '#contracts';
import { busMetrics } from '#observability';
import { NatsServer, waitFor } from '../harness/processes.js';

/**
 * A durable consumer that starts from each subject's last message (an agent's rebuild), read
 * from the stream instead of by the server's last-per-subject policy (libs/bus/src/last-per-subject.ts).
 */
describe('Bus: a durable last-per-subject start read from the stream', () => {
  let nats: NatsServer;
  let bus: Bus;

  before(async () => {
    nats = await NatsServer.start();
    bus = await Bus.connect({ servers: nats.url, name: 'last-per-subject-test', source: { component: 'scheduler' } });
    await bus.ensureStreams();
  });

  after(async () => {
    await bus?.close();
    await nats?.stop();
  });

  /** A PodUnassigned on `node`'s assignment of `uid`, its grace period as a marker. */
  const unassign = (node: string, uid: string, grace: number): Promise<unknown> =>
    bus.publish(SUBJECTS.assignment(node, uid), 'PodUnassigned', { uid, namespace: 'default', name: 'p', gracePeriodSeconds: grace }, { correlationId: uid });

  const grace = (e: AnyEnvelope): number => (e.type === 'PodUnassigned' ? e.data.gracePeriodSeconds : -1);

  it("delivers what the server's own last-per-subject consumer delivers, in stream order, then every change", async () => {
    const node = 'lps-node';
    const uids = [randomUUID(), randomUUID(), randomUUID()];
    // Interleaved with another node's messages; each subject's last message is the largest grace.
    for (let round = 1; round <= 3; round++) {
      for (const [i, uid] of uids.entries()) {
        await unassign(node, uid, round * 10 + i);
        await unassign('lps-other', randomUUID(), 0);
      }
    }
    await unassign(node, uids[0] ?? '', 40); // uid 0 moves last
    const reference: Delivery[] = [];
    const followed = await bus.follow(STREAMS.assign, { filterSubject: SUBJECTS.nodeAssignments(node), from: 'last_per_subject' }, (_e, d) => {
      reference.push(d);
    });
    await followed.caughtUp;
    await followed.stop();

    const durable = `lps-${randomUUID().slice(0, 8)}`;
    const seen: { grace: number; delivery: Delivery }[] = [];
    const sub = await bus.consume(
      STREAMS.assign,
      { durable, filterSubject: SUBJECTS.nodeAssignments(node), from: 'last_per_subject', recreate: true },
      (e, d) => {
        seen.push({ grace: grace(e), delivery: d });
      },
    );
    await sub.caughtUp;
    assert.deepEqual(
      seen.map((s) => s.delivery),
      reference,
    );
    assert.deepEqual(
      seen.map((s) => s.grace),
      [31, 32, 40],
    );
    assert.deepEqual(
      seen.map((s) => s.delivery.pending),
      [2, 1, 0],
    );
    // The server was asked for no last-per-subject start of its own.
    const info = await bus.jsm.consumers.info(STREAMS.assign, durable);
    assert.equal(info.config.deliver_policy, DeliverPolicy.StartSequence);

    await unassign(node, uids[1] ?? '', 50);
    await waitFor('the change after the start', () => seen.some((s) => s.grace === 50));
    assert.equal(seen.length, 4);
    // It is acked on the durable like any delivery: nothing is delivered twice.
    const settled = await waitFor('the durable to be settled', async () => {
      const now = await bus.jsm.consumers.info(STREAMS.assign, durable);
      return now.num_ack_pending === 0 && now.num_pending === 0 ? now : undefined;
    });
    assert.equal(settled.num_redelivered, 0);
    await sub.stop();
  });

  it('stops as soon as it has caught up on its stored messages', { timeout: 20_000 }, async () => {
    const node = 'lps-stop-node';
    for (const uid of [randomUUID(), randomUUID()]) await unassign(node, uid, 1);
    for (let round = 0; round < 3; round++) {
      let seen = 0;
      const sub = await bus.consume(
        STREAMS.assign,
        { durable: `lps-stop-${round}`, filterSubject: SUBJECTS.nodeAssignments(node), from: 'last_per_subject', recreate: true },
        () => void seen++,
      );
      await sub.caughtUp;
      await sub.stop();
      assert.equal(seen, 2);
    }
  });

  it('hands out the rest of its start again when the connection comes back before the start was handled', { timeout: 60_000 }, async () => {
    const node = 'lps-reconnect-node';
    const uids = [randomUUID(), randomUUID(), randomUUID()];
    for (const uid of uids) await unassign(node, uid, 1);
    // A bus of its own: its connection is the one cut.
    const own = await Bus.connect({ servers: nats.url, name: 'last-per-subject-reconnect', source: { component: 'scheduler' } });
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    try {
      const durable = `lps-${randomUUID().slice(0, 8)}`;
      const handled = new Set<string>();
      let first: string | undefined;
      const sub = await own.consume(
        STREAMS.assign,
        { durable, filterSubject: SUBJECTS.nodeAssignments(node), from: 'last_per_subject', recreate: true },
        async (e) => {
          // The first message's handler is still running when the connection goes.
          first ??= e.correlationId;
          if (e.correlationId === first) await held;
          handled.add(e.correlationId);
        },
      );
      const created = (await own.jsm.consumers.info(STREAMS.assign, durable)).created;
      await waitFor('the first stored message handed to its handler', () => first !== undefined);
      const reopened = async (): Promise<number> => (await busMetrics.consumerRecreated.get()).values.find((v) => v.labels.consumer === durable)?.value ?? 0;
      await own.nc.reconnect();
      // The reopen has closed the start's messages, the two not yet handed out among them.
      await waitFor('the consumer opened again', async () => (await reopened()) >= 1);
      release();
      await waitFor('every assignment handled', () => uids.every((uid) => handled.has(uid)));
      await sub.caughtUp;
      // The same durable, still after the start: what was left of the start came from memory.
      assert.equal((await bus.jsm.consumers.info(STREAMS.assign, durable)).created, created);
      await sub.stop();
    } finally {
      release();
      await own.close();
    }
  });

  it('delivers a stored message again after its handler failed, while later messages go on', { timeout: 30_000 }, async () => {
    const node = 'lps-retry-node';
    const failing = randomUUID();
    const other = randomUUID();
    await unassign(node, failing, 1);
    await unassign(node, other, 1);
    const attempts: Delivery[] = [];
    let laterSeen = false;
    const durable = `lps-${randomUUID().slice(0, 8)}`;
    const sub = await bus.consume(
      STREAMS.assign,
      { durable, filterSubject: SUBJECTS.nodeAssignments(node), from: 'last_per_subject', recreate: true },
      (e, d) => {
        if (e.correlationId !== failing) {
          if (grace(e) === 2) laterSeen = true;
          return;
        }
        attempts.push(d);
        // It fails until a message stored after it was handled: a retry that held the others back never ends.
        if (!laterSeen) throw new Error('not yet');
      },
    );
    await sub.caughtUp;
    await unassign(node, other, 2);
    await waitFor('the failed message handled on a later delivery', () => laterSeen && attempts.length >= 2);
    const first = attempts[0];
    const last = attempts.at(-1);
    assert.ok(first && last);
    assert.equal(last.seq, first.seq);
    assert.equal(last.subject, SUBJECTS.assignment(node, failing));
    await sub.stop();
  });
});
