import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import type { AnyEnvelope } from '#contracts';
import type { Delivery } from '../transport/jetstream.context.js';
import { ListWatch, type CacheChange, type Folded } from './list-watch.js';

/** A fake object: a name, an incarnation and a value. */
interface Obj {
  name: string;
  uid: string;
  v: number;
}

/** Fake messages: `put` writes an object, `drop` removes it, `noop` changes nothing, `pair` writes two. */
type Fake = { op: 'put'; obj: Obj } | { op: 'drop'; obj: Obj } | { op: 'noop' } | { op: 'pair'; objs: [Obj, Obj] };

const envelope = (fake: Fake): AnyEnvelope => ({ data: fake }) as unknown as AnyEnvelope;
const at = (seq: number, subject = 'fake.subject'): Delivery => ({ subject, seq, pending: 0 });

function fold(e: AnyEnvelope): Folded<Obj> | Folded<Obj>[] | undefined {
  const fake = e.data as unknown as Fake;
  switch (fake.op) {
    case 'put':
      return { key: fake.obj.name, object: fake.obj, exists: true };
    case 'drop':
      return { key: fake.obj.name, object: fake.obj, exists: false };
    case 'pair':
      return fake.objs.map((o) => ({ key: o.name, object: o, exists: true }));
    case 'noop':
      return undefined;
  }
}

function recorder(sut: ListWatch<Obj>): string[] {
  const seen: string[] = [];
  const note = (c: CacheChange<Obj>): void => void seen.push(`${c.seq}:${c.type}:${c.object.name}/${c.object.uid}/${c.object.v}`);
  sut.on('change', note);
  return seen;
}

describe('ListWatch', () => {
  it('tells add, update and delete listeners, each with the object and the change', () => {
    const sut = new ListWatch<Obj>({ fold, identity: (o) => o.uid });
    const adds: Obj[] = [];
    const updates: Array<[Obj, Obj | undefined]> = [];
    const deletes: Obj[] = [];
    sut.on('add', (o) => adds.push(o));
    sut.on('update', (o, c) => updates.push([o, c.previous]));
    sut.on('delete', (o) => deletes.push(o));
    sut.apply(envelope({ op: 'put', obj: { name: 'a', uid: 'u1', v: 1 } }), at(1));
    sut.apply(envelope({ op: 'put', obj: { name: 'a', uid: 'u1', v: 2 } }), at(2));
    sut.apply(envelope({ op: 'drop', obj: { name: 'a', uid: 'u1', v: 3 } }), at(3));
    assert.deepEqual(adds, [{ name: 'a', uid: 'u1', v: 1 }]);
    assert.deepEqual(updates, [
      [
        { name: 'a', uid: 'u1', v: 2 },
        { name: 'a', uid: 'u1', v: 1 },
      ],
    ]);
    assert.deepEqual(deletes, [{ name: 'a', uid: 'u1', v: 3 }], 'a delete carries the last state the fold gave');
    assert.equal(sut.get('a'), undefined);
    assert.equal(sut.latestResourceVersion, 3);
  });

  it('makes a new identity under the same key a delete and an add', () => {
    const sut = new ListWatch<Obj>({ fold, identity: (o) => o.uid });
    const seen = recorder(sut);
    sut.apply(envelope({ op: 'put', obj: { name: 'a', uid: 'u1', v: 1 } }), at(1));
    sut.apply(envelope({ op: 'put', obj: { name: 'a', uid: 'u2', v: 1 } }), at(2));
    assert.deepEqual(seen, ['1:add:a/u1/1', '2:delete:a/u1/1', '2:add:a/u2/1']);
  });

  it('ignores the removal of what it never held, but still moves on', () => {
    const sut = new ListWatch<Obj>({ fold });
    const seen = recorder(sut);
    sut.apply(envelope({ op: 'drop', obj: { name: 'a', uid: 'u1', v: 1 } }), at(4));
    assert.deepEqual(seen, []);
    assert.equal(sut.latestResourceVersion, 4);
  });

  it('applies every object one message changed, at that message sequence', () => {
    const sut = new ListWatch<Obj>({ fold });
    const seen = recorder(sut);
    sut.apply(
      envelope({
        op: 'pair',
        objs: [
          { name: 'a', uid: 'u1', v: 1 },
          { name: 'b', uid: 'u2', v: 1 },
        ],
      }),
      at(7),
    );
    assert.deepEqual(seen, ['7:add:a/u1/1', '7:add:b/u2/1']);
  });

  it('moves latestResourceVersion with every message, changed or not, and tells advance listeners after the changes', () => {
    const sut = new ListWatch<Obj>({ fold });
    const order: string[] = [];
    sut.on('add', (o) => order.push(`add ${o.name}`));
    sut.on('advance', (seq) => order.push(`advance ${seq}`));
    sut.apply(envelope({ op: 'noop' }), at(1));
    sut.apply(envelope({ op: 'put', obj: { name: 'a', uid: 'u1', v: 1 } }), at(2));
    assert.deepEqual(order, ['advance 1', 'add a', 'advance 2']);
    assert.equal(sut.latestResourceVersion, 2);
  });

  it('resumes from a sequence: a redelivered message changes nothing', () => {
    const sut = new ListWatch<Obj>({ fold, from: 5 });
    const seen = recorder(sut);
    assert.deepEqual(sut.deliverFrom, { startSeq: 6 });
    sut.apply(envelope({ op: 'put', obj: { name: 'a', uid: 'u1', v: 1 } }), at(5));
    sut.apply(envelope({ op: 'put', obj: { name: 'a', uid: 'u1', v: 2 } }), at(6));
    sut.apply(envelope({ op: 'put', obj: { name: 'a', uid: 'u1', v: 3 } }), at(6));
    assert.deepEqual(seen, ['6:add:a/u1/2']);
    assert.equal(new ListWatch<Obj>({ fold }).deliverFrom, 'all');
  });

  it('hands a skipped message to the fold and moves past it', () => {
    const skipped: Delivery[] = [];
    const sut = new ListWatch<Obj>({ fold, skip: (d) => skipped.push(d) });
    sut.skip(at(3, 'pods.default.web'));
    sut.skip(at(3, 'pods.default.web'));
    assert.deepEqual(skipped, [at(3, 'pods.default.web')]);
    assert.equal(sut.latestResourceVersion, 3);
  });

  it('lists in compare order, and sees an object added, replaced or removed', () => {
    const sut = new ListWatch<Obj>({ fold, compare: (a, b) => a.name.localeCompare(b.name) });
    sut.apply(envelope({ op: 'put', obj: { name: 'c', uid: 'u3', v: 1 } }), at(1));
    sut.apply(envelope({ op: 'put', obj: { name: 'a', uid: 'u1', v: 1 } }), at(2));
    assert.deepEqual(
      sut.list().map((o) => o.name),
      ['a', 'c'],
    );
    sut.apply(envelope({ op: 'put', obj: { name: 'b', uid: 'u2', v: 1 } }), at(3));
    sut.apply(envelope({ op: 'put', obj: { name: 'a', uid: 'u1', v: 2 } }), at(4));
    assert.deepEqual(
      sut.list().map((o) => `${o.name}/${o.v}`),
      ['a/2', 'b/1', 'c/1'],
    );
    sut.apply(envelope({ op: 'drop', obj: { name: 'b', uid: 'u2', v: 1 } }), at(5));
    const listed = sut.list();
    listed.pop();
    assert.deepEqual(
      sut.list().map((o) => o.name),
      ['a', 'c'],
      'a caller changing its list leaves the cache alone',
    );
    assert.equal(sut.size, 2);
  });

  it('merges objects under new keys into the last order, as a full sort would place them', () => {
    const sut = new ListWatch<Obj>({ fold, compare: (a, b) => a.name.localeCompare(b.name) });
    const names = ['m', 'c', 'x', 'a', 'q', 'b', 'z', 'k', 'd', 'y'];
    let seq = 0;
    const expected: string[] = [];
    for (const [i, name] of names.entries()) {
      sut.apply(envelope({ op: 'put', obj: { name, uid: `u-${name}`, v: 1 } }), at(++seq));
      if (i === 4) sut.assume('e', { name: 'e', uid: 'u-e', v: 1 });
      expected.push(name);
      if (i === 4) expected.push('e');
      // A list after every other message: some merges add one object, some two.
      if (i % 2 === 1)
        assert.deepEqual(
          sut.list().map((o) => o.name),
          [...expected].sort(),
        );
    }
    sut.apply(envelope({ op: 'drop', obj: { name: 'q', uid: 'u-q', v: 1 } }), at(++seq));
    sut.apply(envelope({ op: 'put', obj: { name: 'f', uid: 'u-f', v: 1 } }), at(seq + 1));
    assert.deepEqual(
      sut.list().map((o) => o.name),
      [...expected.filter((n) => n !== 'q'), 'f'].sort(),
    );
  });

  it('assumes what this process wrote, and forgets it, without moving or telling anyone', () => {
    const sut = new ListWatch<Obj>({ fold });
    const seen = recorder(sut);
    sut.apply(envelope({ op: 'noop' }), at(1));
    sut.assume('a', { name: 'a', uid: 'u1', v: 9 });
    assert.deepEqual(sut.get('a'), { name: 'a', uid: 'u1', v: 9 });
    sut.forget('a');
    assert.equal(sut.get('a'), undefined);
    assert.deepEqual(seen, []);
    assert.equal(sut.latestResourceVersion, 1);
  });

  it('resolves whenSynced once the list is done', async () => {
    const sut = new ListWatch<Obj>({ fold });
    let synced = false;
    const waiting = sut.whenSynced().then(() => (synced = true));
    await Promise.resolve();
    assert.equal(synced, false);
    sut.markSynced();
    await waiting;
    assert.equal(sut.synced, true);
  });

  describe('waitFor (read-your-writes)', () => {
    beforeEach(() => mock.timers.enable({ apis: ['setTimeout'] }));
    afterEach(() => mock.timers.reset());

    it('resolves true once the sequence is applied, false when the time runs out first', async () => {
      const sut = new ListWatch<Obj>({ fold });
      sut.apply(envelope({ op: 'noop' }), at(1));
      assert.equal(await sut.waitFor(1, 1000), true, 'already there');
      const reached = sut.waitFor(3, 1000);
      const late = sut.waitFor(9, 1000);
      sut.apply(envelope({ op: 'noop' }), at(2));
      sut.apply(envelope({ op: 'noop' }), at(4));
      assert.equal(await reached, true);
      mock.timers.tick(1000);
      assert.equal(await late, false);
    });
  });
});
