/**
 * Audit txn helpers (formats.md 10.1). In MP the audit maps `ledgerSize`, `ledgerRoot` and
 * `stateRoot` have integer keys; JSON (read_ledger, GET_TXN on ledger 3) writes them as "0", "1"...
 * Code that re-hashes such a txn must turn them back into integer keys.
 */
import { TxnType } from './codes.js';
import { EncodingError, EncodingErrorCode, TxnError, TxnErrorCode } from './errors.js';
import { isPlainObject } from './json-value.js';
import type { Txn } from './types/txn.js';

/** The fields of an audit txn's `data` whose keys are integer ledger ids. */
export const AUDIT_INTEGER_KEYED_FIELDS = ['ledgerSize', 'ledgerRoot', 'stateRoot'] as const;

const DECIMAL_RE = /^(?:0|[1-9][0-9]{0,14})$/;

/** An object with decimal-string keys -> Map<number, value>, keys in ascending order. A Map is returned as is. */
export function integerKeyedMap(value: unknown): Map<number, unknown> {
  if (value instanceof Map) {
    for (const k of value.keys()) {
      if (typeof k !== 'number' || !Number.isSafeInteger(k))
        throw new EncodingError(EncodingErrorCode.INVALID_MAP_KEY, { key: String(k) }, 'integer map key expected');
    }
    return value as Map<number, unknown>;
  }
  if (!isPlainObject(value)) throw new EncodingError(EncodingErrorCode.INVALID_MAP_KEY, {}, 'integer-keyed map expected');
  const keys = Object.keys(value);
  const m = new Map<number, unknown>();
  const nums = keys.map((k) => {
    if (!DECIMAL_RE.test(k)) throw new EncodingError(EncodingErrorCode.INVALID_MAP_KEY, { key: k }, `audit map key ${JSON.stringify(k)} is not a ledger id`);
    return Number(k);
  });
  const order = nums.map((n, i) => [n, keys[i]] as const).sort((a, b) => a[0] - b[0]);
  for (const [n, k] of order) m.set(n, value[k]);
  return m;
}

/**
 * Returns `txn` with the integer-keyed audit maps restored (the JSON form has string keys), so that
 * encodeMsgpack gives the bytes the ledger hashed. Non-audit txns are returned unchanged. Only the
 * objects on the path to the maps are copied.
 */
export function restoreAuditIntegerKeys<T extends Txn>(txn: T): T {
  if (!isPlainObject(txn) || !isPlainObject(txn.txn) || txn.txn.type !== TxnType.AUDIT) return txn;
  const data = txn.txn.data;
  if (!isPlainObject(data)) throw new TxnError(TxnErrorCode.INVALID_TXN, { reason: 'audit txn without data' });
  const newData: Record<string, unknown> = { ...data };
  for (const f of AUDIT_INTEGER_KEYED_FIELDS) {
    if (data[f] !== undefined) newData[f] = integerKeyedMap(data[f]);
  }
  return { ...txn, txn: { ...txn.txn, data: newData } };
}
