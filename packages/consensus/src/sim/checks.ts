// Invariants checked after every simulation run (consensus.md §12.3): agreement on every ledger,
// payload uniqueness, multi-signature validity, and liveness when the fault mix allows it.
import type { ConsensusCore } from '../core.js';
import type { MultiSignatureValue } from '../messages.js';
import type { SimExecutor } from './backend.js';

export interface SubmittedRequest {
  digest: string;
  payloadDigest: string;
  /** a fresh, valid payload: it must be ordered */
  mustOrder: boolean;
  invalid: boolean;
}

/** A REPLY a node sent (its writes were durable): the request's place in its ledger. */
export interface AckedReply {
  node: string;
  ledgerId: number;
  seqNo: number;
  digest: string;
  /** the audit seqNo (ppSeqNo) of the batch */
  auditSeqNo: number;
}

export interface RunRecord {
  names: string[];
  byzantine: Set<string>;
  submitted: SubmittedRequest[];
  orderedBatches: number;
  orderedRequests: number;
  alarms: string[];
  /** replies of honest nodes */
  replies: AckedReply[];
  /** restarts that lost acknowledged state */
  durability: string[];
  /** resource bounds exceeded */
  footprint: string[];
  /** protocol oracles on broadcast messages (simulator.ts `watch`) */
  protocol: string[];
}

/**
 * The footprint bound of a core (entries of its maps, sets and arrays): what an honest pool of `n`
 * nodes needs for `requests` client requests (a few entries per request per node, the 3PC log of
 * every batch in flight, votes and view-change messages per node), with room to spare; a flood of
 * messages kept without bound exceeds it.
 */
export function footprintBound(n: number, requests: number): number {
  return 4_000 + 60 * requests + 400 * n;
}

/**
 * Entries in the maps, sets and arrays reachable from a consensus core, not counting its modules
 * (executor, crypto, request analyzer). A generic measure, so that every queue and map the core
 * has or will have is bounded without naming them.
 */
export function coreFootprint(core: object, exclude: readonly unknown[]): number {
  const skip = new Set<unknown>(exclude);
  const seen = new Set<object>();
  let total = 0;
  const stack: [unknown, number][] = [[core, 0]];
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    const [x, depth] = top;
    if (typeof x !== 'object' || x === null || skip.has(x) || seen.has(x) || depth > 12) continue;
    if (ArrayBuffer.isView(x)) continue;
    seen.add(x);
    if (x instanceof Map) {
      total += x.size;
      for (const [k, v] of x) {
        stack.push([k, depth + 1]);
        stack.push([v, depth + 1]);
      }
    } else if (x instanceof Set) {
      total += x.size;
      for (const v of x) stack.push([v, depth + 1]);
    } else if (Array.isArray(x)) {
      total += x.length;
      for (const v of x) stack.push([v, depth + 1]);
    } else if (typeof (x as { then?: unknown }).then !== 'function') {
      for (const v of Object.values(x)) stack.push([v, depth + 1]);
    }
  }
  return total;
}

export interface CheckedNode {
  name: string;
  executor: SimExecutor;
  core: ConsensusCore;
  alive: boolean;
  started: boolean;
  /** crash-stopped: its storage must agree, it need not be live */
  stopped?: boolean;
}

export interface CheckOptions {
  checkLiveness: boolean;
  /** multi-signature verification with the keys `node` holds at the value's pool state root (real BLS) */
  verifyMulti?: (node: CheckedNode, participants: string[], value: MultiSignatureValue, signature: string) => boolean;
}

export function checkRun(record: RunRecord, nodes: readonly CheckedNode[], opts: CheckOptions): string[] {
  const v: string[] = [];
  const honest = nodes.filter((n) => !record.byzantine.has(n.name) && n.started);
  // 1. agreement: identical committed txns at every seqNo of every ledger (so equal sizes, equal roots)
  for (const lid of [0, 1, 2, 3]) {
    const ref = honest.reduce((a, b) => (b.executor.committedSize(lid) > a.executor.committedSize(lid) ? b : a));
    for (const n of honest) {
      const size = n.executor.committedSize(lid);
      for (let s = 1; s <= size; s++) {
        if (n.executor.committedTxn(lid, s) !== ref.executor.committedTxn(lid, s)) {
          v.push(`safety: ledger ${lid} seqNo ${s} differs between ${n.name} and ${ref.name}`);
          break;
        }
      }
    }
  }
  // equal sizes, equal roots
  for (const lid of [0, 1, 2, 3]) {
    const bySize = new Map<number, string>();
    for (const n of honest) {
      const st = n.executor.ledgerStatus(lid);
      const prev = bySize.get(st.size);
      if (prev !== undefined && prev !== st.root) v.push(`safety: ledger ${lid} has two roots at size ${st.size}`);
      bySize.set(st.size, st.root);
    }
  }
  // audit ledger: ppSeqNo increments by exactly one, viewNo and ppTime never decrease (§12.3 #2);
  // the registry the core counts quorums with is the one of its last audit txn (§1.3)
  for (const n of honest) {
    let prev: { viewNo: number; ppSeqNo: number; ppTime: number } | undefined;
    for (let s = 1; s <= n.executor.committedSize(3); s++) {
      const a = n.executor.auditEntry(s);
      if (a.ppSeqNo !== s || (prev !== undefined && (a.viewNo < prev.viewNo || a.ppTime < prev.ppTime))) {
        v.push(`audit: ${n.name} audit txn ${s} breaks monotonicity (view ${a.viewNo}, ppSeqNo ${a.ppSeqNo}, ppTime ${a.ppTime})`);
        break;
      }
      prev = a;
    }
    const last = n.executor.lastAudit();
    if (n.alive && last !== undefined && last.nodeReg.join(',') !== n.core.status().validators.join(',')) {
      v.push(`registry: ${n.name} counts quorums over ${n.core.status().validators.join(',')} but its audit ledger says ${last.nodeReg.join(',')}`);
    }
  }
  // 2. each payload committed at most once; invalid requests never committed
  const invalid = new Set(record.submitted.filter((s) => s.invalid).map((s) => s.payloadDigest));
  for (const n of honest) {
    const seen = new Set<string>();
    for (let s = 1; s <= n.executor.committedSize(1); s++) {
      const dest = n.executor.committedDest(s);
      if (dest === undefined) continue;
      if (seen.has(dest)) v.push(`safety: ${n.name} committed ${dest} twice`);
      seen.add(dest);
    }
    for (const pd of invalid) if (n.executor.isPayloadCommitted(pd)) v.push(`validity: ${n.name} committed an invalid request`);
  }
  // 3. multi-signatures: >= n-f distinct participants that are validators at the value's pool state
  //    root (n of that registry), valid aggregate under the keys at that root, over committed roots
  for (const n of honest) {
    for (const ms of n.executor.storedMultiSigs) {
      const parts = new Set(ms.participants);
      const registry = n.executor.registryAt(ms.value.pool_state_root_hash);
      // n - f, computed here rather than taken from the options the code under test uses
      const quorum = registry === undefined ? Number.POSITIVE_INFINITY : registry.length - Math.floor((registry.length - 1) / 3);
      if (parts.size !== ms.participants.length || parts.size < quorum || ms.participants.some((p) => registry?.includes(p) !== true)) {
        v.push(`bls: ${n.name} stored a multi-signature with participants ${ms.participants.join(',')}`);
        continue;
      }
      if (opts.verifyMulti !== undefined && !opts.verifyMulti(n, ms.participants, ms.value, ms.signature)) {
        v.push(`bls: ${n.name} stored a multi-signature that does not verify (ledger ${ms.value.ledger_id})`);
      }
      if (!n.executor.isCommittedTxnRoot(ms.value.ledger_id, ms.value.txn_root_hash)) {
        v.push(`bls: ${n.name} stored a multi-signature over an uncommitted txn root`);
      }
    }
  }
  for (const a of record.alarms) v.push(`alarm: ${a}`);
  v.push(...record.durability, ...record.footprint, ...record.protocol);
  // 5. client REPLY consistency: one place per request digest, whoever answered; and what a node
  //    answered is in its ledger (and in every live honest node's that got that far)
  const placeOf = new Map<string, string>();
  const byName = new Map(honest.map((n) => [n.name, n]));
  for (const r of record.replies) {
    const place = `ledger ${r.ledgerId} seqNo ${r.seqNo}`;
    const prev = placeOf.get(r.digest);
    if (prev === undefined) placeOf.set(r.digest, place);
    else if (prev !== place) v.push(`reply: request ${r.digest.slice(0, 12)} answered at ${prev} and at ${place} (${r.node})`);
    const n = byName.get(r.node);
    if (n !== undefined && n.executor.committedSize(r.ledgerId) < r.seqNo) {
      v.push(`reply: ${n.name} answered for ledger ${r.ledgerId} seqNo ${r.seqNo} but holds ${n.executor.committedSize(r.ledgerId)} txns`);
    }
  }
  // 6. the committed state roots are the ones the last audit txn names, and a replay from genesis gives them
  for (const n of honest) {
    const problem = n.executor.stateProblem?.();
    if (problem !== undefined) v.push(`state: ${n.name} ${problem}`);
  }
  // 4. liveness: every fresh valid request ordered by every honest node, all at the same point
  if (opts.checkLiveness) {
    const live = honest.filter((n) => n.stopped !== true);
    for (const n of live) {
      if (!n.alive) {
        v.push(`liveness: ${n.name} is down at the end`);
        continue;
      }
      const missing = record.submitted.filter((s) => s.mustOrder && !n.executor.isPayloadCommitted(s.payloadDigest)).length;
      if (missing > 0) v.push(`liveness: ${n.name} did not order ${missing} request(s) (lastOrdered ${n.core.status().lastOrdered.ppSeqNo})`);
    }
    const sizes = new Set(live.map((n) => n.executor.committedSize(3)));
    if (sizes.size > 1) v.push(`liveness: honest nodes ended at different audit sizes ${[...sizes].join('/')}`);
  }
  return v;
}
