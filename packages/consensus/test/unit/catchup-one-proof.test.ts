// A lying catch-up seeder with a proof that verifies (issue #15, the mutation gate's
// `cu-one-proof`): a node cut off from 3PC while the pool orders catches up afterwards, and one
// peer answers its LEDGER_STATUS with a consistency proof of a longer audit ledger it made up (a
// real extension of the leecher's ledger over fabricated txns, so that the proof verifies), then
// never serves those txns. The target of a catch-up needs f+1 identical proofs: the leecher must
// catch up to the pool's real ledger, not wait for the liar's.
import { expect } from 'chai';
import { b58encode, sha256 } from '@quire/common';
import type { NodeMessage } from '@quire/consensus';
import { chainHashed } from '../../src/sim/standin-ledger.js';
import { Pool } from './scripted-pool.js';

const THREE_PC = new Set(['PREPREPARE', 'PREPARE', 'COMMIT', 'MESSAGE_RESPONSE']);
const AUDIT = 3;

/** A verifying proof of the sender's audit ledger extended by `extra` fabricated txns. */
function extended(p: NodeMessage & { op: 'CONSISTENCY_PROOF' }, extra: number): NodeMessage {
  const hashes = [...p.hashes];
  let root = p.newMerkleRoot;
  for (let i = 0; i < extra; i++) {
    const leaf = b58encode(sha256(`fabricated|${p.seqNoEnd + i + 1}`));
    hashes.push(leaf);
    root = chainHashed(root, leaf);
  }
  return { ...p, seqNoEnd: p.seqNoEnd + extra, newMerkleRoot: root, hashes };
}

describe('catch-up with a seeder whose false proof verifies', () => {
  for (const liar of ['Node2', 'Node3']) {
    it(`reaches the pool's ledger, not the longer one ${liar} claims (f+1 identical proofs set the target)`, () => {
      const pool = new Pool({ chkFreq: 2, logSize: 6, max3pcBatchSize: 1, stateFreshnessUpdateIntervalSec: 3600 });
      pool.start();
      pool.runUntil(10_000);
      let cut = true;
      pool.drop = (from, to, msg: NodeMessage) =>
        (cut && to === 'Node4' && THREE_PC.has(msg.op)) ||
        // the liar never serves the txns of its made-up ledger (nor any other)
        (from === liar && to === 'Node4' && msg.op === 'CATCHUP_REP');
      // the liar answers first: its proof is the first the leecher holds
      pool.delay = (from, to, msg) => (to === 'Node4' && msg.op === 'CONSISTENCY_PROOF' && from !== liar ? 40 : 5);
      pool.rewrite = (from, to, msg) => (from === liar && to === 'Node4' && msg.op === 'CONSISTENCY_PROOF' && msg.ledgerId === AUDIT ? extended(msg, 4) : msg);
      pool.submitAt(10_001, 8);
      pool.runUntil(14_000);
      cut = false;
      pool.runUntil(60_000);
      const node1 = pool.cores.get('Node1')!.status();
      const node4 = pool.cores.get('Node4')!.status();
      expect(node1.lastOrdered.ppSeqNo).to.be.greaterThanOrEqual(8);
      expect(node4.lastOrdered, 'Node4 caught up with the pool').to.deep.equal(node1.lastOrdered);
      expect(node4.catchingUp).to.equal(false);
    });
  }
});
