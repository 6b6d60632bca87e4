/**
 * State proofs (formats.md 7.4, 7.5, 7.7): their encoding, and the pure verifiers a light client
 * runs against a state root it trusts (one covered by a BLS multi-signature).
 *
 * A proof is the RLP list of the nodes met on a lookup path (the root last). The verifier indexes
 * them by SHA3-256 of their RLP and walks from the root: a missing hash node fails the proof, a
 * leaf counts only on an EXACT match of the remaining path, and a walk that ends on a blank child,
 * a diverging extension or another leaf proves absence.
 */
import { BoundedFifo, b64decode } from '@quire/common';
import { ProofError, StorageError, StorageErrorCode, type StorageErrorData } from '../errors.js';
import {
  BLANK_NODE_RLP,
  BranchNode,
  ExtensionNode,
  LeafNode,
  bytesToKey,
  decodeNode,
  encodeNode,
  keyToHex,
  sha3Key,
  type HashKey,
  type NodeRef,
  type TrieNode,
} from './node.js';
import { bytesToNibbles, concatNibbles, nibblesToBytes, startsWithAt } from './nibbles.js';
import { rlpEncodeListOfEncoded, rlpListItems } from './rlp.js';
import { copyBytes, stateKeyBytes, unwrapStateValue, type StateKey } from './values.js';

/** RLP list of the given nodes followed by the root node (the blank root encodes as the empty string). */
export function encodeProof(path: readonly TrieNode[], root: TrieNode | null): Uint8Array {
  const items: Uint8Array[] = [];
  const seen = new Set<string>();
  for (const n of path) {
    const enc = encodeNode(n);
    const id = n.hash ?? sha3Key(enc);
    if (seen.has(id)) continue;
    seen.add(id);
    items.push(enc);
  }
  items.push(root === null ? BLANK_NODE_RLP : encodeNode(root));
  return rlpEncodeListOfEncoded(items);
}

function hex(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');
}

function proofError(data: StorageErrorData['PROOF_MALFORMED'], cause?: unknown): ProofError {
  return new ProofError(StorageErrorCode.PROOF_MALFORMED, data, undefined, cause === undefined ? undefined : { cause });
}

/** Proof nodes by hash; the blank node maps to null. */
type ProofDb = Map<HashKey, TrieNode | null>;

function proofBytes(proof: Uint8Array | string): Uint8Array {
  if (typeof proof === 'string') {
    try {
      return b64decode(proof);
    } catch (e) {
      throw proofError({ what: 'base64' }, e);
    }
  }
  if (proof instanceof Uint8Array) return proof;
  throw proofError({ what: 'proof', type: proof === null ? 'null' : typeof proof });
}

/** Nodes a ProofNodeCache keeps by default (the upper levels of a trie and the paths read most recently). */
export const PROOF_NODE_CACHE_ENTRIES = 1024;
/**
 * Bytes of node RLP a ProofNodeCache keeps by default: a node of an honest proof is at most a branch of 17 hashes or a
 * leaf with one state value, but a proof may carry any node (up to a whole reply), cached before the walk sees whether
 * it is on the path: without a byte bound, 1,024 such nodes of a hostile node's replies would stay in the SDK's memory.
 */
export const PROOF_NODE_CACHE_BYTES = 1024 * 1024;

/**
 * Proof nodes already decoded, by the SHA3-256 of their RLP (which the verifier computes for every node anyway): the
 * proofs of the keys read under one root share their upper nodes, and a key read again sends its whole path again.
 * A hash names one encoding, so a node found here is the node its bytes decode to; a node that does not decode is
 * never kept (the proof fails each time). Bounded in nodes and in their bytes: the node used least recently goes
 * first, and a node larger than the byte bound is decoded without being kept.
 */
export class ProofNodeCache {
  private readonly nodes: BoundedFifo<HashKey, { node: TrieNode | null; bytes: number }>;
  private heldBytes = 0;

  constructor(
    private readonly maxEntries = PROOF_NODE_CACHE_ENTRIES,
    private readonly maxBytes = PROOF_NODE_CACHE_BYTES,
  ) {
    this.nodes = new BoundedFifo(maxEntries);
  }

  /** The node of `item` (its RLP, whose hash is `hash`), decoded once. Throws as decodeNode does. */
  node(hash: HashKey, item: Uint8Array): TrieNode | null {
    const hit = this.nodes.get(hash);
    if (hit !== undefined) {
      this.nodes.setNewest(hash, hit);
      return hit.node;
    }
    // decoded from a copy (copyBytes: a Buffer's slice() is a view): the node must not keep the proof it came in alive
    // nor change when the caller reuses the proof's bytes
    const node = decodeNode(copyBytes(item));
    const bytes = item.byteLength;
    if (bytes > this.maxBytes) return node;
    // the least recently used go until the node fits in both bounds (it fits alone)
    while (this.nodes.size >= this.maxEntries || this.heldBytes + bytes > this.maxBytes) {
      const oldest = this.nodes.shift();
      if (oldest === undefined) break;
      this.heldBytes -= oldest[1].bytes;
    }
    this.nodes.set(hash, { node, bytes });
    this.heldBytes += bytes;
    return node;
  }

  get size(): number {
    return this.nodes.size;
  }

  /** The bytes of RLP of the nodes kept (at most the byte bound). */
  get bytes(): number {
    return this.heldBytes;
  }
}

function decodeProof(proof: Uint8Array | string, cache?: ProofNodeCache): ProofDb {
  const bytes = proofBytes(proof);
  let items: Uint8Array[];
  try {
    items = rlpListItems(bytes);
  } catch (e) {
    throw proofError({ what: 'rlp', reason: (e as StorageError).code ?? String(e) }, e);
  }
  const db: ProofDb = new Map();
  items.forEach((item, index) => {
    const hash = sha3Key(item);
    let node: TrieNode | null;
    try {
      node = cache === undefined ? decodeNode(item) : cache.node(hash, item);
    } catch (e) {
      throw proofError({ what: 'node', index, reason: (e as StorageError).code ?? String(e) }, e);
    }
    db.set(hash, node);
  });
  return db;
}

function checkRoot(rootHash: Uint8Array): void {
  if (!(rootHash instanceof Uint8Array) || rootHash.length !== 32) {
    throw proofError({ what: 'root', length: rootHash instanceof Uint8Array ? rootHash.length : -1 });
  }
}

function rootNode(db: ProofDb, rootHash: Uint8Array): TrieNode | null {
  const root = db.get(bytesToKey(rootHash));
  if (root === undefined) throw new ProofError(StorageErrorCode.PROOF_ROOT_MISMATCH, { root: hex(rootHash) });
  return root;
}

/** The node a child reference points to inside a proof (null = blank); a hash the proof lacks fails. */
function follow(db: ProofDb, ref: NodeRef | null): TrieNode | null {
  if (ref === null) return null;
  if (typeof ref !== 'string') return ref;
  const node = db.get(ref);
  if (node === undefined) throw new ProofError(StorageErrorCode.PROOF_INCOMPLETE, { hash: keyToHex(ref) });
  return node;
}

function unwrap(stored: Uint8Array, key: Uint8Array): Uint8Array {
  const v = unwrapStateValue(stored);
  if (v === undefined) throw proofError({ what: 'value', key: hex(key) });
  return copyBytes(v);
}

/**
 * Verifies a single-key proof (formats.md 7.5) against a trusted state root. Returns the state
 * value v of `key` (the bytes of formats.md 8, not the RLP wrapper), or null when the proof shows
 * that the key is absent. The proof is the RLP bytes or their base64 (`proof_nodes`). Throws
 * ProofError: PROOF_MALFORMED (bad base64, RLP, node, stored value or root length),
 * PROOF_ROOT_MISMATCH (no proof node hashes to the root), PROOF_INCOMPLETE (the walk needs a node
 * the proof lacks). `cache`: nodes decoded by earlier proofs, reused by hash (the answer is the same).
 */
export function verifyTrieProofAt(rootHash: Uint8Array, key: StateKey, proof: Uint8Array | string, cache?: ProofNodeCache): Uint8Array | null {
  checkRoot(rootHash);
  const keyBytes = stateKeyBytes(key);
  const db = decodeProof(proof, cache);
  const path = bytesToNibbles(keyBytes);
  let node = rootNode(db, rootHash);
  let pos = 0;
  while (node !== null) {
    if (node instanceof BranchNode) {
      if (pos === path.length) return node.value === null ? null : unwrap(node.value, keyBytes);
      node = follow(db, node.children[path[pos]]);
      pos++;
    } else if (node instanceof LeafNode) {
      // EXACT match only: a leaf whose path merely starts with the rest of the key proves nothing
      const rest = path.length - pos;
      return rest === node.path.length && startsWithAt(path, pos, node.path) ? unwrap(node.value, keyBytes) : null;
    } else {
      if (!startsWithAt(path, pos, node.path)) return null;
      pos += node.path.length;
      node = follow(db, node.child);
    }
  }
  return null;
}

/** One pair proven by a prefix proof. */
export interface ProvenPair {
  key: Uint8Array;
  value: Uint8Array;
}

/**
 * Verifies a prefix proof (formats.md 7.7) and returns the exact set of (key, state value) pairs
 * whose key starts with `prefix`, in ascending key order. The subtrie below the prefix must be
 * complete: any node it references by hash that the proof lacks fails (PROOF_INCOMPLETE). Other
 * failures as for {@link verifyTrieProofAt}.
 */
export function verifyPrefixProofPairs(rootHash: Uint8Array, prefix: StateKey, proof: Uint8Array | string): ProvenPair[] {
  checkRoot(rootHash);
  const prefixBytes = stateKeyBytes(prefix, 'state key prefix');
  const db = decodeProof(proof);
  const path = bytesToNibbles(prefixBytes);
  let node = rootNode(db, rootHash);
  let pos = 0; // nibbles of `path` consumed by the nodes above `node`
  while (node !== null && pos < path.length) {
    if (node instanceof BranchNode) {
      node = follow(db, node.children[path[pos]]);
      pos++;
    } else {
      const rest = path.subarray(pos);
      if (startsWithAt(node.path, 0, rest)) break; // the prefix ends inside this node's path
      if (node instanceof LeafNode || !startsWithAt(path, pos, node.path)) return [];
      pos += node.path.length;
      node = follow(db, node.child);
    }
  }
  const out: ProvenPair[] = [];
  if (node !== null) collectPairs(db, node, path.subarray(0, pos), out);
  return out;
}

function collectPairs(db: ProofDb, node: TrieNode, above: Uint8Array, out: ProvenPair[]): void {
  const emit = (nibbles: Uint8Array, stored: Uint8Array): void => {
    let key: Uint8Array;
    try {
      key = nibblesToBytes(nibbles);
    } catch (e) {
      throw proofError({ what: 'key', nibbles: nibbles.length }, e);
    }
    out.push({ key, value: unwrap(stored, key) });
  };
  if (node instanceof LeafNode) {
    emit(concatNibbles(above, node.path), node.value);
  } else if (node instanceof ExtensionNode) {
    const child = follow(db, node.child);
    if (child !== null) collectPairs(db, child, concatNibbles(above, node.path), out);
  } else {
    if (node.value !== null) emit(above, node.value);
    for (let i = 0; i < 16; i++) {
      const child = follow(db, node.children[i]);
      if (child !== null) collectPairs(db, child, concatNibbles(above, Uint8Array.of(i)), out);
    }
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * {@link verifyPrefixProofPairs} as a Map from key to state value. Keys are rendered as UTF-8
 * strings (the state keys of formats.md 8 that prefix queries use), or as lowercase hex with
 * `keyEncoding: 'hex'`; a proven key that is not UTF-8 under the default fails with
 * PROOF_KEY_NOT_UTF8.
 */
export function verifyPrefixProof(
  rootHash: Uint8Array,
  prefix: StateKey,
  proof: Uint8Array | string,
  opts: { keyEncoding?: 'utf8' | 'hex' } = {},
): Map<string, Uint8Array> {
  const pairs = verifyPrefixProofPairs(rootHash, prefix, proof);
  const out = new Map<string, Uint8Array>();
  for (const { key, value } of pairs) {
    let k: string;
    if (opts.keyEncoding === 'hex') {
      k = hex(key);
    } else {
      try {
        k = utf8.decode(key);
      } catch (e) {
        throw new ProofError(StorageErrorCode.PROOF_KEY_NOT_UTF8, { key: hex(key) }, undefined, { cause: e });
      }
    }
    out.set(k, value);
  }
  return out;
}
