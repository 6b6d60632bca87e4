/**
 * The read framework: a ReadContext over committed state, ledgers, the timestamp store and the
 * attribute store, and `answerRead`, which turns a handler's ReadAnswer into the REPLY result of
 * formats.md 5.3 (`state_proof` with root_hash and base64 proof_nodes; the node attaches the
 * multi-signature stored for `stateRoot`).
 */
import { LedgerId, b58encode, b64encode, equalBytes } from '@quire/common';
import { LruCache } from '@quire/crypto';
import { RequestError, RequestErrorCode } from '../errors.js';
import type { CommittedLedgerReader, LedgerIdValue, ParsedRequest, ReadContext, ReadHandler, StateKey, StateLedgerId, StateLookup, Txn } from '../handler.js';
import type { ExecutorStores } from '../executor/stores.js';

/** The state root reads of a ledger are answered at when they name none (default: the committed root). */
export type ReadRootChoice = (ledgerId: StateLedgerId) => Uint8Array;

export class StoresReadContext implements ReadContext {
  /**
   * `readRoot`: the root reads are answered at when they name none. A node passes the newest
   * committed root that has a multi-signature, so that its answers can always be verified.
   */
  /** the lookups of the last keys read (a state root's content never changes: the same key at the same root is the same answer) */
  private readonly lookups = new LookupCache();

  constructor(
    private readonly stores: ExecutorStores,
    private readonly readRoot?: ReadRootChoice,
  ) {}

  private rootOf(ledgerId: StateLedgerId): Uint8Array {
    return this.readRoot?.(ledgerId) ?? this.trie(ledgerId).committedRoot;
  }

  /** The state of a state ledger; READ_INVALID_LEDGER for another id. */
  private trie(ledgerId: StateLedgerId): ExecutorStores['states'][number] {
    if (ledgerId === LedgerId.AUDIT || !Object.hasOwn(this.stores.states, ledgerId)) throw new RequestError(RequestErrorCode.READ_INVALID_LEDGER, { ledgerId });
    return this.stores.states[ledgerId];
  }

  lookup(ledgerId: StateLedgerId, key: StateKey, root?: Uint8Array): StateLookup {
    const trie = this.trie(ledgerId);
    const r = root ?? this.rootOf(ledgerId);
    return this.lookups.get(ledgerId, r, key, () => ({ value: trie.getAt(r, key), root: r, proof: trie.generateProof(key, r) }));
  }

  get(ledgerId: StateLedgerId, key: StateKey, root?: Uint8Array): Uint8Array | undefined {
    return this.trie(ledgerId).getAt(root ?? this.rootOf(ledgerId), key);
  }

  async rootAt(ledgerId: StateLedgerId, timestamp: number): Promise<Uint8Array | undefined> {
    if (!this.stores.timestamps || !Number.isSafeInteger(timestamp) || timestamp < 0) return undefined;
    return this.stores.timestamps.getEqualOrPrevious(ledgerId, timestamp);
  }

  committedRoot(ledgerId: StateLedgerId): Uint8Array {
    return this.rootOf(ledgerId);
  }

  ledger(ledgerId: LedgerIdValue): CommittedLedgerReader {
    // the state ledgers (base and plugin ledgers) and the audit ledger; never a property of Object
    const l = ledgerId === LedgerId.AUDIT ? this.stores.audit : Object.hasOwn(this.stores.ledgers, ledgerId) ? this.stores.ledgers[ledgerId] : undefined;
    if (l === undefined) throw new RequestError(RequestErrorCode.READ_INVALID_LEDGER, { ledgerId });
    return {
      ledgerId,
      get size() {
        return l.size;
      },
      get root() {
        return l.root;
      },
      getTxn: (seqNo: number): Promise<Txn | undefined> =>
        Number.isSafeInteger(seqNo) && seqNo >= 1 && seqNo <= l.size ? l.get(seqNo) : Promise.resolve(undefined),
      inclusionProof: (seqNo: number, size?: number) => l.inclusionProof(seqNo, size),
    };
  }

  attribute(hash: string): Promise<string | undefined> {
    return this.stores.attributes.get(hash);
  }
}

/** A read's REPLY before the node attaches the multi-signatures of the roots it read (common's ReadReply is the REPLY sent). */
export interface UnsignedReadReply {
  /** The REPLY `result`. */
  result: Record<string, unknown>;
  /** The state root read, for the node to attach its multi-signature (`state_proof.multi_signature`). */
  stateRoot?: { ledgerId: StateLedgerId; root: Uint8Array };
  /**
   * The second state root a GET_REVOC_REG_DELTA reads (formats.md 7.7), present when the result
   * holds `data.stateProofFrom`: the node attaches the multi-signature stored for this root as
   * `data.stateProofFrom.multi_signature`.
   */
  stateRootFrom?: { ledgerId: StateLedgerId; root: Uint8Array };
}

/** Runs a read handler and builds the REPLY result. Throws RequestError (REQNACK) on bad input. */
export async function answerRead(handler: ReadHandler, req: ParsedRequest, ctx: ReadContext): Promise<UnsignedReadReply> {
  const answer = await handler.read(req, ctx);
  if (answer.result !== undefined) return { result: answer.result };
  const result: Record<string, unknown> = {
    ...req.operation,
    identifier: req.author,
    reqId: req.reqId,
    data: answer.data,
    seqNo: answer.seqNo,
    txnTime: answer.txnTime,
    ...answer.extra,
  };
  const reply: UnsignedReadReply = { result };
  if (answer.proof !== undefined) {
    const { ledgerId, lookup } = answer.proof;
    result.state_proof = stateProofOf(lookup);
    reply.stateRoot = { ledgerId, root: lookup.root };
  }
  if (answer.proofFrom !== undefined) reply.stateRootFrom = { ledgerId: answer.proofFrom.ledgerId, root: answer.proofFrom.lookup.root };
  return reply;
}

/** Lookups kept by the cache of a read context (the keys read most recently). */
export const LOOKUP_CACHE_ENTRIES = 2048;
/**
 * Bytes of key, value and proof above which a lookup is not kept: a NYM's is a few hundred, but a value may be as large
 * as a txn (a rich schema object, up to the message limit), and 2,048 such lookups read in turn would hold hundreds of
 * MB; with this bound the cache holds at most LOOKUP_CACHE_ENTRIES x 16 KiB.
 */
export const LOOKUP_CACHE_MAX_ENTRY_BYTES = 16 * 1024;

/**
 * The lookups of the keys read last, by ledger, state root and key. A state root names one trie whose content never
 * changes, so a key looked up again at the same root has the same value and the same proof: the trie walk, the proof's
 * encoding and its base64 / base58 text (stateProofOf) are done once per key and root. Bounded: the entry used least
 * recently goes first, and a lookup larger than LOOKUP_CACHE_MAX_ENTRY_BYTES is not kept.
 */
export class LookupCache {
  private readonly entries: LruCache<string, StateLookup>;
  /** the ledger and root of the last lookup and the start of their entries' ids (reads come at one root at a time) */
  private last: { ledgerId: number; root: Uint8Array; prefix: string } | undefined;

  constructor(maxEntries = LOOKUP_CACHE_ENTRIES) {
    this.entries = new LruCache(maxEntries);
  }

  private prefixOf(ledgerId: number, root: Uint8Array): string {
    const l = this.last;
    if (l !== undefined && l.ledgerId === ledgerId && equalBytes(l.root, root)) return l.prefix;
    const prefix = `${ledgerId}|${latin1(root)}|`;
    this.last = { ledgerId, root: Uint8Array.from(root), prefix };
    return prefix;
  }

  get(ledgerId: number, root: Uint8Array, key: StateKey, compute: () => StateLookup): StateLookup {
    const id = this.prefixOf(ledgerId, root) + (typeof key === 'string' ? `s${key}` : `b${latin1(key)}`);
    const hit = this.entries.get(id);
    if (hit !== undefined) return hit;
    const l = compute();
    if (id.length + (l.value?.byteLength ?? 0) + l.proof.byteLength > LOOKUP_CACHE_MAX_ENTRY_BYTES) return l;
    // a copy of the root: the caller's bytes may be reused for another root
    const kept: StateLookup = { value: l.value, root: Uint8Array.from(l.root), proof: l.proof };
    this.entries.set(id, kept);
    return kept;
  }

  get size(): number {
    return this.entries.size;
  }
}

function latin1(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('latin1');
}

/** the texts of the proofs encoded last (a lookup served from a LookupCache is the same object each time) */
const proofTexts = new WeakMap<StateLookup, { root_hash: string; proof_nodes: string }>();

/** `{root_hash, proof_nodes}` of a lookup: a `state_proof` before the node adds the multi-signature. */
export function stateProofOf(lookup: StateLookup): { root_hash: string; proof_nodes: string } {
  let t = proofTexts.get(lookup);
  if (t === undefined) {
    t = { root_hash: b58encode(lookup.root), proof_nodes: b64encode(lookup.proof) };
    proofTexts.set(lookup, t);
  }
  // a fresh object: the caller adds the multi-signature to it
  return { root_hash: t.root_hash, proof_nodes: t.proof_nodes };
}
