/**
 * A bounded least-recently-used map. `get` refreshes an entry; `set` evicts the oldest entry once
 * `capacity` is reached. Built on Map's insertion order, so every operation is O(1).
 */
export class LruCache<K, V> {
  readonly #map = new Map<K, V>();
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
    else if (this.#map.size >= this.capacity) this.#map.delete(this.#map.keys().next().value as K);
    this.#map.set(key, value);
  }

  clear(): void {
    this.#map.clear();
  }
}
