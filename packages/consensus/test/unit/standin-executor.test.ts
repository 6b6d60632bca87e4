import { expect } from 'chai';
import { type ApplyBatchInput, ConsensusError, ConsensusErrorCode } from '@quire/consensus';
import { SimRequestAnalyzer, StandInExecutor, simBlsPublicKey } from '@quire/consensus/sim';

// The stand-in executor holds ledgers 0-3 and the states of ledgers 0-2: any other id is a misuse of
// the simulation world, reported with its code rather than a TypeError on an undefined ledger.
describe('stand-in executor ledger ids', () => {
  const genesis = ['Node1', 'Node2', 'Node3', 'Node4'].map((alias) => ({ alias, blskey: simBlsPublicKey(alias) }));
  const executor = (): StandInExecutor => new StandInExecutor(new SimRequestAnalyzer(), genesis);

  it('answers for ledgers 0-3: the pool genesis on ledger 0, empty ledgers 1-3', () => {
    const ex = executor();
    expect([0, 1, 2, 3].map((l) => ex.committedSize(l))).to.deep.equal([4, 0, 0, 0]);
    expect(ex.ledgerStatus(0).root).to.equal(ex.committedRoot(0));
    expect(ex.uncommittedRegistry()).to.deep.equal(['Node1', 'Node2', 'Node3', 'Node4']);
  });

  it('refuses another ledger id with CONSENSUS_SIMULATION', () => {
    const ex = executor();
    for (const call of [() => ex.committedSize(4), () => ex.ledgerStatus(7), () => ex.txnRange(-1, 1, 1), () => ex.committedTxn(9, 1)]) {
      expect(call).to.throw(ConsensusError).with.property('code', ConsensusErrorCode.SIMULATION);
    }
  });

  it('refuses a batch for a ledger without state (the audit ledger) with CONSENSUS_SIMULATION', () => {
    const ex = executor();
    const batch: ApplyBatchInput = { ledgerId: 3, ppSeqNo: 1, ppTime: 1, originalViewNo: 0, requests: [], digests: [], digest: 'd', primaries: ['Node1'] };
    expect(() => ex.applyBatch(batch))
      .to.throw(ConsensusError)
      .with.property('code', ConsensusErrorCode.SIMULATION);
    // refused before anything was appended
    expect(ex.ledgers.get(3)?.size).to.equal(0);
  });
});
