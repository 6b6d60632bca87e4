// The batch digest names a batch in VIEW_CHANGE and NEW_VIEW; it must fix what the batch executes.
// A non-empty batch's requests fix its ledger, so a PRE-PREPARE whose label names another ledger
// is refused; an empty batch hashes its ledger (formats.md §10.2, docs/consensus-deviations.md §8).
import { expect } from 'chai';
import { Suspicion, batchDigest } from '@quire/consensus';
import { Pool } from './scripted-pool.js';

describe('the ledger of a batch is fixed by its digest', () => {
  it('a backup refuses a PRE-PREPARE whose requests belong to another ledger than it names', () => {
    const pool = new Pool({ max3pcBatchWaitMs: 50 });
    // the primary relabels its domain batches as config-ledger batches for Node2 only
    pool.rewrite = (from, to, msg) => (from === 'Node1' && to === 'Node2' && msg.op === 'PREPREPARE' && msg.reqIdr.length > 0 ? { ...msg, ledgerId: 2 } : msg);
    pool.start();
    pool.submitAt(100, 2);
    pool.runUntil(3_000);
    const refused = pool.suspicions.filter((s) => s.by === 'Node2' && s.peer === 'Node1' && s.code === Suspicion.PPR_DIGEST_WRONG);
    expect(refused, 'Node2 blames the primary for the relabelled batch').to.have.length.greaterThan(0);
    // the other backups ordered the writes as sent
    expect(pool.orderedBy.get('Node3')?.size).to.equal(2);
    expect(pool.suspicions.filter((s) => s.by !== 'Node2' && s.code === Suspicion.PPR_DIGEST_WRONG)).to.deep.equal([]);
  });

  it('two empty batches of one view and second on different ledgers have different digests', () => {
    expect(batchDigest(1, 1_700_000_000, [], 1)).to.not.equal(batchDigest(1, 1_700_000_000, [], 2));
    // a non-empty batch keeps Indy's digest: its requests fix the ledger
    expect(batchDigest(1, 1_700_000_000, ['ab'], 1)).to.equal(batchDigest(1, 1_700_000_000, ['ab'], 2));
  });
});
