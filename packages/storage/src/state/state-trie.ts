/**
 * The state of one ledger (formats.md 7): a Merkle-Patricia trie with SHA3-256 over the node store
 * of the key-value layer, with an uncommitted head (batches in flight) and a committed root.
 *
 * Storage: bucket `state/<name>` maps SHA3-256(RLP(node)) -> RLP(node) for every node referenced by
 * hash (and every committed root node); bucket `state-head/<name>` holds the committed root. Old
 * nodes are never deleted, so every root once committed stays readable (formats.md 7.6).
 *
 * Memory: changes build new immutable nodes in memory (copy on write); nothing is hashed until a
 * root is asked for, and no node is hashed or encoded twice. `commit` puts the nodes of the new
 * root into a write batch; from then on they are served from memory until the batch is durable,
 * then from a bounded cache of hot nodes and, below it, from synchronous reads of the store.
 */
import type { KvStore, WriteBatch } from '../kv/kv-store.js';
import { StorageError, StorageErrorCode } from '../errors.js';
import {
  BLANK_ROOT_KEY,
  BranchNode,
  ExtensionNode,
  LeafNode,
  bytesToKey,
  decodeNode,
  encodeNode,
  isHashReferenced,
  keyToBytes,
  keyToHex,
  nodeHash,
  rootHashOf,
  type HashKey,
  type NodeRef,
  type TrieNode,
} from './node.js';
import { NodeCache } from './node-cache.js';
import { bytesToNibbles, nibblesToBytes } from './nibbles.js';
import { encodeProof } from './proof.js';
import { prefixProofNodes, proofPath, trieForEach, trieGet, trieInsert, trieRemove } from './trie-ops.js';
import { copyBytes, stateKeyBytes, unwrapStateValue, wrapStateValue, type StateKey } from './values.js';

/** The states a pool keeps (the audit ledger has none): the base ledgers' and a plugin ledger's, `ledger-<id>`. */
export type StateName = 'pool' | 'domain' | 'config' | `ledger-${number}`;

const STATE_NAMES: readonly string[] = ['pool', 'domain', 'config'];
/** the state of a plugin ledger (ids 1000 and above, requests' LedgerPlugin) */
const PLUGIN_STATE_NAME = /^ledger-[1-9][0-9]{3,9}$/;

export interface StateTrieOptions {
  /**
   * About how many stored nodes the hot-node cache holds (default 250,000: every node of a trie
   * of about 180,000 NYM-sized records, so that puts rarely read LevelDB to split a leaf; roughly
   * 1.5 KB of memory per cached node). A put into a trie larger than the cache reads on average
   * about one node from the store.
   */
  nodeCacheSize: number;
}

export const defaultStateTrieOptions: StateTrieOptions = {
  nodeCacheSize: 250_000,
};

/** What `StateTrie.open` is told: which state of the store, and its options. */
export interface StateTrieOpenOptions extends Partial<StateTrieOptions> {
  name: StateName;
}

/** What a state trie runs over: the key-value store that holds its nodes. */
export interface StateTrieModules {
  kv: KvStore;
}

/** Key of the committed root in bucket `state-head/<name>`. */
const HEAD_KEY = new TextEncoder().encode('root');

/** The HashKey of a root given by a caller. Throws INVALID_KEY unless it is 32 bytes. */
function rootKeyOf(root: Uint8Array): HashKey {
  if (!(root instanceof Uint8Array) || root.length !== 32) {
    throw new StorageError(StorageErrorCode.INVALID_KEY, { what: 'state root', length: root instanceof Uint8Array ? root.length : -1 });
  }
  return bytesToKey(root);
}

/** Store key of a node hash. */
function nodeStoreKey(hash: HashKey): Uint8Array {
  return Buffer.from(hash, 'latin1');
}

export class StateTrie {
  readonly name: StateName;
  readonly #kv: KvStore;
  readonly #nodeBucket: string;
  readonly #headBucket: string;
  readonly #cache: NodeCache;
  /**
   * Nodes put into batches not known to be written yet. A batch done releases its nodes: they are stored, or, if it
   * failed, in #retry (a node also put by a later batch still in flight is then found in one of those two places).
   * One map for all batches: a catch-up commits faster than LevelDB writes, with hundreds of batches in flight.
   */
  readonly #unflushed = new Map<HashKey, TrieNode>();
  /** Nodes whose batch failed: put again by the next commit. */
  readonly #retry = new Map<HashKey, TrieNode>();
  /** Roots of uncommitted heads that setHead/getAt/commit may name, in the order they were made. */
  readonly #pending = new Map<HashKey, TrieNode>();
  /** Hashes of stored nodes that changes since the last commit replaced: dropped from the cache at commit. */
  #superseded: HashKey[] = [];
  readonly #onReplace = (node: TrieNode): void => {
    if (node.hash !== undefined) this.#superseded.push(node.hash);
  };
  #head: TrieNode | null = null;
  #committed: TrieNode | null = null;
  #committedRoot: HashKey = BLANK_ROOT_KEY;
  readonly #resolve = (ref: NodeRef): TrieNode => (typeof ref === 'string' ? this.#load(ref) : ref);

  private constructor(kv: KvStore, name: StateName, opts: StateTrieOptions) {
    this.#kv = kv;
    this.name = name;
    this.#nodeBucket = `state/${name}`;
    this.#headBucket = `state-head/${name}`;
    this.#cache = new NodeCache(opts.nodeCacheSize);
  }

  /**
   * Opens the state `name` of a store: the committed root is the one last committed (the empty
   * trie when none), and the head starts there. Throws INVALID_STATE_NAME, STATE_NODE_MISSING
   * when the committed root's node is absent, STATE_NODE_MALFORMED for a damaged root record.
   */
  static async open(options: StateTrieOpenOptions, modules: StateTrieModules): Promise<StateTrie> {
    const { name, ...opts } = options;
    const { kv } = modules;
    if (!STATE_NAMES.includes(name) && !PLUGIN_STATE_NAME.test(String(name)))
      throw new StorageError(StorageErrorCode.INVALID_STATE_NAME, { name: String(name) });
    const cacheSize = opts.nodeCacheSize ?? defaultStateTrieOptions.nodeCacheSize;
    if (!Number.isSafeInteger(cacheSize) || cacheSize < 2) {
      throw new StorageError(StorageErrorCode.INVALID_OPTION, { option: 'nodeCacheSize', value: cacheSize });
    }
    const trie = new StateTrie(kv, name, { nodeCacheSize: cacheSize });
    const head = await kv.get(trie.#headBucket, HEAD_KEY);
    if (head !== undefined) {
      if (head.length !== 32) {
        throw new StorageError(StorageErrorCode.STATE_NODE_MALFORMED, { state: name, reason: `committed root record of ${head.length} bytes` });
      }
      const root = bytesToKey(head);
      trie.#committed = root === BLANK_ROOT_KEY ? null : trie.#load(root);
      trie.#committedRoot = root;
    }
    trie.#head = trie.#committed;
    return trie;
  }

  /** Root of the uncommitted head (hashes the nodes changed since it was last asked for). */
  get headRoot(): Uint8Array {
    const root = rootHashOf(this.#head);
    if (this.#head !== null && !this.#pending.has(root)) this.#pending.set(root, this.#head);
    return keyToBytes(root);
  }

  /** Root of the committed state. */
  get committedRoot(): Uint8Array {
    return keyToBytes(this.#committedRoot);
  }

  /** The state value of `key` (formats.md 8) on the head, or on the committed root with `committed: true`. */
  get(key: StateKey, opts: { committed?: boolean } = {}): Uint8Array | undefined {
    return this.#read(opts.committed === true ? this.#committed : this.#head, key);
  }

  /** The state value of `key` under any retained root (committed once, or an uncommitted head). */
  getAt(root: Uint8Array, key: StateKey): Uint8Array | undefined {
    return this.#read(this.#rootNode(root), key);
  }

  /** True when `root` is the empty trie, a stored root, or an uncommitted head still held. */
  hasRoot(root: Uint8Array): boolean {
    const k = rootKeyOf(root);
    if (k === BLANK_ROOT_KEY || this.#pending.has(k)) return true;
    try {
      this.#load(k);
      return true;
    } catch (e) {
      if (e instanceof StorageError && e.code === StorageErrorCode.STATE_NODE_MISSING) return false;
      throw e;
    }
  }

  /** Sets `key` to the state value `value` on the uncommitted head. */
  set(key: StateKey, value: Uint8Array): void {
    const path = bytesToNibbles(stateKeyBytes(key));
    const stored = wrapStateValue(value);
    this.#head = trieInsert(this.#head, path, 0, stored, this.#resolve, this.#onReplace);
  }

  /** Removes `key` from the uncommitted head (nothing happens when it is absent). */
  remove(key: StateKey): void {
    const path = bytesToNibbles(stateKeyBytes(key));
    this.#head = trieRemove(this.#head, path, 0, this.#resolve, this.#onReplace);
  }

  /** Moves the head to `root`: an uncommitted head made earlier, or any stored root. */
  setHead(root: Uint8Array): void {
    this.#head = this.#rootNode(root);
  }

  /** Drops every uncommitted change: the head goes back to the committed root. */
  revertToCommitted(): void {
    this.#head = this.#committed;
    this.#pending.clear();
    this.#superseded = [];
  }

  /**
   * Makes `root` (default: the head) the committed root. Its new nodes and the committed root go
   * into `batch` when one is given (so the ledger, the state and the indexes commit in one atomic
   * write; the caller writes it before the next commit of this state), else into a batch of its
   * own that is written before the returned promise resolves. Uncommitted heads made before `root`
   * are forgotten; the ones made after it stay available to setHead.
   */
  commit(root?: Uint8Array, batch?: WriteBatch): void | Promise<void> {
    const node = root === undefined ? this.#head : this.#rootNode(root);
    const rootHash = rootHashOf(node); // encodes and hashes every new node below
    const b = batch ?? this.#kv.batch();
    const written = new Map<HashKey, TrieNode>();
    if (node !== null) {
      const rootWasStored = node.stored;
      const fresh: TrieNode[] = [];
      collectUnstored(node, fresh);
      for (const n of fresh) {
        n.stored = true;
        if (n === node || encodeNode(n).length >= 32) {
          const h = nodeHash(n);
          b.put(this.#nodeBucket, nodeStoreKey(h), encodeNode(n));
          written.set(h, n);
        }
      }
      // a root already stored may so far have been stored only inside its parent
      if (rootWasStored && encodeNode(node).length < 32) b.put(this.#nodeBucket, nodeStoreKey(rootHash), encodeNode(node));
      for (const n of fresh) stripStoredChildren(n);
    }
    for (const [k, n] of this.#retry) {
      b.put(this.#nodeBucket, nodeStoreKey(k), encodeNode(n));
      written.set(k, n);
    }
    this.#retry.clear();
    b.put(this.#headBucket, HEAD_KEY, keyToBytes(rootHash));
    // replaced versions are cold from now on: keep the cache for the live ones
    for (const h of this.#superseded) this.#cache.delete(h);
    this.#superseded = [];
    for (const [h, n] of written) {
      this.#cache.set(h, n);
      this.#unflushed.set(h, n);
    }
    b.afterWrite((error) => {
      if (error !== undefined) for (const [h, n] of written) this.#retry.set(h, n);
      for (const h of written.keys()) this.#unflushed.delete(h);
    });
    this.#committed = node;
    this.#committedRoot = rootHash;
    this.#forgetPendingUpTo(rootHash);
    if (batch === undefined) return b.write();
  }

  /** Proof of `key` (present or absent) under `root` (default: the committed root), formats.md 7.4. */
  generateProof(key: StateKey, root?: Uint8Array): Uint8Array {
    const node = root === undefined ? this.#committed : this.#rootNode(root);
    const path = bytesToNibbles(stateKeyBytes(key));
    return encodeProof(proofPath(node, path, this.#resolve), node);
  }

  /** Proof of every pair whose key starts with `prefix` under `root` (default: committed), formats.md 7.7. */
  generatePrefixProof(prefix: StateKey, root?: Uint8Array): Uint8Array {
    const node = root === undefined ? this.#committed : this.#rootNode(root);
    const path = bytesToNibbles(stateKeyBytes(prefix, 'state key prefix'));
    return encodeProof(prefixProofNodes(node, path, this.#resolve), node);
  }

  /**
   * Calls `fn` with every (key, state value) pair under `root` (default: the head) in ascending key
   * order. Meant for exports, rebuild checks and tests: it reads the whole trie.
   */
  forEach(fn: (key: Uint8Array, value: Uint8Array) => void, root?: Uint8Array): void {
    const node = root === undefined ? this.#head : this.#rootNode(root);
    trieForEach(node, new Uint8Array(0), this.#resolve, (nibbles, stored) => {
      fn(nibblesToBytes(nibbles), copyBytes(this.#unwrap(stored)));
    });
  }

  #read(root: TrieNode | null, key: StateKey): Uint8Array | undefined {
    const stored = trieGet(root, bytesToNibbles(stateKeyBytes(key)), this.#resolve);
    return stored === undefined ? undefined : copyBytes(this.#unwrap(stored));
  }

  #unwrap(stored: Uint8Array): Uint8Array {
    const v = unwrapStateValue(stored);
    if (v === undefined) throw new StorageError(StorageErrorCode.STATE_NODE_MALFORMED, { state: this.name, reason: 'stored value is not RLP([v])' });
    return v;
  }

  /** The root node of `root`: the empty trie, an uncommitted head still held, or a stored root. */
  #rootNode(root: Uint8Array): TrieNode | null {
    const k = rootKeyOf(root);
    if (k === BLANK_ROOT_KEY) return null;
    const pending = this.#pending.get(k);
    if (pending !== undefined) return pending;
    try {
      return this.#load(k);
    } catch (e) {
      if (e instanceof StorageError && e.code === StorageErrorCode.STATE_NODE_MISSING) {
        throw new StorageError(StorageErrorCode.UNKNOWN_STATE_ROOT, { state: this.name, root: keyToHex(k) });
      }
      throw e;
    }
  }

  /** A stored node by hash: from the cache, the nodes not yet written, or the store. */
  #load(k: HashKey): TrieNode {
    const hit = this.#cache.get(k);
    if (hit !== undefined) return hit;
    const unflushed = this.#unflushed.get(k);
    if (unflushed !== undefined) {
      this.#cache.set(k, unflushed);
      return unflushed;
    }
    const failed = this.#retry.get(k);
    if (failed !== undefined) return failed;
    const bytes = this.#kv.getSync(this.#nodeBucket, nodeStoreKey(k));
    if (bytes === undefined) throw new StorageError(StorageErrorCode.STATE_NODE_MISSING, { state: this.name, hash: keyToHex(k) });
    let node: TrieNode | null;
    try {
      node = decodeNode(bytes);
    } catch (e) {
      throw new StorageError(
        StorageErrorCode.STATE_NODE_MALFORMED,
        { state: this.name, hash: keyToHex(k), reason: (e as StorageError).code ?? String(e) },
        undefined,
        { cause: e },
      );
    }
    if (node === null)
      throw new StorageError(StorageErrorCode.STATE_NODE_MALFORMED, { state: this.name, hash: keyToHex(k), reason: 'blank node stored by hash' });
    node.hash = k;
    this.#cache.set(k, node);
    return node;
  }

  #forgetPendingUpTo(key: HashKey): void {
    if (!this.#pending.has(key)) return;
    for (const k of this.#pending.keys()) {
      this.#pending.delete(k);
      if (k === key) break;
    }
  }
}

/** Every node below `node` (included) not yet stored, children before parents. */
function collectUnstored(node: TrieNode, out: TrieNode[]): void {
  if (node.stored) return;
  if (node instanceof ExtensionNode) {
    if (typeof node.child !== 'string') collectUnstored(node.child, out);
  } else if (node instanceof BranchNode) {
    for (const c of node.children) if (c !== null && typeof c !== 'string') collectUnstored(c, out);
  }
  out.push(node);
}

/**
 * Replaces the children of a node just stored that are referenced by hash with their hash, so that
 * stored nodes do not keep whole subtries alive in memory; they load again through the cache.
 */
function stripStoredChildren(node: TrieNode): void {
  if (node instanceof LeafNode) return;
  if (node instanceof ExtensionNode) {
    if (typeof node.child !== 'string' && isHashReferenced(node.child)) node.child = nodeHash(node.child);
    return;
  }
  const ch = node.children;
  for (let i = 0; i < 16; i++) {
    const c = ch[i];
    if (c !== null && typeof c !== 'string' && isHashReferenced(c)) ch[i] = nodeHash(c);
  }
}
