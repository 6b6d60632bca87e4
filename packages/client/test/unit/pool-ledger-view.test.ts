// The pool ledger's validators and BLS view, made once per epoch: the same view while the txns are unchanged, a new
// one as soon as a NODE txn changes the validators or their keys.
import { expect } from 'chai';
import { PoolLedger } from '../../src/index.js';
import { poolGenesis } from './fixtures.js';

function nodeTxn(dest: string, seqNo: number, data: Record<string, unknown>): Record<string, unknown> {
  return { reqSignature: {}, txn: { data: { data, dest }, metadata: {}, type: '0' }, txnMetadata: { seqNo }, ver: '1' };
}

describe('PoolLedger validators and BLS view', () => {
  it('keeps one view per epoch and follows a demotion at once', () => {
    const ledger = PoolLedger.fromGenesis(poolGenesis());
    const before = ledger.blsKeys();
    expect(ledger.blsKeys()).to.equal(before);
    expect(before.validatorCount).to.equal(4);
    expect([...before.blsKeys.keys()]).to.deep.equal(['Node1', 'Node2', 'Node3', 'Node4']);
    expect(ledger.f).to.equal(1);
    const node4 = ledger.validators()[3];
    if (node4 === undefined) throw new Error('no Node4');
    // a caller's copy: changing it changes nothing of the ledger's
    ledger.validators().pop();
    expect(ledger.validators()).to.have.length(4);

    ledger.append([nodeTxn(node4.dest, ledger.size + 1, { alias: 'Node4', services: [] })]);
    const after = ledger.blsKeys();
    expect(after).to.not.equal(before);
    expect(after.epoch).to.not.equal(before.epoch);
    expect(after.validatorCount).to.equal(3);
    expect(after.blsKeys.has('Node4')).to.equal(false);
    expect(ledger.validators().map((v) => v.alias)).to.deep.equal(['Node1', 'Node2', 'Node3']);
    expect(ledger.f).to.equal(0);
    // the view of the earlier epoch is unchanged
    expect(before.validatorCount).to.equal(4);
    expect(before.blsKeys.has('Node4')).to.equal(true);
  });
});
