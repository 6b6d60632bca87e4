/**
 * The catch-up form of txns (formats.md 4.5, 12.1). The ledger keeps only the SHA-256 of an ATTRIB's
 * `raw` / `enc`; the original lives in the attribute store, which cannot be rebuilt from the ledger.
 * So, as Indy does, a seeder ships ordered ATTRIB txns with the original restored, and the receiver
 * hashes it again to get the stored txn (whose leaf hash the catch-up proof checks) and keeps the
 * original in its own attribute store.
 *
 * Which txns are transformed: ATTRIB txns that were ordered, i.e. have a numeric
 * `txnMetadata.txnTime` (ordering always sets it, formats.md 4.2). Genesis txns have none and are
 * stored exactly as the genesis file gave them (formats.md 4.4), so a genesis ATTRIB carrying its
 * original in the ledger travels and is stored unchanged. The rule is the same on both sides, so a
 * txn is transformed by the receiver exactly when the seeder restored it.
 */
import { canonicalJson, isPlainObject, isSha256Hex, LedgerId, MsgpackEncoded, parseJson, sha256Hex } from '@quire/common';
import type { Txn } from '../handler.js';

const ATTRIB = '100';
const DOMAIN = LedgerId.DOMAIN;

/** The ATTRIB selector holding an original or its hash, when `txn` is an ordered ATTRIB with one. */
function attribSelector(ledgerId: number, txn: unknown): { data: Record<string, unknown>; kind: 'raw' | 'enc'; value: string } | undefined {
  if (ledgerId !== DOMAIN || !isPlainObject(txn)) return undefined;
  const body = txn.txn;
  const meta = txn.txnMetadata;
  if (!isPlainObject(body) || body.type !== ATTRIB || !isPlainObject(meta) || typeof meta.txnTime !== 'number') return undefined;
  const data = body.data;
  if (!isPlainObject(data)) return undefined;
  for (const kind of ['raw', 'enc'] as const) {
    const value = data[kind];
    if (typeof value === 'string' && value !== '') return { data, kind, value };
  }
  return undefined;
}

/** `txn` with `txn.data[kind]` replaced; the caller's object is left alone. */
function withData(txn: Txn, data: Record<string, unknown>, kind: 'raw' | 'enc', value: string): Txn {
  return { ...txn, txn: { ...txn.txn, data: { ...data, [kind]: value } } };
}

/**
 * The txn a seeder sends for a stored txn of ledger `ledgerId`: an ordered ATTRIB with its `raw` /
 * `enc` original restored from the attribute store (`original(hash)`); any other txn as it is. An
 * ATTRIB whose original the store lacks goes as stored (a receiver cannot apply it and refuses it).
 */
export function catchupFormOf(ledgerId: number, txn: Txn, original: (hash: string) => string | undefined): Txn {
  const sel = attribSelector(ledgerId, txn);
  if (sel === undefined || !isSha256Hex(sel.value)) return txn;
  const text = original(sel.value);
  return text === undefined ? txn : withData(txn, sel.data, sel.kind, text);
}

/** MP of the key "type" followed by the value "100" (ATTRIB): how an ATTRIB's `txn.type` stands in MP(txn). */
const ATTRIB_TYPE_MP = Uint8Array.from([0xa4, 0x74, 0x79, 0x70, 0x65, 0xa3, 0x31, 0x30, 0x30]);

/** Whether `bytes` hold ATTRIB_TYPE_MP anywhere (false: the txn they encode is no ATTRIB). */
function holdsAttribType(bytes: Uint8Array): boolean {
  const first = ATTRIB_TYPE_MP[0];
  const n = ATTRIB_TYPE_MP.length;
  for (let i = bytes.indexOf(first); i >= 0 && i + n <= bytes.length; i = bytes.indexOf(first, i + 1)) {
    let j = 1;
    while (j < n && bytes[i + j] === ATTRIB_TYPE_MP[j]) j++;
    if (j === n) return true;
  }
  return false;
}

/**
 * The catch-up form of the txn stored as `bytes` (MP(txn)), without decoding it when it is the stored txn: the
 * stored bytes, given as MsgpackEncoded, for a txn that cannot be an ATTRIB (its bytes do not hold the key "type"
 * with the value "100", as every ATTRIB's do) or is not in the domain ledger; otherwise `catchupFormOf` the txn
 * `decode()` gives. Both encode to MP(catchupFormOf(txn)).
 */
export function catchupFormOfStored(
  ledgerId: number,
  bytes: Uint8Array,
  decode: () => Txn,
  original: (hash: string) => string | undefined,
): Txn | MsgpackEncoded {
  if (ledgerId !== DOMAIN || !holdsAttribType(bytes)) return new MsgpackEncoded(bytes);
  return catchupFormOf(ledgerId, decode(), original);
}

/** What the receiver stores for a caught-up txn: the ledger form, and the attribute original it carried. */
export interface StoredFormOfCaughtUp {
  txn: Txn;
  /** Attribute-store entry (hex SHA-256 -> original) when the txn carried an ATTRIB original. */
  attribute?: { hash: string; original: string };
}

/**
 * The ledger form of a txn received in catch-up (formats.md 4.5): an ordered ATTRIB's `raw` (JSON
 * object text) becomes the hex SHA-256 of CJ(parsed raw) and its `enc` the hex SHA-256 of the
 * string, the original going to the attribute store (raw as CJ, as ordering stores it). Anything
 * else, including a `raw` that is not a JSON object (it cannot be an original), is kept as received:
 * the proof check against the target decides. The caller's object is left alone.
 */
export function storedFormOfCaughtUp(ledgerId: number, txn: unknown): StoredFormOfCaughtUp {
  const sel = attribSelector(ledgerId, txn);
  if (sel === undefined) return { txn: txn as Txn };
  let original: string;
  if (sel.kind === 'raw') {
    try {
      const parsed = parseJson(sel.value);
      if (!isPlainObject(parsed)) return { txn: txn as Txn };
      original = canonicalJson(parsed);
    } catch {
      return { txn: txn as Txn }; // not JSON, or nothing CJ can write: not an original
    }
  } else original = sel.value;
  const hash = sha256Hex(original);
  return { txn: withData(txn as Txn, sel.data, sel.kind, hash), attribute: { hash, original } };
}
