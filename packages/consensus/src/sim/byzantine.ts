// Byzantine behaviours of simulated nodes: transformations of the messages an otherwise honest
// core sends (consensus.md §12.2). Each returns the messages actually put on the wire.
import { batchDigest } from '../digest.js';
import type { NodeMessage } from '../messages.js';
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
  /** primary: PRE-PREPAREs with a wrong state root to some backups */
  WRONG_ROOTS: 'wrongRoots',
  /** primary: two different PRE-PREPAREs for one key to the two halves of the pool */
  EQUIVOCATE: 'equivocate',
  /** VIEW_CHANGEs with different contents to the two halves of the pool */
  VC_EQUIVOCATE: 'vcEquivocate',
  /** catch-up seeder that tampers with txns, sends bad proofs or stays silent */
  LYING_SEEDER: 'lyingSeeder',
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
      return { op: 'PREPARE', instId: 0, viewNo: 0, ppSeqNo: rng.int(1, 50), ppTime: 1, digest: randomHex(rng), stateRootHash: 'x', txnRootHash: 'y', auditTxnRootHash: 'z' };
    case 5:
      return [1, 2, 3];
    default:
      return { op: 'MESSAGE_REQUEST', msg_type: 'PREPREPARE', params: { instId: 0, viewNo: 0, ppSeqNo: -5 } };
  }
}

/**
 * Rewrites one outgoing message of a Byzantine node for one recipient. `history` holds messages
 * the node sent earlier (for replays).
 */
export function byzantineTransform(kind: ByzantineKind, msg: NodeMessage, to: string, peers: readonly string[], rng: Prng, history: NodeMessage[]): unknown[] {
  switch (kind) {
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
      if (msg.op === 'PREPREPARE' && peers.indexOf(to) % 2 === 1) return [{ ...msg, stateRootHash: randomB58(rng, 44) }];
      return [msg];
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
        return [{ ...msg, ppTime, digest: batchDigest(msg.originalViewNo ?? msg.viewNo, ppTime, msg.reqIdr) }];
      }
      return [msg];
  }
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
