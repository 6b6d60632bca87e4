/**
 * Trie nodes (formats.md 7.2): leaf, extension and 17-item branch, with the blank node as `null`.
 *
 * A node that has been encoded or stored never changes: an update makes new nodes in its place
 * (copy on write), so roots share their unchanged nodes. Only a fresh node ({@link isFresh}: never
 * encoded and not stored, so reachable from the uncommitted head only) is changed in place, and only
 * by an insert: a leaf's or branch's value, an extension's child, a branch's child slot. Removals
 * always make new nodes. Each node caches its RLP encoding and its hash the first time they are
 * needed; encoding a node ends its in-place changes, so a cached encoding is never stale and is never
 * recomputed. A child is held either as a node object or as the hash of a stored node, resolved on
 * demand through the node store.
 *
 * Inside the trie a hash is a HashKey: its 32 bytes as a 32-character latin1 string. Strings live on
 * the JS heap (a Uint8Array per hash would cost a separate backing store and GC work per node) and
 * serve directly as Map keys. Bytes cross the API edges only.
 */
import * as nodeCrypto from 'node:crypto';
import { StorageError, StorageErrorCode } from '../errors.js';
import { hpDecode, hpEncode } from './nibbles.js';
import { rlpBytesSize, rlpListHeaderSize, rlpReadHeader, rlpWriteBytes, rlpWriteListHeader } from './rlp.js';

/** A 32-byte hash as a 32-character latin1 string. */
export type HashKey = string;

/** A reference to a child: the node itself, or the SHA3-256 hash of a stored node. */
export type NodeRef = TrieNode | HashKey;

// one-shot hashing (node >= 20.12) skips the Hash object; createHash elsewhere
const oneShot = (nodeCrypto as unknown as { hash?: (alg: string, data: Uint8Array, enc: 'latin1') => string }).hash;

/** SHA3-256 (FIPS 202) as a HashKey. Keccak-256 is never used. */
export const sha3Key: (data: Uint8Array) => HashKey =
  typeof oneShot === 'function' ? (data) => oneShot('sha3-256', data, 'latin1') : (data) => nodeCrypto.createHash('sha3-256').update(data).digest('binary'); // 'binary' is latin1

/** SHA3-256 (FIPS 202) as bytes. */
export function sha3(data: Uint8Array): Uint8Array {
  return keyToBytes(sha3Key(data));
}

/** The bytes of a HashKey (a plain Uint8Array). */
export function keyToBytes(key: HashKey): Uint8Array {
  const out = new Uint8Array(key.length);
  for (let i = 0; i < key.length; i++) out[i] = key.charCodeAt(i);
  return out;
}

/** The HashKey of 32 bytes (or of `bytes[start, start + 32)`). */
export function bytesToKey(bytes: Uint8Array, start = 0, end = bytes.length): HashKey {
  return Buffer.from(bytes.buffer, bytes.byteOffset + start, end - start).toString('latin1');
}

/** Lowercase hex of a HashKey, for error data and logs. */
export function keyToHex(key: HashKey): string {
  return Buffer.from(key, 'latin1').toString('hex');
}

/**
 * Uninitialised bytes from Node's shared pool (far cheaper than one ArrayBuffer per node); every
 * caller writes each byte.
 */
export function allocBytes(n: number): Uint8Array {
  return Buffer.allocUnsafe(n);
}

/** RLP of the blank node (the empty byte string). */
export const BLANK_NODE_RLP: Uint8Array = Uint8Array.of(0x80);

/** Root of the empty trie: SHA3-256(0x80). */
export const BLANK_ROOT: Uint8Array = sha3(BLANK_NODE_RLP);

/** BLANK_ROOT as a HashKey. */
export const BLANK_ROOT_KEY: HashKey = sha3Key(BLANK_NODE_RLP);

abstract class NodeBase {
  /** Cached RLP encoding. */
  enc: Uint8Array | undefined = undefined;
  /** Cached SHA3-256 of the encoding (computed for nodes referenced by hash and for roots). */
  hash: HashKey | undefined = undefined;
  /** True once the node is in the node store, or is embedded in a stored node. */
  stored = false;
}

/** `[HP(path, leaf), value]`; `value` is the stored value RLP([v]). */
export class LeafNode extends NodeBase {
  constructor(
    readonly path: Uint8Array,
    /** Changed in place only while the node is fresh (see {@link isFresh}). */
    public value: Uint8Array,
  ) {
    super();
  }
}

/** `[HP(path, extension), child]`; the child is always a branch in a canonical trie. */
export class ExtensionNode extends NodeBase {
  constructor(
    readonly path: Uint8Array,
    public child: NodeRef,
  ) {
    super();
  }
}

/** 16 children indexed by nibble plus the value of the key that ends here (null when none). */
export class BranchNode extends NodeBase {
  constructor(
    readonly children: (NodeRef | null)[],
    /** Changed in place only while the node is fresh (see {@link isFresh}). */
    public value: Uint8Array | null,
  ) {
    super();
  }
}

export type TrieNode = LeafNode | ExtensionNode | BranchNode;

/**
 * True for a node made by a change since the head was last hashed or committed: it has never been
 * encoded, so no root that anyone can name (a committed root, an uncommitted head whose root was
 * asked for, a stored node) reaches it. Hashing a root encodes every node below it, and a node
 * below an encoded node is encoded too, so a fresh node is reachable from the head only, through
 * fresh parents. Updates may therefore change a fresh node in place instead of copying it: a batch
 * of puts rebuilds its top-level branches once, not once per put.
 */
export function isFresh(node: TrieNode): boolean {
  return node.enc === undefined && !node.stored;
}

/** A fresh array of 16 empty child slots. */
export function emptyChildren(): (NodeRef | null)[] {
  return [null, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null];
}

const EMPTY = 0x80;

/** Encoded size of a child reference inside its parent. */
function refSize(ref: NodeRef | null): number {
  if (ref === null) return 1;
  if (typeof ref === 'string') return 33;
  const e = encodeNode(ref);
  return e.length < 32 ? e.length : 33;
}

function writeRef(out: Uint8Array, pos: number, ref: NodeRef | null): number {
  if (ref === null) {
    out[pos] = EMPTY;
    return pos + 1;
  }
  let h: HashKey;
  if (typeof ref === 'string') {
    h = ref;
  } else {
    const e = encodeNode(ref); // the encoding refSize cached just before
    if (e.length < 32) {
      for (let i = 0; i < e.length; i++) out[pos + i] = e[i];
      return pos + e.length;
    }
    h = nodeHash(ref);
  }
  out[pos++] = 0xa0;
  for (let i = 0; i < 32; i++) out[pos + i] = h.charCodeAt(i);
  return pos + 32;
}

/** RLP of a node, computed once and cached. */
export function encodeNode(node: TrieNode): Uint8Array {
  if (node.enc !== undefined) return node.enc;
  let out: Uint8Array;
  if (node instanceof LeafNode || node instanceof ExtensionNode) {
    const hp = hpEncode(node.path, node instanceof LeafNode);
    const second = node instanceof LeafNode ? rlpBytesSize(node.value) : refSize(node.child);
    const payload = rlpBytesSize(hp) + second;
    out = allocBytes(rlpListHeaderSize(payload) + payload);
    let pos = rlpWriteListHeader(out, 0, payload);
    pos = rlpWriteBytes(out, pos, hp);
    if (node instanceof LeafNode) rlpWriteBytes(out, pos, node.value);
    else writeRef(out, pos, node.child);
  } else {
    let payload = node.value === null ? 1 : rlpBytesSize(node.value);
    for (let i = 0; i < 16; i++) payload += refSize(node.children[i]);
    out = allocBytes(rlpListHeaderSize(payload) + payload);
    let pos = rlpWriteListHeader(out, 0, payload);
    for (let i = 0; i < 16; i++) pos = writeRef(out, pos, node.children[i]);
    if (node.value === null) out[pos] = EMPTY;
    else rlpWriteBytes(out, pos, node.value);
  }
  node.enc = out;
  return out;
}

/** SHA3-256 of the node's RLP, computed once and cached. */
export function nodeHash(node: TrieNode): HashKey {
  if (node.hash === undefined) node.hash = sha3Key(encodeNode(node));
  return node.hash;
}

/** Hash of a trie whose root node is `node` (null = blank). */
export function rootHashOf(node: TrieNode | null): HashKey {
  return node === null ? BLANK_ROOT_KEY : nodeHash(node);
}

/** True when the child is referenced by hash in its parent (its RLP is 32 bytes or longer). */
export function isHashReferenced(ref: NodeRef): boolean {
  return typeof ref === 'string' || encodeNode(ref).length >= 32;
}

function malformed(reason: string): StorageError {
  return new StorageError(StorageErrorCode.STATE_NODE_MALFORMED, { reason });
}

/** Decodes a child reference item at [start, end) of `bytes`. */
function decodeRef(bytes: Uint8Array, start: number, limit: number, depth: number): { ref: NodeRef | null; end: number } {
  const h = rlpReadHeader(bytes, start, limit);
  if (h.isList) return { ref: decodeNodeAt(bytes, start, h, depth + 1), end: h.end };
  const len = h.end - h.payloadStart;
  if (len === 0) return { ref: null, end: h.end };
  if (len === 32) return { ref: bytesToKey(bytes, h.payloadStart, h.end), end: h.end };
  throw malformed(`child reference of ${len} bytes`);
}

const MAX_INLINE_DEPTH = 32;

function decodeNodeAt(bytes: Uint8Array, start: number, h: { payloadStart: number; end: number }, depth: number): TrieNode {
  if (depth > MAX_INLINE_DEPTH) throw malformed('inline nodes nested too deep');
  const enc = bytes.subarray(start, h.end);
  // count the items first: 2 (leaf/extension) or 17 (branch)
  let count = 0;
  for (let p = h.payloadStart; p < h.end; count++) p = rlpReadHeader(bytes, p, h.end).end;
  let node: TrieNode;
  if (count === 2) {
    const first = rlpReadHeader(bytes, h.payloadStart, h.end);
    if (first.isList) throw malformed('node path is a list');
    const { nibbles, isLeaf } = hpDecode(bytes.subarray(first.payloadStart, first.end));
    if (isLeaf) {
      const v = rlpReadHeader(bytes, first.end, h.end);
      if (v.isList) throw malformed('leaf value is a list');
      node = new LeafNode(nibbles, bytes.subarray(v.payloadStart, v.end));
    } else {
      if (nibbles.length === 0) throw malformed('extension with an empty path');
      const { ref } = decodeRef(bytes, first.end, h.end, depth);
      if (ref === null) throw malformed('extension without a child');
      node = new ExtensionNode(nibbles, ref);
    }
  } else if (count === 17) {
    const children = emptyChildren();
    let p = h.payloadStart;
    for (let i = 0; i < 16; i++) {
      const r = decodeRef(bytes, p, h.end, depth);
      children[i] = r.ref;
      p = r.end;
    }
    const v = rlpReadHeader(bytes, p, h.end);
    if (v.isList) throw malformed('branch value is a list');
    node = new BranchNode(children, v.end === v.payloadStart ? null : bytes.subarray(v.payloadStart, v.end));
  } else {
    throw malformed(`list of ${count} items`);
  }
  node.enc = enc;
  return node;
}

/**
 * Decodes the RLP of one node (the blank node gives null). The result is marked as stored with its
 * encoding cached; its byte strings are views into `bytes`, which must not change afterwards. Throws STATE_NODE_MALFORMED or an RLP
 * error code.
 */
export function decodeNode(bytes: Uint8Array): TrieNode | null {
  const h = rlpReadHeader(bytes, 0, bytes.length);
  if (h.end !== bytes.length) throw new StorageError(StorageErrorCode.RLP_TRAILING_BYTES, { offset: h.end });
  if (!h.isList) {
    if (h.payloadStart === h.end) return null;
    throw malformed('a byte string where a node was expected');
  }
  const node = decodeNodeAt(bytes, 0, h, 0);
  markStored(node);
  return node;
}

/** Marks a node decoded from storage, and the nodes embedded in it, as stored. */
function markStored(node: TrieNode): void {
  node.stored = true;
  if (node instanceof ExtensionNode) {
    if (typeof node.child !== 'string') markStored(node.child);
  } else if (node instanceof BranchNode) {
    for (const c of node.children) if (c !== null && typeof c !== 'string') markStored(c);
  }
}
