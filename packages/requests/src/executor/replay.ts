/**
 * The executor's paths for txns applied without being validated: genesis, a rebuild of the state
 * from the ledger, and txns received in catch-up. Attribute originals are buffered until the write
 * batch; the state root after each batch time is committed and recorded as ordering did.
 */
import type { WriteBatch } from '@quire/storage';
import { RequestError, RequestErrorCode, toRequestError } from '../errors.js';
import type { AttributeAccess, StateLedgerId, Txn } from '../handler.js';
import { storedFormOfCaughtUp } from './catchup-txns.js';
import type { ExecutorAttributeStore, ExecutorSeqNoIndex, ExecutorStores } from './stores.js';

/** A stored txn's batch time, or null (genesis txns have none). */
export function txnTimeOf(txn: Txn): number | null {
  const t = txn.txnMetadata?.txnTime;
  return typeof t === 'number' ? t : null;
}

/** Attribute access for replays: puts are buffered (and read back), then flushed into a batch. */
export class ReplayAttributes {
  readonly #pending = new Map<string, string>();
  readonly access: AttributeAccess;

  constructor(private readonly store: ExecutorAttributeStore) {
    this.access = {
      put: (hash, value) => void this.#pending.set(hash, value),
      get: (hash) => this.#pending.get(hash) ?? store.getSync(hash),
    };
  }

  flush(wb: WriteBatch): void {
    for (const value of [...this.#pending.values()].sort()) this.store.put(value, wb);
    this.#pending.clear();
  }
}

const HEX_DIGEST = /^[0-9a-f]{64}$/;

/** The seqNo / digest index entry of a stored txn (its metadata holds the digests), if any. */
export function indexEntryOf(txn: Txn, ledgerId: number, seqNo: number): Parameters<ExecutorSeqNoIndex['add']>[0] | undefined {
  const md = txn.txn?.metadata as Record<string, unknown> | undefined;
  const pd = md?.payloadDigest;
  if (typeof pd !== 'string' || !HEX_DIGEST.test(pd)) return undefined;
  const digest = md?.digest;
  return typeof digest === 'string' && HEX_DIGEST.test(digest) ? { payloadDigest: pd, digest, ledgerId, seqNo } : { payloadDigest: pd, ledgerId, seqNo };
}

/** What the replays need of the executor. */
export interface ReplayHost {
  readonly stores: ExecutorStores;
  /** Applies a stored txn to the state with its type's handler. */
  applyStoredTxn(ledgerId: StateLedgerId, txn: Txn, seqNo: number, attributes: AttributeAccess): void;
  /** The state heads moved under the executor's caches (DID cache, node index). */
  forgetHeads(): void;
  /** The payloads count as committed until `wb` is written. */
  unwrittenUntilWritten(wb: WriteBatch, payloads: readonly string[]): void;
}

/** What `appendCaughtUp` committed: the ledger's size and roots after the txns. */
export interface CaughtUpTxns {
  ledgerId: StateLedgerId;
  size: number;
  txnRoot: Uint8Array;
  stateRoot: Uint8Array;
  /** Payload digests the txns' metadata named (now in the seqNo index). */
  payloadDigests: string[];
  /** The txns as stored (ATTRIB originals replaced by their hashes, formats.md 4.5), in ledger order. */
  txns: Txn[];
}

/** Queued operations after which a rebuild writes its own batch and starts another. */
const REBUILD_FLUSH_OPS = 20_000;

/** Genesis txns into an empty ledger and its state, committed (see RequestExecutor.applyGenesis). */
export async function applyGenesisTxns(host: ReplayHost, ledgerId: StateLedgerId, txns: readonly Txn[], writeBatch?: WriteBatch): Promise<void> {
  const ledger = host.stores.ledgers[ledgerId];
  const attributes = new ReplayAttributes(host.stores.attributes);
  for (const txn of txns) {
    host.applyStoredTxn(ledgerId, txn, ledger.uncommittedSize + 1, attributes.access);
    ledger.append([txn]);
  }
  const wb = writeBatch ?? host.stores.kv.batch();
  void ledger.commit(undefined, wb);
  void host.stores.states[ledgerId].commit(undefined, wb);
  attributes.flush(wb);
  if (writeBatch === undefined) await wb.write();
  host.forgetHeads();
}

/** The state of a ledger rebuilt from its committed txns (see RequestExecutor.rebuildState). */
export async function rebuildStateFromLedger(host: ReplayHost, ledgerId: StateLedgerId, writeBatch?: WriteBatch): Promise<Uint8Array> {
  const { kv, ledgers, states, timestamps } = host.stores;
  const ledger = ledgers[ledgerId];
  const trie = states[ledgerId];
  const own = writeBatch === undefined;
  let wb = writeBatch ?? kv.batch();
  const attributes = new ReplayAttributes(host.stores.attributes);
  let time: number | null = null;
  const endOfBatchTime = async (): Promise<void> => {
    if (time === null) return;
    const root = trie.headRoot;
    void trie.commit(root, wb);
    timestamps?.set(ledgerId, time, root, wb);
    if (own && wb.length >= REBUILD_FLUSH_OPS) {
      attributes.flush(wb);
      await wb.write();
      wb = kv.batch();
    }
  };
  if (ledger.size > 0) {
    for await (const [seqNo, txn] of ledger.range(1, ledger.size)) {
      const t = txnTimeOf(txn);
      if (t !== time) {
        await endOfBatchTime();
        time = t;
      }
      host.applyStoredTxn(ledgerId, txn, seqNo, attributes.access);
    }
    await endOfBatchTime();
  }
  void trie.commit(undefined, wb);
  attributes.flush(wb);
  if (own) await wb.write();
  host.forgetHeads();
  return trie.committedRoot;
}

/** Caught-up txns appended, applied and committed into `writeBatch` (see RequestExecutor.appendCaughtUp). */
export function appendCaughtUpTxns(
  host: ReplayHost,
  ledgerId: StateLedgerId,
  txns: readonly unknown[],
  writeBatch: WriteBatch,
  accept: (txnRoot: Uint8Array, size: number) => boolean,
): CaughtUpTxns {
  const refuse = (problem: string): RequestError => new RequestError(RequestErrorCode.CATCHUP_TXNS_REFUSED, { ledgerId, problem });
  const { ledgers, states, timestamps, seqNoIndex } = host.stores;
  const ledger = ledgers[ledgerId];
  const trie = states[ledgerId];
  if (ledger.uncommittedSize !== ledger.size) throw refuse('the ledger has uncommitted txns');
  if (!Array.isArray(txns) || txns.length === 0) throw refuse('no txns');
  const first = ledger.size + 1;
  // the stored form: ATTRIB originals hashed (formats.md 4.5), kept for the attribute store
  const attributes = new ReplayAttributes(host.stores.attributes);
  const stored = new Array<Txn>(txns.length);
  for (let i = 0; i < txns.length; i++) {
    const f = storedFormOfCaughtUp(ledgerId, txns[i]);
    stored[i] = f.txn;
    if (f.attribute !== undefined) attributes.access.put(f.attribute.hash, f.attribute.original);
  }
  try {
    ledger.append(stored);
  } catch (e) {
    throw refuse(`they do not append: ${toRequestError(e).reason}`);
  }
  if (!accept(ledger.uncommittedRoot, ledger.uncommittedSize)) {
    ledger.discard(txns.length);
    throw refuse('they do not prove against the target');
  }
  // the root after the last txn of each batch time, committed once every txn has applied
  const marks: [time: number, root: Uint8Array][] = [];
  let time: number | null = null;
  let done = 0;
  try {
    for (const txn of stored) {
      const t = txnTimeOf(txn);
      if (t !== time && time !== null) marks.push([time, trie.headRoot]);
      time = t;
      host.applyStoredTxn(ledgerId, txn, first + done, attributes.access);
      done++;
    }
  } catch (e) {
    ledger.discard(txns.length);
    trie.revertToCommitted();
    host.forgetHeads();
    throw refuse(`txn ${first + done} does not apply: ${toRequestError(e).reason}`);
  }
  const stateRoot = trie.headRoot;
  if (time !== null) marks.push([time, stateRoot]);
  for (const [t, root] of marks) {
    void trie.commit(root, writeBatch);
    timestamps?.set(ledgerId, t, root, writeBatch);
  }
  void trie.commit(stateRoot, writeBatch);
  void ledger.commit(txns.length, writeBatch);
  const payloads: string[] = [];
  if (seqNoIndex !== undefined) {
    for (let i = 0; i < stored.length; i++) {
      const entry = indexEntryOf(stored[i], ledgerId, first + i);
      if (entry === undefined) continue;
      seqNoIndex.add(entry, writeBatch);
      payloads.push(entry.payloadDigest);
    }
  }
  attributes.flush(writeBatch);
  host.unwrittenUntilWritten(writeBatch, payloads);
  host.forgetHeads();
  return { ledgerId, size: ledger.size, txnRoot: ledger.root, stateRoot, payloadDigests: payloads, txns: stored };
}
