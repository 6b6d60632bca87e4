// Pool-ledger catch-up for clients over the client protocol (consensus.md §7.3, §7.4, §7.6, §9.4):
// a light client keeps its own copy of the pool ledger (the validators, their addresses and keys)
// and brings it up to date from the nodes. The messages are JSON objects with an `op`:
//
//   LEDGER_STATUS {ledgerId: 0, txnSeqNo, viewNo, ppSeqNo, merkleRoot, protocolVersion}
//     -> LEDGER_STATUS (this node is not ahead) | CONSISTENCY_PROOF {seqNoStart, seqNoEnd, ..., hashes}
//   CATCHUP_REQ {ledgerId: 0, seqNoStart, seqNoEnd, catchupTill}
//     -> CATCHUP_REP {ledgerId: 0, txns: {"<seqNo>": txn}, consProof}
//
// Only the committed pool ledger is served. A CATCHUP_REP holds at most `maxTxns` txns and fits in
// one client frame: when the range asked for does not, the reply holds its longest prefix that
// does, with the consistency proof from that prefix's last seqNo to `catchupTill` (the client asks
// again for the rest). Bad requests are refused with a reason, never thrown.
import { b58encode, isPlainObject, stringifyJson } from '@quire/common';
import type { Ledger } from '@quire/storage';

/** Client catch-up message types (the `op` of a JSON message that is not a request). */
export const CLIENT_CATCHUP_OPS: ReadonlySet<string> = new Set(['LEDGER_STATUS', 'CATCHUP_REQ']);

export interface ClientCatchupOptions {
  /** largest encoded reply, bytes (the client frame limit, MSG_LEN_LIMIT) */
  maxMessageLength: number;
  /** most txns in one CATCHUP_REP (CATCHUP_MAX_TXNS_PER_REQ) */
  maxTxns: number;
}

export const defaultClientCatchupOptions: ClientCatchupOptions = { maxMessageLength: 128 * 1024, maxTxns: 2000 };

/** The answer to one catch-up message: a reply object, or the reason it is refused. */
export type ClientCatchupAnswer = { ok: true; op: 'LEDGER_STATUS' | 'CONSISTENCY_PROOF' | 'CATCHUP_REP'; reply: Uint8Array } | { ok: false; reason: string };

/** The ledger served: only the pool ledger (0) is offered to clients. */
const POOL_LEDGER = 0;
/** Room kept for the envelope and the consistency proof of a CATCHUP_REP (at most 64 hashes of <= 46 chars). */
const REP_OVERHEAD = 4096;

const enc = new TextEncoder();

function isSize(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
}

function refuse(reason: string): ClientCatchupAnswer {
  return { ok: false, reason };
}

/** Answers a LEDGER_STATUS or CATCHUP_REQ of a client from the committed pool ledger. */
export async function answerClientCatchup(
  msg: Record<string, unknown>,
  ledger: Ledger,
  options: ClientCatchupOptions = defaultClientCatchupOptions,
): Promise<ClientCatchupAnswer> {
  if (msg.ledgerId !== POOL_LEDGER)
    return refuse(`catch-up over the client protocol serves the pool ledger (ledgerId 0) only, got ledgerId ${stringifyJson(msg.ledgerId ?? null)}`);
  if (msg.op === 'LEDGER_STATUS') return ledgerStatus(msg, ledger);
  if (msg.op === 'CATCHUP_REQ') return catchupRep(msg, ledger, options);
  return refuse(`unknown catch-up message ${stringifyJson(msg.op ?? null)}`);
}

async function ledgerStatus(msg: Record<string, unknown>, ledger: Ledger): Promise<ClientCatchupAnswer> {
  const theirSize = msg.txnSeqNo;
  if (!isSize(theirSize)) return refuse('LEDGER_STATUS txnSeqNo must be an integer >= 0');
  if (typeof msg.merkleRoot !== 'string') return refuse('LEDGER_STATUS merkleRoot must be a base58 string');
  const size = ledger.size;
  const root = b58encode(ledger.root);
  if (theirSize >= size) {
    return answer('LEDGER_STATUS', {
      op: 'LEDGER_STATUS',
      ledgerId: POOL_LEDGER,
      txnSeqNo: size,
      viewNo: null,
      ppSeqNo: null,
      merkleRoot: root,
      protocolVersion: 2,
    });
  }
  // the proof starts at our root for their size: a client whose root differs discards it
  const oldRoot = b58encode(await ledger.rootAt(theirSize));
  // for an empty ledger the proof is the new root alone (consensus.md §7.3 step 3)
  const hashes = theirSize === 0 ? [root] : (await ledger.consistencyProof(theirSize, size)).map((h) => b58encode(h));
  return answer('CONSISTENCY_PROOF', {
    op: 'CONSISTENCY_PROOF',
    ledgerId: POOL_LEDGER,
    seqNoStart: theirSize,
    seqNoEnd: size,
    viewNo: 0,
    ppSeqNo: 0,
    oldMerkleRoot: oldRoot,
    newMerkleRoot: root,
    hashes,
  });
}

async function catchupRep(msg: Record<string, unknown>, ledger: Ledger, o: ClientCatchupOptions): Promise<ClientCatchupAnswer> {
  const { seqNoStart: start, seqNoEnd: end, catchupTill: till } = msg;
  if (!isSize(start) || !isSize(end) || !isSize(till)) return refuse('CATCHUP_REQ seqNoStart, seqNoEnd and catchupTill must be integers');
  const size = ledger.size;
  // consensus.md §7.4: 1 <= seqNoStart <= seqNoEnd <= catchupTill <= own size
  if (!(start >= 1 && start <= end && end <= till && till <= size)) {
    return refuse(`CATCHUP_REQ range ${start}..${end} till ${till} is not within the pool ledger of ${size} txns`);
  }
  const last = Math.min(end, start + o.maxTxns - 1);
  const budget = o.maxMessageLength - REP_OVERHEAD;
  const parts: string[] = [];
  let used = 0;
  let upTo = start - 1;
  for await (const [seqNo, txn] of ledger.range(start, last)) {
    const part = `${stringifyJson(String(seqNo))}:${stringifyJson(txn)}`;
    const bytes = enc.encode(part).length + 1;
    if (used + bytes > budget) break;
    parts.push(part);
    used += bytes;
    upTo = seqNo;
  }
  if (upTo < start) return refuse(`pool txn ${start} does not fit in one message of ${o.maxMessageLength} bytes`);
  const consProof = (await ledger.consistencyProof(upTo, till)).map((h) => b58encode(h));
  // the txns map is assembled from the already encoded txns, in ascending seqNo order
  const text = `{"op":"CATCHUP_REP","ledgerId":${POOL_LEDGER},"txns":{${parts.join(',')}},"consProof":${stringifyJson(consProof)}}`;
  return { ok: true, op: 'CATCHUP_REP', reply: enc.encode(text) };
}

function answer(op: 'LEDGER_STATUS' | 'CONSISTENCY_PROOF', reply: Record<string, unknown>): ClientCatchupAnswer {
  return { ok: true, op, reply: enc.encode(stringifyJson(reply)) };
}

/** True when a parsed client message is a catch-up message rather than a request. */
export function isClientCatchupMessage(value: unknown): value is Record<string, unknown> {
  return isPlainObject(value) && typeof value.op === 'string' && CLIENT_CATCHUP_OPS.has(value.op) && value.operation === undefined;
}
