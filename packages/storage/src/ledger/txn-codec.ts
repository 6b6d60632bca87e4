/**
 * The txn-log value: MP(txn) (formats 1.7, 6.1). Encoding checks the shape a ledger relies on;
 * decoding checks that stored bytes are a transaction of the seqNo they are stored under, and
 * reports anything else as CORRUPT_TXN naming the ledger and the seqNo.
 */
import { decodeMsgpack, encodeMsgpack, isPlainObject, QuireError, takeDecodedEncoding, type Txn } from '@quire/common';
import { StorageError, StorageErrorCode, reasonOf } from '../errors.js';

function seqNoOf(txn: Record<string, unknown>): unknown {
  const meta = txn.txnMetadata;
  return isPlainObject(meta) ? meta.seqNo : undefined;
}

/** Why `value` cannot be a stored txn, or undefined when its shape is right. */
function shapeProblem(value: unknown): string | undefined {
  if (!isPlainObject(value)) return 'not a map';
  if (!isPlainObject(value.txn)) return 'txn is not a map';
  if (value.txnMetadata !== undefined && !isPlainObject(value.txnMetadata)) return 'txnMetadata is not a map';
  return undefined;
}

/**
 * Gives `txn` the seqNo it will be stored under (set when absent, checked when present) and
 * returns MP(txn). `index` is the position in the appended list, for error data. What it changed
 * in `txn` is undone by the function it pushes on `undo`, for a caller whose later txn fails.
 */
export function encodeTxn(ledgerId: number, txn: unknown, seqNo: number, index: number, undo: (() => void)[]): Uint8Array {
  const problem = shapeProblem(txn);
  if (problem !== undefined) throw new StorageError(StorageErrorCode.INVALID_TXN, { ledgerId, index, reason: problem });
  const t = txn as Record<string, unknown>;
  let meta = t.txnMetadata as Record<string, unknown> | undefined;
  let added: 'meta' | 'seqNo' | undefined;
  if (meta === undefined) {
    meta = {};
    t.txnMetadata = meta;
    added = 'meta';
  }
  if (meta.seqNo === undefined) {
    meta.seqNo = seqNo;
    added ??= 'seqNo';
  } else if (meta.seqNo !== seqNo && !(typeof meta.seqNo === 'bigint' && meta.seqNo === BigInt(seqNo))) {
    throw new StorageError(StorageErrorCode.SEQ_NO_MISMATCH, { ledgerId, index, expected: seqNo, actual: String(meta.seqNo) });
  }
  // a txn decoded from a CATCHUP_REP brings the bytes it was received as (takeDecodedEncoding): they are MP(txn) when
  // canonical, and a caught-up txn's leaf hash is checked against the proven root, which refuses any other bytes
  const received = takeDecodedEncoding(t);
  if (received !== undefined && added === undefined) return received;
  try {
    const bytes = encodeMsgpack(t);
    if (added !== undefined) undo.push(reverter(t, meta, added));
    return bytes;
  } catch (e) {
    if (added !== undefined) reverter(t, meta, added)(); // leave the caller's object as it was
    const code = e instanceof QuireError ? e.code : undefined;
    throw new StorageError(StorageErrorCode.INVALID_TXN, { ledgerId, index, reason: code ?? reasonOf(e) }, undefined, { cause: e });
  }
}

/** Undoes what {@link encodeTxn} added to a txn (made only when it added something). */
function reverter(t: Record<string, unknown>, meta: Record<string, unknown>, added: 'meta' | 'seqNo'): () => void {
  return () => {
    if (added === 'meta') delete t.txnMetadata;
    else delete meta.seqNo;
  };
}

/** Decodes a stored txn, checking that it is a transaction of `seqNo`. */
export function decodeTxn(ledgerId: number, seqNo: number, bytes: Uint8Array): Txn {
  let value: unknown;
  try {
    value = decodeMsgpack(bytes);
  } catch (e) {
    const reason = e instanceof QuireError ? e.code : reasonOf(e);
    throw new StorageError(StorageErrorCode.CORRUPT_TXN, { ledgerId, seqNo, reason }, undefined, { cause: e });
  }
  const problem = shapeProblem(value);
  if (problem !== undefined) throw new StorageError(StorageErrorCode.CORRUPT_TXN, { ledgerId, seqNo, reason: problem });
  const stored = seqNoOf(value as Record<string, unknown>);
  if (stored !== undefined && stored !== seqNo) {
    throw new StorageError(StorageErrorCode.CORRUPT_TXN, { ledgerId, seqNo, reason: `holds seqNo ${String(stored)}` });
  }
  return value as unknown as Txn;
}
