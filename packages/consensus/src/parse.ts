// Defensive shape checks for decoded peer messages. Anything a peer sends passes through here
// before the core reads a field; failures raise ConsensusError(INVALID_MESSAGE) with the op and
// the offending field, which the core counts against the sender and drops.
import { LedgerId, MsgpackEncoded, b58decodeOrUndefined, decodeMsgpack } from '@quire/common';
import { ConsensusError, ConsensusErrorCode } from './errors.js';
import type {
  BatchId,
  CatchupRep,
  CatchupReq,
  Checkpoint,
  ConsistencyProof,
  LedgerStatus,
  NewView,
  OldViewPrePrepareRep,
  OldViewPrePrepareReq,
  ViewChange,
  ViewChangeAck,
  Commit,
  InstanceChange,
  MessageRequest,
  MessageRequestType,
  MessageResponse,
  MultiSigTuple,
  NodeMessage,
  Prepare,
  PrePrepare,
  Propagate,
} from './messages.js';

const HEX64 = /^[0-9a-f]{64}$/;
const B58 = /^[1-9A-HJ-NP-Za-km-z]{32,50}$/;
const MAX_REQIDR = 100_000;

type Obj = Record<string, unknown>;

/**
 * The plugin ledgers of the node (consensus option `pluginLedgers`): besides the base ledgers 0-3,
 * the only ledger ids a peer's message may name; a PRE-PREPARE may name 0-2 and these.
 */
export type PluginLedgerIds = readonly number[];
const NO_PLUGIN_LEDGERS: PluginLedgerIds = [];

function fail(op: unknown, field: string): never {
  throw new ConsensusError(ConsensusErrorCode.INVALID_MESSAGE, { op: typeof op === 'string' ? op.slice(0, 40) : null, field });
}

function isPlainObject(v: unknown): v is Obj {
  if (v === null || typeof v !== 'object' || Array.isArray(v) || v instanceof Uint8Array) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

function uint(m: Obj, f: string, min = 0): number {
  const v = m[f];
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min) fail(m.op, f);
  return v;
}
function str(m: Obj, f: string, re?: RegExp, max = 256): string {
  const v = m[f];
  if (typeof v !== 'string' || v.length > max || (re !== undefined && !re.test(v))) fail(m.op, f);
  return v;
}
function b58(m: Obj, f: string): string {
  return str(m, f, B58, 64);
}
function hex(m: Obj, f: string): string {
  return str(m, f, HEX64, 64);
}

function noProtoKeys(m: Obj): void {
  if (Object.prototype.hasOwnProperty.call(m, '__proto__')) fail(m.op, '__proto__');
}

/** bytes of a BLS multi-signature (a compressed G2 point) and of a root, once base58-decoded (formats.md §9) */
const MULTI_SIG_BYTES = 96;
const ROOT_BYTES = 32;

/** A base58 string that decodes to exactly `bytes` bytes. */
function isB58Bytes(x: unknown, bytes: number, maxChars: number): x is string {
  return typeof x === 'string' && x.length <= maxChars && b58decodeOrUndefined(x)?.length === bytes;
}

/**
 * One multi-signature tuple (PRE-PREPARE `blsMultiSigs`, CATCHUP_REP `multiSigs`); throws
 * INVALID_MESSAGE naming `field`. Strict: the signature decodes to exactly 96 bytes and every root
 * to exactly 32, so that whatever parses here is also what the BLS store accepts
 * (`multiSignatureProblem`): a PRE-PREPARE whose multi-signature the store would refuse is refused
 * before anyone PREPAREs it, and a commit never meets one.
 */
export function parseMultiSigTuple(op: unknown, t: unknown, field = 'blsMultiSigs'): MultiSigTuple {
  if (!Array.isArray(t) || t.length !== 3) fail(op, field);
  const [sig, parts, val] = t as unknown[];
  if (!isB58Bytes(sig, MULTI_SIG_BYTES, 200)) fail(op, field);
  if (!Array.isArray(parts) || parts.length === 0 || parts.length > 1000 || !parts.every((p) => typeof p === 'string' && p.length > 0 && p.length <= 256)) {
    fail(op, field);
  }
  if (!Array.isArray(val) || val.length !== 5) fail(op, field);
  const [lid, sr, pr, tr, ts] = val as unknown[];
  const okInt = (x: unknown): x is number => typeof x === 'number' && Number.isSafeInteger(x) && x >= 0;
  const okRoot = (x: unknown): x is string => isB58Bytes(x, ROOT_BYTES, 64);
  if (!okInt(lid) || !okRoot(sr) || !okRoot(pr) || !okRoot(tr) || !okInt(ts)) fail(op, field);
  return [sig, [...(parts as string[])], [lid, sr, pr, tr, ts]];
}

export function parsePropagate(m: Obj): Propagate {
  if (!isPlainObject(m.request)) fail(m.op, 'request');
  const sc = m.senderClient;
  if (sc !== undefined && sc !== null && (typeof sc !== 'string' || sc.length > 256)) fail(m.op, 'senderClient');
  return { op: 'PROPAGATE', request: m.request, senderClient: typeof sc === 'string' ? sc : null };
}

export function parsePrePrepare(m: Obj, plugins: PluginLedgerIds = NO_PLUGIN_LEDGERS): PrePrepare {
  if (uint(m, 'instId') !== 0) fail(m.op, 'instId');
  const reqIdr = m.reqIdr;
  if (!Array.isArray(reqIdr) || reqIdr.length > MAX_REQIDR || !reqIdr.every((d) => typeof d === 'string' && HEX64.test(d))) fail(m.op, 'reqIdr');
  const discarded = str(m, 'discarded', /^\[(\d+(,\d+)*)?\]$/, 1_000_000);
  const idx = JSON.parse(discarded) as number[];
  for (let i = 0; i < idx.length; i++) {
    if (!Number.isSafeInteger(idx[i]) || idx[i] >= reqIdr.length || (i > 0 && idx[i] <= idx[i - 1])) fail(m.op, 'discarded');
  }
  if (m.sub_seq_no !== undefined && m.sub_seq_no !== 0) fail(m.op, 'sub_seq_no');
  if (m.final !== undefined && m.final !== true) fail(m.op, 'final');
  if (m.plugin_fields !== undefined) fail(m.op, 'plugin_fields');
  const pp: PrePrepare = {
    op: 'PREPREPARE',
    instId: 0,
    viewNo: uint(m, 'viewNo'),
    ppSeqNo: uint(m, 'ppSeqNo', 1),
    ppTime: uint(m, 'ppTime'),
    reqIdr: [...(reqIdr as string[])],
    discarded,
    digest: hex(m, 'digest'),
    ledgerId: uint(m, 'ledgerId'),
    stateRootHash: b58(m, 'stateRootHash'),
    txnRootHash: b58(m, 'txnRootHash'),
    sub_seq_no: 0,
    final: true,
    poolStateRootHash: b58(m, 'poolStateRootHash'),
    auditTxnRootHash: b58(m, 'auditTxnRootHash'),
  };
  // the ordered built-in ledgers are pool, domain and config; a higher id is a plugin ledger's or refused
  if (pp.ledgerId > LedgerId.CONFIG && !plugins.includes(pp.ledgerId)) fail(m.op, 'ledgerId');
  if (m.blsMultiSigs !== undefined && m.blsMultiSigs !== null) {
    if (!Array.isArray(m.blsMultiSigs) || m.blsMultiSigs.length > 16) fail(m.op, 'blsMultiSigs');
    pp.blsMultiSigs = m.blsMultiSigs.map((t) => parseMultiSigTuple(m.op, t));
  }
  if (m.originalViewNo !== undefined && m.originalViewNo !== null) {
    pp.originalViewNo = uint(m, 'originalViewNo');
    if (pp.originalViewNo > pp.viewNo) fail(m.op, 'originalViewNo');
  }
  return pp;
}

export function parsePrepare(m: Obj): Prepare {
  if (uint(m, 'instId') !== 0) fail(m.op, 'instId');
  return {
    op: 'PREPARE',
    instId: 0,
    viewNo: uint(m, 'viewNo'),
    ppSeqNo: uint(m, 'ppSeqNo', 1),
    ppTime: uint(m, 'ppTime'),
    digest: hex(m, 'digest'),
    stateRootHash: b58(m, 'stateRootHash'),
    txnRootHash: b58(m, 'txnRootHash'),
    auditTxnRootHash: b58(m, 'auditTxnRootHash'),
  };
}

export function parseCommit(m: Obj, plugins: PluginLedgerIds = NO_PLUGIN_LEDGERS): Commit {
  if (uint(m, 'instId') !== 0) fail(m.op, 'instId');
  const sigs = m.blsSigs;
  if (!isPlainObject(sigs)) fail(m.op, 'blsSigs');
  const blsSigs: Record<string, string> = {};
  const keys = Object.keys(sigs);
  if (keys.length === 0 || keys.length > 3 + plugins.length) fail(m.op, 'blsSigs');
  for (const k of keys) {
    const v = sigs[k];
    if ((!/^[0-2]$/.test(k) && !plugins.some((l) => String(l) === k)) || typeof v !== 'string' || !/^[1-9A-HJ-NP-Za-km-z]{1,200}$/.test(v))
      fail(m.op, 'blsSigs');
    blsSigs[k] = v;
  }
  return { op: 'COMMIT', instId: 0, viewNo: uint(m, 'viewNo'), ppSeqNo: uint(m, 'ppSeqNo', 1), blsSigs };
}

export function parseCheckpoint(m: Obj): Checkpoint {
  if (uint(m, 'instId') !== 0) fail(m.op, 'instId');
  if (uint(m, 'seqNoStart') !== 0) fail(m.op, 'seqNoStart');
  const d = m.digest;
  if (d !== null && (typeof d !== 'string' || !B58.test(d))) fail(m.op, 'digest');
  return { op: 'CHECKPOINT', instId: 0, viewNo: uint(m, 'viewNo'), seqNoStart: 0, seqNoEnd: uint(m, 'seqNoEnd'), digest: d };
}

export function parseInstanceChange(m: Obj): InstanceChange {
  return { op: 'INSTANCE_CHANGE', viewNo: uint(m, 'viewNo'), reason: uint(m, 'reason') };
}

const MAX_BATCH_IDS = 10_000;

function parseBatchId(op: unknown, v: unknown): BatchId {
  if (!isPlainObject(v)) fail(op, 'BatchID');
  const b: BatchId = { view_no: uint(v, 'view_no'), pp_view_no: uint(v, 'pp_view_no'), pp_seq_no: uint(v, 'pp_seq_no', 1), pp_digest: hex(v, 'pp_digest') };
  return b;
}

function batchIds(m: Obj, f: string): BatchId[] {
  const v = m[f];
  if (!Array.isArray(v) || v.length > MAX_BATCH_IDS) fail(m.op, f);
  return v.map((x) => parseBatchId(m.op, x));
}

function embeddedCheckpoint(op: unknown, v: unknown): Checkpoint {
  if (!isPlainObject(v) || v.op !== 'CHECKPOINT') fail(op, 'checkpoint');
  return parseCheckpoint(v);
}

export function parseViewChange(m: Obj): ViewChange {
  const cps = m.checkpoints;
  if (!Array.isArray(cps) || cps.length > 1000) fail(m.op, 'checkpoints');
  return {
    op: 'VIEW_CHANGE',
    viewNo: uint(m, 'viewNo'),
    stableCheckpoint: uint(m, 'stableCheckpoint'),
    prepared: batchIds(m, 'prepared'),
    preprepared: batchIds(m, 'preprepared'),
    checkpoints: cps.map((c) => embeddedCheckpoint(m.op, c)),
  };
}

export function parseViewChangeAck(m: Obj): ViewChangeAck {
  return { op: 'VIEW_CHANGE_ACK', viewNo: uint(m, 'viewNo'), name: str(m, 'name', /^.+$/s), digest: hex(m, 'digest') };
}

export function parseNewView(m: Obj): NewView {
  const vcs = m.viewChanges;
  if (!Array.isArray(vcs) || vcs.length > 1000) fail(m.op, 'viewChanges');
  const viewChanges = vcs.map((e): [string, string] => {
    if (
      !Array.isArray(e) ||
      e.length !== 2 ||
      typeof e[0] !== 'string' ||
      e[0].length === 0 ||
      e[0].length > 256 ||
      typeof e[1] !== 'string' ||
      !HEX64.test(e[1])
    ) {
      fail(m.op, 'viewChanges');
    }
    return [e[0] as string, e[1] as string];
  });
  const nv: NewView = {
    op: 'NEW_VIEW',
    viewNo: uint(m, 'viewNo'),
    viewChanges,
    checkpoint: embeddedCheckpoint(m.op, m.checkpoint),
    batches: batchIds(m, 'batches'),
  };
  if (m.primary !== undefined && m.primary !== null) nv.primary = str(m, 'primary', /^.+$/s);
  return nv;
}

export function parseOldViewPrePrepareReq(m: Obj): OldViewPrePrepareReq {
  if (uint(m, 'instId') !== 0) fail(m.op, 'instId');
  return { op: 'OLD_VIEW_PREPREPARE_REQ', instId: 0, batch_ids: batchIds(m, 'batch_ids') };
}

export function parseOldViewPrePrepareRep(m: Obj, plugins: PluginLedgerIds = NO_PLUGIN_LEDGERS): OldViewPrePrepareRep {
  if (uint(m, 'instId') !== 0) fail(m.op, 'instId');
  const pps = m.preprepares;
  if (!Array.isArray(pps) || pps.length > 1000) fail(m.op, 'preprepares');
  return {
    op: 'OLD_VIEW_PREPREPARE_REP',
    instId: 0,
    preprepares: pps.map((p) => {
      if (!isPlainObject(p)) fail(m.op, 'preprepares');
      return parsePrePrepare({ ...p, op: 'PREPREPARE' }, plugins);
    }),
  };
}

const LEDGER_IDS = /^[0-3]$/;
const MAX_CATCHUP_TXNS = 5000;
/** an audit txn names at most the state roots of ledgers 0-2 */
const MAX_CATCHUP_MULTISIGS = 3 * MAX_CATCHUP_TXNS;

function ledgerId(m: Obj, plugins: PluginLedgerIds): number {
  const l = uint(m, 'ledgerId');
  if (!LEDGER_IDS.test(String(l)) && !plugins.includes(l)) fail(m.op, 'ledgerId');
  return l;
}

function optUint(m: Obj, f: string): number | null {
  return m[f] === null || m[f] === undefined ? null : uint(m, f);
}

function b58List(m: Obj, f: string, max: number): string[] {
  const v = m[f];
  if (!Array.isArray(v) || v.length > max || !v.every((h) => typeof h === 'string' && B58.test(h))) fail(m.op, f);
  return [...(v as string[])];
}

export function parseLedgerStatus(m: Obj, plugins: PluginLedgerIds = NO_PLUGIN_LEDGERS): LedgerStatus {
  return {
    op: 'LEDGER_STATUS',
    ledgerId: ledgerId(m, plugins),
    txnSeqNo: uint(m, 'txnSeqNo'),
    viewNo: optUint(m, 'viewNo'),
    ppSeqNo: optUint(m, 'ppSeqNo'),
    merkleRoot: b58(m, 'merkleRoot'),
    protocolVersion: uint(m, 'protocolVersion'),
  };
}

export function parseConsistencyProof(m: Obj, plugins: PluginLedgerIds = NO_PLUGIN_LEDGERS): ConsistencyProof {
  const p: ConsistencyProof = {
    op: 'CONSISTENCY_PROOF',
    ledgerId: ledgerId(m, plugins),
    seqNoStart: uint(m, 'seqNoStart'),
    seqNoEnd: uint(m, 'seqNoEnd'),
    viewNo: optUint(m, 'viewNo') ?? 0,
    ppSeqNo: optUint(m, 'ppSeqNo') ?? 0,
    oldMerkleRoot: b58(m, 'oldMerkleRoot'),
    newMerkleRoot: b58(m, 'newMerkleRoot'),
    hashes: b58List(m, 'hashes', 10_000),
  };
  if (p.seqNoEnd <= p.seqNoStart) fail(m.op, 'seqNoEnd');
  return p;
}

export function parseCatchupReq(m: Obj, plugins: PluginLedgerIds = NO_PLUGIN_LEDGERS): CatchupReq {
  const r: CatchupReq = {
    op: 'CATCHUP_REQ',
    ledgerId: ledgerId(m, plugins),
    seqNoStart: uint(m, 'seqNoStart', 1),
    seqNoEnd: uint(m, 'seqNoEnd', 1),
    catchupTill: uint(m, 'catchupTill', 1),
  };
  if (r.seqNoEnd < r.seqNoStart || r.catchupTill < r.seqNoEnd || r.seqNoEnd - r.seqNoStart >= MAX_CATCHUP_TXNS) fail(m.op, 'seqNoEnd');
  return r;
}

function decodedTxn(v: MsgpackEncoded, op: unknown): unknown {
  try {
    return decodeMsgpack(v.bytes, { keepMapsAtDepth: 0 });
  } catch {
    return fail(op, 'txns');
  }
}

export function parseCatchupRep(m: Obj, plugins: PluginLedgerIds = NO_PLUGIN_LEDGERS): CatchupRep {
  const t = m.txns;
  if (!isPlainObject(t)) fail(m.op, 'txns');
  noProtoKeys(t);
  const keys = Object.keys(t);
  if (keys.length === 0 || keys.length > MAX_CATCHUP_TXNS) fail(m.op, 'txns');
  const txns: Record<string, unknown> = {};
  for (const k of keys) {
    // a seeder's stored txn given as its bytes (MsgpackEncoded) and handed over in process, not through the wire,
    // is read as the wire reads it: decoded, its bytes kept for the ledger (takeDecodedEncoding)
    const v = t[k] instanceof MsgpackEncoded ? decodedTxn(t[k], m.op) : t[k];
    if (!/^[1-9][0-9]{0,15}$/.test(k) || !isPlainObject(v)) fail(m.op, 'txns');
    txns[k] = v;
  }
  const rep: CatchupRep = { op: 'CATCHUP_REP', ledgerId: ledgerId(m, plugins), txns, consProof: b58List(m, 'consProof', 10_000) };
  // Quire extension (audit ledger): the entries stay unchecked here; the leecher checks each one and
  // drops a bad one without refusing the txns (catchup-multisigs.ts)
  const ms = m.multiSigs;
  if (ms !== undefined && ms !== null) {
    if (!Array.isArray(ms) || ms.length > MAX_CATCHUP_MULTISIGS) fail(m.op, 'multiSigs');
    rep.multiSigs = [...(ms as unknown[])];
  }
  return rep;
}

const REQUESTABLE: ReadonlySet<string> = new Set(['PROPAGATE', 'PREPREPARE', 'PREPARE', 'COMMIT', 'VIEW_CHANGE', 'NEW_VIEW', 'CONSISTENCY_PROOF']);

function parseParams(m: Obj, plugins: PluginLedgerIds): { msgType: MessageRequestType; params: Record<string, unknown> } {
  const t = m.msg_type;
  if (typeof t !== 'string' || !REQUESTABLE.has(t)) fail(m.op, 'msg_type');
  const p = m.params;
  if (!isPlainObject(p)) fail(m.op, 'params');
  noProtoKeys(p);
  if (t === 'PROPAGATE') {
    hex(p, 'digest');
    return { msgType: t, params: { digest: p.digest } };
  }
  if (t === 'VIEW_CHANGE') {
    if (uint(p, 'instId') !== 0) fail(m.op, 'params');
    return { msgType: t, params: { instId: 0, name: str(p, 'name', /^.+$/s), digest: hex(p, 'digest') } };
  }
  if (t === 'CONSISTENCY_PROOF') {
    return { msgType: t, params: { ledgerId: ledgerId(p, plugins), seqNoStart: uint(p, 'seqNoStart'), seqNoEnd: uint(p, 'seqNoEnd', 1) } };
  }
  if (t === 'NEW_VIEW') {
    if (uint(p, 'instId') !== 0) fail(m.op, 'params');
    return { msgType: t, params: { instId: 0, viewNo: uint(p, 'viewNo') } };
  }
  if (uint(p, 'instId') !== 0) fail(m.op, 'params');
  return { msgType: t as MessageRequestType, params: { instId: 0, viewNo: uint(p, 'viewNo'), ppSeqNo: uint(p, 'ppSeqNo', 1) } };
}

export function parseMessageRequest(m: Obj, plugins: PluginLedgerIds = NO_PLUGIN_LEDGERS): MessageRequest {
  const { msgType, params } = parseParams(m, plugins);
  return { op: 'MESSAGE_REQUEST', msg_type: msgType, params };
}

export function parseMessageResponse(m: Obj, plugins: PluginLedgerIds = NO_PLUGIN_LEDGERS): MessageResponse {
  const { msgType, params } = parseParams(m, plugins);
  let msg: MessageResponse['msg'] = null;
  if (m.msg !== null && m.msg !== undefined) {
    if (!isPlainObject(m.msg)) fail(m.op, 'msg');
    const inner = parseNodeMessage({ ...m.msg, op: msgType }, plugins);
    msg = inner as MessageResponse['msg'];
  }
  return { op: 'MESSAGE_RESPONSE', msg_type: msgType, params, msg };
}

/**
 * Checks the shape of a decoded peer message; throws ConsensusError(INVALID_MESSAGE) otherwise. A
 * ledger id must be one of 0-3 or of `plugins`, the node's plugin ledgers.
 */
export function parseNodeMessage(value: unknown, plugins: PluginLedgerIds = NO_PLUGIN_LEDGERS): NodeMessage {
  if (!isPlainObject(value)) fail(undefined, 'message');
  noProtoKeys(value);
  switch (value.op) {
    case 'PROPAGATE':
      return parsePropagate(value);
    case 'PREPREPARE':
      return parsePrePrepare(value, plugins);
    case 'PREPARE':
      return parsePrepare(value);
    case 'COMMIT':
      return parseCommit(value, plugins);
    case 'CHECKPOINT':
      return parseCheckpoint(value);
    case 'INSTANCE_CHANGE':
      return parseInstanceChange(value);
    case 'VIEW_CHANGE':
      return parseViewChange(value);
    case 'VIEW_CHANGE_ACK':
      return parseViewChangeAck(value);
    case 'NEW_VIEW':
      return parseNewView(value);
    case 'OLD_VIEW_PREPREPARE_REQ':
      return parseOldViewPrePrepareReq(value);
    case 'OLD_VIEW_PREPREPARE_REP':
      return parseOldViewPrePrepareRep(value, plugins);
    case 'LEDGER_STATUS':
      return parseLedgerStatus(value, plugins);
    case 'CONSISTENCY_PROOF':
      return parseConsistencyProof(value, plugins);
    case 'CATCHUP_REQ':
      return parseCatchupReq(value, plugins);
    case 'CATCHUP_REP':
      return parseCatchupRep(value, plugins);
    case 'MESSAGE_REQUEST':
      return parseMessageRequest(value, plugins);
    case 'MESSAGE_RESPONSE':
      return parseMessageResponse(value, plugins);
    default:
      return fail(value.op, 'op');
  }
}
