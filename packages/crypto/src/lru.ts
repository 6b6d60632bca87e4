/**
 * A bounded least-recently-used map. `get` refreshes an entry; `set` evicts the oldest entry once
 * `capacity` is reached. Built on Map's insertion order, so every operation is O(1).
 *
 * The oldest entry is found by one iterator kept across evictions, not by `keys().next()` from the start: V8 leaves a
 * deleted entry of a Map as a hole until the table is rebuilt, and a new iterator steps over every hole before the
 * first live entry. Evictions delete from the front, so with a fresh iterator each eviction scanned up to about a
 * third of the capacity in holes (about 30 µs per `set` at 100,000 entries against 2 µs). Every entry the kept
 * iterator has passed was evicted: the live ones, refreshed ones included (moved to the end), all lie ahead of it.
 */
export class LruCache<K, V> {
  #map = new Map<K, V>();
  /** the keys from the oldest live entry on (see above) */
  #oldest: IterableIterator<K> = this.#map.keys();
  readonly capacity: number;

  constructor(capacity: number) {
    if (!Number.isSafeInteger(capacity) || capacity < 1) throw new RangeError(`LRU capacity must be a positive integer, got ${capacity}`);
    this.capacity = capacity;
  }

  get size(): number {
    return this.#map.size;
  }

  get(key: K): V | undefined {
    const value = this.#map.get(key);
    if (value !== undefined) {
      this.#map.delete(key);
      this.#map.set(key, value);
    }
    return value;
  }

  set(key: K, value: V): void {
    if (this.#map.has(key)) this.#map.delete(key);
    else if (this.#map.size >= this.capacity) this.#evictOldest();
    this.#map.set(key, value);
  }

  clear(): void {
    this.#map = new Map();
    this.#oldest = this.#map.keys();
  }

  #evictOldest(): void {
    let next = this.#oldest.next();
    if (next.done === true) {
      // never while the map holds an entry (see above); a new iterator, should it ever be
      this.#oldest = this.#map.keys();
      next = this.#oldest.next();
      if (next.done === true) return;
    }
    this.#map.delete(next.value);
  }
}
