/**
 * The executor consensus drives: apply a batch of finalised requests for one ledger at a ppTime to
 * the uncommitted state and ledger (reporting each request valid or invalid with code and reason,
 * and the new roots), commit applied batches in order, revert uncommitted ones, append txns caught
 * up from other nodes, apply genesis, and rebuild state from the ledger. Deterministic (no clock,
 * no randomness, sorted keys) and total: no exception escapes applyBatch — any bad request becomes
 * an invalid result with a code.
 *
 * Synchronous where consensus calls it (apply, commit into the caller's batch, revert, catch-up):
 * handlers read the tries, the ledgers and side stores through their synchronous reads, and the
 * in-memory indexes. Genesis and rebuild, which run at startup, stay asynchronous.
 */
import { LedgerId, type MsgpackEncoded } from '@quire/common';
import type { WriteBatch } from '@quire/storage';
import { AuthorizationEngine } from '../auth/engine.js';
import { StateIdrCache } from '../auth/idr-cache.js';
import { SignatureVerifier, type SignatureVerifierOptions } from '../auth/signatures.js';
import { ErrorKind, RequestError, RequestErrorCode, toRequestError } from '../errors.js';
import type {
  AttributeAccess,
  HandlerContext,
  LedgerIdValue,
  LedgerSnapshot,
  ParsedRequest,
  SoftwareInfo,
  StateLedgerId,
  Txn,
  WriteHandler,
} from '../handler.js';
import { parseRequest } from '../pipeline/parse.js';
import { HandlerRegistry, createDefaultRegistry } from '../registry.js';
import { checkTaaAcceptance } from '../taa/acceptance.js';
import { isLedgerFrozen } from '../freeze/frozen-ledgers.js';
import { LedgerUpgradeIndex, StatePoolNodeIndex } from './indexes.js';
import { catchupFormOf, catchupFormOfStored } from './catchup-txns.js';
import { type CaughtUpTxns, type ReplayHost, appendCaughtUpTxns, applyGenesisTxns, rebuildStateFromLedger, txnTimeOf } from './replay.js';
import { type ExecutorStores, LedgerView, TrieView, stateLedgerIds } from './stores.js';
import { parsedRequestToTxn } from './txn.js';

export interface ExecutorOptions {
  /** Verify signatures while ordering (cached: requests verified at receipt are not verified again). Default true. */
  verifySignatures?: boolean;
  signatureCache?: SignatureVerifierOptions;
}

export const defaultExecutorOptions: Required<Omit<ExecutorOptions, 'signatureCache'>> = { verifySignatures: true };

export interface ExecutorModules {
  stores: ExecutorStores;
  registry?: HandlerRegistry;
  software?: SoftwareInfo;
  /**
   * Ledgers of the node besides its state ledgers (the stores' pool, domain, config and plugin ledgers): what
   * LEDGERS_FREEZE checks and records for another id above LedgerId.AUDIT. Without it every such id "never existed".
   */
  pluginLedgers?: { snapshot(ledgerId: number): LedgerSnapshot | undefined };
  /** The verified-signature cache to use (one shared by several executors of one process); a new one by default. */
  verifier?: SignatureVerifier;
}

/** The request's `identifier` (null when absent) and `reqId` (null when it did not parse): what a REJECT echoes. */
export interface RequestIdentity {
  identifier: string | null;
  reqId: number | bigint | null;
}

export type RequestResult =
  | ({ index: number; valid: true; seqNo: number; txn: Txn; digest: string; payloadDigest: string } & RequestIdentity)
  | ({
      index: number;
      valid: false;
      code: RequestErrorCode;
      reason: string;
      replyCode: number | null;
      kind: ErrorKind;
      error: RequestError;
      digest: string | null;
    } & RequestIdentity);

export interface BatchResult {
  batchId: number;
  ledgerId: StateLedgerId;
  ppTime: number;
  results: RequestResult[];
  /** Uncommitted state root and ledger root / size of the batch's ledger after the batch. */
  stateRoot: Uint8Array;
  txnRoot: Uint8Array;
  ledgerSize: number;
  validCount: number;
}

/** A request ordered in a batch: its digests and seqNo (its seqNo / digest index entry). */
export interface OrderedRequest {
  payloadDigest: string;
  digest: string;
  seqNo: number;
}

/** A batch the executor committed to its ledger and state: what the node writes and answers from. */
export interface CommittedLedgerBatch {
  batchId: number;
  ledgerId: StateLedgerId;
  ppTime: number;
  stateRoot: Uint8Array;
  /** The committed txns, in ledger order. */
  txns: Txn[];
  /** The committed requests, one per txn, in ledger order. */
  requests: OrderedRequest[];
}

interface AppliedBatch {
  batchId: number;
  ledgerId: StateLedgerId;
  ppTime: number;
  txnCount: number;
  stateRootBefore: Uint8Array;
  stateRootAfter: Uint8Array;
  txns: Txn[];
  digests: OrderedRequest[];
  attributes: Map<string, string>;
}

/** how many payload digests known to be absent from the seqNo index are remembered */
const ABSENT_PAYLOADS_KEPT = 100_000;

export class RequestExecutor {
  readonly registry: HandlerRegistry;
  readonly idr: StateIdrCache;
  /** The node records of the uncommitted pool state, indexed (NODE, POOL_UPGRADE). */
  readonly nodes: StatePoolNodeIndex;
  /** The last committed POOL_UPGRADE action per (name, version). */
  readonly upgrades: LedgerUpgradeIndex;
  readonly auth: AuthorizationEngine;
  readonly verifier: SignatureVerifier;
  /** The state ledgers of the stores, ascending: 0, 1, 2 and the plugin ledgers. */
  readonly stateLedgers: readonly StateLedgerId[];
  readonly views: Readonly<Record<StateLedgerId, TrieView>>;
  readonly ledgerViews: Readonly<Record<StateLedgerId, LedgerView>>;
  private readonly opts: Required<Omit<ExecutorOptions, 'signatureCache'>>;
  private readonly stores: ExecutorStores;
  private readonly software: SoftwareInfo | undefined;
  private readonly pluginLedgers: ExecutorModules['pluginLedgers'];
  private readonly applied: AppliedBatch[] = [];
  private readonly inFlight = new Set<string>();
  /** Payload digests committed into a write batch that is not written yet. */
  private readonly unwritten = new Set<string>();
  /**
   * Payload digests that the seqNo index was found not to hold: a request is looked up when it arrives and again
   * when a batch with it is proposed, checked and applied, and the index changes only through this executor (a
   * commit, catch-up, genesis, rebuild), which drops the digests it adds. Bounded: cleared when full.
   */
  private readonly absent = new Set<string>();
  private nextBatchId = 1;
  private readonly replayHost: ReplayHost;
  private busy = false;

  constructor(options: ExecutorOptions, modules: ExecutorModules) {
    this.opts = { ...defaultExecutorOptions, ...stripUndefined(options) };
    this.stores = modules.stores;
    this.registry = modules.registry ?? createDefaultRegistry();
    this.software = modules.software;
    this.pluginLedgers = modules.pluginLedgers;
    const s = modules.stores.states;
    const holder: { idr?: StateIdrCache } = {};
    const domain = new TrieView(s[1], (key) => holder.idr?.invalidateKey(key));
    const idr = new StateIdrCache(domain);
    holder.idr = idr;
    this.idr = idr;
    const nodes = new StatePoolNodeIndex(s[0]);
    this.nodes = nodes;
    const l = modules.stores.ledgers;
    this.stateLedgers = stateLedgerIds(modules.stores);
    const views: Record<StateLedgerId, TrieView> = { 0: new TrieView(s[0], (key) => nodes.invalidateKey(key)), 1: domain, 2: new TrieView(s[2]) };
    const ledgerViews: Record<StateLedgerId, LedgerView> = { 0: new LedgerView(0, l[0]), 1: new LedgerView(1, l[1]), 2: new LedgerView(2, l[2]) };
    for (const id of this.stateLedgers) {
      if (id <= 2) continue;
      views[id] = new TrieView(s[id]);
      ledgerViews[id] = new LedgerView(id, l[id]);
    }
    this.views = views;
    this.ledgerViews = ledgerViews;
    this.upgrades = new LedgerUpgradeIndex(l[2]);
    this.replayHost = {
      stores: modules.stores,
      applyStoredTxn: (ledgerId, txn, seqNo, attributes) => this.applyStoredTxn(ledgerId, txn, seqNo, attributes),
      forgetHeads: () => this.forgetHeads(),
      unwrittenUntilWritten: (wb, payloads) => this.unwrittenUntilWritten(wb, payloads),
    };
    this.auth = new AuthorizationEngine({ config: this.views[2], idr, typeName: (t) => this.registry.nameOf(t) });
    this.verifier = modules.verifier ?? new SignatureVerifier(options.signatureCache);
  }

  /** Whether `id` is a state ledger of this executor (0, 1, 2 or a plugin ledger of the stores). */
  isStateLedger(id: unknown): id is StateLedgerId {
    return typeof id === 'number' && this.stateLedgers.includes(id);
  }

  /** Number of applied, not yet committed batches. */
  get uncommittedBatches(): number {
    return this.applied.length;
  }

  /**
   * The parts of a handler context that do not depend on the position (made once: a context is made per request and
   * per caught-up txn).
   */
  private readonly stateOf = (id: StateLedgerId): TrieView => {
    if (!this.isStateLedger(id)) throw new RequestError(RequestErrorCode.READ_INVALID_LEDGER, { ledgerId: id });
    return this.views[id];
  };
  private readonly ledgerOf = (id: LedgerIdValue): LedgerView => {
    if (!this.isStateLedger(id)) throw new RequestError(RequestErrorCode.READ_INVALID_LEDGER, { ledgerId: id });
    return this.ledgerViews[id];
  };
  private readonly snapshotOf = (id: number): LedgerSnapshot | undefined => {
    if (!this.isStateLedger(id)) return id > LedgerId.AUDIT ? this.pluginLedgers?.snapshot(id) : undefined;
    // the appended txns only: the batch being applied is a config batch, and the config ledger is never frozen
    const ledger = this.stores.ledgers[id];
    return { size: ledger.uncommittedSize, root: ledger.uncommittedRoot, stateRoot: this.stores.states[id].headRoot };
  };
  /** Attribute access outside a batch: reads from the store, writes refused. */
  private readonly storedAttributes: AttributeAccess = {
    put: () => {
      throw new RequestError(RequestErrorCode.INTERNAL, { problem: 'attribute writes are only allowed while applying a batch' });
    },
    get: (hash) => this.stores.attributes.getSync(hash),
  };

  /** A handler context for one position of a ledger (also used by the receipt pipeline). */
  context(ledgerId: LedgerIdValue, ppTime: number | null, seqNo: number, attributes?: AttributeAccess): HandlerContext {
    const ctx: HandlerContext = {
      ledgerId,
      ppTime,
      txn: { seqNo, txnTime: ppTime },
      state: this.stateOf,
      ledger: this.ledgerOf,
      idr: this.idr,
      nodes: this.nodes,
      upgrades: this.upgrades,
      auth: this.auth,
      attributes: attributes ?? this.storedAttributes,
      ledgerSnapshot: this.snapshotOf,
    };
    if (this.software) (ctx as { software?: SoftwareInfo }).software = this.software;
    return ctx;
  }

  /**
   * Applies a batch of finalised requests to the uncommitted state and ledger of `ledgerId`.
   * Each request is parsed (raw JSON text/bytes or a parsed object), statically validated,
   * checked for duplicates, signature-verified (when enabled), TAA-checked, dynamically validated
   * and applied; a failing request changes nothing and is reported with its code and reason.
   */
  applyBatch(ledgerId: number, requests: readonly unknown[], ppTime: number): BatchResult {
    if (!this.isStateLedger(ledgerId)) throw new RequestError(RequestErrorCode.READ_INVALID_LEDGER, { ledgerId });
    if (!Number.isSafeInteger(ppTime) || ppTime < 0) throw new RequestError(RequestErrorCode.INTERNAL, { problem: `invalid ppTime ${String(ppTime)}` });
    this.enter();
    try {
      const ledger = this.stores.ledgers[ledgerId];
      const trie = this.stores.states[ledgerId];
      const rootsBefore = this.stateLedgers.map((id) => [id, this.stores.states[id].headRoot] as const);
      const refused = new Map<number, { error: RequestError; digest: string | null } & RequestIdentity>();
      // requests.md §7.3: a frozen ledger takes no writes. Read once per batch: only a config batch can
      // freeze a ledger, and the config ledger itself is never frozen.
      let frozen: boolean | RequestError;
      try {
        frozen = ledgerId !== LedgerId.CONFIG && isLedgerFrozen(this.views[LedgerId.CONFIG], ledgerId);
      } catch (e) {
        frozen = toRequestError(e);
      }
      for (;;) {
        const batch: AppliedBatch = {
          batchId: this.nextBatchId,
          ledgerId,
          ppTime,
          txnCount: 0,
          stateRootBefore: trie.headRoot,
          stateRootAfter: trie.headRoot,
          txns: [],
          digests: [],
          attributes: new Map(),
        };
        const results: RequestResult[] = [];
        for (let index = 0; index < requests.length; index++) {
          const known = refused.get(index);
          results.push(known ? invalidResult(index, known.error, known.digest, known) : this.applyOne(index, requests[index], ledgerId, ppTime, batch, frozen));
        }
        const txns = this.ledgerViews[ledgerId].takePending();
        try {
          if (txns.length > 0) ledger.append(txns);
        } catch (e) {
          // A txn the ledger cannot store (never expected for a validated request): undo the whole
          // batch, refuse the request(s) at fault and apply the batch again without them.
          for (const [id, root] of rootsBefore) this.stores.states[id].setHead(root);
          for (const d of batch.digests) this.inFlight.delete(d.payloadDigest);
          this.forgetHeads();
          const error = new RequestError(RequestErrorCode.INTERNAL, { problem: `ledger refused the txn: ${toRequestError(e).reason}` });
          const at = (e as { data?: { index?: unknown } }).data?.index;
          const valid = results.filter((r) => r.valid);
          const culprit = typeof at === 'number' ? valid[at] : undefined;
          for (const r of culprit === undefined ? valid : [culprit])
            refused.set(r.index, { error, digest: r.digest, identifier: r.identifier, reqId: r.reqId });
          continue;
        }
        this.nextBatchId++;
        batch.stateRootAfter = trie.headRoot;
        this.applied.push(batch);
        return {
          batchId: batch.batchId,
          ledgerId,
          ppTime,
          results,
          stateRoot: batch.stateRootAfter,
          txnRoot: ledger.uncommittedRoot,
          ledgerSize: ledger.uncommittedSize,
          validCount: batch.txnCount,
        };
      }
    } finally {
      this.busy = false;
    }
  }

  private applyOne(index: number, raw: unknown, ledgerId: StateLedgerId, ppTime: number, batch: AppliedBatch, frozen: boolean | RequestError): RequestResult {
    const ledger = this.ledgerViews[ledgerId];
    let req: ParsedRequest | undefined;
    const views = this.views;
    const pendingAttrs = new Map<string, string>();
    try {
      req = parseRequest(raw);
      const handler = this.writeHandlerFor(req, ledgerId);
      handler.validateStatic(req);
      const pd = req.payloadDigest;
      if (this.inFlight.has(pd) || this.isPayloadCommitted(pd)) {
        throw new RequestError(RequestErrorCode.ALREADY_ORDERED, { payloadDigest: pd });
      }
      if (this.opts.verifySignatures) this.verifier.verify(req, this.idr, this.views[0]);
      const plugin = ledgerId > LedgerId.AUDIT ? this.registry.plugin(ledgerId) : undefined;
      checkTaaAcceptance(req, ledgerId, this.views[2], ppTime, plugin === undefined ? undefined : plugin.taaAcceptanceRequired === true);
      if (frozen instanceof RequestError) throw frozen;
      if (frozen) throw new RequestError(RequestErrorCode.LEDGER_FROZEN, { type: req.type, ledgerId });
      const seqNo = ledger.uncommittedSize + 1;
      const attributes: AttributeAccess = {
        put: (hash, value) => void pendingAttrs.set(hash, value),
        get: (hash) => pendingAttrs.get(hash) ?? batchAttribute(this.applied, batch, hash) ?? this.stores.attributes.getSync(hash),
      };
      const ctx = this.context(ledgerId, ppTime, seqNo, attributes);
      handler.validateDynamic(req, ctx);
      for (const id of this.stateLedgers) views[id].beginUndo();
      const txn = parsedRequestToTxn(req);
      const txnId = handler.prepareTxn?.(txn, req, ctx);
      txn.txnMetadata = { seqNo, txnTime: ppTime };
      if (txnId !== undefined) txn.txnMetadata.txnId = txnId;
      handler.updateState(txn, ctx, req);
      for (const id of this.stateLedgers) views[id].endUndo(false);
      ledger.addPending(txn);
      this.inFlight.add(pd);
      for (const [h, v] of pendingAttrs) batch.attributes.set(h, v);
      batch.txnCount++;
      batch.txns.push(txn);
      batch.digests.push({ payloadDigest: pd, digest: req.digest, seqNo });
      return { index, valid: true, seqNo, txn, digest: req.digest, payloadDigest: pd, identifier: req.identifier, reqId: req.reqId };
    } catch (e) {
      // undo whatever this request did: state head and idr cache (its txn was not added)
      try {
        for (const id of this.stateLedgers) views[id].endUndo(true);
      } finally {
        this.idr.clear();
      }
      let digest: string | null;
      try {
        digest = req?.digest ?? null;
      } catch {
        digest = null;
      }
      return invalidResult(index, toRequestError(e), digest, { identifier: req?.identifier ?? null, reqId: req?.reqId ?? null });
    }
  }

  private writeHandlerFor(req: ParsedRequest, ledgerId: StateLedgerId): WriteHandler {
    const h = this.registry.writeHandlerOf(req.type);
    if (h.ledgerId !== ledgerId) throw new RequestError(RequestErrorCode.WRONG_LEDGER, { type: req.type, ledgerId });
    return h;
  }

  /** True when a request with this payload digest is committed (written, or in a batch being written). */
  isPayloadCommitted(payloadDigest: string): boolean {
    if (this.unwritten.has(payloadDigest)) return true;
    if (this.absent.has(payloadDigest)) return false;
    const found = this.stores.seqNoIndex !== undefined && this.stores.seqNoIndex.getByPayloadDigestSync(payloadDigest) !== undefined;
    if (!found) {
      if (this.absent.size >= ABSENT_PAYLOADS_KEPT) this.absent.clear();
      this.absent.add(payloadDigest);
    }
    return found;
  }

  /**
   * Commits applied batches in order, synchronously, into the caller's `writeBatch`: every batch
   * with id <= `upToBatchId` (default: the oldest one). Ledger txns, state root, ts-root, seqNo /
   * digest index and attribute-store entries go into it; until it is written, the committed
   * payloads still count as ordered (`isPayloadCommitted`).
   */
  commitInto(writeBatch: WriteBatch, upToBatchId?: number): CommittedLedgerBatch[] {
    if (this.applied.length === 0) return [];
    const limit = upToBatchId ?? this.applied[0].batchId;
    const done: CommittedLedgerBatch[] = [];
    this.enter();
    try {
      const payloads: string[] = [];
      for (let b = this.applied.at(0); b !== undefined && b.batchId <= limit; b = this.applied.at(0)) {
        this.applied.shift();
        void this.stores.ledgers[b.ledgerId].commit(b.txnCount, writeBatch);
        void this.stores.states[b.ledgerId].commit(b.stateRootAfter, writeBatch);
        this.stores.timestamps?.set(b.ledgerId, b.ppTime, b.stateRootAfter, writeBatch);
        for (const d of b.digests) {
          this.stores.seqNoIndex?.add({ payloadDigest: d.payloadDigest, digest: d.digest, ledgerId: b.ledgerId, seqNo: d.seqNo }, writeBatch);
          this.inFlight.delete(d.payloadDigest);
          payloads.push(d.payloadDigest);
        }
        for (const value of [...b.attributes.values()].sort()) this.stores.attributes.put(value, writeBatch);
        done.push({ batchId: b.batchId, ledgerId: b.ledgerId, ppTime: b.ppTime, stateRoot: b.stateRootAfter, txns: b.txns, requests: b.digests });
      }
      this.unwrittenUntilWritten(writeBatch, payloads);
      return done;
    } finally {
      this.busy = false;
    }
  }

  /** `commitInto` a batch of its own, written before the promise resolves (or the caller's, which the caller writes). */
  async commit(upToBatchId?: number, writeBatch?: WriteBatch): Promise<CommittedLedgerBatch[]> {
    const wb = writeBatch ?? this.stores.kv.batch();
    const done = this.commitInto(wb, upToBatchId);
    if (writeBatch === undefined && done.length > 0) await wb.write();
    return done;
  }

  /** Payloads committed into `wb` count as ordered until it is written (then the index has them). */
  private unwrittenUntilWritten(wb: WriteBatch, payloads: readonly string[]): void {
    if (payloads.length === 0) return;
    for (const pd of payloads) {
      this.unwritten.add(pd);
      this.absent.delete(pd);
    }
    wb.afterWrite((error) => {
      // after a failed write they stay: they are not ordered again before the node recovers
      if (error === undefined) for (const pd of payloads) this.unwritten.delete(pd);
    });
  }

  /** Reverts the newest `count` uncommitted batches (default: all, back to the last committed state). */
  revert(count?: number): void {
    const n = Math.min(count ?? this.applied.length, this.applied.length);
    for (let i = 0; i < n; i++) {
      const b = this.applied.pop();
      if (b === undefined) break;
      this.stores.ledgers[b.ledgerId].discard(b.txnCount);
      this.stores.states[b.ledgerId].setHead(b.stateRootBefore);
      for (const d of b.digests) this.inFlight.delete(d.payloadDigest);
    }
    if (this.applied.length === 0) for (const id of this.stateLedgers) this.stores.states[id].revertToCommitted();
    this.forgetHeads();
  }

  /** The state heads moved under the caches: the DID cache and the node index start over. */
  private forgetHeads(): void {
    this.idr.clear();
    this.nodes.clear();
  }

  /**
   * The committed txns `from`..`to` (inclusive, clipped to 1..committed size) of a state ledger as a
   * seeder sends them in catch-up (formats.md 12.1): ordered ATTRIB txns carry their `raw` / `enc`
   * original, restored from the attribute store; the others are the stored txns. Synchronous.
   */
  catchupTxns(ledgerId: number, from: number, to: number): Txn[] {
    const { ledger, first, last, original, missing } = this.catchupSpan(ledgerId, from, to);
    const out: Txn[] = [];
    for (let seqNo = first; seqNo <= last; seqNo++) {
      const txn = ledger.getSync(seqNo);
      if (txn === undefined) throw missing(seqNo);
      out.push(catchupFormOf(ledgerId, txn, original));
    }
    return out;
  }

  /**
   * The committed txns a seeder serves from `ledgerId` for `from`..`to` (clipped to 1..committed size), the originals of
   * ordered ATTRIB values, and the error of a txn missing from the ledger: catchupTxns' and catchupTxnsEncoded's checks.
   */
  private catchupSpan(
    ledgerId: number,
    from: number,
    to: number,
  ): {
    ledger: ExecutorStores['ledgers'][StateLedgerId];
    first: number;
    last: number;
    original: (hash: string) => string | undefined;
    missing: (seqNo: number) => RequestError;
  } {
    if (!this.isStateLedger(ledgerId)) throw new RequestError(RequestErrorCode.READ_INVALID_LEDGER, { ledgerId });
    if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to))
      throw new RequestError(RequestErrorCode.INTERNAL, { problem: `invalid range ${String(from)}..${String(to)}` });
    const ledger = this.stores.ledgers[ledgerId];
    const attributes = this.stores.attributes;
    return {
      ledger,
      first: Math.max(1, from),
      last: Math.min(to, ledger.size),
      original: (hash) => attributes.getSync(hash),
      missing: (seqNo) => new RequestError(RequestErrorCode.INTERNAL, { problem: `ledger ${ledgerId} has no txn ${seqNo}` }),
    };
  }

  /**
   * {@link catchupTxns} as a seeder puts them on the wire: a txn whose catch-up form is the stored txn (any but an
   * ordered ATTRIB with an original) is given as its stored bytes MP(txn) (MsgpackEncoded), neither decoded nor
   * encoded again; the others decoded and restored as catchupTxns does. Each encodes as catchupTxns' txn does.
   */
  catchupTxnsEncoded(ledgerId: number, from: number, to: number): (Txn | MsgpackEncoded)[] {
    const { ledger, first, last, original, missing } = this.catchupSpan(ledgerId, from, to);
    const out: (Txn | MsgpackEncoded)[] = [];
    for (let seqNo = first; seqNo <= last; seqNo++) {
      const bytes = ledger.getEncodedSync(seqNo);
      if (bytes === undefined) throw missing(seqNo);
      const decode = (): Txn => {
        const txn = ledger.getSync(seqNo);
        if (txn === undefined) throw missing(seqNo);
        return txn;
      };
      out.push(catchupFormOfStored(ledgerId, bytes, decode, original));
    }
    return out;
  }

  /**
   * Appends txns ordered elsewhere (catch-up) after the committed size of `ledgerId`, applies them
   * to its state and commits, synchronously into `writeBatch`, the ledger, the state root after
   * each batch time with its ts-root entry (as ordering did), the seqNo / digest index and the
   * attribute originals the txns carry. The txns are in catch-up form (see `catchupTxns`): ordered
   * ATTRIB originals are hashed into the stored form (formats.md 4.5) before the ledger hashes them,
   * and kept in the attribute store. `accept(txnRoot, size)` is asked with the ledger root after
   * the append, before the state is touched (the caller's proof check). All or nothing: when the
   * txns do not append, are not accepted or do not apply, nothing changes and the
   * CATCHUP_TXNS_REFUSED error says why. Only while no batch is applied.
   */
  appendCaughtUp(ledgerId: number, txns: readonly unknown[], writeBatch: WriteBatch, accept: (txnRoot: Uint8Array, size: number) => boolean): CaughtUpTxns {
    if (!this.isStateLedger(ledgerId)) throw new RequestError(RequestErrorCode.READ_INVALID_LEDGER, { ledgerId });
    if (this.applied.length > 0) throw new RequestError(RequestErrorCode.CATCHUP_TXNS_REFUSED, { ledgerId, problem: 'batches are applied and not committed' });
    this.enter();
    try {
      return appendCaughtUpTxns(this.replayHost, ledgerId, txns, writeBatch, accept);
    } finally {
      this.absent.clear();
      this.busy = false;
    }
  }

  /**
   * Applies genesis txns (formats.md 4.4, 11) to an empty ledger and its state and commits them.
   * Genesis content is not validated; a txn of a type without a handler is stored without state.
   * The originals of genesis ATTRIB `raw` / `enc` values go to the attribute store.
   */
  async applyGenesis(ledgerId: number, txns: readonly Txn[], writeBatch?: WriteBatch): Promise<void> {
    if (!this.isStateLedger(ledgerId)) throw new RequestError(RequestErrorCode.READ_INVALID_LEDGER, { ledgerId });
    if (this.applied.length > 0) throw new RequestError(RequestErrorCode.INTERNAL, { problem: 'genesis while batches are uncommitted' });
    if (this.stores.ledgers[ledgerId].size > 0) throw new RequestError(RequestErrorCode.INTERNAL, { problem: `ledger ${ledgerId} is not empty` });
    this.enter();
    try {
      await applyGenesisTxns(this.replayHost, ledgerId, txns, writeBatch);
    } finally {
      this.absent.clear();
      this.busy = false;
    }
  }

  /**
   * Rebuilds a ledger's state from its committed txns (when the state store is empty or lost),
   * with the timestamp -> state root index: the root after the last txn of each batch time is
   * committed (so historic reads at it have their trie nodes) and recorded for that time. Genesis
   * ATTRIB originals are put back into the attribute store. Without `writeBatch` the work is
   * written in several batches as it goes; with one, everything goes into it.
   */
  async rebuildState(ledgerId: number, writeBatch?: WriteBatch): Promise<Uint8Array> {
    if (!this.isStateLedger(ledgerId)) throw new RequestError(RequestErrorCode.READ_INVALID_LEDGER, { ledgerId });
    if (this.applied.length > 0) throw new RequestError(RequestErrorCode.INTERNAL, { problem: 'rebuild while batches are uncommitted' });
    this.enter();
    try {
      return await rebuildStateFromLedger(this.replayHost, ledgerId, writeBatch);
    } finally {
      this.absent.clear();
      this.busy = false;
    }
  }

  /** Applies a stored txn to the state with its type's handler (types without one have no state). */
  private applyStoredTxn(ledgerId: StateLedgerId, txn: Txn, seqNo: number, attributes: AttributeAccess): void {
    const handler = this.registry.write(txn.txn?.type);
    if (handler === undefined || handler.ledgerId !== ledgerId) return;
    handler.updateState(txn, this.context(ledgerId, txnTimeOf(txn), seqNo, attributes));
  }

  private enter(): void {
    if (this.busy) throw new RequestError(RequestErrorCode.INTERNAL, { problem: 'executor calls must not overlap' });
    this.busy = true;
  }
}

function invalidResult(index: number, error: RequestError, digest: string | null, who: RequestIdentity): RequestResult {
  return {
    index,
    valid: false,
    code: error.code,
    reason: error.reason,
    replyCode: error.replyCode,
    kind: error.kind,
    error,
    digest,
    identifier: who.identifier,
    reqId: who.reqId,
  };
}

function batchAttribute(applied: readonly AppliedBatch[], current: AppliedBatch, hash: string): string | undefined {
  const v = current.attributes.get(hash);
  if (v !== undefined) return v;
  for (let i = applied.length - 1; i >= 0; i--) {
    const x = applied[i].attributes.get(hash);
    if (x !== undefined) return x;
  }
  return undefined;
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
