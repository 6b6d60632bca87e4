// Loading a genesis file into an empty ledger (formats.md 11). The whole file is parsed and checked
// before anything is appended, and the txns are committed in one atomic write: a bad file leaves
// the ledger untouched. A ledger that already holds txns is not written to; its first txns are
// compared with the file so that a node pointed at the wrong network's genesis notices.
import { readFile } from 'node:fs/promises';
import type { WriteBatch } from '../kv/kv-store.js';
import type { Ledger } from '../ledger/ledger.js';
import { equalBytes, type Txn } from '@quire/common';
import { GenesisError, GenesisErrorCode } from './genesis-error.js';
import { parseGenesis, type GenesisEntry } from './parse-genesis.js';

/** The part of the Ledger API that genesis loading uses. */
export type GenesisLedger = Pick<Ledger, 'ledgerId' | 'size' | 'uncommittedSize' | 'root' | 'append' | 'commit' | 'discard' | 'getEncoded'>;

export interface LoadGenesisOptions {
  /** Ledger id the txn types are checked against (default: the ledger's own `ledgerId`). */
  ledgerId?: number;
  /** Write into the caller's batch instead of committing at once (the caller writes it). */
  batch?: WriteBatch;
}

export interface GenesisLoadResult {
  /** Transactions in the file. */
  txnCount: number;
  /** Transactions appended by this call (0 when the ledger already held them). */
  loaded: number;
  /** Ledger size and root afterwards. */
  size: number;
  root: Uint8Array;
}

/** Reads and parses a genesis file; GenesisError on an unreadable, empty or malformed file. */
export async function readGenesisFile(file: string, opts: { ledgerId?: number } = {}): Promise<GenesisEntry[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw new GenesisError(GenesisErrorCode.UNREADABLE, { file, reason: e instanceof Error ? e.message : String(e) });
  }
  const entries = parseGenesis(text, { file, ...(opts.ledgerId === undefined ? {} : { ledgerId: opts.ledgerId }) });
  if (entries.length === 0) throw new GenesisError(GenesisErrorCode.EMPTY, { file });
  return entries;
}

/**
 * Loads a genesis file into `ledger` when the ledger is empty. When it is not, nothing is written
 * and the ledger's first txns must be byte-identical to the file's (else GENESIS_MISMATCH).
 */
export async function loadGenesis(ledger: GenesisLedger, file: string, opts: LoadGenesisOptions = {}): Promise<GenesisLoadResult> {
  const ledgerId = opts.ledgerId ?? ledger.ledgerId;
  const entries = await readGenesisFile(file, ledgerId === undefined ? {} : { ledgerId });
  return loadGenesisEntries(ledger, file, entries, opts);
}

/** Loads already parsed genesis entries (see {@link loadGenesis}); `file` names them in errors. */
export async function loadGenesisEntries(
  ledger: GenesisLedger,
  file: string,
  entries: GenesisEntry[],
  opts: LoadGenesisOptions = {},
): Promise<GenesisLoadResult> {
  if (ledger.uncommittedSize > 0) {
    const n = Math.min(ledger.uncommittedSize, entries.length);
    for (let i = 0; i < n; i++) {
      const e = entries[i];
      const stored = await ledger.getEncoded(e.seqNo);
      if (stored === undefined || !equalBytes(stored, e.encoded)) {
        throw new GenesisError(GenesisErrorCode.MISMATCH, { file, line: e.line, seqNo: e.seqNo });
      }
    }
    return { txnCount: entries.length, loaded: 0, size: ledger.size, root: ledger.root };
  }
  // the ledger re-encodes what it is given: hand it the parsed values, untouched
  try {
    ledger.append(entries.map((e) => e.txn as unknown as Txn));
    if (opts.batch === undefined) await ledger.commit(entries.length);
    else ledger.commit(entries.length, opts.batch);
  } catch (e) {
    if (ledger.uncommittedSize > ledger.size) ledger.discard(ledger.uncommittedSize - ledger.size);
    throw new GenesisError(GenesisErrorCode.WRITE_FAILED, { file, reason: e instanceof Error ? e.message : String(e) });
  }
  return { txnCount: entries.length, loaded: entries.length, size: ledger.size, root: ledger.root };
}
