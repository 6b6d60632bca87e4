import { expect } from 'chai';
import { encodeMsgpack } from '@quire/common';
import {
  ConsensusCore,
  type ConsensusCrypto,
  type ConsensusEffect,
  type InstanceChangeVoteStore,
  type StoredInstanceChangeVote,
  Suspicion,
  requestIdentity,
} from '@quire/consensus';
import { SimClient, SimRequestAnalyzer, Simulation, StandInExecutor, simBlsPublicKey, simRequestDigest } from '@quire/consensus/sim';

const VALIDATORS = ['Node1', 'Node2', 'Node3', 'Node4'];
const noCrypto: ConsensusCrypto = { blsSign: () => 'sig', blsVerifyShare: () => true, blsAggregate: () => 'agg', blsVerifyMulti: () => true };
const genesis = VALIDATORS.map((alias) => ({ alias, blskey: simBlsPublicKey(alias) }));

function backup(opts: { executor?: StandInExecutor; voteStore?: InstanceChangeVoteStore; consensus?: Record<string, number> } = {}) {
  const analyzer = new SimRequestAnalyzer();
  const executor = opts.executor ?? new StandInExecutor(analyzer, genesis);
  const clock = { t: 0, now: () => clock.t, utcSeconds: () => 1_700_000_000 + Math.floor(clock.t / 1000) };
  const core = new ConsensusCore(
    { name: 'Node2', validators: VALIDATORS, ...opts.consensus },
    { executor, crypto: noCrypto, requests: analyzer, clock, ...(opts.voteStore !== undefined ? { voteStore: opts.voteStore } : {}) },
  );
  return { core, executor, clock };
}

const sent = (effects: ConsensusEffect[], op: string) =>
  effects.flatMap((e) => ((e.kind === 'broadcast' || e.kind === 'send') && e.msg.op === op ? [e.msg] : []));

describe('catch-up replies above MSG_LEN_LIMIT (consensus.md §7.4)', () => {
  it('are split in halves, each below the limit and each with a proof that verifies', () => {
    const sim = new Simulation({ seed: 2, nodes: 4, faults: 'none', requests: 60 });
    expect(sim.run().violations).to.deep.equal([]);
    const seeder = sim.nodes[0]!.executor;
    const size = seeder.committedSize(1);
    const limit = 3000;
    const { core } = backup({ executor: seeder, consensus: { msgLenLimit: limit } });
    const effects = core.handle({
      kind: 'nodeMessage',
      from: 'Node3',
      msg: { op: 'CATCHUP_REQ', ledgerId: 1, seqNoStart: 1, seqNoEnd: size, catchupTill: size },
    });
    const reps = sent(effects, 'CATCHUP_REP') as { txns: Record<string, unknown>; consProof: string[] }[];
    expect(reps.length).to.be.greaterThan(2);
    const leecher = new StandInExecutor(new SimRequestAnalyzer(), genesis);
    let next = 1;
    for (const rep of reps) {
      const seqNos = Object.keys(rep.txns).map(Number);
      if (seqNos.length > 1) expect(encodeMsgpack({ op: 'CATCHUP_REP', ledgerId: 1, ...rep }).length).to.be.at.most(limit);
      expect(seqNos[0]).to.equal(next);
      next = seqNos[seqNos.length - 1]! + 1;
      const ok = leecher.appendCaughtUp(
        1,
        seqNos.map((s) => rep.txns[String(s)]),
        rep.consProof,
        size,
        seeder.committedRoot(1),
      );
      expect(ok).to.equal(true);
    }
    expect(next).to.equal(size + 1);
    expect(leecher.committedRoot(1)).to.equal(seeder.committedRoot(1));
  });

  it('refuses requests outside 1 <= seqNoStart <= seqNoEnd <= catchupTill <= size', () => {
    const { core } = backup();
    for (const req of [
      { seqNoStart: 0, seqNoEnd: 1, catchupTill: 1 },
      { seqNoStart: 2, seqNoEnd: 1, catchupTill: 2 },
      { seqNoStart: 1, seqNoEnd: 3, catchupTill: 2 },
      { seqNoStart: 1, seqNoEnd: 1, catchupTill: 99 },
    ]) {
      expect(sent(core.handle({ kind: 'nodeMessage', from: 'Node3', msg: { op: 'CATCHUP_REQ', ledgerId: 0, ...req } }), 'CATCHUP_REP')).to.deep.equal([]);
    }
  });
});

describe('INSTANCE_CHANGE votes across restarts (consensus.md §6.2)', () => {
  it('are persisted, so that a restart does not reset the count toward n-f', () => {
    let stored: StoredInstanceChangeVote[] = [];
    const store: InstanceChangeVoteStore = { load: () => stored, save: (v) => (stored = v) };
    const first = backup({ voteStore: store });
    for (const from of ['Node3', 'Node4']) first.core.handle({ kind: 'nodeMessage', from, msg: { op: 'INSTANCE_CHANGE', viewNo: 1, reason: 26 } });
    expect(stored.map((v) => v.voter).sort()).to.deep.equal(['Node3', 'Node4']);
    // restart: a third vote completes the quorum of 3
    const second = backup({ voteStore: store });
    const effects = second.core.handle({ kind: 'nodeMessage', from: 'Node1', msg: { op: 'INSTANCE_CHANGE', viewNo: 1, reason: 26 } });
    expect(sent(effects, 'VIEW_CHANGE')).to.have.length(1);
    expect(second.core.status().viewNo).to.equal(1);
    // control: without the store the same third vote does nothing
    const amnesiac = backup();
    expect(
      sent(amnesiac.core.handle({ kind: 'nodeMessage', from: 'Node1', msg: { op: 'INSTANCE_CHANGE', viewNo: 1, reason: 26 } }), 'VIEW_CHANGE'),
    ).to.deep.equal([]);
  });

  it('expire after OUTDATED_INSTANCE_CHANGES_CHECK_INTERVAL even across a restart', () => {
    const stored: StoredInstanceChangeVote[] = [
      { viewNo: 1, voter: 'Node3', utc: 1_700_000_000 - 400 },
      { viewNo: 1, voter: 'Node4', utc: 1_700_000_000 - 400 },
    ];
    const { core } = backup({ voteStore: { load: () => stored, save: () => undefined } });
    expect(sent(core.handle({ kind: 'nodeMessage', from: 'Node1', msg: { op: 'INSTANCE_CHANGE', viewNo: 1, reason: 26 } }), 'VIEW_CHANGE')).to.deep.equal([]);
  });
});

describe('monitor M3 (consensus.md §6.1)', () => {
  function run(throughputDelta: number): ConsensusEffect[] {
    const { core, clock } = backup({ consensus: { progressTimeoutMs: 1e9, requestOrderingTimeoutMs: 1e9, throughputDelta } });
    const out: ConsensusEffect[] = [...core.start()];
    // the initial catch-up ends: two peers are not ahead
    const own = { op: 'LEDGER_STATUS', ledgerId: 3, txnSeqNo: 0, viewNo: 0, ppSeqNo: 0, protocolVersion: 2 };
    const root = new StandInExecutor(new SimRequestAnalyzer(), genesis).ledgerStatus(3).root;
    for (const from of ['Node3', 'Node4']) out.push(...core.handle({ kind: 'nodeMessage', from, msg: { ...own, merkleRoot: root } }));
    expect(core.status().catchingUp).to.equal(false);
    const client = new SimClient(new Uint8Array(32).fill(3));
    // requests keep getting finalised (n-f PROPAGATEs), the primary orders none of them
    for (let i = 0; i < 60; i++) {
      clock.t += 250;
      const request = client.request(`m3-${i}`);
      for (const from of ['Node3', 'Node4']) out.push(...core.handle({ kind: 'nodeMessage', from, msg: { op: 'PROPAGATE', request, senderClient: null } }));
      out.push(...core.handle({ kind: 'timer', id: 'tick' }));
    }
    return out;
  }

  it('votes 25 when the backlog never empties and less than DELTA of the finalised requests get ordered', () => {
    const ic = sent(run(0.1), 'INSTANCE_CHANGE') as { reason: number }[];
    expect(ic.map((m) => m.reason)).to.include(Suspicion.PRIMARY_DEGRADED);
  });

  it('stays quiet when the throughput floor is not crossed (DELTA 0: M1 and M2 are off here)', () => {
    expect(sent(run(0), 'INSTANCE_CHANGE')).to.deep.equal([]);
  });
});

describe('pool nodes outside the registry (observers, joining or demoted nodes)', () => {
  it('may ask for data (catch-up, MESSAGE_REQUEST) but their votes and 3PC messages are ignored', () => {
    const { core, executor } = backup();
    const pool = executor.ledgerStatus(0);
    const own = core.handle({
      kind: 'nodeMessage',
      from: 'Node5',
      msg: { op: 'LEDGER_STATUS', ledgerId: 0, txnSeqNo: pool.size, viewNo: 0, ppSeqNo: 0, merkleRoot: pool.root, protocolVersion: 2 },
    });
    expect(sent(own, 'LEDGER_STATUS')).to.have.length(1);
    expect(core.handle({ kind: 'nodeMessage', from: 'Node5', msg: { op: 'INSTANCE_CHANGE', viewNo: 1, reason: 26 } })).to.deep.equal([]);
    // malformed input from a non-validator is dropped without a suspicion against a validator
    expect(core.handle({ kind: 'nodeMessage', from: 'Node5', msg: { op: 'CATCHUP_REQ', ledgerId: -1 } })).to.deep.equal([]);
  });
});

describe('PROPAGATEs of a request the node holds (consensus.md §2)', () => {
  class CountingAnalyzer extends SimRequestAnalyzer {
    calls = 0;
    override analyze(request: Record<string, unknown>) {
      this.calls++;
      return super.analyze(request);
    }
  }
  /** a copy, as a decoded wire message is */
  const wire = (r: Record<string, unknown>): Record<string, unknown> => structuredClone(r);

  function node() {
    const analyzer = new CountingAnalyzer();
    const executor = new StandInExecutor(analyzer, genesis);
    const clock = { t: 0, now: () => clock.t, utcSeconds: () => 1_700_000_000 };
    const core = new ConsensusCore({ name: 'Node2', validators: VALIDATORS }, { executor, crypto: noCrypto, requests: analyzer, clock });
    return { core, analyzer };
  }
  const propagate = (request: Record<string, unknown>) => ({ op: 'PROPAGATE', request, senderClient: null });
  const heldBody = (core: ConsensusCore, digest: string) => {
    const out = core.handle({ kind: 'nodeMessage', from: 'Node3', msg: { op: 'MESSAGE_REQUEST', msg_type: 'PROPAGATE', params: { digest } } });
    const resp = sent(out, 'MESSAGE_RESPONSE') as { msg: { request: Record<string, unknown> } }[];
    return resp[0]?.msg.request;
  };

  it('are counted without checking the body again; the body held is the one this node checked', () => {
    const { core, analyzer } = node();
    const req = new SimClient(new Uint8Array(32).fill(9)).request('held-1');
    const first = core.handle({ kind: 'nodeMessage', from: 'Node3', msg: propagate(wire(req)) });
    expect(analyzer.calls).to.equal(1);
    expect(sent(first, 'PROPAGATE')).to.have.length(1);
    core.handle({ kind: 'nodeMessage', from: 'Node4', msg: propagate(wire(req)) });
    expect(analyzer.calls).to.equal(1);
    // same author, reqId and signature, another body: not checked, and it does not replace the held one
    const tampered = { ...wire(req), operation: { type: '1', dest: 'other', verkey: '~x' } };
    core.handle({ kind: 'nodeMessage', from: 'Node1', msg: propagate(tampered) });
    expect(analyzer.calls).to.equal(1);
    expect(heldBody(core, simRequestDigest(req))).to.deep.equal(req);
    // another request is checked in full
    core.handle({ kind: 'nodeMessage', from: 'Node3', msg: propagate(wire(new SimClient(new Uint8Array(32).fill(9)).request('held-2', { reqId: 7 }))) });
    expect(analyzer.calls).to.equal(2);
  });

  it('an invalid first copy is still refused, and a later valid copy is checked in full', () => {
    const { core, analyzer } = node();
    const req = new SimClient(new Uint8Array(32).fill(8)).request('held-3');
    const bad = { ...wire(req), operation: { type: '1', dest: 'forged', verkey: '~y' } };
    const out = core.handle({ kind: 'nodeMessage', from: 'Node3', msg: propagate(bad) });
    expect(sent(out, 'PROPAGATE')).to.deep.equal([]);
    expect(heldBody(core, simRequestDigest(bad))).to.equal(undefined);
    core.handle({ kind: 'nodeMessage', from: 'Node4', msg: propagate(wire(req)) });
    expect(analyzer.calls).to.equal(2);
    expect(heldBody(core, simRequestDigest(req))).to.deep.equal(req);
  });

  it('requestIdentity: author, reqId and every signature, nothing for malformed envelopes', () => {
    const base = { identifier: 'A', reqId: 5, operation: { type: '1' }, protocolVersion: 2 };
    expect(requestIdentity({ ...base, signature: 's' })).to.equal('A|5|s:s');
    expect(requestIdentity({ ...base, signatures: { B: '2', A: '1' } })).to.equal(requestIdentity({ ...base, signatures: { A: '1', B: '2' } }));
    expect(requestIdentity({ ...base, signatures: { A: '1' } })).to.not.equal(requestIdentity({ ...base, signature: '1' }));
    expect(requestIdentity({ ...base, signature: 's', signatures: { A: 's' } })).to.equal(undefined);
    expect(requestIdentity({ ...base, signatures: { A: 1 } })).to.equal(undefined);
    expect(requestIdentity({ ...base, reqId: '5', signature: 's' })).to.equal(undefined);
    expect(requestIdentity({ ...base, identifier: 5, signature: 's' })).to.equal(undefined);
    expect(requestIdentity({ ...base })).to.equal(undefined);
  });
});
