import { expect } from 'chai';
import { ConsensusCore, type ConsensusEffect, type ConsensusCrypto } from '@quire/consensus';
import { Simulation, SimClient, SimRequestAnalyzer, StandInExecutor } from '@quire/consensus/sim';

function committedEverywhere(sim: Simulation): number[] {
  return sim.nodes.map((n) => n.executor.committedSize(3));
}

describe('normal-case ordering (simulated pool)', () => {
  it('orders every request on all four nodes with identical ledgers and valid multi-signatures', () => {
    const sim = new Simulation({ seed: 11, nodes: 4, faults: 'none', requests: 40 });
    const r = sim.run();
    expect(r.violations).to.deep.equal([]);
    const sizes = committedEverywhere(sim);
    expect(new Set(sizes).size).to.equal(1);
    expect(sizes[0]).to.be.greaterThan(3);
    // every ordered batch left a multi-signature with n-f participants for its ledger
    for (const n of sim.nodes) {
      expect(n.executor.storedMultiSigs.length).to.be.at.least(n.executor.committedSize(3));
      for (const ms of n.executor.storedMultiSigs) expect(ms.participants.length).to.be.at.least(3);
    }
    // domain txns: 40 requests minus invalid / duplicate payloads
    expect(sim.nodes[0]!.executor.committedSize(1)).to.be.within(30, 40);
  });

  it('moves the stable checkpoint and collects the 3PC log with a small CHK_FREQ', () => {
    const sim = new Simulation({ seed: 5, nodes: 4, faults: 'none', requests: 80, consensus: { chkFreq: 4, logSize: 12, max3pcBatchSize: 3 } });
    const r = sim.run();
    expect(r.violations).to.deep.equal([]);
    for (const n of sim.nodes) {
      const st = n.core.status();
      expect(st.stableCheckpoint).to.be.greaterThan(0);
      expect(st.stableCheckpoint % 4).to.equal(0);
      expect(st.watermarks).to.deep.equal([st.stableCheckpoint, st.stableCheckpoint + 12]);
      // nothing at or below the stable checkpoint is kept
      expect(st.logSize).to.be.at.most(st.lastOrdered.ppSeqNo - st.stableCheckpoint + 4);
    }
  });

  it('keeps ordering with a backup that sends invalid BLS shares, and never stores a bad multi-signature', () => {
    for (const seed of [3, 4, 9]) {
      const sim = new Simulation({ seed, nodes: 4, faults: 'byzantine', requests: 30 });
      const r = sim.run();
      expect(r.violations, `seed ${seed}`).to.deep.equal([]);
      expect(r.orderedRequests).to.be.greaterThan(0);
    }
  });

  it('recovers dropped, duplicated and reordered messages through MESSAGE_REQUEST', () => {
    const sim = new Simulation({ seed: 21, nodes: 7, faults: 'net', requests: 40 });
    const r = sim.run();
    expect(r.violations).to.deep.equal([]);
    expect(new Set(committedEverywhere(sim)).size).to.equal(1);
  });

  it('lets a restarted backup restore from its audit ledger and rejoin', () => {
    const sim = new Simulation({ seed: 8, nodes: 4, faults: 'crash', requests: 40 });
    const r = sim.run();
    expect(r.violations).to.deep.equal([]);
  });
});

describe('client intake (single core)', () => {
  const client = new SimClient(new Uint8Array(32).fill(9));
  const noCrypto: ConsensusCrypto = {
    blsSign: () => 'sig',
    blsVerifyShare: () => true,
    blsAggregate: () => 'agg',
    blsVerifyMulti: () => true,
  };
  function core(): { core: ConsensusCore; executor: StandInExecutor } {
    const analyzer = new SimRequestAnalyzer();
    const executor = new StandInExecutor(analyzer);
    let now = 0;
    const c = new ConsensusCore(
      { name: 'Node2', validators: ['Node1', 'Node2', 'Node3', 'Node4'] },
      { executor, crypto: noCrypto, requests: analyzer, clock: { now: () => (now += 1), utcSeconds: () => 1_700_000_000 } },
    );
    c.start();
    return { core: c, executor };
  }

  it('acks a valid request once per connection and propagates it once', () => {
    const { core: c } = core();
    const req = client.request('d1');
    const e1 = c.handle({ kind: 'clientRequest', connId: 'a', request: req });
    expect(e1.map((e) => e.kind)).to.deep.equal(['clientAck', 'broadcast']);
    const e2 = c.handle({ kind: 'clientRequest', connId: 'b', request: req });
    expect(e2.map((e) => e.kind)).to.deep.equal(['clientAck']);
    expect(c.status().pendingRequests).to.equal(1);
  });

  it('nacks a request whose signature does not verify', () => {
    const { core: c } = core();
    const req = { ...client.request('d2'), reqId: 999 };
    const e = c.handle({ kind: 'clientRequest', connId: 'a', request: req });
    expect(e).to.have.length(1);
    expect(e[0]).to.include({ kind: 'clientNack', code: 'INVALID_SIGNATURE' });
  });

  it('stores a propagated request, propagates its own copy, and suspects a peer that propagates a forged one', () => {
    const { core: c } = core();
    const req = client.request('d3');
    const e1 = c.handle({ kind: 'nodeMessage', from: 'Node3', msg: { op: 'PROPAGATE', request: req, senderClient: null } });
    // stores it and propagates its own copy
    expect(e1.filter((e) => e.kind === 'broadcast')).to.have.length(1);
    const forged = { ...client.request('d4'), signature: client.request('d5').signature };
    const e2 = c.handle({ kind: 'nodeMessage', from: 'Node4', msg: { op: 'PROPAGATE', request: forged, senderClient: null } });
    expect(e2.some((e: ConsensusEffect) => e.kind === 'suspicion' && e.peer === 'Node4')).to.equal(true);
  });

  it('drops malformed peer messages with a suspicion and ignores non-validators', () => {
    const { core: c } = core();
    const e = c.handle({ kind: 'nodeMessage', from: 'Node1', msg: { op: 'PREPARE', junk: true } });
    expect(e).to.deep.equal([{ kind: 'suspicion', peer: 'Node1', code: 1000, vote: false }]);
    expect(c.handle({ kind: 'nodeMessage', from: 'Mallory', msg: { op: 'PREPARE' } })).to.deep.equal([]);
  });
});
