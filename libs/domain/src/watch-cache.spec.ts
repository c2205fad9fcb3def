import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { WatchCache, type WatchChange } from './watch-cache.js';

interface Obj {
  uid: string;
  v: number;
}

const summary = (changes: Array<WatchChange<Obj>> | undefined): string[] | undefined => changes?.map((c) => `${c.seq}:${c.type}:${c.object.uid}/${c.object.v}`);

describe('WatchCache', () => {
  it('turns object states into ADDED, MODIFIED and DELETED at their sequences', () => {
    const sut = new WatchCache<Obj>(100, (o) => o.uid);
    sut.update('a', { uid: 'u1', v: 1 }, 3, true);
    sut.update('a', { uid: 'u1', v: 2 }, 5, true);
    sut.advance(6);
    sut.update('a', { uid: 'u1', v: 3 }, 7, false);
    assert.deepEqual(summary(sut.changesSince(0)), ['3:ADDED:u1/1', '5:MODIFIED:u1/2', '7:DELETED:u1/3']);
    assert.equal(sut.lastSeq, 7);
    assert.deepEqual(sut.snapshot(), []);
  });

  it('replays exactly the changes after a sequence', () => {
    const sut = new WatchCache<Obj>(100, (o) => o.uid);
    for (let seq = 1; seq <= 10; seq++) sut.update('a', { uid: 'u', v: seq }, seq, true);
    assert.deepEqual(summary(sut.changesSince(8)), ['9:MODIFIED:u/9', '10:MODIFIED:u/10']);
    assert.deepEqual(sut.changesSince(10), []);
  });

  it('keeps the previous state, so a selector can see an object stop matching', () => {
    const sut = new WatchCache<Obj>(100, (o) => o.uid);
    sut.update('a', { uid: 'u', v: 1 }, 1, true);
    sut.update('a', { uid: 'u', v: 2 }, 2, true);
    assert.deepEqual(sut.changesSince(1)?.[0]?.previous, { uid: 'u', v: 1 });
  });

  it('makes a new identity under the same key a delete and an add', () => {
    const sut = new WatchCache<Obj>(100, (o) => o.uid);
    sut.update('a', { uid: 'u1', v: 1 }, 1, true);
    sut.update('a', { uid: 'u2', v: 1 }, 2, true);
    assert.deepEqual(summary(sut.changesSince(1)), ['2:DELETED:u1/1', '2:ADDED:u2/1']);
  });

  it('ignores the removal of what it never held', () => {
    const sut = new WatchCache<Obj>(100, (o) => o.uid);
    sut.update('a', { uid: 'u1', v: 1 }, 4, false);
    assert.deepEqual(sut.changesSince(0), []);
    assert.equal(sut.lastSeq, 4);
  });

  it('answers undefined (expired) for a sequence older than its window', () => {
    const sut = new WatchCache<Obj>(3, (o) => o.uid);
    for (let seq = 1; seq <= 10; seq++) sut.update(`k${seq}`, { uid: `u${seq}`, v: seq }, seq, true);
    assert.equal(sut.oldest, 7);
    assert.equal(sut.changesSince(6), undefined);
    assert.deepEqual(summary(sut.changesSince(7)), ['8:ADDED:u8/8', '9:ADDED:u9/9', '10:ADDED:u10/10']);
    assert.equal(sut.snapshot().length, 10, 'the store keeps every object; only history is bounded');
  });

  it('starts its window where a partial replay began', () => {
    const sut = new WatchCache<Obj>(100, (o) => o.uid);
    sut.startAt(41);
    assert.equal(sut.changesSince(40), undefined);
    assert.deepEqual(sut.changesSince(41), []);
  });

  it('tells subscribers every change until they unsubscribe', () => {
    const sut = new WatchCache<Obj>(100, (o) => o.uid);
    const seen: string[] = [];
    const unsubscribe = sut.subscribe((c) => seen.push(`${c.type}:${c.seq}`));
    sut.update('a', { uid: 'u', v: 1 }, 1, true);
    unsubscribe();
    sut.update('a', { uid: 'u', v: 2 }, 2, true);
    assert.deepEqual(seen, ['ADDED:1']);
    assert.equal(sut.watchers, 0);
  });

  it('rolls its window back to the objects as they were at a sequence, until that sequence leaves the window', () => {
    const sut = new WatchCache<{ uid: string; v: number }>(3, (o) => o.uid);
    sut.update('a', { uid: 'a1', v: 1 }, 1, true);
    sut.update('b', { uid: 'b1', v: 1 }, 2, true);
    sut.update('a', { uid: 'a1', v: 2 }, 3, true);
    sut.update('b', { uid: 'b1', v: 1 }, 4, false);
    assert.deepEqual(sut.snapshotAt(2), [
      { uid: 'a1', v: 1 },
      { uid: 'b1', v: 1 },
    ]);
    assert.deepEqual(sut.snapshotAt(3), [
      { uid: 'a1', v: 2 },
      { uid: 'b1', v: 1 },
    ]);
    assert.deepEqual(sut.snapshotAt(4), [{ uid: 'a1', v: 2 }]);
    // Only three changes are kept: before sequence 1's successor the window no longer reaches.
    assert.equal(sut.snapshotAt(0), undefined);
  });
});
