import { CodedError } from '@quire/common';

/** Stable codes of {@link GenesisError}. Every one carries `file`; those about one line carry `line` (1-based). */
export const GenesisErrorCode = {
  /** The file cannot be read (data: `file`, `reason`). */
  UNREADABLE: 'GENESIS_UNREADABLE',
  /** The file holds no transaction (data: `file`). */
  EMPTY: 'GENESIS_EMPTY',
  /** A line is not (lossless) JSON (data: `file`, `line`, `reason`). */
  INVALID_JSON: 'GENESIS_INVALID_JSON',
  /** A line lacks a required field or has one of the wrong type (data: `file`, `line`, `field`, `reason`). */
  INVALID_TXN: 'GENESIS_INVALID_TXN',
  /** A line in the pre-1.0 flat layout, which is not supported (data: `file`, `line`). */
  LEGACY_LAYOUT: 'GENESIS_LEGACY_LAYOUT',
  /** A line whose seqNo is not the next one (data: `file`, `line`, `expected`, `actual`). */
  SEQ_NO_OUT_OF_ORDER: 'GENESIS_SEQ_NO_OUT_OF_ORDER',
  /** A txn type that belongs to another ledger (data: `file`, `line`, `type`, `ledgerId`, `expectedLedgerId`). */
  WRONG_LEDGER: 'GENESIS_WRONG_LEDGER',
  /** The ledger already holds transactions that differ from the file (data: `file`, `line`, `seqNo`). */
  MISMATCH: 'GENESIS_MISMATCH',
  /** Writing the transactions failed; nothing was committed (data: `file`, `reason`). */
  WRITE_FAILED: 'GENESIS_WRITE_FAILED',
} as const;
export type GenesisErrorCode = (typeof GenesisErrorCode)[keyof typeof GenesisErrorCode];

const describe: Record<GenesisErrorCode, (d: Record<string, unknown>) => string> = {
  GENESIS_UNREADABLE: (d) => `cannot read genesis file: ${String(d.reason)}`,
  GENESIS_EMPTY: () => 'genesis file holds no transaction',
  GENESIS_INVALID_JSON: (d) => `not JSON: ${String(d.reason)}`,
  GENESIS_INVALID_TXN: (d) => `invalid transaction: ${String(d.field)} ${String(d.reason)}`,
  GENESIS_LEGACY_LAYOUT: () => 'pre-1.0 flat transaction layout is not supported (expected "ver":"1" with "txn" and "txnMetadata")',
  GENESIS_SEQ_NO_OUT_OF_ORDER: (d) => `seqNo ${String(d.actual)} out of order, expected ${String(d.expected)}`,
  GENESIS_WRONG_LEDGER: (d) => `txn type ${String(d.type)} belongs to ledger ${String(d.ledgerId)}, not ledger ${String(d.expectedLedgerId)}`,
  GENESIS_MISMATCH: (d) => `ledger already holds a different transaction with seqNo ${String(d.seqNo)}`,
  GENESIS_WRITE_FAILED: (d) => `writing genesis transactions failed: ${String(d.reason)}`,
};

/** A genesis file that cannot be loaded; the message names the file and, when it is about a line, the line. */
export class GenesisError extends CodedError<GenesisErrorCode> {
  constructor(code: GenesisErrorCode, data: { file: string; line?: number } & Record<string, unknown>) {
    const where = data.line === undefined ? data.file : `${data.file}:${data.line}`;
    super(code, data, `${where}: ${describe[code](data)}`);
  }
}
