/**
 * Pool-ledger catch-up for clients (consensus.md 7.3, 7.6, 9.4), over the client protocol with JSON messages:
 *
 *   LEDGER_STATUS {ledgerId: 0, txnSeqNo, viewNo: null, ppSeqNo: null, merkleRoot, protocolVersion: 2}
 *     -> LEDGER_STATUS (the node is not ahead) | CONSISTENCY_PROOF {seqNoStart, seqNoEnd, oldMerkleRoot, newMerkleRoot, hashes}
 *   CATCHUP_REQ {ledgerId: 0, seqNoStart, seqNoEnd, catchupTill}
 *     -> CATCHUP_REP {ledgerId: 0, txns: {"<seqNo>": txn}, consProof}   (possibly fewer txns than asked, to fit a frame)
 *
 * Every consistency proof is verified; the target is the largest (seqNoEnd, newMerkleRoot) vouched for by f+1
 * nodes; each CATCHUP_REP is checked with its consistency proof to the target before anything is applied.
 */
import { LedgerId, b58decode, b58encode, isPlainObject, stringifyJson } from '@quire/common';
import { verifyConsistency } from '@quire/storage/proofs';
import { ClientError, ClientErrorCode, abortedBy } from '../errors.js';
import type { NodeConnection } from '../transport/node-connection.js';
import { deadlineSignal, exchange, type NodeAnswer } from './exchange.js';
import type { PoolLedger } from './pool-ledger.js';

/** Txns asked per CATCHUP_REQ. */
export const CATCHUP_BATCH = 100;

export interface CatchupResult {
  /** Pool ledger size before and after. */
  from: number;
  to: number;
  /** Nodes whose answers were discarded (bad proof, bad txns), with the reason. */
  discarded: { node: string; reason: string }[];
}

const enc = new TextEncoder();

function hash32(v: unknown): Uint8Array | undefined {
  if (typeof v !== 'string') return undefined;
  try {
    const b = b58decode(v);
    return b.length === 32 ? b : undefined;
  } catch {
    return undefined;
  }
}

interface Target {
  size: number;
  root: string;
  nodes: NodeConnection[];
}

/**
 * Runs one catch-up of the pool ledger against `conns` (the validators), within `timeoutMs` (CATCHUP_FAILED) or until
 * `abort` aborts (ABORTED; the txns verified and appended so far stay).
 */
export async function catchUpPoolLedger(
  ledger: PoolLedger,
  conns: NodeConnection[],
  f: number,
  timeoutMs: number,
  abort?: AbortSignal,
): Promise<CatchupResult> {
  const discarded: CatchupResult['discarded'] = [];
  const deadline = deadlineSignal(timeoutMs, abort);
  try {
    return await catchUp(ledger, conns, f, deadline.signal, discarded);
  } catch (e) {
    if (abort?.aborted === true) throw abortedBy(abort);
    throw e;
  } finally {
    deadline.done();
  }
}

async function catchUp(
  ledger: PoolLedger,
  conns: NodeConnection[],
  f: number,
  signal: AbortSignal,
  discarded: CatchupResult['discarded'],
): Promise<CatchupResult> {
  const from = ledger.size;
  const status = enc.encode(
    stringifyJson({
      op: 'LEDGER_STATUS',
      ledgerId: LedgerId.POOL,
      txnSeqNo: ledger.size,
      viewNo: null,
      ppSeqNo: null,
      merkleRoot: ledger.rootBase58,
      protocolVersion: 2,
    }),
  );
  const answers = await Promise.all(conns.map((c) => exchange(c, status, undefined, undefined, { signal, retries: 0 })));
  const groups = new Map<string, Target>();
  let notAhead = 0;
  answers.forEach((a, i) => {
    const conn = conns[i];
    if (a.kind !== 'reply') return;
    const m = a.message;
    if (m.op === 'LEDGER_STATUS') {
      if (typeof m.txnSeqNo === 'number' && m.txnSeqNo <= ledger.size) notAhead++;
      return;
    }
    if (m.op !== 'CONSISTENCY_PROOF') return discarded.push({ node: a.node, reason: `unexpected ${String(m.op)}` });
    const problem = checkConsistencyProof(ledger, m);
    if (problem !== undefined) return discarded.push({ node: a.node, reason: problem });
    const key = `${String(m.seqNoEnd)}|${String(m.newMerkleRoot)}`;
    const g = groups.get(key) ?? { size: m.seqNoEnd as number, root: m.newMerkleRoot as string, nodes: [] };
    g.nodes.push(conn);
    groups.set(key, g);
  });
  const reliable = [...groups.values()].filter((g) => g.nodes.length >= f + 1).sort((a, b) => b.size - a.size);
  const target = reliable[0];
  if (target === undefined) {
    if (notAhead >= f + 1 || (notAhead > 0 && groups.size === 0 && notAhead + discarded.length === conns.length)) return { from, to: from, discarded };
    const failed = answers.filter((a): a is Extract<NodeAnswer, { kind: 'error' }> => a.kind === 'error').map((a) => `${a.node}: ${a.error.code}`);
    throw new ClientError(ClientErrorCode.CATCHUP_FAILED, { reason: 'no f+1 agreement on the pool ledger', notAhead, proofs: groups.size, failed });
  }
  await transfer(ledger, target, discarded, signal);
  return { from, to: ledger.size, discarded };
}

/** Why a CONSISTENCY_PROOF cannot be used, or undefined when it verifies from our size and root. */
function checkConsistencyProof(ledger: PoolLedger, m: Record<string, unknown>): string | undefined {
  if (m.ledgerId !== LedgerId.POOL) return 'not the pool ledger';
  if (m.seqNoStart !== ledger.size) return 'seqNoStart is not our size';
  if (typeof m.seqNoEnd !== 'number' || !Number.isSafeInteger(m.seqNoEnd) || m.seqNoEnd <= ledger.size) return 'seqNoEnd is not ahead of us';
  if (m.oldMerkleRoot !== ledger.rootBase58) return 'oldMerkleRoot is not our root';
  const newRoot = hash32(m.newMerkleRoot);
  if (newRoot === undefined || !Array.isArray(m.hashes)) return 'malformed proof';
  const hashes = m.hashes.map(hash32);
  if (hashes.some((h) => h === undefined)) return 'malformed proof';
  try {
    verifyConsistency(ledger.size, m.seqNoEnd, ledger.root, newRoot, hashes as Uint8Array[]);
  } catch (e) {
    return `consistency proof fails: ${(e as { code?: string }).code ?? String(e)}`;
  }
  return undefined;
}

async function transfer(ledger: PoolLedger, target: Target, discarded: CatchupResult['discarded'], signal: AbortSignal): Promise<void> {
  const targetRoot = b58decode(target.root);
  const excluded = new Set<string>();
  let turn = 0;
  while (ledger.size < target.size) {
    const candidates = target.nodes.filter((c) => !excluded.has(c.alias));
    if (candidates.length === 0) throw new ClientError(ClientErrorCode.CATCHUP_FAILED, { reason: 'no node served valid txns', discarded });
    const conn = candidates[turn++ % candidates.length];
    const start = ledger.size + 1;
    const end = Math.min(target.size, ledger.size + CATCHUP_BATCH);
    const req = enc.encode(stringifyJson({ op: 'CATCHUP_REQ', ledgerId: LedgerId.POOL, seqNoStart: start, seqNoEnd: end, catchupTill: target.size }));
    const a = await exchange(conn, req, undefined, undefined, { signal, retries: 1 });
    if (signal.aborted) throw new ClientError(ClientErrorCode.CATCHUP_FAILED, { reason: 'timed out', at: ledger.size, target: target.size });
    const problem =
      a.kind === 'reply'
        ? applyCatchupRep(ledger, a.message, start, end, target.size, targetRoot)
        : `no reply (${a.kind === 'error' ? a.error.code : a.reason})`;
    if (problem !== undefined) {
      excluded.add(conn.alias);
      discarded.push({ node: conn.alias, reason: problem });
    }
  }
  if (b58encode(ledger.root) !== target.root) throw new ClientError(ClientErrorCode.CATCHUP_FAILED, { reason: 'root differs from the target after catch-up' });
}

/** Checks a CATCHUP_REP and appends its txns; returns why it was refused, or undefined. */
function applyCatchupRep(ledger: PoolLedger, m: Record<string, unknown>, start: number, end: number, till: number, targetRoot: Uint8Array): string | undefined {
  if (m.op !== 'CATCHUP_REP' || m.ledgerId !== LedgerId.POOL || !isPlainObject(m.txns) || !Array.isArray(m.consProof)) return 'malformed CATCHUP_REP';
  const entries = Object.entries(m.txns)
    .map(([k, v]) => [Number(k), v] as const)
    .sort((a, b) => a[0] - b[0]);
  if (entries.length === 0 || entries.length > end - start + 1) return 'wrong number of txns';
  const txns: Record<string, unknown>[] = [];
  for (let i = 0; i < entries.length; i++) {
    const [seqNo, txn] = entries[i];
    if (seqNo !== start + i || !isPlainObject(txn) || !isPlainObject(txn.txnMetadata) || txn.txnMetadata.seqNo !== seqNo) return 'txns out of sequence';
    txns.push(txn);
  }
  const proof = m.consProof.map(hash32);
  if (proof.some((h) => h === undefined)) return 'malformed consProof';
  let leaves: Uint8Array[];
  try {
    leaves = ledger.leafHashes(txns);
  } catch {
    return 'txn cannot be encoded';
  }
  const newSize = ledger.size + txns.length;
  try {
    verifyConsistency(newSize, till, ledger.rootWith(leaves), targetRoot, proof as Uint8Array[]);
  } catch (e) {
    return `consProof fails: ${(e as { code?: string }).code ?? String(e)}`;
  }
  ledger.append(txns);
  return undefined;
}
