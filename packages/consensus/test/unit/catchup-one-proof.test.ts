// A lying catch-up seeder with a proof that verifies (issue #15, the mutation gate's
// `cu-one-proof`): a node cut off from 3PC while the pool orders catches up afterwards, and one
// peer answers its LEDGER_STATUS with a consistency proof of a longer audit ledger it made up (a
// real extension of its ledger over fabricated txns, so that the proof verifies), then either
// never serves any txns or serves the made-up ones (with proofs that verify against its made-up
// root). The target of a catch-up needs f+1 identical proofs: the leecher must catch up to the
// pool's real ledger, neither wait for the liar's nor take it.
import { expect } from 'chai';
import { canonicalJson } from '@quire/common';
import type { ConsensusCore, NodeMessage } from '@quire/consensus';
import type { StandInExecutor } from '@quire/consensus/sim';
import { chainHashed, leafHash } from '../../src/sim/standin-ledger.js';
import { Pool } from './scripted-pool.js';

const THREE_PC = new Set(['PREPREPARE', 'PREPARE', 'COMMIT', 'MESSAGE_RESPONSE']);
const AUDIT = 3;

const EXTRA = 4;
/** the made-up audit txn at `seqNo` */
const fabricated = (seqNo: number): Record<string, unknown> => ({ txn: { type: '2', data: { ppSeqNo: seqNo, fabricated: true } }, txnMetadata: { seqNo } });

/** A verifying proof of the sender's audit ledger extended by EXTRA fabricated txns. */
function extended(p: NodeMessage & { op: 'CONSISTENCY_PROOF' }): NodeMessage {
  const hashes = [...p.hashes];
  let root = p.newMerkleRoot;
  for (let s = p.seqNoEnd + 1; s <= p.seqNoEnd + EXTRA; s++) {
    const leaf = leafHash(canonicalJson(fabricated(s)));
    hashes.push(leaf);
    root = chainHashed(root, leaf);
  }
  return { ...p, seqNoEnd: p.seqNoEnd + EXTRA, newMerkleRoot: root, hashes };
}

/** The liar's answer to a CATCHUP_REQ for its made-up ledger (its real txns up to `real`, then the made-up ones), with a proof that verifies. */
function madeUpReply(liar: ConsensusCore, real: number, req: NodeMessage & { op: 'CATCHUP_REQ' }): NodeMessage {
  const ex = (liar as unknown as { ctx: { modules: { executor: StandInExecutor } } }).ctx.modules.executor;
  const txns: Record<string, unknown> = {};
  for (let s = req.seqNoStart; s <= req.seqNoEnd; s++) txns[String(s)] = s <= real ? ex.txnRange(AUDIT, s, s)[0] : fabricated(s);
  const consProof: string[] = [];
  for (let s = req.seqNoEnd + 1; s <= req.catchupTill; s++)
    consProof.push(s <= real ? ex.consistencyProof(AUDIT, s - 1, s)[0]! : leafHash(canonicalJson(fabricated(s))));
  return { op: 'CATCHUP_REP', ledgerId: AUDIT, txns, consProof };
}

describe('catch-up with a seeder whose false proof verifies', () => {
  for (const liar of ['Node2', 'Node3']) {
    for (const serves of [false, true]) {
      it(`reaches the pool's ledger, not the longer one ${liar} claims${serves ? ' and serves' : ''} (f+1 identical proofs set the target)`, () => {
        const pool = new Pool({ chkFreq: 2, logSize: 6, max3pcBatchSize: 1, stateFreshnessUpdateIntervalSec: 3600 });
        pool.start();
        pool.runUntil(10_000);
        let cut = true;
        /** the liar's real audit size when it lied, and the size it claimed */
        let claimed: { real: number; end: number } | undefined;
        pool.drop = (from, to, msg: NodeMessage) => {
          if (cut && to === 'Node4' && THREE_PC.has(msg.op)) return true;
          // the liar never serves the txns of the real ledger
          if (from === liar && to === 'Node4' && msg.op === 'CATCHUP_REP') return true;
          if (
            serves &&
            from === 'Node4' &&
            to === liar &&
            msg.op === 'CATCHUP_REQ' &&
            msg.ledgerId === AUDIT &&
            claimed !== undefined &&
            msg.catchupTill === claimed.end
          ) {
            // it serves the made-up ledger instead
            const rep = madeUpReply(pool.cores.get(liar)!, claimed.real, msg);
            pool.schedule(pool.now + 5, () => void pool.cores.get('Node4')!.handle({ kind: 'nodeMessage', from: liar, msg: rep }));
            return true;
          }
          return false;
        };
        // the liar answers first: its proof is the first the leecher holds
        pool.delay = (from, to, msg) => (to === 'Node4' && msg.op === 'CONSISTENCY_PROOF' && from !== liar ? 40 : 5);
        pool.rewrite = (from, to, msg) => {
          if (from !== liar || to !== 'Node4' || msg.op !== 'CONSISTENCY_PROOF' || msg.ledgerId !== AUDIT) return msg;
          claimed = { real: msg.seqNoEnd, end: msg.seqNoEnd + EXTRA };
          return extended(msg);
        };
        pool.submitAt(10_001, 8);
        pool.runUntil(14_000);
        cut = false;
        pool.runUntil(60_000);
        const node1 = pool.cores.get('Node1')!.status();
        const node4 = pool.cores.get('Node4')!.status();
        expect(claimed, 'the liar lied').to.not.equal(undefined);
        expect(node1.lastOrdered.ppSeqNo).to.be.greaterThanOrEqual(8);
        expect(node4.lastOrdered, 'Node4 caught up with the pool').to.deep.equal(node1.lastOrdered);
        expect(node4.catchingUp).to.equal(false);
      });
    }
  }
});
