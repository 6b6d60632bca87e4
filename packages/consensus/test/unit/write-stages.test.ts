import { expect } from 'chai';
import { ConsensusCore, type ConsensusCrypto, type ConsensusEffect } from '@quire/consensus';
import { SimClient, SimRequestAnalyzer, StandInExecutor, simBlsPublicKey } from '@quire/consensus/sim';

// #16: an ordered batch says where its requests spent their time at this node (receipt,
// finalisation, PRE-PREPARE applied, prepared, ordered) on the core's clock, for the node's
// per-stage latency metrics.
const noCrypto: ConsensusCrypto = { blsSign: () => 'sig', blsVerifyShare: () => true, blsAggregate: () => 'agg', blsVerifyMulti: () => true };

describe('write-path stages of an ordered batch (#16)', () => {
  it("carry each request's receipt and finalisation and the batch's applied, prepared and ordered times", () => {
    const analyzer = new SimRequestAnalyzer();
    const executor = new StandInExecutor(analyzer, [{ alias: 'Node1', blskey: simBlsPublicKey('Node1') }]);
    const clock = { t: 1000, now: () => clock.t, utcSeconds: () => 1_700_000_000 + Math.floor(clock.t / 1000) };
    const core = new ConsensusCore({ name: 'Node1', validators: ['Node1'] }, { executor, crypto: noCrypto, requests: analyzer, clock });
    const client = new SimClient(new Uint8Array(32).fill(7));
    const effects: ConsensusEffect[] = [...core.start()];
    clock.t = 1500;
    effects.push(...core.handle({ kind: 'clientRequest', connId: 'c1', request: client.request('stage-1') }));
    // the batches the node cut at its start (view start, freshness) carry no request
    const ordered = effects.filter((e): e is Extract<ConsensusEffect, { kind: 'ordered' }> => e.kind === 'ordered' && e.replies.length > 0);
    expect(ordered).to.have.length(1);
    const st = ordered[0]!.stages;
    expect(st, 'stages').to.not.equal(undefined);
    expect(st!.requests).to.deep.equal([{ receivedAt: 1500, finalisedAt: 1500 }]);
    expect(st!.appliedAt).to.equal(1500);
    expect(st!.preparedAt).to.equal(1500);
    expect(st!.orderedAt).to.equal(1500);
  });
});
