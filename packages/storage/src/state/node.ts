/**
 * Trie nodes (formats.md 7.2): leaf, extension and 17-item branch, with the blank node as `null`.
 *
 * Nodes are immutable values (changes make new nodes), so each one caches its RLP encoding and its
 * hash the first time they are needed and never recomputes them. A child is held either as a node
 * object or as the 32-byte hash of a stored node, resolved on demand through the node store.
 */
import { createHash } from 'node:crypto';
import { StorageError, StorageErrorCode } from '../errors.js';
import { hpDecode, hpEncode } from './nibbles.js';
import { rlpBytesSize, rlpListHeaderSize, rlpReadHeader, rlpWriteBytes, rlpWriteListHeader } from './rlp.js';

/** A reference to a child: the node itself, or the 32-byte SHA3-256 hash of a stored node. */
export type NodeRef = TrieNode | Uint8Array;

/** SHA3-256 (FIPS 202). Keccak-256 is never used. */
export function sha3(data: Uint8Array): Uint8Array {
  const b = createHash('sha3-256').update(data).digest();
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

/** RLP of the blank node (the empty byte string). */
export const BLANK_NODE_RLP: Uint8Array = Uint8Array.of(0x80);

/** Root of the empty trie: SHA3-256(0x80). */
export const BLANK_ROOT: Uint8Array = sha3(BLANK_NODE_RLP);

abstract class NodeBase {
  /** Cached RLP encoding. */
  enc: Uint8Array | undefined = undefined;
  /** Cached SHA3-256 of the encoding (computed for nodes referenced by hash and for roots). */
  hash: Uint8Array | undefined = undefined;
  /** True once the node is in the node store, or is embedded in a stored node. */
  stored = false;
}

/** `[HP(path, leaf), value]`; `value` is the stored value RLP([v]). */
export class LeafNode extends NodeBase {
  constructor(
    readonly path: Uint8Array,
    readonly value: Uint8Array,
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
    readonly value: Uint8Array | null,
  ) {
    super();
  }
}

export type TrieNode = LeafNode | ExtensionNode | BranchNode;

/** A fresh array of 16 empty child slots. */
export function emptyChildren(): (NodeRef | null)[] {
  return [null, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null];
}

const EMPTY = 0x80;

/** Encoded size of a child reference inside its parent. */
function refSize(ref: NodeRef | null): number {
  if (ref === null) return 1;
  if (ref instanceof Uint8Array) return 33;
  const e = encodeNode(ref);
  return e.length < 32 ? e.length : 33;
}

function writeRef(out: Uint8Array, pos: number, ref: NodeRef | null): number {
  if (ref === null) {
    out[pos] = EMPTY;
    return pos + 1;
  }
  let h: Uint8Array;
  if (ref instanceof Uint8Array) {
    h = ref;
  } else {
    const e = ref.enc!; // encoded by refSize just before
    if (e.length < 32) {
      out.set(e, pos);
      return pos + e.length;
    }
    h = nodeHash(ref);
  }
  out[pos] = 0xa0;
  out.set(h, pos + 1);
  return pos + 33;
}

/** RLP of a node, computed once and cached. */
export function encodeNode(node: TrieNode): Uint8Array {
  if (node.enc !== undefined) return node.enc;
  let out: Uint8Array;
  if (node instanceof LeafNode || node instanceof ExtensionNode) {
    const hp = hpEncode(node.path, node instanceof LeafNode);
    const second = node instanceof LeafNode ? rlpBytesSize(node.value) : refSize(node.child);
    const payload = rlpBytesSize(hp) + second;
    out = new Uint8Array(rlpListHeaderSize(payload) + payload);
    let pos = rlpWriteListHeader(out, 0, payload);
    pos = rlpWriteBytes(out, pos, hp);
    if (node instanceof LeafNode) rlpWriteBytes(out, pos, node.value);
    else writeRef(out, pos, node.child);
  } else {
    let payload = node.value === null ? 1 : rlpBytesSize(node.value);
    for (let i = 0; i < 16; i++) payload += refSize(node.children[i]!);
    out = new Uint8Array(rlpListHeaderSize(payload) + payload);
    let pos = rlpWriteListHeader(out, 0, payload);
    for (let i = 0; i < 16; i++) pos = writeRef(out, pos, node.children[i]!);
    if (node.value === null) out[pos] = EMPTY;
    else rlpWriteBytes(out, pos, node.value);
  }
  node.enc = out;
  return out;
}

/** SHA3-256 of the node's RLP, computed once and cached. */
export function nodeHash(node: TrieNode): Uint8Array {
  if (node.hash === undefined) node.hash = sha3(encodeNode(node));
  return node.hash;
}

/** Hash of a trie whose root node is `node` (null = blank). */
export function rootHashOf(node: TrieNode | null): Uint8Array {
  return node === null ? BLANK_ROOT : nodeHash(node);
}

/** True when the child is referenced by hash in its parent (its RLP is 32 bytes or longer). */
export function isHashReferenced(ref: NodeRef): boolean {
  return ref instanceof Uint8Array || encodeNode(ref).length >= 32;
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
  if (len === 32) return { ref: bytes.slice(h.payloadStart, h.end), end: h.end };
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
      node = new LeafNode(nibbles, bytes.slice(v.payloadStart, v.end));
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
    node = new BranchNode(children, v.end === v.payloadStart ? null : bytes.slice(v.payloadStart, v.end));
  } else {
    throw malformed(`list of ${count} items`);
  }
  node.enc = enc;
  return node;
}

/**
 * Decodes the RLP of one node (the blank node gives null). The result is marked as stored with its
 * encoding cached; byte strings are copied out of `bytes`. Throws STATE_NODE_MALFORMED or an RLP
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
    if (!(node.child instanceof Uint8Array)) markStored(node.child);
  } else if (node instanceof BranchNode) {
    for (const c of node.children) if (c !== null && !(c instanceof Uint8Array)) markStored(c);
  }
}

/** Byte-wise equality. */
export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
