// What one Byzantine validator can make a node hold or do (#15): floods of INSTANCE_CHANGE (F4),
// MESSAGE_RESPONSE{NEW_VIEW}, VIEW_CHANGE_ACK and relayed VIEW_CHANGE (F5) and 3PC messages for
// the stash (F11). Each test states the bound it checks; on the code before #15 each of them
// failed (the held state or the work grew with the number of messages).
import { expect } from 'chai';
import fc from 'fast-check';
import {
  ConsensusCore,
  type ConsensusCrypto,
  type ConsensusEffect,
  INSTANCE_CHANGE_VIEW_WINDOW,
  type InstanceChangeVoteStore,
  MessageStash,
  STASH_SENDER_SHARE,
  type Stashed,
  defaultStashSenderLimit,
  viewChangeDigest,
  type StoredInstanceChangeVote,
} from '@quire/consensus';
import { SimRequestAnalyzer, StandInExecutor, simBlsPublicKey } from '@quire/consensus/sim';

const VALIDATORS = ['Node1', 'Node2', 'Node3', 'Node4'];
const noCrypto: ConsensusCrypto = { blsSign: () => 'sig', blsVerifyShare: () => true, blsAggregate: () => 'agg', blsVerifyMulti: () => true };
const genesis = VALIDATORS.map((alias) => ({ alias, blskey: simBlsPublicKey(alias) }));

/** A store that counts the vote entries handed to it: the serialisation work of the votes. */
class CountingVoteStore implements InstanceChangeVoteStore {
  saves = 0;
  entries = 0;
  last: StoredInstanceChangeVote[] = [];
  load(): StoredInstanceChangeVote[] {
    return this.last;
  }
  save(votes: StoredInstanceChangeVote[]): void {
    this.saves++;
    this.entries += votes.length;
    this.last = votes;
  }
}

function core(name: string, voteStore?: InstanceChangeVoteStore) {
  const analyzer = new SimRequestAnalyzer();
  const clock = { t: 0, now: () => clock.t, utcSeconds: () => 1_700_000_000 + Math.floor(clock.t / 1000) };
  const c = new ConsensusCore(
    { name, validators: VALIDATORS },
    { executor: new StandInExecutor(analyzer, genesis), crypto: noCrypto, requests: analyzer, clock, ...(voteStore !== undefined ? { voteStore } : {}) },
  );
  return { core: c, clock };
}

const sent = (effects: ConsensusEffect[], op: string) =>
  effects.flatMap((e) => ((e.kind === 'broadcast' || e.kind === 'send') && e.msg.op === op ? [e.msg] : []));

const ic = (viewNo: number) => ({ op: 'INSTANCE_CHANGE', viewNo, reason: 26 });

describe('INSTANCE_CHANGE flood from one validator (#15, F4)', () => {
  const FLOOD = 2_000;

  it('holds and persists at most one vote per validator, whatever views it proposes', () => {
    const store = new CountingVoteStore();
    const { core: c } = core('Node2', store);
    // every message proposes another future view (before #15: one entry per view, each vote
    // re-serialising all of them, FLOOD²/2 entries)
    for (let v = 1; v <= FLOOD; v++) c.handle({ kind: 'nodeMessage', from: 'Node3', msg: ic(v) });
    // bound: each save holds at most one vote per validator, and only a changed vote is saved
    expect(store.last.length).to.be.at.most(VALIDATORS.length);
    expect(store.entries).to.be.at.most(INSTANCE_CHANGE_VIEW_WINDOW * VALIDATORS.length);
    expect(store.last).to.deep.equal([{ viewNo: INSTANCE_CHANGE_VIEW_WINDOW, voter: 'Node3', utc: 1_700_000_000 }]);
    expect(c.status().viewNo).to.equal(0);
  });

  it('saves nothing for a repeated vote, and at most one vote per validator per changed vote', () => {
    const store = new CountingVoteStore();
    const { core: c } = core('Node2', store);
    for (let i = 0; i < FLOOD; i++) c.handle({ kind: 'nodeMessage', from: 'Node3', msg: ic(1) });
    expect(store.saves).to.equal(1);
    // alternating between two views in the window: every message changes the vote
    for (let i = 0; i < FLOOD; i++) c.handle({ kind: 'nodeMessage', from: 'Node3', msg: ic(1 + (i % 2)) });
    expect(store.entries).to.be.at.most((FLOOD + 1) * VALIDATORS.length);
  });

  it('drops views above the window and keeps only the latest vote of each voter', () => {
    const store = new CountingVoteStore();
    const { core: c } = core('Node2', store);
    c.handle({ kind: 'nodeMessage', from: 'Node3', msg: ic(INSTANCE_CHANGE_VIEW_WINDOW + 1) });
    expect(store.last).to.deep.equal([]);
    // Node3 moves its vote from view 1 to view 2: with Node4 and Node1 for view 1 that is two
    // votes for view 1, below n-f = 3
    c.handle({ kind: 'nodeMessage', from: 'Node3', msg: ic(1) });
    c.handle({ kind: 'nodeMessage', from: 'Node3', msg: ic(2) });
    c.handle({ kind: 'nodeMessage', from: 'Node4', msg: ic(1) });
    expect(sent(c.handle({ kind: 'nodeMessage', from: 'Node1', msg: ic(1) }), 'VIEW_CHANGE')).to.deep.equal([]);
    // Node3 comes back to view 1: n-f votes, the view change starts
    expect(sent(c.handle({ kind: 'nodeMessage', from: 'Node3', msg: ic(1) }), 'VIEW_CHANGE')).to.have.length(1);
    expect(c.status().viewNo).to.equal(1);
  });

  it('keeps the latest vote per voter of a store written with several', () => {
    const store = new CountingVoteStore();
    store.last = [
      { viewNo: 1, voter: 'Node3', utc: 1_700_000_000 - 20 },
      { viewNo: 2, voter: 'Node3', utc: 1_700_000_000 - 10 },
      { viewNo: 1, voter: 'Node4', utc: 1_700_000_000 - 10 },
    ];
    const { core: c } = core('Node2', store);
    // Node3's latest vote is for view 2: Node1's vote for view 1 makes two
    expect(sent(c.handle({ kind: 'nodeMessage', from: 'Node1', msg: ic(1) }), 'VIEW_CHANGE')).to.deep.equal([]);
    expect(sent(c.handle({ kind: 'nodeMessage', from: 'Node3', msg: ic(1) }), 'VIEW_CHANGE')).to.have.length(1);
  });
});

describe('stash filled by one validator (#15, F11)', () => {
  const root = '11111111111111111111111111111111';
  const prepare = (viewNo: number, ppSeqNo: number) => ({
    op: 'PREPARE',
    instId: 0,
    viewNo,
    ppSeqNo,
    ppTime: 1,
    digest: 'ab'.repeat(32),
    stateRootHash: root,
    txnRootHash: root,
    auditTxnRootHash: root,
  });
  const commit = (viewNo: number, ppSeqNo: number) => ({ op: 'COMMIT', instId: 0, viewNo, ppSeqNo, blsSigs: { '1': 'sig' } });

  it('holds at most a quarter of REPLICA_STASH_LIMIT from one sender, and still takes the others', () => {
    const analyzer = new SimRequestAnalyzer();
    const clock = { now: () => 0, utcSeconds: () => 1_700_000_000 };
    const limit = 1_000;
    const c = new ConsensusCore(
      { name: 'Node2', validators: VALIDATORS, replicaStashLimit: limit },
      { executor: new StandInExecutor(analyzer, genesis), crypto: noCrypto, requests: analyzer, clock },
    );
    // every stashable key of the next two views: 2 views x 600 ppSeqNos x 2 ops = 2,400 messages
    for (const viewNo of [1, 2]) {
      for (let k = 1; k <= 600; k++) {
        c.handle({ kind: 'nodeMessage', from: 'Node3', msg: prepare(viewNo, k) });
        c.handle({ kind: 'nodeMessage', from: 'Node3', msg: commit(viewNo, k) });
      }
    }
    // bound: one sender holds at most ceil(limit / STASH_SENDER_SHARE) (before #15: the whole stash)
    expect(c.status().stashed)
      .to.equal(defaultStashSenderLimit(limit))
      .and.to.equal(limit / STASH_SENDER_SHARE);
    for (let k = 1; k <= 100; k++) c.handle({ kind: 'nodeMessage', from: 'Node1', msg: prepare(1, k) });
    expect(c.status().stashed).to.equal(limit / STASH_SENDER_SHARE + 100);
  });

  it('lets every sender reach its fair share of a stash that f senders filled', () => {
    const limit = 100;
    const stash = new MessageStash(limit, 60);
    const add = (from: string, ppSeqNo: number) => stash.add({ from, msg: { ...prepare(1, ppSeqNo), op: 'PREPARE' } as Stashed['msg'] });
    for (let k = 1; k <= 60; k++) add('Byz1', k);
    expect(add('Byz1', 61)).to.equal(false);
    for (let k = 1; k <= 60; k++) add('Byz2', k);
    // full: the second sender took places from the first until they held as many
    expect(stash.size).to.equal(limit);
    expect(stash.heldFrom('Byz1')).to.equal(50);
    expect(stash.heldFrom('Byz2')).to.equal(50);
    // an honest sender takes places from the largest holders until it holds about as many
    for (let k = 1; k <= 40; k++) add('Honest', k);
    expect(stash.size).to.equal(limit);
    const fair = Math.floor(limit / 3);
    expect(stash.heldFrom('Honest')).to.be.at.least(fair);
    // and the Byzantine senders cannot take them back
    for (let k = 61; k <= 300; k++) {
      add('Byz1', k);
      add('Byz2', k);
    }
    expect(stash.heldFrom('Honest')).to.be.at.least(fair);
    expect(stash.size).to.be.at.most(limit);
    for (const s of ['Byz1', 'Byz2', 'Honest']) expect(stash.heldFrom(s)).to.be.at.most(60);
    // take() and prune() keep the per-sender counts
    const honest = stash.heldFrom('Honest');
    expect(stash.take((s) => s.from === 'Honest')).to.have.length(honest);
    expect(stash.heldFrom('Honest')).to.equal(0);
    stash.prune((s) => s.from === 'Byz2');
    expect(stash.heldFrom('Byz2')).to.equal(0);
    expect(stash.size).to.equal(stash.heldFrom('Byz1'));
  });

  it('property: never above its caps, and a sender below its fair share is never refused', () => {
    // more senders than STASH_SENDER_SHARE, so that the per-sender caps add up above the global one:
    // A-D send most of the messages and can fill the stash, E and F come late and seldom
    const senders = ['A', 'B', 'C', 'D', 'E', 'F'];
    const op = fc.record({
      from: fc.oneof({ arbitrary: fc.constantFrom('A', 'B', 'C', 'D'), weight: 6 }, { arbitrary: fc.constantFrom(...senders), weight: 1 }),
      ppSeqNo: fc.integer({ min: 1, max: 60 }),
      viewNo: fc.integer({ min: 0, max: 2 }),
      take: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.integer({ min: 6, max: 40 }), fc.array(op, { minLength: 150, maxLength: 400 }), (limit, ops) => {
        const senderLimit = defaultStashSenderLimit(limit);
        const stash = new MessageStash(limit, senderLimit);
        for (const o of ops) {
          if (o.take) {
            stash.take((s) => s.from === o.from && s.msg.ppSeqNo === o.ppSeqNo);
            continue;
          }
          const held = stash.heldFrom(o.from);
          const fair = Math.floor(limit / senders.length);
          const ok = stash.add({ from: o.from, msg: { ...prepare(o.viewNo, o.ppSeqNo), op: 'PREPARE' } as Stashed['msg'] });
          if (held < fair - 1) expect(ok, `${o.from} held ${held} of a fair share ${fair}`).to.equal(true);
          expect(stash.size).to.be.at.most(limit);
          let sum = 0;
          for (const x of senders) {
            expect(stash.heldFrom(x)).to.be.at.most(senderLimit);
            sum += stash.heldFrom(x);
          }
          expect(sum).to.equal(stash.size);
        }
      }),
      { numRuns: 100 },
    );
  });
});

/** Entries of a map or set and of the maps and sets it holds (one level down). */
function entries(x: unknown): number {
  if (!(x instanceof Map) && !(x instanceof Set)) return 0;
  let n = x.size;
  for (const v of x.values()) if (v instanceof Map || v instanceof Set) n += v.size;
  return n;
}

/** The view-change stores a peer's messages add to (private fields of the core's ViewChanger). */
function viewChangeStores(c: ConsensusCore): Record<'acks' | 'relayedVcs' | 'nvResponses' | 'futureVcs' | 'futureViewSenders', number> {
  const vc = (c as unknown as { viewChanger: Record<string, unknown> }).viewChanger;
  return {
    acks: entries(vc.acks),
    relayedVcs: entries(vc.relayedVcs),
    nvResponses: entries(vc.nvResponses),
    futureVcs: entries(vc.futureVcs),
    futureViewSenders: entries(vc.futureViewSenders),
  };
}

const N = VALIDATORS.length;
const hex64 = (i: number) => i.toString(16).padStart(64, '0');
const initialCp = { op: 'CHECKPOINT', instId: 0, viewNo: 0, seqNoStart: 0, seqNoEnd: 0, digest: null };

describe('view-change message stores under a flood from one validator (#15, F5)', () => {
  const FLOOD = 3_000;
  const newView = (viewNo: number, i: number) => ({
    op: 'NEW_VIEW',
    viewNo,
    viewChanges: [['Node1', hex64(i)]],
    checkpoint: initialCp,
    batches: [],
    primary: 'Node2',
  });
  const nvResponse = (viewNo: number, i: number) => ({ op: 'MESSAGE_RESPONSE', msg_type: 'NEW_VIEW', params: { instId: 0, viewNo }, msg: newView(viewNo, i) });

  /** Node2 (the primary of view 1) waiting for its NEW_VIEW after n-f INSTANCE_CHANGEs. */
  function newPrimaryWaiting(): ConsensusCore {
    const { core: c } = core('Node2');
    for (const from of ['Node1', 'Node3', 'Node4']) c.handle({ kind: 'nodeMessage', from, msg: ic(1) });
    expect(c.status()).to.include({ viewNo: 1, waitingForNewView: true, primary: 'Node2' });
    return c;
  }

  it('keeps one MESSAGE_RESPONSE{NEW_VIEW} body per validator, its latest', () => {
    const { core: c } = core('Node2');
    // before #15 each distinct body was kept for good (3,000 bodies of 36 KB held 108 MB)
    for (let i = 0; i < FLOOD; i++) c.handle({ kind: 'nodeMessage', from: 'Node3', msg: nvResponse(1 + (i % 3), i) });
    // bound: one body per validator
    expect(viewChangeStores(c).nvResponses).to.equal(1);
    for (let i = 0; i < FLOOD; i++) c.handle({ kind: 'nodeMessage', from: 'Node3', msg: nvResponse(1, i) });
    expect(viewChangeStores(c).nvResponses).to.be.at.most(N);
    // the answers of two honest validators still make it adopt view 1 (f+1 identical)
    c.handle({ kind: 'nodeMessage', from: 'Node1', msg: nvResponse(1, FLOOD + 1) });
    expect(c.status().viewNo).to.equal(0);
    c.handle({ kind: 'nodeMessage', from: 'Node4', msg: nvResponse(1, FLOOD + 1) });
    expect(c.status()).to.include({ viewNo: 1, waitingForNewView: false });
    expect(viewChangeStores(c).nvResponses).to.equal(0);
  });

  it('keeps one VIEW_CHANGE_ACK per (acker, author), for validators only', () => {
    const c = newPrimaryWaiting();
    for (let i = 0; i < FLOOD; i++) {
      const name = i % 2 === 0 ? `Invented${i}` : 'Node1';
      c.handle({ kind: 'nodeMessage', from: 'Node3', msg: { op: 'VIEW_CHANGE_ACK', viewNo: 1, name, digest: hex64(i) } });
    }
    // bound: n² entries (before #15: one per distinct (name, digest), each ACK scanning all of them)
    const held = viewChangeStores(c).acks;
    expect(held).to.be.at.most(N + N * N);
    expect(held).to.be.at.most(2);
  });

  it('keeps one relayed VIEW_CHANGE per (relayer, author), for validators only', () => {
    const c = newPrimaryWaiting();
    for (let i = 0; i < FLOOD; i++) {
      const vc = { op: 'VIEW_CHANGE', viewNo: 1, stableCheckpoint: i, prepared: [], preprepared: [], checkpoints: [initialCp] };
      const digest = viewChangeDigest(vc as Parameters<typeof viewChangeDigest>[0]);
      const name = i % 2 === 0 ? `Invented${i}` : 'Node1';
      c.handle({ kind: 'nodeMessage', from: 'Node3', msg: { op: 'MESSAGE_RESPONSE', msg_type: 'VIEW_CHANGE', params: { instId: 0, name, digest }, msg: vc } });
    }
    // bound: n² entries (before #15: one per distinct (name, digest))
    expect(viewChangeStores(c).relayedVcs).to.be.at.most(2);
  });

  it('bounds the VIEW_CHANGEs and 3PC senders of later views', () => {
    const { core: c } = core('Node2');
    for (let i = 0; i < FLOOD; i++) {
      const viewNo = 1 + (i % 50);
      c.handle({
        kind: 'nodeMessage',
        from: 'Node3',
        msg: { op: 'VIEW_CHANGE', viewNo, stableCheckpoint: i, prepared: [], preprepared: [], checkpoints: [initialCp] },
      });
    }
    const s = viewChangeStores(c);
    // views up to current + 2 (+ escalation), one VIEW_CHANGE per (view, author)
    expect(s.futureVcs).to.be.at.most(3 * (1 + N));
  });
});
