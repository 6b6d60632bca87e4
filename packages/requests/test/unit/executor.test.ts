import { expect } from 'chai';
import { createHarness, newSigner, nymOp, signed, STEWARDS, TRUSTEE } from './helpers/harness.js';

describe('executor', () => {
  it('applies genesis and a NYM batch, commits, and reports roots', async () => {
    const h = await createHarness();
    const user = newSigner();
    const r = await h.executor.applyBatch(1, [signed(TRUSTEE, nymOp(user, '101'))], 1_700_000_000);
    expect(r.results[0]!.valid, (r.results[0] as { reason?: string }).reason).to.equal(true);
    expect(r.ledgerSize).to.equal(6);
    expect(r.stateRoot).to.have.length(32);
    await h.executor.commit(r.batchId);
    expect(h.stores.ledgers[1].size).to.equal(6);
    expect(h.executor.idr.roleOf(user.did)).to.equal('101');
    expect(h.executor.idr.roleOf(STEWARDS[0]!.did)).to.equal('2');
    await h.close();
  });
});
