// Byzantine behaviours of simulated nodes: transformations of the messages an otherwise honest
// core sends (consensus.md §12.2). Each returns the messages actually put on the wire.
import { b58encode, sha256, sha256Hex } from '@quire/common';
import { batchDigest } from '../digest.js';
import type { BatchId, MultiSigTuple, NodeMessage, PrePrepare, ViewChange } from '../messages.js';
import type { Prng } from './prng.js';

export const ByzantineKind = {
  /** COMMITs carry shares over another value (valid points, wrong message) */
  BAD_BLS: 'badBls',
  /** PREPAREs name a wrong digest and roots */
  WRONG_PREPARE: 'wrongPrepare',
  /** PROPAGATE, PREPARE and COMMIT are never sent */
  WITHHOLD: 'withhold',
  /** old messages are sent again at random */
  REPLAY: 'replay',
  /** random junk is sent along with the real traffic */
  GARBAGE: 'garbage',
  /** primary: PRE-PREPAREs with a wrong state, txn or audit root or digest to some backups */
  WRONG_ROOTS: 'wrongRoots',
  /** primary: two different PRE-PREPAREs for one key to the two halves of the pool */
  EQUIVOCATE: 'equivocate',
  /** VIEW_CHANGEs with different contents to the two halves of the pool */
  VC_EQUIVOCATE: 'vcEquivocate',
  /** catch-up seeder that tampers with txns, sends bad proofs or stays silent */
  LYING_SEEDER: 'lyingSeeder',
  /** primary: PRE-PREPAREs carry forged or malformed multi-signatures (unknown roots, outsiders, bad bytes) */
  BAD_MULTI_SIG: 'badMultiSig',
  /** next primary: bad NEW_VIEW, forged prepared certificates, forged OLD_VIEW_PREPREPARE replies, false consistency proofs */
  BAD_NEW_VIEW: 'badNewView',
  /** floods INSTANCE_CHANGE, MESSAGE_RESPONSE{NEW_VIEW}, VIEW_CHANGE_ACK and stash fillers (fault-plan timers) */
  FLOOD: 'flood',
  /** the second incarnation of a backup whose core believes it is the primary (only PRE-PREPAREs and queries leave it) */
  USURPER: 'usurper',
  /** VIEW_CHANGEs, the same to everyone, with a checkpoint and a prepared batch nobody else has */
  VC_FORGE: 'vcForge',
  /** primary: PRE-PREPAREs whose digest is not their contents', with the roots of the batch executed under that digest (simulator.ts) */
  WRONG_DIGEST: 'wrongDigest',
  /** CHECKPOINTs are never sent (checkpoints stay unstable while another node is cut off) */
  WITHHOLD_CHECKPOINTS: 'withholdCheckpoints',
} as const;
export type ByzantineKind = (typeof ByzantineKind)[keyof typeof ByzantineKind];

export const BACKUP_BEHAVIOURS: readonly ByzantineKind[] = ['badBls', 'wrongPrepare', 'withhold', 'replay', 'garbage'];
export const PRIMARY_BEHAVIOURS: readonly ByzantineKind[] = ['wrongRoots', 'equivocate'];

const B58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

function randomB58(rng: Prng, len: number): string {
  let s = '';
  for (let i = 0; i < len; i++) s += B58[rng.int(0, B58.length - 1)];
  return s;
}

/** base58 of `bytes` random bytes (a well-formed root or signature that is none) */
function randomB58Bytes(rng: Prng, bytes: number): string {
  const b = new Uint8Array(bytes);
  for (let i = 0; i < bytes; i++) b[i] = rng.int(0, 255);
  b[0] = rng.int(1, 255);
  return b58encode(b);
}

function randomHex(rng: Prng): string {
  let s = '';
  for (let i = 0; i < 64; i++) s += '0123456789abcdef'[rng.int(0, 15)];
  return s;
}

export function garbageMessage(rng: Prng): unknown {
  switch (rng.int(0, 6)) {
    case 0:
      return null;
    case 1:
      return { op: 'NOPE', x: 1 };
    case 2:
      return { op: 'PREPREPARE', instId: 0, viewNo: -1 };
    case 3:
      return { op: 'COMMIT', instId: 0, viewNo: 0, ppSeqNo: rng.int(1, 50), blsSigs: { '1': 'not base58 0OIl' } };
    case 4:
      return {
        op: 'PREPARE',
        instId: 0,
        viewNo: 0,
        ppSeqNo: rng.int(1, 50),
        ppTime: 1,
        digest: randomHex(rng),
        stateRootHash: 'x',
        txnRootHash: 'y',
        auditTxnRootHash: 'z',
      };
    case 5:
      return [1, 2, 3];
    default:
      return { op: 'MESSAGE_REQUEST', msg_type: 'PREPREPARE', params: { instId: 0, viewNo: 0, ppSeqNo: -5 } };
  }
}

/** kinds whose rewritten messages contradict what the sender sent others (counted as equivocations) */
const EQUIVOCATING_OPS: Partial<Record<ByzantineKind, readonly string[]>> = {
  badMultiSig: ['PREPREPARE'],
  vcForge: ['VIEW_CHANGE'],
  badNewView: ['NEW_VIEW', 'VIEW_CHANGE', 'OLD_VIEW_PREPREPARE_REP', 'CONSISTENCY_PROOF', 'MESSAGE_RESPONSE'],
  equivocate: ['PREPREPARE'],
  vcEquivocate: ['VIEW_CHANGE'],
};

/** True when `out` (what a Byzantine node put on the wire) differs from its core's `msg` in a way that counts as equivocation. */
export function isEquivocation(kind: ByzantineKind, msg: NodeMessage, out: readonly unknown[]): boolean {
  return EQUIVOCATING_OPS[kind]?.includes(msg.op) === true && out.some((m) => m !== msg);
}

/** The digest a `wrongDigest` primary puts in its PRE-PREPAREs, and executes its batches under, in place of `digest`. */
export function forgedDigest(digest: string): string {
  return sha256Hex(`forged-digest|${digest}`);
}

/** A multi-signature tuple that must never be stored: malformed bytes, an unknown pool root, outsiders, or a tampered value. */
function forgedMultiSig(rng: Prng, real: MultiSigTuple | undefined, pp: PrePrepare): MultiSigTuple {
  const value: [number, string, string, string, number] = real?.[2] ?? [pp.ledgerId, pp.stateRootHash, pp.poolStateRootHash, pp.txnRootHash, pp.ppTime];
  const sig = real?.[0] ?? randomB58Bytes(rng, 96);
  const parts = real?.[1] ?? ['Node1', 'Node2', 'Node3'];
  switch (rng.int(0, 5)) {
    case 0:
      // parses loosely, refused by the BLS store (F3): one-character signature, short roots
      return ['1', parts, [value[0], 'abc', 'abc', 'abc', value[4]]];
    case 1:
      // a well-formed multi-signature over a pool state root nobody has (F2)
      return [randomB58Bytes(rng, 96), parts, [value[0], randomB58Bytes(rng, 32), randomB58Bytes(rng, 32), randomB58Bytes(rng, 32), value[4]]];
    case 2:
      // the real signature with participants that are not validators at that root (F10)
      return [sig, ['Mallory', 'Trudy', 'Eve', ...parts.slice(3)], value];
    case 3:
      // the real signature over a tampered state root
      return [sig, parts, [value[0], randomB58Bytes(rng, 32), value[2], value[3], value[4]]];
    case 4:
      // one participant fewer than the signature was made by
      return [sig, parts.slice(0, Math.max(1, parts.length - 1)), value];
    default:
      // random bytes that are no curve point
      return [randomB58Bytes(rng, 96), parts, value];
  }
}

/** A Byzantine next primary's rewrites of its view-change messages (and catch-up answers). */
function badNewView(msg: NodeMessage, to: string, peers: readonly string[], rng: Prng): unknown {
  const half = peers.indexOf(to) % 2 === 1;
  switch (msg.op) {
    case 'NEW_VIEW': {
      const roll = rng.int(0, 4);
      // fewer VIEW_CHANGEs than n-f named
      if (roll === 4) return { ...msg, viewChanges: msg.viewChanges.slice(0, Math.max(1, Math.floor(msg.viewChanges.length / 2))) };
      if (roll === 0) return { ...msg, batches: msg.batches.slice(0, -1) };
      if (roll === 1) return { ...msg, batches: msg.batches.map((b, i) => (i === msg.batches.length - 1 ? { ...b, pp_digest: randomHex(rng) } : b)) };
      if (roll === 2) {
        const last = msg.batches[msg.batches.length - 1];
        const extra: BatchId = {
          view_no: msg.viewNo - 1,
          pp_view_no: msg.viewNo - 1,
          pp_seq_no: (last?.pp_seq_no ?? msg.checkpoint.seqNoEnd) + 1,
          pp_digest: randomHex(rng),
        };
        return { ...msg, batches: [...msg.batches, extra] };
      }
      return { ...msg, checkpoint: { ...msg.checkpoint, seqNoEnd: msg.checkpoint.seqNoEnd + 1, digest: randomB58Bytes(rng, 32) } };
    }
    case 'VIEW_CHANGE': {
      if (!half) return msg;
      // a prepared certificate nobody else holds, for the batch after its last one
      const top = Math.max(msg.stableCheckpoint, ...msg.prepared.map((b) => b.pp_seq_no));
      const forged: BatchId = { view_no: msg.viewNo - 1, pp_view_no: msg.viewNo - 1, pp_seq_no: top + 1, pp_digest: randomHex(rng) };
      if (rng.chance(0.5)) return { ...msg, prepared: [...msg.prepared, forged], preprepared: [...msg.preprepared, forged] };
      // or a checkpoint nobody else made
      const last = msg.checkpoints[msg.checkpoints.length - 1];
      const cp = {
        op: 'CHECKPOINT' as const,
        instId: 0,
        viewNo: msg.viewNo - 1,
        seqNoStart: 0,
        seqNoEnd: (last?.seqNoEnd ?? msg.stableCheckpoint) + rng.int(1, 10),
        digest: randomB58Bytes(rng, 32),
      };
      return { ...msg, checkpoints: [...msg.checkpoints, cp] };
    }
    case 'OLD_VIEW_PREPREPARE_REP':
      // same digest, tampered contents
      return {
        ...msg,
        preprepares: msg.preprepares.map((pp) =>
          rng.chance(0.5) ? { ...pp, stateRootHash: randomB58Bytes(rng, 32) } : { ...pp, reqIdr: [...pp.reqIdr].reverse(), ppTime: pp.ppTime + 1 },
        ),
      };
    case 'MESSAGE_RESPONSE':
      if (msg.msg?.op === 'NEW_VIEW') return { ...msg, msg: badNewView(msg.msg, to, peers, rng) as NodeMessage & { op: 'NEW_VIEW' } };
      if (msg.msg?.op === 'PREPREPARE') return { ...msg, msg: { ...msg.msg, stateRootHash: randomB58Bytes(rng, 32) } };
      return msg;
    case 'CONSISTENCY_PROOF':
      // a valid-looking proof of a longer ledger than the sender has
      return { ...msg, seqNoEnd: msg.seqNoEnd + rng.int(1, 5), newMerkleRoot: randomB58Bytes(rng, 32), hashes: [...msg.hashes, randomB58Bytes(rng, 32)] };
    case 'LEDGER_STATUS':
      return half ? { ...msg, txnSeqNo: msg.txnSeqNo + rng.int(1, 5), merkleRoot: randomB58Bytes(rng, 32) } : msg;
    default:
      return msg;
  }
}

/** What a usurper (a second core that believes it is the primary) may put on the wire: its PRE-PREPAREs, and the queries it needs to start. */
const USURPER_OPS = new Set(['PREPREPARE', 'LEDGER_STATUS', 'CATCHUP_REQ', 'MESSAGE_REQUEST']);

/**
 * Rewrites one outgoing message of a Byzantine node for one recipient. `history` holds messages
 * the node sent earlier (for replays).
 */
export function byzantineTransform(kind: ByzantineKind, msg: NodeMessage, to: string, peers: readonly string[], rng: Prng, history: NodeMessage[]): unknown[] {
  switch (kind) {
    case 'badMultiSig':
      if (msg.op === 'PREPREPARE' && rng.chance(0.6)) {
        const sigs = msg.blsMultiSigs;
        const real = sigs?.[0];
        const forged = forgedMultiSig(rng, real, msg);
        return [{ ...msg, blsMultiSigs: sigs === undefined || real === undefined || rng.chance(0.5) ? [forged] : [forged, ...sigs.slice(1)] }];
      }
      return [msg];
    case 'badNewView':
      return [badNewView(msg, to, peers, rng)];
    case 'flood':
      return [msg];
    case 'usurper':
      return USURPER_OPS.has(msg.op) ? [msg] : [];
    case 'badBls':
      if (msg.op === 'COMMIT') {
        const blsSigs: Record<string, string> = {};
        const older = history.filter((h): h is Extract<NodeMessage, { op: 'COMMIT' }> => h.op === 'COMMIT' && h.ppSeqNo !== msg.ppSeqNo);
        for (const k of Object.keys(msg.blsSigs)) {
          // a valid curve point over another batch's value, or bytes that are no point at all
          const reused = older.length > 0 && rng.chance(0.5) ? rng.pick(older).blsSigs[k] : undefined;
          blsSigs[k] = reused ?? randomB58(rng, 130);
        }
        return [{ ...msg, blsSigs }];
      }
      return [msg];
    case 'wrongPrepare':
      if (msg.op === 'PREPARE') return [{ ...msg, digest: randomHex(rng), stateRootHash: randomB58(rng, 44) }];
      return [msg];
    case 'withhold':
      return msg.op === 'PROPAGATE' || msg.op === 'PREPARE' || msg.op === 'COMMIT' ? [] : [msg];
    case 'replay': {
      const out: unknown[] = [msg];
      if (history.length > 0 && rng.chance(0.3)) out.push(rng.pick(history));
      return out;
    }
    case 'garbage':
      return rng.chance(0.3) ? [msg, garbageMessage(rng)] : [msg];
    case 'wrongRoots':
      if (msg.op === 'PREPREPARE' && peers.indexOf(to) % 2 === 1) return [wrongRoot(msg, rng.int(0, 2), rng)];
      return [msg];
    case 'wrongDigest':
      return msg.op === 'PREPREPARE' ? [{ ...msg, digest: forgedDigest(msg.digest) }] : [msg];
    case 'withholdCheckpoints':
      return msg.op === 'CHECKPOINT' ? [] : [msg];
    case 'vcForge':
      // its CHECKPOINTs are withheld, so that checkpoints stay unstable while the primary of view 0 is cut off
      if (msg.op === 'CHECKPOINT') return [];
      return msg.op === 'VIEW_CHANGE' ? [forgedViewChange(msg)] : [msg];
    case 'vcEquivocate':
      // a valid-looking second version: the pre-prepared list left out
      if (msg.op === 'VIEW_CHANGE' && peers.indexOf(to) % 2 === 1) return [{ ...msg, preprepared: [], prepared: [] }];
      return [msg];
    case 'lyingSeeder':
      return [lieToLeecher(msg, rng)].filter((m) => m !== undefined);
    case 'equivocate':
      if (msg.op === 'PREPREPARE' && peers.indexOf(to) % 2 === 1) {
        // same key, later time, so a different digest; its audit root no longer matches, so a backup
        // that gets only this version votes 44, one holding the first votes 60 when relays bring it
        const ppTime = msg.ppTime + 1;
        return [{ ...msg, ppTime, digest: batchDigest(msg.originalViewNo ?? msg.viewNo, ppTime, msg.reqIdr, msg.ledgerId) }];
      }
      return [msg];
  }
}

/**
 * A PRE-PREPARE with one wrong root, well-formed, drawn per recipient: the state root, the txn
 * root or the audit root (a backup refuses the first one it gets, so each recipient tests one
 * check per run). A wrong digest alone is refused by the audit root too (the audit txn holds the
 * digest): `wrongDigest` is the primary that reaches the digest check.
 */
function wrongRoot(pp: PrePrepare, field: number, rng: Prng): PrePrepare {
  switch (field) {
    case 0:
      return { ...pp, stateRootHash: randomB58(rng, 44) };
    case 1:
      return { ...pp, txnRootHash: randomB58Bytes(rng, 32) };
    default:
      return { ...pp, auditTxnRootHash: randomB58Bytes(rng, 32) };
  }
}

/**
 * One forged version of a VIEW_CHANGE, the same for every recipient (derived from its contents, so
 * that every node holds the version the new primary names): a checkpoint above its stable one that
 * nobody made; a batch after its last one, prepared and pre-prepared in the previous view, that no
 * primary proposed; and its batches prepared in a later view than 0 claimed in view 0 with another
 * digest. A correct NEW_VIEW ignores all three (f+1 holders, f+1 pre-prepared witnesses, the
 * certificate of the highest view).
 */
function forgedViewChange(vc: ViewChange): ViewChange {
  const seed = `forged|${vc.viewNo}|${vc.stableCheckpoint}|${vc.prepared.length}|${vc.checkpoints.length}`;
  const top = Math.max(vc.stableCheckpoint, ...vc.prepared.map((b) => b.pp_seq_no), ...vc.preprepared.map((b) => b.pp_seq_no));
  const batch: BatchId = { view_no: vc.viewNo - 1, pp_view_no: vc.viewNo - 1, pp_seq_no: top + 1, pp_digest: sha256Hex(`${seed}|batch`) };
  const last = vc.checkpoints[vc.checkpoints.length - 1];
  const cp = {
    op: 'CHECKPOINT' as const,
    instId: 0,
    viewNo: Math.max(0, vc.viewNo - 1),
    seqNoStart: 0,
    seqNoEnd: Math.max(top, last?.seqNoEnd ?? 0) + 2,
    digest: b58encode(sha256(`${seed}|checkpoint`)),
  };
  const older = (b: BatchId): BatchId =>
    b.view_no > 0 ? { view_no: 0, pp_view_no: 0, pp_seq_no: b.pp_seq_no, pp_digest: sha256Hex(`${seed}|older|${b.pp_seq_no}`) } : b;
  return { ...vc, prepared: [...vc.prepared.map(older), batch], preprepared: [...vc.preprepared.map(older), batch], checkpoints: [...vc.checkpoints, cp] };
}

/** A lying catch-up seeder: tampered txns, broken proofs, or silence (the leecher must time out). */
function lieToLeecher(msg: NodeMessage, rng: Prng): unknown {
  if (msg.op === 'CATCHUP_REP') {
    const roll = rng.int(0, 2);
    if (roll === 0) return undefined;
    if (roll === 1) {
      const txns: Record<string, unknown> = {};
      for (const [k, t] of Object.entries(msg.txns)) txns[k] = { ...(t as Record<string, unknown>), forged: randomHex(rng) };
      return { ...msg, txns };
    }
    return { ...msg, consProof: msg.consProof.length > 0 ? msg.consProof.map(() => randomB58(rng, 44)) : [randomB58(rng, 44)] };
  }
  if (msg.op === 'CONSISTENCY_PROOF') {
    return rng.chance(0.5) ? { ...msg, newMerkleRoot: randomB58(rng, 44) } : { ...msg, hashes: msg.hashes.map(() => randomB58(rng, 44)) };
  }
  return msg;
}
