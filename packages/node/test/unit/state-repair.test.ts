// Startup repair of a state that differs from what the audit ledger names (#15 F6: a kill during a
// state rebuild, which commits as it goes, leaves the root of a prefix of the ledger).
import { expect } from 'chai';
import { b58encode } from '@quire/common';
import { batchDigest } from '@quire/consensus';
import { AuditTrail } from '../../src/audit-trail.js';
import { NodeErrorCode } from '../../src/errors.js';
import { testLogger } from '../../src/logger.js';
import { repairStateAgainstAudit } from '../../src/startup.js';
import { memoryFixture, nymRequest, trustee, user } from './helpers.js';

function input(ledgerId: number, requests: Record<string, unknown>[], ppSeqNo: number, ppTime = 1_700_000_000 + ppSeqNo) {
  const digests = requests.map((_, i) => `${ppSeqNo}${i}`.padStart(64, '0'));
  return { ledgerId, requests, digests, ppTime, ppSeqNo, originalViewNo: 0, primaries: ['Node1'], digest: batchDigest(0, ppTime, digests) };
}

describe('startup: a state that differs from the audit ledger is rebuilt (#15 F6)', () => {
  it('names the committed state root of every ledger with txns, across commits and after a restart', async () => {
    const fx = await memoryFixture();
    fx.executor.applyBatch(input(1, [nymRequest(trustee, user(40))], 1));
    fx.executor.commitBatch([]);
    fx.executor.applyBatch(input(1, [nymRequest(trustee, user(41))], 2));
    fx.executor.commitBatch([]);
    await fx.executor.flush();
    const loaded = await AuditTrail.load(fx.stores.ledgers[3]);
    for (const l of [0, 1] as const) expect(loaded.committedStateRoots().get(l), `ledger ${l}`).to.equal(b58encode(fx.stores.states[l].committedRoot));
    expect(loaded.committedStateRoots().has(2)).to.equal(false);
    await fx.stores.kv.close();
  });

  it('rebuilds a state left at the root of a prefix of its ledger, from an empty trie', async () => {
    const fx = await memoryFixture();
    const prefixRoot = fx.stores.states[1].committedRoot;
    for (let k = 1; k <= 3; k++) {
      fx.executor.applyBatch(input(1, [nymRequest(trustee, user(50 + k))], k));
      fx.executor.commitBatch([]);
    }
    await fx.executor.flush();
    const good = b58encode(fx.stores.states[1].committedRoot);
    // what a rebuild killed half-way leaves: the committed root of a prefix of the ledger
    await fx.stores.states[1].commit(prefixRoot);
    expect(b58encode(fx.stores.states[1].committedRoot)).to.not.equal(good);
    const audit = await AuditTrail.load(fx.stores.ledgers[3]);
    await repairStateAgainstAudit(fx.reqExecutor, fx.stores, audit, testLogger());
    expect(b58encode(fx.stores.states[1].committedRoot)).to.equal(good);
    // a state that agrees is left alone
    const pool = b58encode(fx.stores.states[0].committedRoot);
    await repairStateAgainstAudit(fx.reqExecutor, fx.stores, audit, testLogger());
    expect(b58encode(fx.stores.states[0].committedRoot)).to.equal(pool);
    await fx.stores.kv.close();
  });

  it('stops with STORAGE_INCONSISTENT when even the rebuilt state differs', async () => {
    const fx = await memoryFixture();
    fx.executor.applyBatch(input(1, [nymRequest(trustee, user(60))], 1));
    fx.executor.commitBatch([]);
    await fx.executor.flush();
    const audit = await AuditTrail.load(fx.stores.ledgers[3]);
    // an audit ledger that names another root than the ledger's txns give
    const named = audit.committedStateRoots();
    named.set(1, b58encode(new Uint8Array(32).fill(9)));
    const lying = Object.assign(Object.create(audit) as AuditTrail, { committedStateRoots: () => named });
    let code: unknown;
    try {
      await repairStateAgainstAudit(fx.reqExecutor, fx.stores, lying, testLogger());
    } catch (e) {
      code = (e as { code?: unknown }).code;
    }
    expect(code).to.equal(NodeErrorCode.STORAGE_INCONSISTENT);
    await fx.stores.kv.close();
  });
});
