/**
 * What a pool handle has seen of each ledger, so that its reads never go back in time: "read your writes" and
 * "monotonic reads" per handle.
 *
 * Positions on a ledger are compared in the pool's own time, never the client's clock: a write's `txnTime` and a
 * multi-signature's `timestamp` are both the ppTime (UTC seconds) of a batch, and ppTime never decreases along a
 * ledger (consensus.md 3.3, 12). So a verified read whose multi-signature `timestamp` is later than the newest time
 * seen was signed over a state that holds every batch of that time or earlier. Within one second several batches can
 * be ordered, so an equal timestamp does not tell a node one batch behind from an up-to-date one; for that case the
 * handle also remembers, for the keys it wrote or read at the newest time, the seqNo their value must have
 * reached (a state value carries the seqNo of the txn that last changed it, formats.md 8).
 *
 * The rule for a read of the current state (or as of a time not before the newest seen) of ledger L, answered by a
 * reply that verified with multi-signature timestamp `ts` over state root `root`:
 * - behind when `ts` is older than the newest time seen on L, unless `root` is a root already read at that time
 *   (the same state: a node that missed a freshness batch);
 * - behind when the reply's key was written or read at the newest time with a seqNo the reply's value has not
 *   reached (absent, or an older seqNo);
 * - accepted otherwise, and it then raises what is seen.
 * Reads of the past (as of a time before the newest seen, by seqNo, GET_TXN of a txn that exists) are not checked.
 */
import { BoundedFifo, LedgerId, TxnType, isPlainObject, ledgerOfType, parseJson, toHex, type Request } from '@quire/common';
import type { VerifiedRead } from '../verify/read-reply.js';
import { readTargets, type FreshnessRule, type ProofTarget } from '../verify/read-targets.js';

/** Keys remembered per ledger at its newest time (the keys written or read within one second); oldest dropped. */
export const MAX_SEEN_KEYS = 4096;
/** State roots remembered per ledger at its newest time. */
export const MAX_SEEN_ROOTS = 64;

/** Where a verified read stands on its ledger. */
export interface ReadPosition {
  ledgerId: number;
  /** The multi-signature's timestamp (the ppTime of the batch it signs), seconds. */
  timestamp: number;
  /** The signed state root (base58). */
  root: string;
  /** The state key read (hex), when the reply proves one. */
  key?: string;
  /** The seqNo of the key's value (`result.seqNo`); null when absent. */
  seqNo: number | null;
}

/** Where an acknowledged write stands on its ledger. */
export interface WritePosition {
  ledgerId: number;
  /** The txn's txnTime (the ppTime of its batch), seconds. */
  time: number;
  seqNo: number;
  /** The state key the write set (hex), for the types whose key the client derives (NYM, ATTRIB, SCHEMA, CLAIM_DEF). */
  key?: string;
}

/** Why a reply is behind what the handle has seen. */
export interface Behind {
  ledgerId: number;
  timestamp: number;
  root: string;
  /** The newest time seen on the ledger. */
  seenTime: number;
  key?: string;
  /** The seqNo the key's value must have reached. */
  keySeqNo?: number;
  readSeqNo?: number | null;
}

interface LedgerSeen {
  /** Newest ppTime seen: an acknowledged write's txnTime or a verified read's multi-signature timestamp. */
  time: number;
  /** Highest seqNo known to be on the ledger. */
  seqNo: number;
  /** State roots read verified at `time`. */
  roots: Set<string>;
  /** state key (hex) -> the seqNo its value must have reached, for keys written or read at `time`. */
  keys: BoundedFifo<string, number>;
}

/** The per-ledger memory of one pool handle. Bounded: a few ledgers, each with at most MAX_SEEN_KEYS keys. */
export class SeenLedgers {
  private readonly ledgers = new Map<number, LedgerSeen>();

  private of(ledgerId: number): LedgerSeen {
    let s = this.ledgers.get(ledgerId);
    if (s === undefined) {
      s = { time: -1, seqNo: 0, roots: new Set(), keys: new BoundedFifo(MAX_SEEN_KEYS) };
      this.ledgers.set(ledgerId, s);
    }
    return s;
  }

  /** The newest time and highest seqNo seen on a ledger (undefined when nothing was seen). */
  seen(ledgerId: number): { time: number; seqNo: number } | undefined {
    const s = this.ledgers.get(ledgerId);
    return s === undefined ? undefined : { time: s.time, seqNo: s.seqNo };
  }

  /** Moves a ledger's newest time forward; what was remembered at the older time is implied by the newer one. */
  private advance(s: LedgerSeen, time: number): void {
    if (time <= s.time) return;
    s.time = time;
    s.roots.clear();
    s.keys.clear();
  }

  private remember(s: LedgerSeen, key: string, seqNo: number): void {
    const had = s.keys.get(key);
    if (had !== undefined && had >= seqNo) return;
    s.keys.setNewest(key, seqNo);
  }

  /** An acknowledged write (f+1 nodes replied with its txn). */
  noteWrite(w: WritePosition): void {
    const s = this.of(w.ledgerId);
    this.advance(s, w.time);
    if (w.seqNo > s.seqNo) s.seqNo = w.seqNo;
    // a write older than the newest time is held by every state accepted from now on
    if (w.time === s.time && w.key !== undefined) this.remember(s, w.key, w.seqNo);
  }

  /** Undefined when the read may be accepted, else why it is behind. */
  check(p: ReadPosition): Behind | undefined {
    const s = this.ledgers.get(p.ledgerId);
    if (s === undefined) return undefined;
    if (p.timestamp < s.time && !s.roots.has(p.root)) return { ledgerId: p.ledgerId, timestamp: p.timestamp, root: p.root, seenTime: s.time };
    if (p.key !== undefined) {
      const want = s.keys.get(p.key);
      if (want !== undefined && (p.seqNo === null || p.seqNo < want))
        return { ledgerId: p.ledgerId, timestamp: p.timestamp, root: p.root, seenTime: s.time, key: p.key, keySeqNo: want, readSeqNo: p.seqNo };
    }
    return undefined;
  }

  /** A read that was accepted (check() passed). */
  noteRead(p: ReadPosition): void {
    const s = this.of(p.ledgerId);
    this.advance(s, p.timestamp);
    if (p.timestamp === s.time && s.roots.size < MAX_SEEN_ROOTS) s.roots.add(p.root);
    if (p.seqNo !== null) {
      if (p.seqNo > s.seqNo) s.seqNo = p.seqNo;
      // the state read is the one at the newest time (same timestamp, or a root read at it)
      if (p.key !== undefined && (p.timestamp === s.time || s.roots.has(p.root))) this.remember(s, p.key, p.seqNo);
    }
  }

  /** A seqNo proven to be on the ledger (GET_TXN's ledgerSize). */
  noteSize(ledgerId: number, size: number): void {
    const s = this.of(ledgerId);
    if (size > s.seqNo) s.seqNo = size;
  }

  /**
   * For an answer without proof (a candidate of f+1 agreement): whether it contradicts what was seen. Only what the
   * answer claims can be compared: a key's value older than one written or read, or a GET_TXN "not found" for a
   * seqNo known to be on the ledger.
   */
  checkUnproven(ledgerId: number, key: string | undefined, seqNo: number | null, getTxnSeqNo?: number): boolean {
    const s = this.ledgers.get(ledgerId);
    if (s === undefined) return false;
    if (getTxnSeqNo !== undefined) return getTxnSeqNo <= s.seqNo;
    if (key === undefined) return false;
    const want = s.keys.get(key);
    return want !== undefined && (seqNo === null || seqNo < want);
  }
}

const utf8 = new TextEncoder();

function keyHex(key: Uint8Array | string): string {
  return toHex(typeof key === 'string' ? utf8.encode(key) : key);
}

function safeInt(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isSafeInteger(v)) return v;
  if (typeof v === 'bigint' && v >= 0n && v <= BigInt(Number.MAX_SAFE_INTEGER)) return Number(v);
  return undefined;
}

/**
 * Read types whose proven value carries the seqNo of the txn that last set it and whose keys are never removed:
 * only these keys are remembered (a key that can be removed, such as the latest TAA, would look behind once gone).
 */
const KEYED_READS: ReadonlySet<string> = new Set([TxnType.GET_NYM, TxnType.GET_ATTR, TxnType.GET_SCHEMA, TxnType.GET_CLAIM_DEF]);

/**
 * The seqNo of the value read, as the proof covers it, null when absent: GET_NYM's is in its data (the record), the
 * others' is `result.seqNo` (the `lsn` of the wrapped value, formats.md 8).
 */
function valueSeqNo(type: unknown, result: Record<string, unknown>): number | null {
  if (type === TxnType.GET_NYM) {
    if (typeof result.data !== 'string') return null;
    try {
      const rec = parseJson(result.data);
      return isPlainObject(rec) ? (safeInt(rec.seqNo) ?? null) : null;
    } catch {
      return null;
    }
  }
  return safeInt(result.seqNo) ?? null;
}

/** The read that would observe a write: its state key comes from the one definition of keys in read-targets. */
function readOpOfWrite(request: Request): Record<string, unknown> | undefined {
  const op = request.operation as Record<string, unknown>;
  const from = request.identifier;
  switch (op.type) {
    case TxnType.NYM:
      return typeof op.dest === 'string' ? { type: TxnType.GET_NYM, dest: op.dest } : undefined;
    case TxnType.ATTRIB: {
      if (typeof op.dest !== 'string') return undefined;
      if (typeof op.raw === 'string') {
        let parsed: unknown;
        try {
          parsed = parseJson(op.raw);
        } catch {
          return undefined;
        }
        const names = isPlainObject(parsed) ? Object.keys(parsed) : [];
        return names.length === 1 ? { type: TxnType.GET_ATTR, dest: op.dest, raw: names[0] } : undefined;
      }
      if (typeof op.enc === 'string') return { type: TxnType.GET_ATTR, dest: op.dest, enc: op.enc };
      if (typeof op.hash === 'string') return { type: TxnType.GET_ATTR, dest: op.dest, hash: op.hash };
      return undefined;
    }
    case TxnType.SCHEMA: {
      const d = op.data;
      if (typeof from !== 'string' || !isPlainObject(d) || typeof d.name !== 'string' || typeof d.version !== 'string') return undefined;
      return { type: TxnType.GET_SCHEMA, dest: from, data: { name: d.name, version: d.version } };
    }
    case TxnType.CLAIM_DEF:
      if (typeof from !== 'string') return undefined;
      return { type: TxnType.GET_CLAIM_DEF, origin: from, ref: op.ref, signature_type: op.signature_type, tag: op.tag };
    default:
      return undefined;
  }
}

/** The state key a write sets, as hex, when the client can derive it. */
export function writeKey(request: Request): string | undefined {
  const op = readOpOfWrite(request);
  if (op === undefined) return undefined;
  try {
    const t = readTargets({ type: op.type, data: null }, op).targets[0];
    return t === undefined ? undefined : keyHex(t.key);
  } catch {
    return undefined;
  }
}

/** Where an acknowledged write stands (from its request and the agreed REPLY result); undefined when unknown. */
export function writePosition(request: Request, result: Record<string, unknown>): WritePosition | undefined {
  const type = request.operation.type;
  const ledgerId = typeof type === 'string' ? ledgerOfType(type) : undefined;
  const meta = result.txnMetadata;
  if (ledgerId === undefined || !isPlainObject(meta)) return undefined;
  const time = safeInt(meta.txnTime);
  const seqNo = safeInt(meta.seqNo);
  if (time === undefined || seqNo === undefined) return undefined;
  const key = writeKey(request);
  return { ledgerId, time, seqNo, ...(key !== undefined ? { key } : {}) };
}

function ruleOf(result: Record<string, unknown>, op: Record<string, unknown>): { rule: FreshnessRule; key?: string } | undefined {
  const keyed = KEYED_READS.has(op.type as string);
  try {
    // a keyed read's key and rule come from the query alone: its data need not be recomputed again
    const t = readTargets(keyed ? { type: op.type, data: null } : result, op).targets[0];
    if (t === undefined) return undefined;
    return keyed ? { rule: t.freshness, key: keyHex(t.key) } : { rule: t.freshness };
  } catch {
    return undefined;
  }
}

/** ruleOf from a target the verification already computed (the same readTargets of the same query). */
function ruleOfTarget(op: Record<string, unknown>, t: ProofTarget): { rule: FreshnessRule; key?: string } {
  return KEYED_READS.has(op.type as string) ? { rule: t.freshness, key: keyHex(t.key) } : { rule: t.freshness };
}

/**
 * Where a verified read stands, or undefined for a read of the past (as of a time before `seenTime`, by seqNo,
 * GET_TXN) that the rule does not apply to.
 */
export function readPosition(request: Request, v: VerifiedRead, seen: SeenLedgers): ReadPosition | undefined {
  if (v.type === TxnType.GET_TXN) return undefined;
  const op = request.operation as Record<string, unknown>;
  // the key and rule the verification recomputed from the query (the first target), else computed here again
  const t = v.targets?.[0];
  const r = t !== undefined ? ruleOfTarget(op, t) : ruleOf(v.result, op);
  if (r === undefined || r.rule.kind === 'none') return undefined;
  if (r.rule.kind === 'as-of') {
    const time = seen.seen(v.ledgerId)?.time;
    if (time !== undefined && r.rule.at < time) return undefined;
  }
  const key = r.key !== undefined ? { key: r.key } : {};
  const seqNo = r.key === undefined ? null : op.type === TxnType.GET_NYM && t?.recordSeqNo !== undefined ? t.recordSeqNo : valueSeqNo(op.type, v.result);
  return { ledgerId: v.ledgerId, timestamp: v.multiSignature.value.timestamp, root: v.root, ...key, seqNo };
}

/** The ledger whose state answers a read request (GET_TXN: its `ledgerId`, domain by default). */
export function readLedger(request: Request): number | undefined {
  const op = request.operation as Record<string, unknown>;
  if (op.type === TxnType.GET_TXN) return op.ledgerId === undefined || op.ledgerId === null ? LedgerId.DOMAIN : safeInt(op.ledgerId);
  return typeof op.type === 'string' ? ledgerOfType(op.type) : undefined;
}

/** True when an answer without proof contradicts what the handle has seen (see SeenLedgers.checkUnproven). */
export function unprovenIsBehind(request: Request, result: Record<string, unknown>, seen: SeenLedgers): boolean {
  const op = request.operation as Record<string, unknown>;
  const ledgerId = readLedger(request);
  if (ledgerId === undefined) return false;
  if (op.type === TxnType.GET_TXN) {
    const seqNo = safeInt(op.data);
    return (result.data === null || result.data === undefined) && seqNo !== undefined && seen.checkUnproven(ledgerId, undefined, null, seqNo);
  }
  const r = ruleOf(result, op);
  if (r === undefined || r.key === undefined || r.rule.kind === 'none') return false;
  if (r.rule.kind === 'as-of' && r.rule.at < (seen.seen(ledgerId)?.time ?? -1)) return false;
  return seen.checkUnproven(ledgerId, r.key, valueSeqNo(op.type, result));
}
