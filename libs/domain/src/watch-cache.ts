/** What happened to one object, as a Kubernetes watch names it. */
export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** One change of one object, at the stream sequence that caused it. */
export interface WatchChange<T> {
  seq: number;
  type: WatchEventType;
  /** The object after the change; for DELETED its last state. */
  object: T;
  /** The object before the change (MODIFIED, DELETED), so a selector can tell when it stops matching. */
  previous?: T;
}

/**
 * The API server's watch cache for one resource: the current objects, and a window of
 * their recent changes keyed by stream sequence, so a watch "from resourceVersion N" replays
 * exactly the changes after N. A watch from before the window is told to relist (410).
 * Pure: fed by the projection, read by the watch handlers.
 */
export class WatchCache<T> {
  private readonly store = new Map<string, T>();
  private ring: Array<WatchChange<T>> = [];
  private head = 0;
  private readonly listeners = new Set<(change: WatchChange<T>) => void>();
  /** Every change after this sequence is in the window. */
  private windowStart = 0;
  /** The newest stream sequence this cache has seen (changes or not): a list's resourceVersion. */
  lastSeq = 0;

  /**
   * @param capacity how many changes the window keeps
   * @param identity an object's uid: the same key with another identity is a delete and an add
   */
  constructor(
    private readonly capacity: number,
    private readonly identity: (object: T) => string,
  ) {}

  /** Declares that changes after `seq` are complete from here on (where a replay of a partial stream began). */
  startAt(seq: number): void {
    this.windowStart = Math.max(this.windowStart, seq);
    this.lastSeq = Math.max(this.lastSeq, seq);
  }

  /** The stream moved to `seq` without changing any object of this resource. */
  advance(seq: number): void {
    this.lastSeq = Math.max(this.lastSeq, seq);
  }

  /** Records the object under `key` as it is after sequence `seq`; `exists: false` is its removal (with its last state). */
  update(key: string, object: T, seq: number, exists: boolean): void {
    this.advance(seq);
    const previous = this.store.get(key);
    if (!exists) {
      if (previous === undefined) return;
      this.store.delete(key);
      this.push({ seq, type: 'DELETED', object, previous });
      return;
    }
    this.store.set(key, object);
    if (previous === undefined) this.push({ seq, type: 'ADDED', object });
    else if (this.identity(previous) !== this.identity(object)) {
      this.push({ seq, type: 'DELETED', object: previous, previous });
      this.push({ seq, type: 'ADDED', object });
    } else this.push({ seq, type: 'MODIFIED', object, previous });
  }

  /** The current objects, in the order they were first added. */
  snapshot(): T[] {
    return [...this.store.values()];
  }

  /**
   * The objects as they were right after sequence `seq`, by rolling the window's later
   * changes back; undefined once changes after `seq` have left the window. A continued
   * list reads its snapshot here.
   */
  snapshotAt(seq: number): T[] | undefined {
    if (seq >= this.lastSeq) return this.snapshot();
    const later = this.changesSince(seq);
    if (!later) return undefined;
    const objects = new Map<string, T>();
    for (const object of this.store.values()) objects.set(this.identity(object), object);
    for (let i = later.length - 1; i >= 0; i--) {
      const change = later[i];
      if (change.type === 'ADDED') objects.delete(this.identity(change.object));
      else if (change.previous !== undefined) objects.set(this.identity(change.previous), change.previous);
    }
    return [...objects.values()];
  }

  get size(): number {
    return this.store.size;
  }

  /** The oldest resourceVersion a watch may start from. */
  get oldest(): number {
    return this.windowStart;
  }

  /** The changes after `seq`, oldest first; undefined when some of them already left the window. */
  changesSince(seq: number): Array<WatchChange<T>> | undefined {
    if (seq < this.windowStart) return undefined;
    let low = this.head;
    let high = this.ring.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if ((this.ring[mid]?.seq ?? 0) <= seq) low = mid + 1;
      else high = mid;
    }
    return this.ring.slice(low);
  }

  /** Calls `listener` with every change from now on; returns the unsubscribe. */
  subscribe(listener: (change: WatchChange<T>) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get watchers(): number {
    return this.listeners.size;
  }

  private push(change: WatchChange<T>): void {
    this.ring.push(change);
    if (this.ring.length - this.head > this.capacity) {
      const dropped = this.ring[this.head];
      this.head++;
      if (dropped) this.windowStart = Math.max(this.windowStart, dropped.seq);
      if (this.head >= this.capacity) {
        this.ring = this.ring.slice(this.head);
        this.head = 0;
      }
    }
    for (const listener of this.listeners) listener(change);
  }
}
