/**
 * State keys and the stored form of state values (formats.md 7.2): the trie holds RLP([v]) for a
 * state value v, and reads give v back.
 */
import { StorageError, StorageErrorCode } from '../errors.js';
import { rlpBytesSize, rlpReadHeader, rlpWriteBytes, rlpWriteListHeader, rlpListHeaderSize } from './rlp.js';

/** A state key: raw bytes, or a string standing for its UTF-8 bytes. */
export type StateKey = Uint8Array | string;

const utf8 = new TextEncoder();

/** The bytes of a state key. Throws INVALID_KEY for anything but bytes or a string. */
export function stateKeyBytes(key: StateKey, what = 'state key'): Uint8Array {
  if (typeof key === 'string') return utf8.encode(key);
  if (key instanceof Uint8Array) return key;
  throw new StorageError(StorageErrorCode.INVALID_KEY, { what, type: key === null ? 'null' : typeof key });
}

/** A plain Uint8Array copy (Buffer.prototype.slice would give a view). */
export function copyBytes(b: Uint8Array): Uint8Array {
  const out = new Uint8Array(b.length);
  out.set(b);
  return out;
}

/** RLP([v]): the stored form of state value v. */
export function wrapStateValue(v: Uint8Array): Uint8Array {
  if (!(v instanceof Uint8Array)) {
    throw new StorageError(StorageErrorCode.INVALID_KEY, { what: 'state value', type: v === null ? 'null' : typeof v });
  }
  const inner = rlpBytesSize(v);
  const out = Buffer.allocUnsafe(rlpListHeaderSize(inner) + inner);
  rlpWriteBytes(out, rlpWriteListHeader(out, 0, inner), v);
  return out;
}

/**
 * The state value v of a stored value RLP([v]), as a view into `stored`. Returns undefined when
 * `stored` is not a canonical one-item list holding a byte string.
 */
export function unwrapStateValue(stored: Uint8Array): Uint8Array | undefined {
  try {
    const outer = rlpReadHeader(stored, 0, stored.length);
    if (!outer.isList || outer.end !== stored.length) return undefined;
    const inner = rlpReadHeader(stored, outer.payloadStart, outer.end);
    if (inner.isList || inner.end !== outer.end) return undefined;
    return stored.subarray(inner.payloadStart, inner.end);
  } catch {
    return undefined;
  }
}
