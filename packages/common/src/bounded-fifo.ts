// Bounded insertion-ordered maps and sets: the oldest entry goes once the capacity is reached. Every cache and
// every "the last N seen" memory of the packages is one of these (or an LruCache, the same with reads refreshing).
// Here in common, not beside the hashes in crypto: common's own memos use it and common depends on no package.

/**
 * The keys of a Map or Set from its oldest live entry on, kept across evictions.
 *
 * Not `keys().next()` from the start: V8 leaves a deleted entry of a Map or Set as a hole until the table is rebuilt,
 * and a new iterator steps over every hole before the first live entry. Evictions delete from the front, so with a
 * fresh iterator each eviction scanned up to about a third of the capacity in holes (tens of µs at 100,000 entries).
 * Every entry the kept iterator has passed was removed: the live ones, moved ones included (a move is a delete and an
 * insertion at the end), all lie ahead of it, so its next key is the oldest live one.
 */
class OldestFirst<K> {
  #keys: Iterator<K>;

  constructor(private readonly table: { readonly size: number; keys(): Iterator<K> }) {
    this.#keys = table.keys();
  }

  /** The oldest live key, passed (the caller deletes it); done when the table is empty. */
  take(): IteratorResult<K> {
    if (this.table.size === 0) return EMPTY; // never run the iterator to its end: a finished one stays finished
    let next = this.#keys.next();
    if (next.done === true) {
      // never while the table holds an entry (see above); a new iterator, should it ever be
      this.#keys = this.table.keys();
      next = this.#keys.next();
    }
    return next;
  }
}

const EMPTY: IteratorReturnResult<undefined> = { done: true, value: undefined };

function checkedCapacity(capacity: number, what: string): number {
  if (!Number.isSafeInteger(capacity) || capacity < 1) throw new RangeError(`${what} capacity must be a positive integer, got ${capacity}`);
  return capacity;
}

/**
 * A map of at most `capacity` entries in insertion order: adding a key past the capacity drops the oldest entry.
 * `get` never moves a key. `set` keeps a held key's place (as Map.set), `setNewest` moves it to the newest place:
 * each user says which of the two its memory means. Iteration is oldest first. Every operation is O(1).
 */
export class BoundedFifo<K, V> implements Iterable<[K, V]> {
  #map = new Map<K, V>();
  #oldest = new OldestFirst<K>(this.#map);
  readonly capacity: number;

  constructor(capacity: number) {
    this.capacity = checkedCapacity(capacity, 'BoundedFifo');
  }

  get size(): number {
    return this.#map.size;
  }

  has(key: K): boolean {
    return this.#map.has(key);
  }

  /** The value of `key`; its place is unchanged. */
  get(key: K): V | undefined {
    return this.#map.get(key);
  }

  /** Adds `key`, or replaces its value in its place. A new key at capacity first drops the oldest entry. */
  set(key: K, value: V): void {
    if (this.#map.size >= this.capacity && !this.#map.has(key)) this.#dropOldest();
    this.#map.set(key, value);
  }

  /** Adds `key`, or replaces its value and moves it to the newest place. A new key at capacity first drops the oldest entry. */
  setNewest(key: K, value: V): void {
    if (!this.#map.delete(key) && this.#map.size >= this.capacity) this.#dropOldest();
    this.#map.set(key, value);
  }

  delete(key: K): boolean {
    return this.#map.delete(key);
  }

  /** Removes and returns the oldest entry (undefined when empty). */
  shift(): [K, V] | undefined {
    const oldest = this.#oldest.take();
    if (oldest.done === true) return undefined;
    const value = this.#map.get(oldest.value) as V;
    this.#map.delete(oldest.value);
    return [oldest.value, value];
  }

  clear(): void {
    this.#map = new Map();
    this.#oldest = new OldestFirst(this.#map);
  }

  keys(): MapIterator<K> {
    return this.#map.keys();
  }

  values(): MapIterator<V> {
    return this.#map.values();
  }

  entries(): MapIterator<[K, V]> {
    return this.#map.entries();
  }

  [Symbol.iterator](): MapIterator<[K, V]> {
    return this.#map.entries();
  }

  #dropOldest(): void {
    const oldest = this.#oldest.take();
    if (oldest.done !== true) this.#map.delete(oldest.value);
  }
}

/**
 * A set of at most `capacity` values in insertion order: adding a value past the capacity drops the oldest. `add`
 * keeps a held value's place (as Set.add), `addNewest` moves it to the newest place. Iteration is oldest first.
 */
export class BoundedFifoSet<T> implements Iterable<T> {
  #set = new Set<T>();
  #oldest = new OldestFirst<T>(this.#set);
  readonly capacity: number;

  constructor(capacity: number) {
    this.capacity = checkedCapacity(capacity, 'BoundedFifoSet');
  }

  get size(): number {
    return this.#set.size;
  }

  has(value: T): boolean {
    return this.#set.has(value);
  }

  /** Adds `value` (a held one keeps its place). A new value at capacity first drops the oldest. */
  add(value: T): void {
    if (this.#set.size >= this.capacity && !this.#set.has(value)) this.#dropOldest();
    this.#set.add(value);
  }

  /** Adds `value` at the newest place (a held one moves there). A new value at capacity first drops the oldest. */
  addNewest(value: T): void {
    if (!this.#set.delete(value) && this.#set.size >= this.capacity) this.#dropOldest();
    this.#set.add(value);
  }

  delete(value: T): boolean {
    return this.#set.delete(value);
  }

  /** Removes and returns the oldest value (undefined when empty: a set that holds undefined tells by its size). */
  shift(): T | undefined {
    const oldest = this.#oldest.take();
    if (oldest.done === true) return undefined;
    this.#set.delete(oldest.value);
    return oldest.value;
  }

  clear(): void {
    this.#set = new Set();
    this.#oldest = new OldestFirst(this.#set);
  }

  values(): SetIterator<T> {
    return this.#set.values();
  }

  [Symbol.iterator](): SetIterator<T> {
    return this.#set.values();
  }

  #dropOldest(): void {
    const oldest = this.#oldest.take();
    if (oldest.done !== true) this.#set.delete(oldest.value);
  }
}

/**
 * A bounded least-recently-used map: a BoundedFifo whose reads refresh. `get` moves a found entry to the newest
 * place; `set` adds or replaces at the newest place and drops the least recently used entry once `capacity` is reached.
 */
export class LruCache<K, V> {
  readonly #fifo: BoundedFifo<K, V>;

  constructor(capacity: number) {
    checkedCapacity(capacity, 'LRU');
    this.#fifo = new BoundedFifo(capacity);
  }

  get capacity(): number {
    return this.#fifo.capacity;
  }

  get size(): number {
    return this.#fifo.size;
  }

  get(key: K): V | undefined {
    const value = this.#fifo.get(key);
    if (value !== undefined) this.#fifo.setNewest(key, value);
    return value;
  }

  set(key: K, value: V): void {
    this.#fifo.setNewest(key, value);
  }

  clear(): void {
    this.#fifo.clear();
  }
}
