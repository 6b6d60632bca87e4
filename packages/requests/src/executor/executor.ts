/**
 * The executor consensus drives: apply a batch of finalised requests for one ledger at a ppTime to
 * the uncommitted state and ledger (reporting each request valid or invalid with code and reason,
 * and the new roots), commit applied batches in order, revert uncommitted ones, apply genesis, and
 * rebuild state from the ledger. Deterministic (no clock, no randomness, sorted keys) and total: no
 * exception escapes applyBatch — any bad request becomes an invalid result with a code.
 */
import type { WriteBatch } from '@quire/storage';
import { AuthorizationEngine } from '../auth/engine.js';
import { StateIdrCache } from '../auth/idr-cache.js';
import { SignatureVerifier, type SignatureVerifierOptions } from '../auth/signatures.js';
import { ErrorKind, RequestError, RequestErrorCode, toRequestError } from '../errors.js';
import type { AttributeAccess, HandlerContext, LedgerIdValue, ParsedRequest, SoftwareInfo, StateLedgerId, Txn, WriteHandler } from '../handler.js';
import { parseRequest } from '../pipeline/parse.js';
import { HandlerRegistry, createDefaultRegistry } from '../registry.js';
import { checkTaaAcceptance } from '../taa/acceptance.js';
import { type ExecutorStores, LedgerView, TrieView } from './stores.js';
import { requestToTxn } from './txn.js';

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
}

export type RequestResult =
  | { index: number; valid: true; seqNo: number; txn: Txn; digest: string; payloadDigest: string }
  | { index: number; valid: false; code: RequestErrorCode; reason: string; replyCode: number | null; kind: ErrorKind; error: RequestError; digest: string | null };

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

export interface CommittedBatch {
  batchId: number;
  ledgerId: StateLedgerId;
  ppTime: number;
  stateRoot: Uint8Array;
  /** The committed txns, in ledger order. */
  txns: Txn[];
}

interface AppliedBatch {
  batchId: number;
  ledgerId: StateLedgerId;
  ppTime: number;
  txnCount: number;
  stateRootBefore: Uint8Array;
  stateRootAfter: Uint8Array;
  txns: Txn[];
  digests: { payloadDigest: string; digest: string; seqNo: number }[];
  attributes: Map<string, string>;
}

const STATE_LEDGERS: readonly StateLedgerId[] = [0, 1, 2];
/** Queued operations after which a rebuild writes its own batch and starts another. */
const REBUILD_FLUSH_OPS = 20_000;

function isStateLedger(v: unknown): v is StateLedgerId {
  return v === 0 || v === 1 || v === 2;
}

export class RequestExecutor {
  readonly registry: HandlerRegistry;
  readonly idr: StateIdrCache;
  readonly auth: AuthorizationEngine;
  readonly verifier: SignatureVerifier;
  readonly views: Readonly<Record<StateLedgerId, TrieView>>;
  readonly ledgerViews: Readonly<Record<StateLedgerId, LedgerView>>;
  private readonly opts: Required<Omit<ExecutorOptions, 'signatureCache'>>;
  private readonly stores: ExecutorStores;
  private readonly software: SoftwareInfo | undefined;
  private readonly applied: AppliedBatch[] = [];
  private readonly inFlight = new Set<string>();
  private nextBatchId = 1;
  private busy = false;

  constructor(options: ExecutorOptions, modules: ExecutorModules) {
    this.opts = { ...defaultExecutorOptions, ...stripUndefined(options) };
    this.stores = modules.stores;
    this.registry = modules.registry ?? createDefaultRegistry();
    this.software = modules.software;
    const s = modules.stores.states;
    const holder: { idr?: StateIdrCache } = {};
    const domain = new TrieView(s[1], (key) => holder.idr?.invalidateKey(key));
    const idr = new StateIdrCache(domain);
    holder.idr = idr;
    this.idr = idr;
    this.views = { 0: new TrieView(s[0]), 1: domain, 2: new TrieView(s[2]) };
    const l = modules.stores.ledgers;
    this.ledgerViews = { 0: new LedgerView(0, l[0]), 1: new LedgerView(1, l[1]), 2: new LedgerView(2, l[2]) };
    this.auth = new AuthorizationEngine({ config: this.views[2], idr, typeName: (t) => this.registry.nameOf(t) });
    this.verifier = new SignatureVerifier(options.signatureCache);
  }

  /** Number of applied, not yet committed batches. */
  get uncommittedBatches(): number {
    return this.applied.length;
  }

  /** A handler context for one position of a ledger (also used by the receipt pipeline). */
  context(ledgerId: LedgerIdValue, ppTime: number | null, seqNo: number, attributes?: AttributeAccess): HandlerContext {
    const views = this.views;
    const ledgers = this.ledgerViews;
    const stores = this.stores;
    const attrs: AttributeAccess = attributes ?? {
      put: () => {
        throw new RequestError(RequestErrorCode.INTERNAL, { problem: 'attribute writes are only allowed while applying a batch' });
      },
      get: (hash) => stores.attributes.get(hash),
    };
    const ctx: HandlerContext = {
      ledgerId,
      ppTime,
      txn: { seqNo, txnTime: ppTime },
      state: (id: StateLedgerId) => views[id],
      ledger: (id: LedgerIdValue) => {
        if (!isStateLedger(id)) throw new RequestError(RequestErrorCode.READ_INVALID_LEDGER, { ledgerId: id });
        return ledgers[id];
      },
      idr: this.idr,
      auth: this.auth,
      attributes: attrs,
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
  async applyBatch(ledgerId: number, requests: readonly unknown[], ppTime: number): Promise<BatchResult> {
    if (!isStateLedger(ledgerId)) throw new RequestError(RequestErrorCode.READ_INVALID_LEDGER, { ledgerId });
    if (!Number.isSafeInteger(ppTime) || ppTime < 0) throw new RequestError(RequestErrorCode.INTERNAL, { problem: `invalid ppTime ${String(ppTime)}` });
    this.enter();
    try {
      const ledger = this.stores.ledgers[ledgerId];
      const trie = this.stores.states[ledgerId];
      const rootsBefore = STATE_LEDGERS.map((id) => this.stores.states[id].headRoot);
      const refused = new Map<number, { error: RequestError; digest: string | null }>();
      for (;;) {
        const batch: AppliedBatch = {
          batchId: this.nextBatchId,
          ledgerId,
          ppTime,
          txnCount: 0,
          stateRootBefore: rootsBefore[ledgerId]!,
          stateRootAfter: rootsBefore[ledgerId]!,
          txns: [],
          digests: [],
          attributes: new Map(),
        };
        const results: RequestResult[] = [];
        for (let index = 0; index < requests.length; index++) {
          const known = refused.get(index);
          results.push(known ? invalidResult(index, known.error, known.digest) : await this.applyOne(index, requests[index], ledgerId, ppTime, batch));
        }
        const txns = this.ledgerViews[ledgerId].takePending();
        try {
          if (txns.length > 0) ledger.append(txns);
        } catch (e) {
          // A txn the ledger cannot store (never expected for a validated request): undo the whole
          // batch, refuse the request(s) at fault and apply the batch again without them.
          for (const id of STATE_LEDGERS) this.stores.states[id].setHead(rootsBefore[id]!);
          for (const d of batch.digests) this.inFlight.delete(d.payloadDigest);
          this.idr.clear();
          const error = new RequestError(RequestErrorCode.INTERNAL, { problem: `ledger refused the txn: ${toRequestError(e).reason}` });
          const at = (e as { data?: { index?: unknown } }).data?.index;
          const valid = results.filter((r) => r.valid);
          const culprit = typeof at === 'number' ? valid[at] : undefined;
          for (const r of culprit === undefined ? valid : [culprit]) refused.set(r.index, { error, digest: r.digest });
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

  private async applyOne(index: number, raw: unknown, ledgerId: StateLedgerId, ppTime: number, batch: AppliedBatch): Promise<RequestResult> {
    const ledger = this.ledgerViews[ledgerId];
    let req: ParsedRequest | undefined;
    const views = this.views;
    const pendingAttrs = new Map<string, string>();
    try {
      req = parseRequest(raw);
      const handler = this.writeHandlerFor(req, ledgerId);
      handler.validateStatic(req);
      const pd = req.payloadDigest;
      if (this.inFlight.has(pd) || this.stores.seqNoIndex?.getByPayloadDigestSync(pd) !== undefined) {
        throw new RequestError(RequestErrorCode.ALREADY_ORDERED, { payloadDigest: pd });
      }
      if (this.opts.verifySignatures) this.verifier.verify(req, this.idr, this.views[0]);
      checkTaaAcceptance(req, ledgerId, this.views[2], ppTime);
      const seqNo = ledger.uncommittedSize + 1;
      const attributes: AttributeAccess = {
        put: (hash, value) => void pendingAttrs.set(hash, value),
        get: async (hash) => pendingAttrs.get(hash) ?? batchAttribute(this.applied, batch, hash) ?? this.stores.attributes.get(hash),
      };
      const ctx = this.context(ledgerId, ppTime, seqNo, attributes);
      await handler.validateDynamic(req, ctx);
      for (const id of STATE_LEDGERS) views[id].beginUndo();
      const txn = requestToTxn(req);
      const txnId = handler.prepareTxn?.(txn, req, ctx);
      txn.txnMetadata = { seqNo, txnTime: ppTime };
      if (txnId !== undefined) txn.txnMetadata.txnId = txnId;
      await handler.updateState(txn, ctx, req);
      for (const id of STATE_LEDGERS) views[id].endUndo(false);
      ledger.addPending(txn);
      this.inFlight.add(pd);
      for (const [h, v] of pendingAttrs) batch.attributes.set(h, v);
      batch.txnCount++;
      batch.txns.push(txn);
      batch.digests.push({ payloadDigest: pd, digest: req.digest, seqNo });
      return { index, valid: true, seqNo, txn, digest: req.digest, payloadDigest: pd };
    } catch (e) {
      // undo whatever this request did: state head and idr cache (its txn was not added)
      try {
        for (const id of STATE_LEDGERS) views[id].endUndo(true);
      } finally {
        this.idr.clear();
      }
      let digest: string | null;
      try {
        digest = req?.digest ?? null;
      } catch {
        digest = null;
      }
      return invalidResult(index, toRequestError(e), digest);
    }
  }

  private writeHandlerFor(req: ParsedRequest, ledgerId: StateLedgerId): WriteHandler {
    const h = this.registry.get(req.type);
    if (h === undefined) throw new RequestError(RequestErrorCode.UNKNOWN_TYPE, { type: req.type });
    if (h.kind !== 'write') throw new RequestError(RequestErrorCode.NOT_A_WRITE, { type: req.type });
    if (h.ledgerId !== ledgerId) throw new RequestError(RequestErrorCode.WRONG_LEDGER, { type: req.type, ledgerId });
    return h;
  }

  /**
   * Commits applied batches in order: every batch with id <= `upToBatchId` (default: the oldest
   * one). Ledger txns, state root, ts-root, seqNo index and attribute-store entries go into
   * `writeBatch` when given (the caller writes it), else into one batch written here.
   */
  async commit(upToBatchId?: number, writeBatch?: WriteBatch): Promise<CommittedBatch[]> {
    if (this.applied.length === 0) return [];
    const limit = upToBatchId ?? this.applied[0]!.batchId;
    const own = writeBatch === undefined;
    const wb = writeBatch ?? this.stores.kv.batch();
    const done: CommittedBatch[] = [];
    this.enter();
    try {
      while (this.applied.length > 0 && this.applied[0]!.batchId <= limit) {
        const b = this.applied.shift()!;
        await this.stores.ledgers[b.ledgerId].commit(b.txnCount, wb);
        await this.stores.states[b.ledgerId].commit(b.stateRootAfter, wb);
        this.stores.timestamps?.set(b.ledgerId, b.ppTime, b.stateRootAfter, wb);
        for (const d of b.digests) {
          this.stores.seqNoIndex?.add({ payloadDigest: d.payloadDigest, digest: d.digest, ledgerId: b.ledgerId, seqNo: d.seqNo }, wb);
          this.inFlight.delete(d.payloadDigest);
        }
        for (const value of [...b.attributes.values()].sort()) this.stores.attributes.put(value, wb);
        done.push({ batchId: b.batchId, ledgerId: b.ledgerId, ppTime: b.ppTime, stateRoot: b.stateRootAfter, txns: b.txns });
      }
      if (own) await wb.write();
      return done;
    } finally {
      this.busy = false;
    }
  }

  /** Reverts the newest `count` uncommitted batches (default: all, back to the last committed state). */
  revert(count?: number): void {
    const n = Math.min(count ?? this.applied.length, this.applied.length);
    for (let i = 0; i < n; i++) {
      const b = this.applied.pop()!;
      this.stores.ledgers[b.ledgerId].discard(b.txnCount);
      this.stores.states[b.ledgerId].setHead(b.stateRootBefore);
      for (const d of b.digests) this.inFlight.delete(d.payloadDigest);
    }
    if (this.applied.length === 0) for (const id of STATE_LEDGERS) this.stores.states[id].revertToCommitted();
    this.idr.clear();
  }

  /**
   * Applies genesis txns (formats.md 4.4, 11) to an empty ledger and its state and commits them.
   * Genesis content is not validated; a txn of a type without a handler is stored without state.
   * The originals of genesis ATTRIB `raw` / `enc` values go to the attribute store.
   */
  async applyGenesis(ledgerId: number, txns: readonly Txn[], writeBatch?: WriteBatch): Promise<void> {
    if (!isStateLedger(ledgerId)) throw new RequestError(RequestErrorCode.READ_INVALID_LEDGER, { ledgerId });
    if (this.applied.length > 0) throw new RequestError(RequestErrorCode.INTERNAL, { problem: 'genesis while batches are uncommitted' });
    const ledger = this.stores.ledgers[ledgerId];
    if (ledger.size > 0) throw new RequestError(RequestErrorCode.INTERNAL, { problem: `ledger ${ledgerId} is not empty` });
    this.enter();
    try {
      const attributes = this.replayAttributes();
      for (const txn of txns) {
        const seqNo = ledger.uncommittedSize + 1;
        await this.applyStoredTxn(ledgerId, txn, seqNo, attributes.access);
        ledger.append([txn]);
      }
      const own = writeBatch === undefined;
      const wb = writeBatch ?? this.stores.kv.batch();
      await ledger.commit(undefined, wb);
      await this.stores.states[ledgerId].commit(undefined, wb);
      attributes.flush(wb);
      if (own) await wb.write();
      this.idr.clear();
    } finally {
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
    if (!isStateLedger(ledgerId)) throw new RequestError(RequestErrorCode.READ_INVALID_LEDGER, { ledgerId });
    if (this.applied.length > 0) throw new RequestError(RequestErrorCode.INTERNAL, { problem: 'rebuild while batches are uncommitted' });
    const ledger = this.stores.ledgers[ledgerId];
    const trie = this.stores.states[ledgerId];
    const timestamps = this.stores.timestamps;
    this.enter();
    try {
      const own = writeBatch === undefined;
      let wb = writeBatch ?? this.stores.kv.batch();
      const attributes = this.replayAttributes();
      let time: number | null = null;
      const endOfBatchTime = async (): Promise<void> => {
        if (time === null) return;
        const root = trie.headRoot;
        await trie.commit(root, wb);
        timestamps?.set(ledgerId, time, root, wb);
        if (own && wb.length >= REBUILD_FLUSH_OPS) {
          attributes.flush(wb);
          await wb.write();
          wb = this.stores.kv.batch();
        }
      };
      if (ledger.size > 0) {
        for await (const [seqNo, txn] of ledger.range(1, ledger.size)) {
          const t = txnTimeOf(txn);
          if (t !== time) {
            await endOfBatchTime();
            time = t;
          }
          await this.applyStoredTxn(ledgerId, txn, seqNo, attributes.access);
        }
        await endOfBatchTime();
      }
      await trie.commit(undefined, wb);
      attributes.flush(wb);
      if (own) await wb.write();
      this.idr.clear();
      return trie.committedRoot;
    } finally {
      this.busy = false;
    }
  }

  private async applyStoredTxn(ledgerId: StateLedgerId, txn: Txn, seqNo: number, attributes: AttributeAccess): Promise<void> {
    const handler = this.registry.write(txn.txn?.type);
    if (handler === undefined || handler.ledgerId !== ledgerId) return;
    const ctx = this.context(ledgerId, txnTimeOf(txn), seqNo, attributes);
    await handler.updateState(txn, ctx);
  }

  /** Attribute access for replays (genesis, rebuild): puts are buffered, then flushed into a batch. */
  private replayAttributes(): { access: AttributeAccess; flush(wb: WriteBatch): void } {
    const pending = new Map<string, string>();
    const store = this.stores.attributes;
    return {
      access: {
        put: (hash, value) => void pending.set(hash, value),
        get: async (hash) => pending.get(hash) ?? store.get(hash),
      },
      flush(wb) {
        for (const value of [...pending.values()].sort()) store.put(value, wb);
        pending.clear();
      },
    };
  }

  private enter(): void {
    if (this.busy) throw new RequestError(RequestErrorCode.INTERNAL, { problem: 'executor calls must not overlap' });
    this.busy = true;
  }
}

function invalidResult(index: number, error: RequestError, digest: string | null): RequestResult {
  return { index, valid: false, code: error.code, reason: error.reason, replyCode: error.replyCode, kind: error.kind, error, digest };
}

/** A stored txn's batch time, or null (genesis txns have none). */
function txnTimeOf(txn: Txn): number | null {
  const t = txn.txnMetadata?.txnTime;
  return typeof t === 'number' ? t : null;
}

function batchAttribute(applied: readonly AppliedBatch[], current: AppliedBatch, hash: string): string | undefined {
  const v = current.attributes.get(hash);
  if (v !== undefined) return v;
  for (let i = applied.length - 1; i >= 0; i--) {
    const x = applied[i]!.attributes.get(hash);
    if (x !== undefined) return x;
  }
  return undefined;
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
