// Genesis files (formats.md 11, 4.4): newline-delimited JSON, one txn per line, parsed losslessly,
// blank lines ignored, seqNo 1, 2, 3... in file order. Content is not validated beyond the layout:
// each line is kept and hashed exactly as parsed (string or integer ports, any reqSignature, BN254
// BLS keys), so that the ledger root matches every other node's.
import { encodeMsgpack, isPlainObject, ledgerOfType, parseJson, txnKind } from '@quire/common';
import { GenesisError, GenesisErrorCode } from './genesis-error.js';

/** One transaction of a genesis file with where it came from and its stored bytes. */
export interface GenesisEntry {
  /** 1-based line number in the file. */
  line: number;
  seqNo: number;
  /** The txn exactly as parsed (lossless). */
  txn: Record<string, unknown>;
  /** MP(txn): the txn-log value and Merkle leaf data. */
  encoded: Uint8Array;
}

export interface ParseGenesisOptions {
  /** Name used in errors (the path, usually). */
  file: string;
  /** When given, a txn whose type belongs to another ledger is rejected. */
  ledgerId?: number;
  /** The seqNo the first txn must carry (default 1). */
  firstSeqNo?: number;
}

function requireObject(v: unknown, field: string, file: string, line: number): Record<string, unknown> {
  if (!isPlainObject(v))
    throw new GenesisError(GenesisErrorCode.INVALID_TXN, { file, line, field, reason: v === undefined ? 'is missing' : 'is not a JSON object' });
  return v;
}

/** Checks the layout of one parsed line (formats.md 4.4) and returns its seqNo. */
function checkLayout(value: unknown, file: string, line: number, ledgerId: number | undefined): number {
  if (!isPlainObject(value)) throw new GenesisError(GenesisErrorCode.INVALID_TXN, { file, line, field: 'transaction', reason: 'is not a JSON object' });
  if (!('txn' in value) && !('ver' in value) && ('type' in value || 'dest' in value)) throw new GenesisError(GenesisErrorCode.LEGACY_LAYOUT, { file, line });
  if (value.ver !== '1') {
    throw new GenesisError(GenesisErrorCode.INVALID_TXN, {
      file,
      line,
      field: 'ver',
      reason: value.ver === undefined ? 'is missing' : 'must be the string "1"',
    });
  }
  const txn = requireObject(value.txn, 'txn', file, line);
  if (typeof txn.type !== 'string' || txn.type.length === 0) {
    throw new GenesisError(GenesisErrorCode.INVALID_TXN, {
      file,
      line,
      field: 'txn.type',
      reason: txn.type === undefined ? 'is missing' : 'is not a non-empty string',
    });
  }
  requireObject(txn.data, 'txn.data', file, line);
  requireObject(txn.metadata, 'txn.metadata', file, line);
  requireObject(value.reqSignature, 'reqSignature', file, line);
  const meta = requireObject(value.txnMetadata, 'txnMetadata', file, line);
  const seqNo = meta.seqNo;
  if (typeof seqNo !== 'number' || !Number.isSafeInteger(seqNo) || seqNo < 1) {
    throw new GenesisError(GenesisErrorCode.INVALID_TXN, {
      file,
      line,
      field: 'txnMetadata.seqNo',
      reason: seqNo === undefined ? 'is missing' : 'is not a positive integer',
    });
  }
  if (ledgerId !== undefined) {
    const kind = txnKind(txn.type);
    const owner = ledgerOfType(txn.type);
    if ((kind === 'write' || kind === 'internal') && owner !== undefined && owner !== ledgerId) {
      throw new GenesisError(GenesisErrorCode.WRONG_LEDGER, { file, line, type: txn.type, ledgerId: owner, expectedLedgerId: ledgerId });
    }
  }
  return seqNo;
}

/**
 * Parses the text of a genesis file. Throws GenesisError naming the file and line for the first
 * line that is not JSON, lacks a required field, or carries a seqNo out of order.
 */
export function parseGenesis(text: string, opts: ParseGenesisOptions): GenesisEntry[] {
  const { file } = opts;
  let expected = opts.firstSeqNo ?? 1;
  const lines = text.split('\n');
  const out: GenesisEntry[] = [];
  for (let i = 0; i < lines.length; i++) {
    let raw = lines[i];
    if (i === 0 && raw.charCodeAt(0) === 0xfeff) raw = raw.slice(1); // UTF-8 byte order mark
    if (raw.endsWith('\r')) raw = raw.slice(0, -1);
    if (raw.trim().length === 0) continue;
    const line = i + 1;
    let value: unknown;
    try {
      value = parseJson(raw);
    } catch (e) {
      throw new GenesisError(GenesisErrorCode.INVALID_JSON, { file, line, reason: e instanceof Error ? e.message : String(e) });
    }
    const seqNo = checkLayout(value, file, line, opts.ledgerId);
    if (seqNo !== expected) throw new GenesisError(GenesisErrorCode.SEQ_NO_OUT_OF_ORDER, { file, line, expected, actual: seqNo });
    let encoded: Uint8Array;
    try {
      encoded = Uint8Array.from(encodeMsgpack(value));
    } catch (e) {
      throw new GenesisError(GenesisErrorCode.INVALID_TXN, {
        file,
        line,
        field: 'transaction',
        reason: `cannot be encoded: ${e instanceof Error ? e.message : String(e)}`,
      });
    }
    out.push({ line, seqNo, txn: value as Record<string, unknown>, encoded });
    expected++;
  }
  return out;
}
