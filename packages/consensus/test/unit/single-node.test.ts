import { expect } from 'chai';
import { ConsensusCore, type ConsensusCrypto, type ConsensusEffect } from '@quire/consensus';
import { SimClient, SimRequestAnalyzer, StandInExecutor, simBlsPublicKey } from '@quire/consensus/sim';

// consensus.md §1.2: a development pool may have n < 4 validators; n = 1 gives f = 0, a PREPARE
// quorum of n - f - 1 = 0 and a COMMIT quorum of 1 (the node's own).
const noCrypto: ConsensusCrypto = { blsSign: () => 'sig', blsVerifyShare: () => true, blsAggregate: () => 'agg', blsVerifyMulti: () => true };

function soloCore(executor?: StandInExecutor) {
  const analyzer = new SimRequestAnalyzer();
  const ex = executor ?? new StandInExecutor(analyzer, [{ alias: 'Node1', blskey: simBlsPublicKey('Node1') }]);
  const clock = { t: 0, now: () => clock.t, utcSeconds: () => 1_700_000_000 + Math.floor(clock.t / 1000) };
  const core = new ConsensusCore({ name: 'Node1', validators: ['Node1'] }, { executor: ex, crypto: noCrypto, requests: analyzer, clock });
  return { core, executor: ex, clock };
}

/** Feeds fired timers to the core for `ms` of simulated time; returns every effect. */
function run(solo: ReturnType<typeof soloCore>, first: ConsensusEffect[], ms: number): ConsensusEffect[] {
  const all = [...first];
  const timers = new Map<string, number>();
  const note = (effects: ConsensusEffect[]) => {
    for (const e of effects) {
      if (e.kind === 'setTimer') timers.set(e.id, solo.clock.t + e.delayMs);
      else if (e.kind === 'cancelTimer') timers.delete(e.id);
    }
  };
  note(first);
  const end = solo.clock.t + ms;
  while (solo.clock.t < end) {
    solo.clock.t += 10;
    for (const [id, at] of [...timers]) {
      if (at > solo.clock.t) continue;
      timers.delete(id);
      const effects = solo.core.handle({ kind: 'timer', id });
      note(effects);
      all.push(...effects);
    }
  }
  return all;
}

describe('a pool of one validator (n = 1, f = 0)', () => {
  it('orders a client write through the public API without waiting for PREPAREs, and never changes view', () => {
    const solo = soloCore();
    const start = solo.core.start();
    const client = new SimClient(new Uint8Array(32).fill(4));
    const req = client.request('solo-1');
    const first = [...start, ...solo.core.handle({ kind: 'clientRequest', connId: 'c1', request: req })];
    expect(first.some((e) => e.kind === 'clientAck')).to.equal(true);
    const effects = run(solo, first, 10_000);
    const ordered = effects.filter((e) => e.kind === 'ordered');
    const replies = ordered.flatMap((e) => (e.kind === 'ordered' ? e.replies : []));
    expect(replies.map((r) => r.connIds)).to.deep.include(['c1']);
    for (const e of ordered) if (e.kind === 'ordered') for (const ms of e.multiSigs) expect(ms.participants).to.deep.equal(['Node1']);
    expect(solo.executor.committedSize(1)).to.equal(1);
    const st = solo.core.status();
    expect(st.viewNo).to.equal(0);
    expect(st.pendingRequests).to.equal(0);
    expect(effects.some((e) => (e.kind === 'broadcast' || e.kind === 'send') && e.msg.op === 'INSTANCE_CHANGE')).to.equal(false);
  });

  it('orders many writes and moves its stable checkpoint on its own', () => {
    const analyzer = new SimRequestAnalyzer();
    const executor = new StandInExecutor(analyzer, [{ alias: 'Node1', blskey: simBlsPublicKey('Node1') }]);
    const clock = { t: 0, now: () => clock.t, utcSeconds: () => 1_700_000_000 + Math.floor(clock.t / 1000) };
    const core = new ConsensusCore(
      { name: 'Node1', validators: ['Node1'], chkFreq: 2, logSize: 6, max3pcBatchSize: 1 },
      { executor, crypto: noCrypto, requests: analyzer, clock },
    );
    const solo = { core, executor, clock };
    const client = new SimClient(new Uint8Array(32).fill(5));
    const first = [...core.start()];
    for (let i = 0; i < 10; i++) first.push(...core.handle({ kind: 'clientRequest', connId: 'c', request: client.request(`solo-many-${i}`) }));
    run(solo, first, 5_000);
    expect(executor.committedSize(1)).to.equal(10);
    expect(core.status().stableCheckpoint).to.be.greaterThan(0);
    expect(core.status().viewNo).to.equal(0);
  });

  it('orders again after a restart from its own history', () => {
    const first = soloCore();
    const client = new SimClient(new Uint8Array(32).fill(6));
    run(first, [...first.core.start(), ...first.core.handle({ kind: 'clientRequest', connId: 'a', request: client.request('before') })], 2_000);
    expect(first.executor.committedSize(1)).to.equal(1);
    // the same durable ledgers, a new core (restart)
    const again = soloCore(first.executor);
    const effects = run(again, [...again.core.start(), ...again.core.handle({ kind: 'clientRequest', connId: 'b', request: client.request('after') })], 2_000);
    expect(again.executor.committedSize(1)).to.equal(2);
    expect(effects.some((e) => (e.kind === 'broadcast' || e.kind === 'send') && e.msg.op === 'INSTANCE_CHANGE')).to.equal(false);
  });
});
