// The pool as the load generator sees it: several @quire/client Pool handles (each its own libp2p
// node, so its own connection to every validator: nodes rate-limit per connection), used round
// robin, and every outcome classified as ok / rejected / timeout / error with its code.
import { canonicalJson, isPlainObject, parseJson, sha256Hex, TxnType } from '@quire/common';
import { ClientError, ClientErrorCode, Pool, buildGetTxnRequest, type PoolOptions } from '@quire/client';
import type { OutcomeKind } from './stats.js';
import type { PreparedRequest } from './workload.js';

/** A write acknowledged by f+1 nodes: where it is and what it must be on every ledger. */
export interface Ack {
  seqNo: number;
  /** `<identifier>|<reqId>` of the request. */
  key: string;
  /** sha256 hex of the canonical JSON of the committed `txn` (type, data, metadata) in its ledger form. */
  txnHash: string;
}

/** A failure's `nodes`: for a refusal (REQUEST_NACKED, REQUEST_REJECTED), the f+1 or more nodes whose identical answers decided it. */
export type Outcome = { kind: 'ok'; ack?: Ack; verified?: boolean } | { kind: Exclude<OutcomeKind, 'ok'>; code: string; reason: string; nodes?: string[] };

/**
 * The ledger form of a REPLY's txn (formats.md 4.x): an ATTRIB's `raw` is stored as the hex SHA-256 of CJ(parsed
 * raw) and its `enc` as the hex SHA-256 of the string, the original going to the attribute store.
 */
function ledgerForm(txn: Record<string, unknown>): Record<string, unknown> {
  if (txn.type !== TxnType.ATTRIB || !isPlainObject(txn.data)) return txn;
  const data = { ...txn.data };
  if (typeof data.raw === 'string') data.raw = sha256Hex(canonicalJson(parseJson(data.raw)));
  if (typeof data.enc === 'string') data.enc = sha256Hex(data.enc);
  return { ...txn, data };
}

/**
 * The ledger identity of a committed txn: seqNo, author|reqId and the hash of `txn` in its ledger form. `source`
 * says whether `result` is a write's REPLY result (ATTRIB values in the clear) or an entry read from a ledger.
 */
export function ackOf(result: Record<string, unknown>, source: 'reply' | 'ledger' = 'reply'): Ack | undefined {
  const txn = result.txn;
  const meta = result.txnMetadata;
  if (!isPlainObject(txn) || !isPlainObject(meta) || typeof meta.seqNo !== 'number') return undefined;
  const md = isPlainObject(txn.metadata) ? txn.metadata : {};
  let form: Record<string, unknown>;
  try {
    form = source === 'reply' ? ledgerForm(txn) : txn;
  } catch {
    return undefined; // an ATTRIB raw that is not JSON cannot have been committed
  }
  return { seqNo: meta.seqNo, key: `${String(md.from)}|${String(md.reqId)}`, txnHash: sha256Hex(canonicalJson(form)) };
}

function classify(e: unknown): Outcome {
  if (e instanceof ClientError) {
    const reason =
      typeof e.data.reason === 'string' ? e.data.reason : JSON.stringify(e.data, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)).slice(0, 300);
    if (e.code === ClientErrorCode.REQUEST_NACKED || e.code === ClientErrorCode.REQUEST_REJECTED) {
      const nodes = Array.isArray(e.data.nodes) ? e.data.nodes.filter((n): n is string => typeof n === 'string') : undefined;
      return { kind: 'rejected', code: e.code, reason, ...(nodes !== undefined ? { nodes } : {}) };
    }
    if (e.code === ClientErrorCode.TIMEOUT) return { kind: 'timeout', code: e.code, reason };
    return { kind: 'error', code: e.code, reason };
  }
  return { kind: 'error', code: 'UNEXPECTED', reason: e instanceof Error ? e.message : String(e) };
}

export class LoadTarget {
  private next = 0;

  private constructor(readonly pools: Pool[]) {}

  /** Opens `connections` pool handles from the genesis text. */
  static async open(genesisText: string, connections: number, options: Partial<PoolOptions> = {}): Promise<LoadTarget> {
    const pools: Pool[] = [];
    try {
      for (let i = 0; i < connections; i++) pools.push(await Pool.fromGenesisText(genesisText, options));
    } catch (e) {
      await Promise.all(pools.map((p) => p.close()));
      throw e;
    }
    return new LoadTarget(pools);
  }

  get n(): number {
    return this.pools[0]!.n;
  }

  get f(): number {
    return this.pools[0]!.f;
  }

  private pool(): Pool {
    const p = this.pools[this.next % this.pools.length]!;
    this.next++;
    return p;
  }

  /** Submits a pre-signed write; never rejects. */
  async write(r: PreparedRequest, timeoutMs?: number): Promise<Outcome> {
    try {
      const out = await this.pool().submitWrite(r.request, { payload: r.payload, ...(timeoutMs !== undefined ? { timeoutMs } : {}) });
      const ack = ackOf(out.result);
      if (ack === undefined) return { kind: 'error', code: 'MALFORMED_REPLY', reason: 'the agreed REPLY has no txn or seqNo' };
      return { kind: 'ok', ack };
    } catch (e) {
      return classify(e);
    }
  }

  /** Submits a read, verified by state proof (or f+1 agreement where no proof exists); never rejects. */
  async read(r: PreparedRequest, timeoutMs?: number): Promise<Outcome> {
    try {
      const out = await this.pool().submitRead(r.request, { payload: r.payload, ...(timeoutMs !== undefined ? { timeoutMs } : {}) });
      return { kind: 'ok', verified: out.verified };
    } catch (e) {
      return classify(e);
    }
  }

  /**
   * Opens every session before the clock starts (sessions are dialled on first use): each handle sends GET_TXN 1
   * of the pool ledger to every validator. Resolves with the validators that did not answer, per handle.
   */
  async warmUp(timeoutMs = 15_000): Promise<string[]> {
    const silent = new Set<string>();
    await Promise.all(
      this.pools.map(async (p) => {
        const answers = await p.submitAction(buildGetTxnRequest({ ledgerId: 0, seqNo: 1 }), { timeoutMs });
        for (const [node, a] of answers) if (a.kind === 'error') silent.add(node);
      }),
    );
    return [...silent].sort();
  }

  submit(r: PreparedRequest, timeoutMs?: number): Promise<Outcome> {
    return r.kind === 'read' ? this.read(r, timeoutMs) : this.write(r, timeoutMs);
  }

  async close(): Promise<void> {
    await Promise.all(this.pools.map((p) => p.close()));
  }
}
