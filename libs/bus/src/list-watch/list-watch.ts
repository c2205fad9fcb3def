import type { AnyEnvelope } from '#contracts';
import { systemClock, type Clock } from '#workqueue';
import type { DeliverFrom } from '../bus.js';
import type { Delivery } from '../transport/jetstream.context.js';

/** What happened to one object, as `@kubernetes/client-node`'s informer names it. */
export type ListWatchVerb = 'add' | 'update' | 'delete';

/** One change of one cached object, at the stream sequence that caused it. */
export interface CacheChange<T> {
  type: ListWatchVerb;
  key: string;
  /** The object after the change; for `delete` its last state. */
  object: T;
  /** The object before the change (`update`, `delete`). */
  previous?: T;
  /** The stream sequence of the message that made the change. */
  seq: number;
}

/** What a fold made of one message: an object under its key, and whether it still exists. */
export interface Folded<T> {
  key: string;
  object: T;
  exists: boolean;
}

/**
 * Folds one message into the objects it changed (none, one, or several). The fold keeps
 * whatever state it needs (a pod's subject sequence, an aggregate's history); the cache
 * keeps the objects, the position and the listeners.
 */
export type Fold<T> = (envelope: AnyEnvelope, delivery: Delivery) => Folded<T> | Iterable<Folded<T>> | undefined;

export interface ListWatchOptions<T> {
  fold: Fold<T>;
  /** Hears of a message skipped as invalid, whose sequence still counts (a pod's subject expects it). */
  skip?: (delivery: Delivery) => void;
  /** An object's identity (its uid): the same key with another identity is a delete and an add. */
  identity?: (object: T) => string;
  /** The order of `list()`; insertion order without it. */
  compare?: (a: T, b: T) => number;
  /** The sequence the cache resumes after: messages at or before it are already in it. */
  from?: number;
  clock?: Clock;
}

type Listener<T> = (object: T, change: CacheChange<T>) => void;

interface Listeners<T> {
  add: Set<Listener<T>>;
  update: Set<Listener<T>>;
  delete: Set<Listener<T>>;
  change: Set<(change: CacheChange<T>) => void>;
  advance: Set<(seq: number) => void>;
}

/**
 * A projection cache on a stream, modelled on `@kubernetes/client-node`'s `ListWatch`: the
 * consumer lists (replays the stream), then watches (follows it); the cache keeps the
 * objects by key, tells `add`/`update`/`delete` listeners, and knows its
 * `latestResourceVersion`, the stream sequence of the newest message it has applied. A
 * message at or before that sequence is a redelivery (a consumer opened again) and changes
 * nothing, so the cache resumes from any sequence. Pure but for the timer of `waitFor`.
 */
export class ListWatch<T> {
  private readonly store = new Map<string, T>();
  private readonly listeners: Listeners<T> = { add: new Set(), update: new Set(), delete: new Set(), change: new Set(), advance: new Set() };
  private readonly waiters = new Set<{ seq: number; resolve: (reached: boolean) => void }>();
  private readonly clock: Clock;
  /** The objects in `compare` order as of the last `list()`, while still valid. */
  private sorted?: T[];
  /** Objects under new keys since `sorted` was made: merged in, not sorted again with the rest. */
  private added: T[] = [];
  private resourceVersion: number;
  private isSynced = false;
  private readonly syncWaiters: Array<() => void> = [];

  constructor(private readonly options: ListWatchOptions<T>) {
    this.resourceVersion = options.from ?? 0;
    this.clock = options.clock ?? systemClock;
  }

  /** The stream sequence of the newest message applied or skipped (a list's resourceVersion). */
  get latestResourceVersion(): number {
    return this.resourceVersion;
  }

  /** Where a consumer opened now delivers from: the stream's start, or right after the newest message applied. */
  get deliverFrom(): DeliverFrom {
    return this.resourceVersion > 0 ? { startSeq: this.resourceVersion + 1 } : 'all';
  }

  /** True once the cache reflects the stream as it was when its consumer opened (the list is done). */
  get synced(): boolean {
    return this.isSynced;
  }

  /** Declares the list done: what the stream held at start is in the cache. */
  markSynced(): void {
    if (this.isSynced) return;
    this.isSynced = true;
    for (const resolve of this.syncWaiters.splice(0)) resolve();
  }

  /** Resolves once the cache is synced. */
  whenSynced(): Promise<void> {
    return this.isSynced ? Promise.resolve() : new Promise((resolve) => this.syncWaiters.push(resolve));
  }

  /** Moves the position to `seq` without a message: where a replay of a partial stream begins. */
  startAt(seq: number): void {
    this.advance(seq);
  }

  /** Folds one delivered message and tells the listeners what it changed. A redelivered sequence is ignored. */
  apply(envelope: AnyEnvelope, delivery: Delivery): void {
    if (delivery.seq <= this.resourceVersion) return;
    const folded = this.options.fold(envelope, delivery);
    if (folded !== undefined) {
      for (const one of isFolded(folded) ? [folded] : folded) this.put(one.key, one.object, one.exists, delivery.seq);
    }
    this.advance(delivery.seq);
  }

  /** A message skipped as invalid: the fold hears of it, and the position moves past it. */
  skip(delivery: Delivery): void {
    if (delivery.seq <= this.resourceVersion) return;
    this.options.skip?.(delivery);
    this.advance(delivery.seq);
  }

  /**
   * Records what this process just wrote before the stream's copy of it arrives (kube-scheduler's
   * "assume"): the object under `key` as it will be, without moving the position or telling listeners.
   */
  assume(key: string, object: T): void {
    this.invalidate(this.store.get(key), object);
    this.store.set(key, object);
  }

  /** Drops `key` without a message (what this process cleaned up itself), without telling listeners. */
  forget(key: string): void {
    if (this.store.delete(key)) this.invalidate(true, undefined);
  }

  get(key: string): T | undefined {
    return this.store.get(key);
  }

  /**
   * The objects that exist, in `compare` order: sorted once per change, not once per call,
   * and objects under new keys merged into the last order (a pass over 20,000 pods while
   * pods keep arriving sorted them all again each time).
   */
  list(): T[] {
    const compare = this.options.compare;
    if (!compare) return [...this.store.values()];
    if (this.sorted && this.added.length > 0) this.sorted = mergeSorted(this.sorted, this.added.sort(compare), compare);
    this.sorted ??= [...this.store.values()].sort(compare);
    this.added = [];
    return [...this.sorted];
  }

  /** Keeps the order up to date for `list()`: a new key is merged later; any other change of object sorts again. */
  private invalidate(previous: unknown, object: T | undefined): void {
    if (previous === object) return;
    if (previous === undefined && object !== undefined && this.sorted) this.added.push(object);
    else {
      this.sorted = undefined;
      this.added = [];
    }
  }

  get size(): number {
    return this.store.size;
  }

  on(verb: ListWatchVerb, listener: Listener<T>): () => void;
  /** Every add, update and delete, as one change. */
  on(verb: 'change', listener: (change: CacheChange<T>) => void): () => void;
  /** Every message applied or skipped, once its changes are told: the new latestResourceVersion. */
  on(verb: 'advance', listener: (seq: number) => void): () => void;
  on(verb: ListWatchVerb | 'change' | 'advance', listener: Listener<T> | ((change: CacheChange<T>) => void) | ((seq: number) => void)): () => void {
    const set = this.listeners[verb] as Set<typeof listener>;
    set.add(listener);
    return () => set.delete(listener);
  }

  /** Resolves true once the cache has applied sequence `seq` (read-your-writes), false after `timeoutMs`. */
  waitFor(seq: number, timeoutMs: number): Promise<boolean> {
    if (this.resourceVersion >= seq) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = this.clock.setTimeout(() => {
        this.waiters.delete(waiter);
        resolve(false);
      }, timeoutMs);
      const waiter = {
        seq,
        resolve: (reached: boolean) => {
          this.clock.clearTimeout(timer);
          resolve(reached);
        },
      };
      this.waiters.add(waiter);
    });
  }

  private put(key: string, object: T, exists: boolean, seq: number): void {
    const previous = this.store.get(key);
    if (!exists) {
      if (previous === undefined) return;
      this.store.delete(key);
      this.invalidate(previous, undefined);
      this.emit({ type: 'delete', key, object, previous, seq });
      return;
    }
    this.invalidate(previous, object);
    this.store.set(key, object);
    const identity = this.options.identity;
    if (previous === undefined) this.emit({ type: 'add', key, object, seq });
    else if (identity && identity(previous) !== identity(object)) {
      this.emit({ type: 'delete', key, object: previous, previous, seq });
      this.emit({ type: 'add', key, object, seq });
    } else this.emit({ type: 'update', key, object, previous, seq });
  }

  private emit(change: CacheChange<T>): void {
    for (const listener of this.listeners[change.type]) listener(change.object, change);
    for (const listener of this.listeners.change) listener(change);
  }

  private advance(seq: number): void {
    if (seq <= this.resourceVersion) return;
    this.resourceVersion = seq;
    for (const listener of this.listeners.advance) listener(seq);
    for (const waiter of this.waiters) {
      if (waiter.seq > seq) continue;
      this.waiters.delete(waiter);
      waiter.resolve(true);
    }
  }
}

/** The two sorted arrays as one, in `compare` order. */
function mergeSorted<T>(a: T[], b: T[], compare: (x: T, y: T) => number): T[] {
  const merged: T[] = new Array<T>(a.length + b.length);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < a.length && j < b.length) merged[k++] = compare(a[i], b[j]) <= 0 ? a[i++] : b[j++];
  while (i < a.length) merged[k++] = a[i++];
  while (j < b.length) merged[k++] = b[j++];
  return merged;
}

function isFolded<T>(value: Folded<T> | Iterable<Folded<T>>): value is Folded<T> {
  return typeof (value as Folded<T>).key === 'string' && 'exists' in value;
}
