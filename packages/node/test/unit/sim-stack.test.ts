// The consensus simulator on the real stack (src/sim/): replicas over the node's executor and
// storage that survive a crash through their key-value store, the real signed workload, and whole
// runs that are deterministic and pass the simulator's invariants.
import { expect } from 'chai';
import { batchDigest } from '@quire/consensus';
import { SignatureVerifier } from '@quire/requests';
import { SimReplica, SimWorkload, realSimulation, simDomainGenesis, simPoolGenesis, simulate } from '../../src/sim/index.js';

const GENESIS = ['Node1', 'Node2', 'Node3', 'Node4'];

function shared() {
  return {
    verifier: new SignatureVerifier(),
    checks: new WeakMap(),
    generations: new Map<string, number>(),
    poolGenesis: simPoolGenesis(GENESIS),
    domainGenesis: simDomainGenesis(5),
  };
}

function input(requests: Record<string, unknown>[], ppSeqNo: number) {
  const digests = requests.map((_, i) => `${ppSeqNo}-${i}`.padStart(64, '0'));
  const ppTime = 1_700_000_000 + ppSeqNo;
  return { ledgerId: 1, requests, digests, ppTime, ppSeqNo, originalViewNo: 0, primaries: ['Node1'], digest: batchDigest(0, ppTime, digests, 1) };
}

describe('simulator on the real executor and storage', () => {
  it('builds requests the node orders, refuses the invalid ones at ordering, and keeps variants on one payload', async () => {
    const w = new SimWorkload(4);
    const r = await SimReplica.create({ alias: 'Node1' }, { shared: shared() });
    const good = w.write(1, false);
    const bad = w.write(2, true);
    for (const req of [good, bad, w.variant(good)]) expect(r.requests.analyze(req).ok).to.equal(true);
    const applied = r.executor.applyBatch(input([good, bad], 1));
    expect(applied.discarded).to.deep.equal([1]);
    expect(applied.rejectReasons[0]).to.match(/TRUSTEE|rule/i);
    r.executor.commitBatch([]);
    await r.settle();
    const v = w.variant(good);
    expect(w.info(v).payloadDigest).to.equal(w.info(good).payloadDigest);
    expect(w.info(v).digest).to.not.equal(w.info(good).digest);
    expect(w.variant(v)).to.deep.equal(good);
    expect(r.executor.isPayloadCommitted(w.info(v).payloadDigest)).to.equal(true);
    await r.close();
  });

  it('restarts a crashed replica from its key-value store alone: committed batches kept, applied ones lost', async () => {
    const w = new SimWorkload(4);
    const r = await SimReplica.create({ alias: 'Node2' }, { shared: shared() });
    r.executor.applyBatch(input([w.write(1, false)], 1));
    r.executor.commitBatch([]);
    await r.settle();
    r.executor.applyBatch(input([w.write(2, false)], 2));
    const before = r.executor;
    const audit = before.lastAudit();
    await r.crash();
    await r.restart();
    expect(r.executor).to.not.equal(before);
    expect(r.executor.lastAudit()).to.deep.equal(audit);
    expect(r.executor.committedSize(1)).to.equal(7); // 6 genesis NYMs (Trustee1, Steward1..5) + 1
    expect(r.executor.committedSize(3)).to.equal(1);
    expect(r.executor.isPayloadCommitted(w.info(w.write(2, false)).payloadDigest)).to.equal(false);
    expect(r.validators()).to.deep.equal(GENESIS);
    await r.close();
  });

  it('runs a pool to agreement with the invariants checked, deterministically', async function () {
    this.timeout(60_000);
    const opts = { seed: 31, nodes: 4, faults: 'crash' };
    const sim = realSimulation(opts);
    const r = await sim.runAsync();
    expect(r.violations).to.deep.equal([]);
    expect(r.orderedRequests).to.be.greaterThan(0);
    const sizes = new Set(sim.nodes.map((n) => n.executor.committedSize(1)));
    expect(sizes.size).to.equal(1);
    for (const n of sim.nodes) expect(n.executor.storedMultiSigs.length).to.be.greaterThan(0);
    const { cpuMs: _a, ...again } = await simulate(opts);
    expect(again).to.deep.equal(r);
  });
});
