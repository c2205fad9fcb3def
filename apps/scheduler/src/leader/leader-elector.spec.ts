import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LeaseRenewedEvent } from '#contracts';
import { LeaderElector, type LeaseStore } from './leader-elector.js';

const TIMINGS = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 };

/** A lease kept in memory with the stream's compare-and-set; `down` makes every call fail. */
class MemoryLease implements LeaseStore {
  lease: LeaseRenewedEvent | undefined;
  seq = 0;
  down = false;
  async get(): Promise<{ lease: LeaseRenewedEvent; seq: number } | undefined> {
    if (this.down) throw new Error('bus unavailable');
    return this.lease && { lease: this.lease, seq: this.seq };
  }
  async put(lease: LeaseRenewedEvent, seq: number): Promise<boolean> {
    if (this.down) throw new Error('bus unavailable');
    if (seq !== this.seq) return false;
    this.lease = lease;
    this.seq += 7;
    return true;
  }
}

/** Two replicas on one lease, each with its own clock (set by hand). */
function replicas(store = new MemoryLease()) {
  const clock = { a: 1_000, b: 50_000 };
  const a = new LeaderElector('kube-scheduler', 'a', store, TIMINGS, () => clock.a);
  const b = new LeaderElector('kube-scheduler', 'b', store, TIMINGS, () => clock.b);
  const tick = (ms: number): void => {
    clock.a += ms;
    clock.b += ms;
  };
  return { store, a, b, clock, tick };
}

describe('LeaderElector', () => {
  it('takes a lease nobody holds, and renews it while the other waits', async () => {
    const { store, a, b, tick } = replicas();
    assert.equal(await a.tryAcquireOrRenew(), true);
    assert.deepEqual(
      { ...store.lease, acquireTime: '', renewTime: '' },
      {
        name: 'kube-scheduler',
        holderIdentity: 'a',
        leaseDurationSeconds: 15,
        acquireTime: '',
        renewTime: '',
        leaseTransitions: 0,
      },
    );
    assert.equal(await b.tryAcquireOrRenew(), false);
    for (let i = 0; i < 20; i++) {
      tick(TIMINGS.retryPeriodMs);
      assert.equal(await a.tryAcquireOrRenew(), true);
      assert.equal(await b.tryAcquireOrRenew(), false, 'a renewed lease is never taken');
    }
    assert.equal(b.holder(), 'a');
  });

  it('takes over a lease its holder stopped renewing once the lease duration passed since it last saw it change', async () => {
    const { store, a, b, tick } = replicas();
    await a.tryAcquireOrRenew();
    assert.equal(await b.tryAcquireOrRenew(), false);
    // a is gone. b counts from when it saw the lease move, by its own clock.
    tick(TIMINGS.leaseDurationMs - 1);
    assert.equal(await b.tryAcquireOrRenew(), false);
    tick(1);
    assert.equal(await b.tryAcquireOrRenew(), true);
    assert.equal(store.lease?.holderIdentity, 'b');
    assert.equal(store.lease?.leaseTransitions, 1);
  });

  it('counts the renew deadline from when the renewal was written, not from the slow read before it', async () => {
    const store = new MemoryLease();
    const clock = { now: 1_000 };
    const get = store.get.bind(store);
    let readMs = 0;
    store.get = async () => {
      clock.now += readMs;
      return get();
    };
    const a = new LeaderElector('kube-scheduler', 'a', store, TIMINGS, () => clock.now);
    assert.equal(await a.tryAcquireOrRenew(), true);
    readMs = 4_000;
    clock.now += TIMINGS.retryPeriodMs;
    assert.equal(await a.tryAcquireOrRenew(), true);
    // The renewal was sent 4 s after its try began; it leads until the deadline after that.
    clock.now += TIMINGS.renewDeadlineMs - 1;
    assert.equal(a.isLeader(), true);
    clock.now += 1;
    assert.equal(a.isLeader(), false);
  });

  it('stops leading at the renew deadline when its renewals are not stored, before another may take the lease', async () => {
    const { store, a, b, tick } = replicas();
    await a.tryAcquireOrRenew();
    await b.tryAcquireOrRenew();
    store.down = true;
    tick(TIMINGS.renewDeadlineMs - 1);
    assert.equal(await a.tryAcquireOrRenew(), true, 'a failed renewal within the deadline still leads');
    tick(1);
    assert.equal(a.isLeader(), false);
    assert.equal(await a.tryAcquireOrRenew(), false);
    store.down = false;
    // b may take it only later: it saw the last renewal no earlier than a sent it.
    assert.equal(await b.tryAcquireOrRenew(), false);
    tick(TIMINGS.leaseDurationMs - TIMINGS.renewDeadlineMs);
    assert.equal(await b.tryAcquireOrRenew(), true);
    assert.equal(a.isLeader(), false);
  });

  it('counts the lease duration from when the answer came, not from when it was asked', async () => {
    const { store, a, b, tick } = replicas();
    await a.tryAcquireOrRenew();
    // b's read takes 4 s (a slow bus, a busy loop); the record it gets may be that old or newer.
    const get = store.get.bind(store);
    store.get = async () => {
      const answer = await get();
      tick(4_000);
      return answer;
    };
    assert.equal(await b.tryAcquireOrRenew(), false);
    store.get = get;
    tick(TIMINGS.leaseDurationMs - 1);
    assert.equal(await b.tryAcquireOrRenew(), false, 'not taken 4 s early');
    tick(1);
    assert.equal(await b.tryAcquireOrRenew(), true);
  });

  it('says a stored write began a term: the first, and one after the last ran out while the try was under way', async () => {
    const { store, a, tick } = replicas();
    await a.tryAcquireOrRenew();
    assert.equal(a.startedTerm, true);
    tick(TIMINGS.retryPeriodMs);
    await a.tryAcquireOrRenew();
    assert.equal(a.startedTerm, false, 'a renewal in time');
    // A write answered past the deadline: the leading ran out meanwhile, and whatever stopped must start again.
    tick(TIMINGS.retryPeriodMs);
    const put = store.put.bind(store);
    store.put = async (lease, seq) => {
      tick(TIMINGS.renewDeadlineMs - 1_000);
      return put(lease, seq);
    };
    assert.equal(await a.tryAcquireOrRenew(), true, 'the new term runs from when the write was sent');
    assert.equal(a.startedTerm, true);
  });

  it('says why the lease was not read or written', async () => {
    const { store, a } = replicas();
    store.down = true;
    assert.equal(await a.tryAcquireOrRenew(), false);
    assert.equal(a.lastError, 'the lease was not read: bus unavailable');
    store.down = false;
    assert.equal(await a.tryAcquireOrRenew(), true);
    assert.equal(a.lastError, undefined);
  });

  it('does not lead on a race it lost', async () => {
    const { store, a, b } = replicas();
    // Both read an empty lease; b's write lands first.
    const put = store.put.bind(store);
    store.put = async (lease, seq) => {
      if (lease.holderIdentity === 'a') await put({ ...lease, holderIdentity: 'b' }, seq);
      return put(lease, seq);
    };
    assert.equal(await a.tryAcquireOrRenew(), false);
    assert.equal(a.isLeader(), false);
    assert.equal(store.lease?.holderIdentity, 'b');
    store.put = put;
    assert.equal(await b.tryAcquireOrRenew(), true);
  });

  it('lets the lease go, so the other takes it without waiting', async () => {
    const { store, a, b } = replicas();
    await a.tryAcquireOrRenew();
    await b.tryAcquireOrRenew();
    await a.release();
    assert.equal(a.isLeader(), false);
    assert.equal(store.lease?.holderIdentity, '');
    assert.equal(await b.tryAcquireOrRenew(), true);
    assert.equal(store.lease?.leaseTransitions, 1);
    // A release by one that does not lead writes nothing.
    const seq = store.seq;
    await a.release();
    assert.equal(store.seq, seq);
  });

  it('refuses timings where a leader could outlive its lease', () => {
    assert.throws(
      () => new LeaderElector('kube-scheduler', 'a', new MemoryLease(), { leaseDurationMs: 10_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 }, () => 0),
      RangeError,
    );
  });
});
