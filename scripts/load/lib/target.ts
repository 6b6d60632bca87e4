// The pool as the load generator sees it: several @quire/client Pool handles (each its own libp2p
// node, so its own connection to every validator: nodes rate-limit per connection), used round
// robin, and every outcome classified as ok / rejected / timeout / error with its code.
import { canonicalJson, isPlainObject, sha256Hex } from '@quire/common';
import { ClientError, ClientErrorCode, Pool, type PoolOptions } from '@quire/client';
import type { OutcomeKind } from './stats.js';
import type { PreparedRequest } from './workload.js';

/** A write acknowledged by f+1 nodes: where it is and what it must be on every ledger. */
export interface Ack {
  seqNo: number;
  /** `<identifier>|<reqId>` of the request. */
  key: string;
  /** sha256 hex of the canonical JSON of the committed `txn` (type, data, metadata). */
  txnHash: string;
}

export type Outcome = { kind: 'ok'; ack?: Ack; verified?: boolean } | { kind: Exclude<OutcomeKind, 'ok'>; code: string; reason: string };

/** The ledger identity of a committed txn (REPLY result or ledger entry): seqNo, author|reqId and the hash of `txn`. */
export function ackOf(result: Record<string, unknown>): Ack | undefined {
  const txn = result.txn;
  const meta = result.txnMetadata;
  if (!isPlainObject(txn) || !isPlainObject(meta) || typeof meta.seqNo !== 'number') return undefined;
  const md = isPlainObject(txn.metadata) ? txn.metadata : {};
  return { seqNo: meta.seqNo, key: `${String(md.from)}|${String(md.reqId)}`, txnHash: sha256Hex(canonicalJson(txn)) };
}

function classify(e: unknown): Outcome {
  if (e instanceof ClientError) {
    const reason = typeof e.data.reason === 'string' ? e.data.reason : JSON.stringify(e.data, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)).slice(0, 300);
    if (e.code === ClientErrorCode.REQUEST_NACKED || e.code === ClientErrorCode.REQUEST_REJECTED) return { kind: 'rejected', code: e.code, reason };
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

  submit(r: PreparedRequest, timeoutMs?: number): Promise<Outcome> {
    return r.kind === 'read' ? this.read(r, timeoutMs) : this.write(r, timeoutMs);
  }

  async close(): Promise<void> {
    await Promise.all(this.pools.map((p) => p.close()));
  }
}
