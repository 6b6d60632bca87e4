// "Is the pool ordering?" without writing anything: a verified read, through the SDK as a client
// does, whose BLS multi-signature (n-f validators over the domain state root) is newer than the
// moment the nodes were started. Only an ordered batch makes such a signature: at start the
// primary orders a freshness batch (an empty batch, one audit txn, nothing in the domain ledger),
// and an idle pool orders one per ledger every stateFreshnessUpdateIntervalSec. So the domain
// ledger of a fresh devnet stays exactly its genesis file, and a TAA or any auth rule in force
// cannot turn the probe away.
import { isPlainObject } from '@quire/common';
import { ClientError, DidKey, Pool, buildGetNymRequest } from '@quire/client';
import { TRUSTEE_SEED } from './node-api.js';
import { OrderingTimeoutError } from './wait-ordering.js';

export interface ReadyResult {
  /** the validators whose signatures the multi-signature aggregates */
  participants: string[];
  /** the multi-signature's time (the PRE-PREPARE time of the batch that made it), UTC seconds */
  timestamp: number;
  /** the node that answered the verified read */
  answeredBy: string;
  elapsedMs: number;
}

/** The multi-signature of a verified read's result: its participants and time. */
function multiSignatureOf(result: Record<string, unknown>): { participants: string[]; timestamp: number } | undefined {
  const proof = result.state_proof;
  if (!isPlainObject(proof) || !isPlainObject(proof.multi_signature)) return undefined;
  const ms = proof.multi_signature;
  const value = isPlainObject(ms.value) ? ms.value : undefined;
  const ts = value?.timestamp;
  const timestamp = typeof ts === 'number' ? ts : typeof ts === 'bigint' ? Number(ts) : NaN;
  if (!Number.isFinite(timestamp) || !Array.isArray(ms.participants)) return undefined;
  return { participants: ms.participants.map(String), timestamp };
}

/**
 * Resolves when a verified read of Trustee1's NYM carries a multi-signature made at or after
 * `sinceSec` (UTC seconds, with 2 s of slack for the nodes' clocks); asks again every second.
 * Rejects with OrderingTimeoutError (the last reason per attempt) after `timeoutMs`.
 */
export async function waitForReady(genesisFile: string, opts: { sinceSec: number; timeoutMs: number; signal?: AbortSignal }): Promise<ReadyResult> {
  const started = Date.now();
  const request = buildGetNymRequest({ dest: DidKey.fromSeed(TRUSTEE_SEED).did });
  let last = 'no answer yet';
  let pool: Pool | undefined;
  try {
    while (Date.now() - started < opts.timeoutMs) {
      if (opts.signal?.aborted === true) throw new OrderingTimeoutError('stopped while waiting for the pool to order', { pool: last });
      try {
        // a pool opened before the nodes listen keeps retrying its sessions; one per attempt keeps the error fresh
        pool ??= await Pool.open(genesisFile, { readTimeoutMs: 5_000, nodeReadTimeoutMs: 3_000, freshnessSeconds: 24 * 3600 });
        const r = await pool.submitRead({ ...request, reqId: Date.now() * 1000 + Math.floor(Math.random() * 1000) });
        const ms = r.verified ? multiSignatureOf(r.result) : undefined;
        if (ms === undefined) last = `${r.nodes.join(', ')} answered without a multi-signature yet (no batch ordered)`;
        else if (ms.timestamp < opts.sinceSec - 2)
          last = `the newest multi-signature (${new Date(ms.timestamp * 1000).toISOString()}) is older than this start`;
        else return { participants: ms.participants, timestamp: ms.timestamp, answeredBy: r.nodes[0] ?? '?', elapsedMs: Date.now() - started };
      } catch (e) {
        last = e instanceof ClientError ? `${e.code}: ${e.message}` : (e as Error).message;
      }
      await new Promise((r) => setTimeout(r, 1_000));
    }
  } finally {
    await pool?.close().catch(() => undefined);
  }
  throw new OrderingTimeoutError(`the pool did not order a batch within ${Math.round(opts.timeoutMs / 1000)} s (no fresh multi-signature)`, { pool: last });
}
