/**
 * The canonical Merkle-Patricia trie operations (formats.md 7.2) over trie nodes: an update returns
 * the new root and leaves every node that has been encoded or stored unchanged (copy on write), so
 * every root once hashed or committed stays intact and roots share their unchanged nodes.
 * `trieInsert` changes fresh nodes ({@link isFresh}: never encoded, reachable from the uncommitted
 * head only) in place instead of copying them; `trieRemove` always copies. Insertion splits nodes
 * and deletion collapses them in the standard way, so the root depends only on the set of pairs.
 */
import { equalBytes } from '@quire/common';
import { BranchNode, ExtensionNode, LeafNode, emptyChildren, isFresh, isHashReferenced, type NodeRef, type TrieNode } from './node.js';
import { commonPrefixLength, concatNibbles, equalsRest, startsWithAt } from './nibbles.js';

/** Turns a child reference into a node, loading it by hash when needed. */
export type Resolver = (ref: NodeRef) => TrieNode;

/** Told of each stored node an update replaces (so caches can drop it). */
export type OnReplace = (node: TrieNode) => void;

function resolveOrNull(ref: NodeRef | null, resolve: Resolver): TrieNode | null {
  return ref === null ? null : resolve(ref);
}

/** Stored value under the nibble path `key`, or undefined. */
export function trieGet(root: TrieNode | null, key: Uint8Array, resolve: Resolver): Uint8Array | undefined {
  let node = root;
  let pos = 0;
  while (node !== null) {
    if (node instanceof LeafNode) return equalsRest(node.path, key, pos) ? node.value : undefined;
    if (node instanceof ExtensionNode) {
      if (!startsWithAt(key, pos, node.path)) return undefined;
      pos += node.path.length;
      node = resolve(node.child);
    } else {
      if (pos === key.length) return node.value ?? undefined;
      node = resolveOrNull(node.children[key[pos]], resolve);
      pos++;
    }
  }
  return undefined;
}

/** Branch holding two entries that diverge at path position `cp` of the new key. */
function splitInto(children: (NodeRef | null)[], key: Uint8Array, at: number, value: Uint8Array): Uint8Array | null {
  if (at === key.length) return value;
  children[key[at]] = new LeafNode(key.subarray(at + 1), value);
  return null;
}

/**
 * The trie `node` with `key` (nibbles, from `pos`) set to the stored value `value`. Returns `node`
 * itself when nothing changes, or when the change was made in place inside fresh nodes
 * ({@link isFresh}); nodes that are not fresh are never changed (copy on write).
 */
export function trieInsert(node: TrieNode | null, key: Uint8Array, pos: number, value: Uint8Array, resolve: Resolver, onReplace?: OnReplace): TrieNode {
  const updated = insertAt(node, key, pos, value, resolve, onReplace);
  if (onReplace !== undefined && node !== null && updated !== node && node.stored) onReplace(node);
  return updated;
}

function insertAt(node: TrieNode | null, key: Uint8Array, pos: number, value: Uint8Array, resolve: Resolver, onReplace: OnReplace | undefined): TrieNode {
  if (node === null) return new LeafNode(key.subarray(pos), value);
  if (node instanceof LeafNode) {
    const cp = commonPrefixLength(node.path, key, pos);
    const rest = key.length - pos;
    if (cp === node.path.length && cp === rest) {
      if (equalBytes(node.value, value)) return node;
      if (!isFresh(node)) return new LeafNode(node.path, value);
      node.value = value;
      return node;
    }
    const children = emptyChildren();
    let branchValue: Uint8Array | null = null;
    if (cp === node.path.length) branchValue = node.value;
    else children[node.path[cp]] = new LeafNode(node.path.subarray(cp + 1), node.value);
    const v = splitInto(children, key, pos + cp, value);
    if (v !== null) branchValue = v;
    const branch = new BranchNode(children, branchValue);
    return cp > 0 ? new ExtensionNode(key.slice(pos, pos + cp), branch) : branch;
  }
  if (node instanceof ExtensionNode) {
    const cp = commonPrefixLength(node.path, key, pos);
    if (cp === node.path.length) {
      const child = resolve(node.child);
      const updated = trieInsert(child, key, pos + cp, value, resolve, onReplace);
      if (updated === child) return node;
      if (!isFresh(node)) return new ExtensionNode(node.path, updated);
      node.child = updated;
      return node;
    }
    const children = emptyChildren();
    const below = node.path.length - cp - 1;
    children[node.path[cp]] = below > 0 ? new ExtensionNode(node.path.subarray(cp + 1), node.child) : node.child;
    const branch = new BranchNode(children, splitInto(children, key, pos + cp, value));
    return cp > 0 ? new ExtensionNode(node.path.subarray(0, cp), branch) : branch;
  }
  if (pos === key.length) {
    if (node.value !== null && equalBytes(node.value, value)) return node;
    if (!isFresh(node)) return new BranchNode(node.children.slice(), value);
    node.value = value;
    return node;
  }
  const idx = key[pos];
  const old = resolveOrNull(node.children[idx], resolve);
  const updated = trieInsert(old, key, pos + 1, value, resolve, onReplace);
  if (updated === old) return node; // unchanged, or changed in place below a fresh node
  if (isFresh(node)) {
    node.children[idx] = updated;
    return node;
  }
  const children = node.children.slice();
  children[idx] = updated;
  return new BranchNode(children, node.value);
}

/** `path` followed by the node `child` (the collapse of formats.md 7.2). */
function prependPath(path: Uint8Array, child: TrieNode, childRef: NodeRef, onReplace: OnReplace | undefined): TrieNode {
  if (onReplace !== undefined && child.stored && !(child instanceof BranchNode)) onReplace(child); // merged away
  if (child instanceof LeafNode) return new LeafNode(concatNibbles(path, child.path), child.value);
  if (child instanceof ExtensionNode) return new ExtensionNode(concatNibbles(path, child.path), child.child);
  return new ExtensionNode(path, childRef);
}

/** A branch after a removal: kept when it still holds two entries, else merged into what remains. */
function normalizeBranch(children: (NodeRef | null)[], value: Uint8Array | null, resolve: Resolver, onReplace: OnReplace | undefined): TrieNode | null {
  let count = 0;
  let only = -1;
  let onlyRef: NodeRef | null = null;
  for (let i = 0; i < 16; i++) {
    const c = children[i];
    if (c !== null) {
      count++;
      only = i;
      onlyRef = c;
    }
  }
  if (count + (value === null ? 0 : 1) >= 2) return new BranchNode(children, value);
  // fewer than two entries: no child (null) or exactly one, at `only`
  if (onlyRef === null) return value === null ? null : new LeafNode(new Uint8Array(0), value);
  return prependPath(Uint8Array.of(only), resolve(onlyRef), onlyRef, onReplace);
}

/** The trie `node` without `key` (nibbles, from `pos`). Returns `node` itself when the key is absent. */
export function trieRemove(node: TrieNode | null, key: Uint8Array, pos: number, resolve: Resolver, onReplace?: OnReplace): TrieNode | null {
  const updated = removeAt(node, key, pos, resolve, onReplace);
  if (onReplace !== undefined && node !== null && updated !== node && node.stored) onReplace(node);
  return updated;
}

function removeAt(node: TrieNode | null, key: Uint8Array, pos: number, resolve: Resolver, onReplace: OnReplace | undefined): TrieNode | null {
  if (node === null) return null;
  if (node instanceof LeafNode) return equalsRest(node.path, key, pos) ? null : node;
  if (node instanceof ExtensionNode) {
    if (!startsWithAt(key, pos, node.path)) return node;
    const child = resolve(node.child);
    const updated = trieRemove(child, key, pos + node.path.length, resolve, onReplace);
    if (updated === child) return node;
    if (updated === null) return null;
    return prependPath(node.path, updated, updated, onReplace);
  }
  if (pos === key.length) {
    if (node.value === null) return node;
    return normalizeBranch(node.children.slice(), null, resolve, onReplace);
  }
  const idx = key[pos];
  const ref = node.children[idx];
  if (ref === null) return node;
  const child = resolve(ref);
  const updated = trieRemove(child, key, pos + 1, resolve, onReplace);
  if (updated === child) return node;
  const children = node.children.slice();
  children[idx] = updated;
  return normalizeBranch(children, node.value, resolve, onReplace);
}

/**
 * Collects the nodes of a proof (formats.md 7.4): every node met on the lookup path of `key` that
 * is referenced by hash, top-down, not including the root (the caller appends it last).
 */
export function proofPath(root: TrieNode | null, key: Uint8Array, resolve: Resolver): TrieNode[] {
  const out: TrieNode[] = [];
  let node = root;
  let pos = 0;
  while (node !== null) {
    let ref: NodeRef | null;
    if (node instanceof LeafNode) break;
    if (node instanceof ExtensionNode) {
      if (!startsWithAt(key, pos, node.path)) break;
      pos += node.path.length;
      ref = node.child;
    } else {
      if (pos === key.length) break;
      ref = node.children[key[pos]];
      pos++;
    }
    if (ref === null) break;
    node = resolve(ref);
    if (isHashReferenced(ref)) out.push(node);
  }
  return out;
}

/**
 * Collects the nodes of a prefix proof (formats.md 7.7): the hash-referenced nodes on the path to
 * where `prefix` (nibbles) ends, then every hash-referenced node of the subtrie below it, not
 * including the root.
 */
export function prefixProofNodes(root: TrieNode | null, prefix: Uint8Array, resolve: Resolver): TrieNode[] {
  const out: TrieNode[] = [];
  let node = root;
  let pos = 0;
  while (node !== null) {
    if (pos === prefix.length) break;
    let ref: NodeRef | null;
    if (node instanceof LeafNode) {
      if (!startsWithAt(node.path, 0, prefix.subarray(pos))) node = null;
      break;
    }
    if (node instanceof ExtensionNode) {
      const rest = prefix.subarray(pos);
      if (startsWithAt(node.path, 0, rest)) break; // the prefix ends inside this extension
      if (!startsWithAt(prefix, pos, node.path)) {
        node = null;
        break;
      }
      pos += node.path.length;
      ref = node.child;
    } else {
      ref = node.children[prefix[pos]];
      pos++;
    }
    if (ref === null) {
      node = null;
      break;
    }
    node = resolve(ref);
    if (isHashReferenced(ref)) out.push(node);
  }
  if (node !== null) collectSubtrie(node, resolve, out);
  return out;
}

function collectSubtrie(node: TrieNode, resolve: Resolver, out: TrieNode[]): void {
  const visit = (ref: NodeRef | null): void => {
    if (ref === null) return;
    const child = resolve(ref);
    if (isHashReferenced(ref)) out.push(child);
    collectSubtrie(child, resolve, out);
  };
  if (node instanceof ExtensionNode) visit(node.child);
  else if (node instanceof BranchNode) for (const c of node.children) visit(c);
}

/** Calls `fn` for every (key nibbles, stored value) pair below `node`, in key order. */
export function trieForEach(node: TrieNode | null, prefix: Uint8Array, resolve: Resolver, fn: (key: Uint8Array, value: Uint8Array) => void): void {
  if (node === null) return;
  if (node instanceof LeafNode) {
    fn(concatNibbles(prefix, node.path), node.value);
  } else if (node instanceof ExtensionNode) {
    trieForEach(resolve(node.child), concatNibbles(prefix, node.path), resolve, fn);
  } else {
    if (node.value !== null) fn(prefix, node.value);
    for (let i = 0; i < 16; i++) {
      const c = node.children[i];
      if (c !== null) trieForEach(resolve(c), concatNibbles(prefix, Uint8Array.of(i)), resolve, fn);
    }
  }
}
