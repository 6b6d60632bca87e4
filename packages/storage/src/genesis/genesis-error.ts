import { CodedError, type CodedErrorArgs } from '@quire/common';

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

/** The data of each {@link GenesisErrorCode}, checked wherever a GenesisError is made. */
export type GenesisErrorData = {
  GENESIS_UNREADABLE: { file: string; reason: string };
  GENESIS_EMPTY: { file: string };
  GENESIS_INVALID_JSON: { file: string; line: number; reason: string };
  GENESIS_INVALID_TXN: { file: string; line: number; field: string; reason: string };
  GENESIS_LEGACY_LAYOUT: { file: string; line: number };
  GENESIS_SEQ_NO_OUT_OF_ORDER: { file: string; line: number; expected: number; actual: number };
  GENESIS_WRONG_LEDGER: { file: string; line: number; type: string; ledgerId: number; expectedLedgerId: number };
  GENESIS_MISMATCH: { file: string; line: number; seqNo: number };
  GENESIS_WRITE_FAILED: { file: string; reason: string };
};

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
export class GenesisError extends CodedError<GenesisErrorCode, GenesisErrorData> {
  /** `(code, data)` with the data of the code; the message is built from them unless one is given. */
  constructor(...args: CodedErrorArgs<GenesisErrorCode, GenesisErrorData>) {
    super(...args);
    if (args[2] === undefined) {
      const data: { file: string; line?: number } = args[1];
      const where = data.line === undefined ? data.file : `${data.file}:${data.line}`;
      this.message = `${where}: ${describe[this.code](this.data)}`;
    }
  }
}
