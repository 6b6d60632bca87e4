// What the explorer reads from the pool, always through the SDK (every read verified before it is shown): ledger
// txns by seqNo (GET_TXN: audit path against the ledger root, signed by a BLS multi-signature), ledger sizes, the
// validators' own information (VALIDATOR_INFO, signed by a trustee or steward key when the gateway has one), and the
// newest multi-signature seen. Committed txns never change, so verified txns are kept in a bounded LRU cache;
// sizes and validator information are kept for a short time, and concurrent askers share one read.
import { buildGetTxnRequest, buildValidatorInfoRequest, signRequest, type DidKey } from '@quire/client';
import { LruCache, isPlainObject } from '@quire/common';
import { GatewayError, GatewayErrorCode } from '../errors.js';
import { parseJsonField } from '../json.js';
import type { GatewayPool, PoolCaller } from '../pool-call.js';

export type Json = Record<string, unknown>;

export const LEDGER_NAMES = ['pool', 'domain', 'config', 'audit'] as const;
export type LedgerName = (typeof LEDGER_NAMES)[number];

/** A committed txn as the pool proved it. */
export interface VerifiedTxn {
  ledgerId: number;
  seqNo: number;
  /** The ledger entry: {txn: {type, data, metadata}, txnMetadata, reqSignature, ver}. */
  entry: Json;
  /** The ledger root and size the audit path was checked against. */
  rootHash: string | undefined;
  ledgerSize: number | undefined;
  auditPathLength: number;
  multiSignature: MultiSignatureInfo | undefined;
  verified: 'proof' | 'consensus';
  nodes: string[];
}

export interface MultiSignatureInfo {
  participants: string[];
  /** Seconds since the epoch (the batch time it signs). */
  timestamp: number | undefined;
  ledgerId: number | undefined;
  stateRoot: string | undefined;
  txnRoot: string | undefined;
  signature: string | undefined;
}

export function multiSignatureOf(result: Json): MultiSignatureInfo | undefined {
  const sp = result.state_proof;
  const ms = isPlainObject(sp) ? parseJsonField(sp.multi_signature) : undefined;
  if (!isPlainObject(ms)) return undefined;
  const v = isPlainObject(ms.value) ? ms.value : {};
  const str = (x: unknown): string | undefined => (typeof x === 'string' ? x : undefined);
  const num = (x: unknown): number | undefined => (typeof x === 'number' ? x : typeof x === 'bigint' ? Number(x) : undefined);
  return {
    participants: Array.isArray(ms.participants) ? ms.participants.map(String) : [],
    timestamp: num(v.timestamp),
    ledgerId: num(v.ledger_id),
    stateRoot: str(v.state_root_hash),
    txnRoot: str(v.txn_root_hash),
    signature: str(ms.signature),
  };
}

/**
 * A value kept for `ttlMs`, with one read in flight shared by every caller. With `staleWhileRevalidate`, an expired
 * value is still answered at once while a fresh read runs in the background (the pool page never waits for the
 * validators' information once it has some).
 */
class Fresh<T> {
  private value: { at: number; v: T } | undefined;
  private inflight: Promise<T> | undefined;
  constructor(
    private readonly ttlMs: number,
    private readonly load: () => Promise<T>,
    private readonly staleWhileRevalidate = false,
  ) {}
  get(): Promise<T> {
    if (this.value !== undefined && Date.now() - this.value.at < this.ttlMs) return Promise.resolve(this.value.v);
    if (this.staleWhileRevalidate && this.value !== undefined) {
      const stale = this.value.v;
      this.refresh().catch(() => undefined);
      return Promise.resolve(stale);
    }
    return this.refresh();
  }
  private refresh(): Promise<T> {
    this.inflight ??= this.load().then(
      (v) => {
        this.value = { at: Date.now(), v };
        this.inflight = undefined;
        return v;
      },
      (e: unknown) => {
        this.inflight = undefined;
        throw e;
      },
    );
    return this.inflight;
  }
}

export interface ValidatorInfo {
  alias: string;
  /** The node's own VALIDATOR_INFO data, or why there is none. */
  info: Json | undefined;
  error: string | undefined;
}

export interface ExplorerDataOptions {
  /** Verified txns kept (committed txns never change). */
  cacheTxns: number;
  /** How long a ledger size is reused (ms). */
  sizeTtlMs: number;
  /** How long validator information is reused (ms). */
  infoTtlMs: number;
  /** Reads in flight at once for one page. */
  concurrency: number;
}

export const defaultExplorerDataOptions: ExplorerDataOptions = { cacheTxns: 5000, sizeTtlMs: 1000, infoTtlMs: 3000, concurrency: 16 };

export class ExplorerData {
  private readonly txns: LruCache<string, VerifiedTxn>;
  private readonly sizes = new Map<number, Fresh<number>>();
  private readonly info: Fresh<ValidatorInfo[]> | undefined;
  /** The newest multi-signature any read carried. */
  latestMultiSignature: MultiSignatureInfo | undefined;

  constructor(
    readonly pool: GatewayPool,
    readonly caller: PoolCaller,
    /** A trustee's or steward's key: VALIDATOR_INFO needs one (the devnet's trustee); none: the pool page shows what the SDK knows. */
    readonly signer: DidKey | undefined,
    readonly options: ExplorerDataOptions = defaultExplorerDataOptions,
  ) {
    this.txns = new LruCache(options.cacheTxns);
    if (signer !== undefined) this.info = new Fresh(options.infoTtlMs, () => this.loadInfo(signer), true);
  }

  private noteMultiSignature(ms: MultiSignatureInfo | undefined): void {
    if (ms?.timestamp === undefined) return;
    if (this.latestMultiSignature?.timestamp === undefined || ms.timestamp >= this.latestMultiSignature.timestamp) this.latestMultiSignature = ms;
  }

  /**
   * GET_TXN, verified; kept in the cache unless `keep` is false (the search index reads every txn once and must not
   * push the pages' txns out). A read settled by f+1 matching replies (the audit ledger's txns, which carry no
   * multi-signature) may find the validators one batch apart, each answering with its own ledger size: it is asked
   * once more before the failure is passed on.
   */
  private async fetchTxn(ledgerId: number, seqNo: number, keep = true): Promise<VerifiedTxn | null> {
    let out;
    try {
      out = await this.caller.read(buildGetTxnRequest({ ledgerId, seqNo }));
    } catch (e) {
      if (!(e instanceof GatewayError) || e.code !== GatewayErrorCode.NO_CONSENSUS) throw e;
      out = await this.caller.read(buildGetTxnRequest({ ledgerId, seqNo }));
    }
    const data = parseJsonField(out.result.data);
    const ms = multiSignatureOf(out.result);
    this.noteMultiSignature(ms);
    if (!isPlainObject(data)) return null;
    const { rootHash, auditPath, ledgerSize, ...entry } = data;
    const t: VerifiedTxn = {
      ledgerId,
      seqNo,
      entry,
      rootHash: typeof rootHash === 'string' ? rootHash : undefined,
      ledgerSize: typeof ledgerSize === 'number' ? ledgerSize : undefined,
      auditPathLength: Array.isArray(auditPath) ? auditPath.length : 0,
      multiSignature: ms,
      verified: out.verified ? 'proof' : 'consensus',
      nodes: out.nodes,
    };
    if (keep) this.txns.set(`${ledgerId}:${seqNo}`, t);
    return t;
  }

  /** One committed txn, verified; null when the ledger has no such seqNo. */
  async txn(ledgerId: number, seqNo: number): Promise<VerifiedTxn | null> {
    return this.txns.get(`${ledgerId}:${seqNo}`) ?? this.fetchTxn(ledgerId, seqNo);
  }

  /** The ledger's size as the pool proves it (GET_TXN of seqNo 1 carries it); 0 for an empty ledger. */
  size(ledgerId: number): Promise<number> {
    let f = this.sizes.get(ledgerId);
    if (f === undefined) {
      f = new Fresh(this.options.sizeTtlMs, async () => {
        const t = await this.fetchTxn(ledgerId, 1);
        return t === null ? 0 : (t.ledgerSize ?? 1);
      });
      this.sizes.set(ledgerId, f);
    }
    return f.get();
  }

  /**
   * Txns by seqNo, at most `concurrency` reads at once (the page default unless given); missing ones (beyond the size)
   * are left out. With `keep: false` txns not cached already are read without being cached.
   */
  async many(ledgerId: number, seqNos: number[], o: { concurrency?: number; keep?: boolean } = {}): Promise<VerifiedTxn[]> {
    const out: (VerifiedTxn | null)[] = new Array<VerifiedTxn | null>(seqNos.length).fill(null);
    const keep = o.keep ?? true;
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < seqNos.length) {
        const i = next++;
        const s = seqNos[i];
        out[i] = keep ? await this.txn(ledgerId, s) : (this.txns.get(`${ledgerId}:${s}`) ?? (await this.fetchTxn(ledgerId, s, false)));
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.min(o.concurrency ?? this.options.concurrency, seqNos.length)) }, worker));
    return out.filter((t): t is VerifiedTxn => t !== null);
  }

  /**
   * Newest first from `from` (default: the newest), `count` txns; with a type filter, txns are scanned downward until
   * `count` match or `scanLimit` were looked at. `next` is where the following page starts (undefined at seqNo 1).
   */
  async page(
    ledgerId: number,
    o: { from?: number; count: number; types?: ReadonlySet<string>; scanLimit: number },
  ): Promise<{ size: number; items: VerifiedTxn[]; scanned: number; next: number | undefined; from: number }> {
    const size = await this.size(ledgerId);
    const from = Math.max(0, Math.min(o.from ?? size, size));
    const items: VerifiedTxn[] = [];
    let at = from;
    let scanned = 0;
    while (at >= 1 && items.length < o.count && scanned < o.scanLimit) {
      const want = o.types === undefined ? o.count - items.length : Math.min(o.count * 2, o.scanLimit - scanned);
      const seqNos: number[] = [];
      for (let s = at; s >= 1 && seqNos.length < want; s--) seqNos.push(s);
      const got = new Map((await this.many(ledgerId, seqNos)).map((t) => [t.seqNo, t]));
      for (const s of seqNos) {
        const t = got.get(s);
        scanned++;
        at = s - 1;
        if (t !== undefined && (o.types === undefined || o.types.has(txnType(t)))) items.push(t);
        if (items.length >= o.count) break;
      }
    }
    return { size, items, scanned, next: at >= 1 ? at : undefined, from };
  }

  /** Every validator's VALIDATOR_INFO, or undefined without a signing key. */
  validatorInfo(): Promise<ValidatorInfo[]> | undefined {
    return this.info?.get();
  }

  private async loadInfo(signer: DidKey): Promise<ValidatorInfo[]> {
    const answers = await this.caller.action(signRequest(buildValidatorInfoRequest({ submitter: signer.did }), signer));
    const out: ValidatorInfo[] = [];
    for (const [alias, a] of Object.entries(answers)) {
      if (!isPlainObject(a)) {
        out.push({ alias, info: undefined, error: 'no answer' });
        continue;
      }
      const result = isPlainObject(a.result) ? a.result : undefined;
      const data = result !== undefined ? parseJsonField(result.data) : undefined;
      if (isPlainObject(data)) out.push({ alias, info: data, error: undefined });
      else
        out.push({
          alias,
          info: undefined,
          error: typeof a.reason === 'string' ? a.reason : typeof a.code === 'string' ? a.code : 'no validator info in the answer',
        });
    }
    return out;
  }
}

/** The type code of a ledger entry. */
export function txnType(t: VerifiedTxn): string {
  const txn = t.entry.txn;
  return isPlainObject(txn) && typeof txn.type === 'string' ? txn.type : '?';
}
