import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { gapStart, OrderedCursor, orderedDrained, reopenDelayMs, type StoredFrom } from './ordered-cursor.js';

describe('gapStart: where an ordered consumer may have skipped stored messages', () => {
  it('sees nothing missing when the next sequence follows the last one', () => {
    assert.equal(gapStart(4, 5, 'all'), undefined);
    assert.equal(gapStart(0, 1, 'all'), undefined);
  });

  it('looks right after the last handled message when sequences jump', () => {
    assert.equal(gapStart(4, 19, 'all'), 5);
    assert.equal(gapStart(4, 19, { startSeq: 2 }), 5);
    assert.equal(gapStart(4, 19, 'new'), 5);
  });

  it('looks from the start of the stream for a replay from the first message', () => {
    assert.equal(gapStart(0, 7, 'all'), 1);
    assert.equal(gapStart(0, 7, { startSeq: 3 }), 3);
  });

  it('has no known start for new messages, a start time, or the last message per subject', () => {
    assert.equal(gapStart(0, 7, 'new'), undefined);
    assert.equal(gapStart(0, 7, { startTime: '2026-01-01T00:00:00Z' }), undefined);
    assert.equal(gapStart(4, 19, 'last_per_subject'), undefined);
  });
});

/** A stream that stores `seqs` (on the consumer's filter), asked as STREAM.MSG.GET with next_by_subj is. */
const storing =
  (...seqs: number[]): StoredFrom =>
  (seq) =>
    Promise.resolve(seqs.find((stored) => stored >= seq));

describe('OrderedCursor: where an ordered consumer opens and when it opens again', () => {
  it('opens at its start, then after the last message it delivered', async () => {
    const cursor = new OrderedCursor('all', true);
    assert.deepEqual(cursor.openFrom, 'all');
    assert.deepEqual(await cursor.check(1, storing(1, 2)), { kind: 'handle' });
    assert.deepEqual(await cursor.check(2, storing(1, 2)), { kind: 'handle' });
    assert.deepEqual(cursor.openFrom, { startSeq: 3 });
  });

  it('takes purged sequences for a gap only when the stream still stores what was passed over', async () => {
    const cursor = new OrderedCursor('all', true);
    assert.deepEqual(await cursor.check(9, storing(9, 10)), { kind: 'handle' });
    assert.deepEqual(await cursor.check(10, storing(9, 10)), { kind: 'handle' });
  });

  it('opens again at the first message passed over, also before it delivered any', async () => {
    const cursor = new OrderedCursor('all', true);
    assert.deepEqual(await cursor.check(9, storing(4, 9)), { kind: 'reopen', missed: 4, attempt: 1 });
    assert.deepEqual(cursor.openFrom, { startSeq: 4 });
    assert.deepEqual(await cursor.check(4, storing(4, 9)), { kind: 'handle' });
    assert.deepEqual(await cursor.check(9, storing(4, 9)), { kind: 'handle' });
    assert.deepEqual(cursor.openFrom, { startSeq: 10 });
  });

  it('opens again at a message the server keeps passing over, counting the attempts, and never goes on without it', async () => {
    const cursor = new OrderedCursor('all', true);
    assert.deepEqual(await cursor.check(9, storing(4, 9)), { kind: 'reopen', missed: 4, attempt: 1 });
    assert.deepEqual(await cursor.check(9, storing(4, 9)), { kind: 'reopen', missed: 4, attempt: 2 });
    assert.deepEqual(await cursor.check(11, storing(4, 9, 11)), { kind: 'reopen', missed: 4, attempt: 3 });
    assert.deepEqual(cursor.openFrom, { startSeq: 4 });
    // Delivered at last: a later gap is a new one.
    assert.deepEqual(await cursor.check(4, storing(4, 9, 11, 12, 14)), { kind: 'handle' });
    assert.deepEqual(await cursor.check(14, storing(4, 9, 11, 12, 14)), { kind: 'reopen', missed: 9, attempt: 1 });
  });

  it('waits longer before each open at the same message: at once, then 100 ms doubling to 2 s', () => {
    assert.deepEqual([1, 2, 3, 4, 5, 6, 7, 20].map(reopenDelayMs), [0, 100, 200, 400, 800, 1600, 2000, 2000]);
  });

  it('never checks a filtered consumer, where nearly every message follows a gap', async () => {
    const cursor = new OrderedCursor('all', false);
    let asked = 0;
    const stored: StoredFrom = () => {
      asked++;
      return Promise.resolve(1);
    };
    assert.deepEqual(await cursor.check(9, stored), { kind: 'handle' });
    assert.equal(asked, 0);
  });
});

describe('orderedDrained: an ordered consumer with nothing more for its process', () => {
  it('is drained when the server counts nothing pending and every delivered message is handled', async () => {
    assert.equal(await orderedDrained({ pending: 0, deliveredSeq: 7 }, 7, storing()), true);
  });

  it('is not drained while a delivered message waits to be handled', async () => {
    assert.equal(await orderedDrained({ pending: 0, deliveredSeq: 8 }, 7, storing()), false);
  });

  it('asks the stream when the server counts messages pending that it no longer stores', async () => {
    assert.equal(await orderedDrained({ pending: 2, deliveredSeq: 7 }, 7, storing(3, 7)), true);
    assert.equal(await orderedDrained({ pending: 2, deliveredSeq: 7 }, 7, storing(3, 7, 11)), false);
  });

  it('lets an error of the stream reach the caller, which asks again later', async () => {
    const failing: StoredFrom = () => Promise.reject(new Error('timeout'));
    await assert.rejects(orderedDrained({ pending: 1, deliveredSeq: 7 }, 7, failing), /timeout/);
  });
});
