/**
 * A bounded cache of stored trie nodes by hash. Nodes addressed by hash never change, so a cached
 * node is never stale. Two generations approximate LRU at the cost of two Map lookups: a hit in
 * the old generation is promoted, and when the young one fills up the old one is dropped whole.
 */
import type { TrieNode } from './node.js';

export class NodeCache {
  #young = new Map<string, TrieNode>();
  #old = new Map<string, TrieNode>();
  readonly #generation: number;

  /** `capacity`: about the largest number of nodes held (at least 2). */
  constructor(capacity: number) {
    this.#generation = Math.max(1, Math.floor(capacity / 2));
  }

  get(key: string): TrieNode | undefined {
    const n = this.#young.get(key);
    if (n !== undefined) return n;
    const o = this.#old.get(key);
    if (o !== undefined) this.set(key, o);
    return o;
  }

  set(key: string, node: TrieNode): void {
    this.#young.set(key, node);
    if (this.#young.size >= this.#generation) {
      this.#old = this.#young;
      this.#young = new Map();
    }
  }

  delete(key: string): void {
    this.#young.delete(key);
    this.#old.delete(key);
  }

  get size(): number {
    return this.#young.size + this.#old.size;
  }

  clear(): void {
    this.#young.clear();
    this.#old.clear();
  }
}
