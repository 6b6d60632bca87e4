import { CodedError, type CodedErrorArgs } from '@quire/common';

/**
 * Stable codes of {@link StorageError} and its subclasses. Callers and tests branch on these,
 * never on message text. Each entry documents the `data` it carries.
 */
export const StorageErrorCode = {
  // key-value layer
  /** The database could not be opened (data: `path`, `reason`). */
  KV_OPEN_FAILED: 'KV_OPEN_FAILED',
  /** An operation on a store that has been closed (data: the `op` that failed when the store closed under it). */
  KV_CLOSED: 'KV_CLOSED',
  /** A read or write failed inside the database engine (data: `op`, `reason`). */
  KV_IO_FAILED: 'KV_IO_FAILED',
  /** A bucket name that is empty, too long, or holds a NUL character (data: `bucket`). */
  INVALID_BUCKET: 'INVALID_BUCKET',
  /** A key, value or argument of the wrong kind (data: `what`, and the `type` given or the `length` of a state root). */
  INVALID_KEY: 'INVALID_KEY',
  /** A sequence number that is not an integer in [0, 2^53-1] (data: `value`). */
  INVALID_SEQ_NO: 'INVALID_SEQ_NO',
  /** A write batch written a second time. */
  BATCH_ALREADY_WRITTEN: 'BATCH_ALREADY_WRITTEN',
  /** An option of a store outside its range: a KV store's buffer, a state's node cache or a ledger's hash cache size (data: `option`, `value`). */
  INVALID_OPTION: 'INVALID_OPTION',

  // ledger
  /** A ledger id that is not an integer in [0, 2^31-1] (data: `ledgerId` as text). */
  INVALID_LEDGER_ID: 'INVALID_LEDGER_ID',
  /** A value given to append that is not a transaction object (data: `ledgerId`, `index`, -1 for the list itself, `reason`). */
  INVALID_TXN: 'INVALID_TXN',
  /** An appended txn carries a seqNo other than the next one (data: `ledgerId`, `index`, `expected`, `actual` as text). */
  SEQ_NO_MISMATCH: 'SEQ_NO_MISMATCH',
  /** A count, seqNo or tree size outside what the ledger holds (data: `ledgerId`, `what`, `value`, `min`, `max`). */
  OUT_OF_RANGE: 'OUT_OF_RANGE',
  /** A stored txn does not decode as a transaction of that seqNo (data: `ledgerId`, `seqNo`, `reason`). */
  CORRUPT_TXN: 'CORRUPT_TXN',
  /** The txn log misses a seqNo below later ones (data: `ledgerId`, `seqNo`). */
  LOG_GAP: 'LOG_GAP',
  /** A hash the hash store must hold is missing or malformed (data: `ledgerId`, `height`, `index`). */
  HASH_STORE_MISSING: 'HASH_STORE_MISSING',
  /** A hash-store record of the wrong length (data: `ledgerId`, `what`, `length`). */
  CORRUPT_HASH_STORE: 'CORRUPT_HASH_STORE',
  /** A write batch carrying committed txns failed; the ledger refuses further changes (data: `ledgerId`, `reason`). */
  LEDGER_WRITE_FAILED: 'LEDGER_WRITE_FAILED',
  /**
   * Batches carrying a ledger's commits were written out of commit order, so records of the later
   * commit may have been overwritten by older versions: the ledger refuses further changes; reopen
   * it with `verify` (data: `ledgerId`, `written`, `pending`).
   */
  LEDGER_WRITE_ORDER: 'LEDGER_WRITE_ORDER',

  // proofs (formats 6.3, 6.4)
  /**
   * A proof element or root that is not 32 bytes, or a proof that does not decode (data: `what`, and as they apply
   * `index`, `length`, `reason`, `type`, `size`, `key` hex, `nibbles`, `seqNo`, `ledgerSize`).
   */
  PROOF_MALFORMED: 'PROOF_MALFORMED',
  /** The proof ran out of hashes before the computation was complete (data: `length`). */
  PROOF_TOO_SHORT: 'PROOF_TOO_SHORT',
  /** The proof holds more hashes than the computation uses (data: `expected`, `length`). */
  PROOF_TOO_LONG: 'PROOF_TOO_LONG',
  /** The proof does not lead to the expected (new) root (data: the `root` hex of a state proof; none for a ledger proof). */
  PROOF_ROOT_MISMATCH: 'PROOF_ROOT_MISMATCH',
  /** The proof is valid for the new root but the old root is not the root of its prefix (data: `oldSize`, `newSize`). */
  CONSISTENCY_OLD_ROOT_MISMATCH: 'CONSISTENCY_OLD_ROOT_MISMATCH',
  /** Equal sizes with different roots (data: `size`). */
  CONSISTENCY_ROOTS_DIFFER: 'CONSISTENCY_ROOTS_DIFFER',
  /**
   * Tree sizes or a leaf index that cannot describe a proof (old > new, index >= size, negative) (data: `what`, `value`,
   * and the `treeSize` or `newSize` it exceeds).
   */
  INVALID_PROOF_ARGUMENT: 'INVALID_PROOF_ARGUMENT',

  // RLP (formats 7.1)
  /** The input ends inside an item (data: `offset`). */
  RLP_TRUNCATED: 'RLP_TRUNCATED',
  /** A non-canonical form: long form for a short length, a leading zero length byte, a single byte < 0x80 with a prefix (data: `offset`, `reason`). */
  RLP_NON_CANONICAL: 'RLP_NON_CANONICAL',
  /** Bytes remain after the first item (data: `offset`). */
  RLP_TRAILING_BYTES: 'RLP_TRAILING_BYTES',
  /** Lists nested deeper than the decoder's limit (data: `limit`). */
  RLP_TOO_DEEP: 'RLP_TOO_DEEP',
  /** A value the encoder cannot represent: neither bytes nor a list (data: `type`). */
  RLP_UNSUPPORTED_VALUE: 'RLP_UNSUPPORTED_VALUE',

  // state trie (formats 7)
  /** A state name other than pool, domain, config (data: `name`). */
  INVALID_STATE_NAME: 'INVALID_STATE_NAME',
  /** A state root that is neither stored nor held in memory (data: `state`, `root` hex). */
  UNKNOWN_STATE_ROOT: 'UNKNOWN_STATE_ROOT',
  /** A trie node referenced by hash is absent from the node store (data: `state`, `hash` hex). */
  STATE_NODE_MISSING: 'STATE_NODE_MISSING',
  /** Stored bytes that are not a trie node (data: `reason`; `state` and `hash` hex where the trie reads it). */
  STATE_NODE_MALFORMED: 'STATE_NODE_MALFORMED',
  /** A trie proof whose walk needs a node referenced by hash that the proof does not hold (data: `hash` hex). */
  PROOF_INCOMPLETE: 'PROOF_INCOMPLETE',
  /** A prefix proof proves a key that is not UTF-8 where string keys were asked for (data: `key` hex). */
  PROOF_KEY_NOT_UTF8: 'PROOF_KEY_NOT_UTF8',

  // invariants
  /**
   * A state the package's own invariants rule out was met: a defect in Quire, never the answer to bad
   * input or to stored data, which have their own codes (data: `what`, and the values that disagree).
   */
  INTERNAL_INVARIANT: 'INTERNAL_INVARIANT',
} as const;
export type StorageErrorCode = (typeof StorageErrorCode)[keyof typeof StorageErrorCode];

/** The data of each {@link StorageErrorCode}, checked wherever a StorageError (or a subclass) is made. */
export type StorageErrorData = {
  KV_OPEN_FAILED: { path: string; reason: string };
  KV_CLOSED: { op?: string };
  KV_IO_FAILED: { op: string; reason: string };
  INVALID_BUCKET: { bucket: string };
  INVALID_KEY: { what: string; type?: string; length?: number };
  INVALID_SEQ_NO: { value: number | string };
  BATCH_ALREADY_WRITTEN: Record<string, never>;
  INVALID_OPTION: { option: string; value: number };
  INVALID_LEDGER_ID: { ledgerId: string };
  INVALID_TXN: { ledgerId: number; index: number; reason: string };
  SEQ_NO_MISMATCH: { ledgerId: number; index: number; expected: number; actual: string };
  OUT_OF_RANGE: { ledgerId: number; what: string; value: number | string; min: number; max: number };
  CORRUPT_TXN: { ledgerId: number; seqNo: number; reason: string };
  LOG_GAP: { ledgerId: number; seqNo: number };
  HASH_STORE_MISSING: { ledgerId: number; height: number; index: number };
  CORRUPT_HASH_STORE: { ledgerId: number; what: string; length: number };
  LEDGER_WRITE_FAILED: { ledgerId: number; reason: string };
  LEDGER_WRITE_ORDER: { ledgerId: number; written: number; pending: number };
  PROOF_MALFORMED: {
    what: string;
    index?: number;
    length?: number;
    reason?: string;
    type?: string;
    size?: number;
    key?: string;
    nibbles?: number;
    seqNo?: unknown;
    ledgerSize?: number;
  };
  PROOF_TOO_SHORT: { length: number };
  PROOF_TOO_LONG: { expected: number; length: number };
  PROOF_ROOT_MISMATCH: { root?: string };
  CONSISTENCY_OLD_ROOT_MISMATCH: { oldSize: number; newSize: number };
  CONSISTENCY_ROOTS_DIFFER: { size: number };
  INVALID_PROOF_ARGUMENT: { what: string; value: number | string; treeSize?: number; newSize?: number };
  RLP_TRUNCATED: { offset: number };
  RLP_NON_CANONICAL: { offset: number; reason: string };
  RLP_TRAILING_BYTES: { offset: number };
  RLP_TOO_DEEP: { limit: number };
  RLP_UNSUPPORTED_VALUE: { type: string };
  INVALID_STATE_NAME: { name: string };
  UNKNOWN_STATE_ROOT: { state: string; root: string };
  STATE_NODE_MISSING: { state: string; hash: string };
  STATE_NODE_MALFORMED: { reason: string; state?: string; hash?: string };
  PROOF_INCOMPLETE: { hash: string };
  PROOF_KEY_NOT_UTF8: { key: string };
  /** `what` broke, and whichever values disagree. */
  INTERNAL_INVARIANT: { what: string } & Record<string, unknown>;
};

/** The arguments of a StorageError: a code with its data, an optional message, and the error that caused it. */
export type StorageErrorArgs = {
  [K in StorageErrorCode]: Record<string, never> extends StorageErrorData[K]
    ? [code: K, data?: StorageErrorData[K], message?: string, options?: { cause?: unknown }]
    : [code: K, data: StorageErrorData[K], message?: string, options?: { cause?: unknown }];
}[StorageErrorCode];

/** Any failure of the storage package. */
export class StorageError extends CodedError<StorageErrorCode, StorageErrorData> {
  constructor(...args: StorageErrorArgs) {
    // the code, data and message are a CodedError's; the cause is this class's own
    super(...(args.slice(0, 3) as CodedErrorArgs<StorageErrorCode, StorageErrorData>));
    const options = args[3];
    if (options?.cause !== undefined) (this as { cause?: unknown }).cause = options.cause;
  }
}

/**
 * A Merkle proof that is malformed or does not lead to the expected root (the ProofError class of
 * formats 6.4 and of the state proofs of section 7.5).
 */
export class ProofError extends StorageError {}

/** A consistency proof that is sound for the new root but shows a different old root (formats 6.4 ConsistencyError). */
export class ConsistencyError extends StorageError {}

/** Arguments that cannot describe a proof at all, such as an old size above the new one (formats 6.4 ValueError). */
export class ValueError extends StorageError {}

/** Wraps an unknown thrown value into a reason string for error data. */
export function reasonOf(e: unknown): string {
  if (e instanceof Error) return e.message;
  return String(e);
}
