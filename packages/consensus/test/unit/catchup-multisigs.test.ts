import { expect } from 'chai';
import { b58encode, encodeMsgpack } from '@quire/common';
import { ConsensusCore, type ConsensusCrypto, type ConsensusEffect, type MultiSigTuple, Suspicion } from '@quire/consensus';
import { type SimReplica, Simulation, StandInExecutor, simBlsKey, standInPool } from '@quire/consensus/sim';

// BLS multi-signatures travel with catch-up (formats.md §12.1): a node with empty ledgers catches
// up from a pool that ordered batches and ends up holding the pool's multi-signatures, checked,
// without ordering a batch itself.

const GENESIS = ['Node1', 'Node2', 'Node3', 'Node4'];

interface Net {
  leecher: ConsensusCore;
  executor: StandInExecutor;
  crypto: ConsensusCrypto;
  effects: ConsensusEffect[];
}

/** A pool that ordered `requests` writes (and, for `membership`, NODE txns), all checks passed. */
function orderedPool(faults: string, seed: number, requests = 30): Simulation {
  const sim = new Simulation({ seed, nodes: 4, faults, requests });
  expect(sim.run().violations).to.deep.equal([]);
  return sim;
}

type Tamper = (from: string, msg: Record<string, unknown>) => Record<string, unknown>;

/**
 * Node4 with empty ledgers (the pool genesis only) catches up from Node1-Node3 of `sim`, each a
 * fresh core over that node's storage. Messages between the leecher and the seeders are delivered
 * until none is left, with simulated ticks in between; `tamper` rewrites what a seeder sends.
 */
function catchUp(
  sim: Simulation,
  tamper: Tamper = (_f, m) => m,
  prepare: (ex: StandInExecutor) => void = () => undefined,
  leecherCrypto: (c: ConsensusCrypto) => ConsensusCrypto = (c) => c,
): Net {
  const clock = { t: 0, now: () => clock.t, utcSeconds: () => 1_800_000_000 + Math.floor(clock.t / 1000) };
  const seeders = new Map<string, ConsensusCore>();
  for (const n of sim.nodes.filter((x) => x.name !== 'Node4' && GENESIS.includes(x.name))) {
    const validators = n.executor.lastAudit()?.nodeReg ?? GENESIS;
    seeders.set(
      n.name,
      new ConsensusCore({ name: n.name, validators }, { executor: n.executor, crypto: n.replica.crypto, requests: n.replica.requests, clock }),
    );
  }
  const replica = standInPool({ seed: 0, genesis: GENESIS }).replica('Node4') as SimReplica<StandInExecutor>;
  prepare(replica.executor);
  const leecher = new ConsensusCore(
    { name: 'Node4', validators: GENESIS },
    { executor: replica.executor, crypto: leecherCrypto(replica.crypto), requests: replica.requests, clock },
  );
  const effects: ConsensusEffect[] = [];
  const queue: { from: string; to: string; msg: unknown }[] = [];
  const fromLeecher = (out: ConsensusEffect[]): void => {
    effects.push(...out);
    for (const e of out) {
      if (e.kind === 'broadcast') for (const to of seeders.keys()) queue.push({ from: 'Node4', to, msg: e.msg });
      if (e.kind === 'send' && seeders.has(e.to)) queue.push({ from: 'Node4', to: e.to, msg: e.msg });
    }
  };
  fromLeecher(leecher.start());
  for (let round = 0; round < 200 && leecher.status().catchingUp; round++) {
    while (queue.length > 0) {
      const { from, to, msg } = queue.shift()!;
      if (to === 'Node4') {
        // as the transport delivers it: msgpack-decoded plain data
        fromLeecher(leecher.handle({ kind: 'nodeMessage', from, msg: structuredClone(msg) }));
        continue;
      }
      for (const e of seeders.get(to)!.handle({ kind: 'nodeMessage', from, msg })) {
        if (e.kind === 'send' && e.to === 'Node4') queue.push({ from: to, to: 'Node4', msg: tamper(to, e.msg as unknown as Record<string, unknown>) });
      }
    }
    clock.t += 500;
    fromLeecher(leecher.handle({ kind: 'timer', id: 'tick' }));
  }
  return { leecher, executor: replica.executor, crypto: replica.crypto, effects };
}

/** The state root of each ledger after its last batch, from the audit ledger. */
function currentStateRoots(ex: StandInExecutor): Map<number, string> {
  const out = new Map<number, string>();
  for (let s = ex.committedSize(3); s >= 1; s--) {
    const a = ex.auditEntry(s);
    if (!out.has(a.ledgerId)) out.set(a.ledgerId, a.stateRoot);
  }
  return out;
}

function expectCaughtUp(net: Net, sim: Simulation): void {
  expect(net.leecher.status().catchingUp).to.equal(false);
  const seeder = sim.nodes[0]!.executor;
  for (const l of [0, 1, 2, 3]) expect(net.executor.ledgerStatus(l)).to.deep.equal(seeder.ledgerStatus(l));
  // ordered nothing itself
  expect(net.effects.filter((e) => e.kind === 'ordered')).to.deep.equal([]);
}

const suspicionsOf = (net: Net) => net.effects.filter((e) => e.kind === 'suspicion' && e.code === Suspicion.INVALID_CATCHUP_DATA);

/** Rewrites the multi-signatures of every audit-ledger CATCHUP_REP. */
function forgeMultiSigs(forge: (t: MultiSigTuple) => unknown): Tamper {
  return (_from, msg) => {
    if (msg.op !== 'CATCHUP_REP' || msg.ledgerId !== 3 || !Array.isArray(msg.multiSigs)) return msg;
    return { ...msg, multiSigs: (msg.multiSigs as MultiSigTuple[]).map(forge) };
  };
}

describe('multi-signatures in catch-up (formats.md §12.1)', () => {
  it('a node that caught up holds a verifying multi-signature for the current state roots without ordering a batch', () => {
    const sim = orderedPool('none', 2);
    const net = catchUp(sim);
    expectCaughtUp(net, sim);
    const roots = currentStateRoots(net.executor);
    expect(roots.has(1)).to.equal(true);
    for (const [lid, root] of roots) {
      const ms = net.executor.multiSignatureFor(root);
      expect(ms, `ledger ${lid}`).to.not.equal(undefined);
      expect(ms!.value.ledger_id).to.equal(lid);
      expect(new Set(ms!.participants).size).to.be.at.least(3);
      expect(net.crypto.blsVerifyMulti(ms!.participants, ms!.value, ms!.signature)).to.equal(true);
    }
    // every root the pool signed came along, and each one verifies under the leecher's own keys
    const seederRoots = new Set(sim.nodes.slice(0, 3).flatMap((n) => [...n.executor.blsStore.keys()]));
    expect([...net.executor.blsStore.keys()].sort()).to.deep.equal([...seederRoots].sort());
    for (const ms of net.executor.blsStore.values()) expect(net.crypto.blsVerifyMulti(ms.participants, ms.value, ms.signature)).to.equal(true);
    expect(suspicionsOf(net)).to.deep.equal([]);
  });

  it('checks a multi-signature whose pool state root is only known once the pool ledger caught up (membership changes)', () => {
    // NODE txns change the pool state: multi-signatures after the first change name pool roots the
    // leecher has only after its pool ledger caught up, and n−f of the registry at those roots
    const sim = orderedPool('membership', 1105);
    const seeder = sim.nodes[0]!.executor;
    expect(seeder.committedSize(0)).to.be.greaterThan(4);
    const net = catchUp(sim);
    expectCaughtUp(net, sim);
    const stored = [...net.executor.blsStore.values()];
    expect(stored.length).to.be.greaterThan(0);
    const later = stored.filter((ms) => net.executor.registryAt(ms.value.pool_state_root_hash)?.join() !== GENESIS.join());
    expect(later.length, 'multi-signatures over pool roots after a membership change').to.be.greaterThan(0);
    for (const [lid, root] of currentStateRoots(net.executor)) {
      const ms = net.executor.multiSignatureFor(root);
      expect(ms, `ledger ${lid}`).to.not.equal(undefined);
      expect(net.crypto.blsVerifyMulti(ms!.participants, ms!.value, ms!.signature)).to.equal(true);
    }
    expect(suspicionsOf(net)).to.deep.equal([]);
  });

  describe('a reply with forged multi-signatures: nothing of them is stored and catch-up completes', () => {
    const sim = orderedPool('none', 2);
    const otherSignature = b58encode(simBlsKey('Node1').sign(new Uint8Array([1, 2, 3])));
    const cases: [string, (t: MultiSigTuple) => unknown][] = [
      ['wrong signature bytes', ([, parts, value]) => [otherSignature, parts, value]],
      ['too few participants', ([sig, parts, value]) => [sig, parts.slice(0, 2), value]],
      ['a participant twice', ([sig, parts, value]) => [sig, [parts[0]!, ...parts.slice(0, parts.length - 1)], value]],
      ['a participant that is not a validator', ([sig, parts, value]) => [sig, [...parts.slice(0, parts.length - 1), 'Node9'], value]],
      [
        'a state root no audit txn of the reply names',
        ([sig, parts, [lid, , pool, txn, ts]]) => [sig, parts, [lid, b58encode(new Uint8Array(32).fill(9)), pool, txn, ts]],
      ],
      ['another ledger id', ([sig, parts, [lid, root, pool, txn, ts]]) => [sig, parts, [lid === 1 ? 2 : 1, root, pool, txn, ts]]],
      ['an unknown pool state root', ([sig, parts, [lid, root, , txn, ts]]) => [sig, parts, [lid, root, b58encode(new Uint8Array(32).fill(7)), txn, ts]]],
      ['malformed entries', () => ['not a tuple', 42]],
      ['a signature of the wrong length', ([, parts, value]) => [b58encode(new Uint8Array(48).fill(3)), parts, value]],
    ];
    for (const [name, forge] of cases) {
      it(name, () => {
        const net = catchUp(sim, forgeMultiSigs(forge));
        expectCaughtUp(net, sim);
        expect(net.executor.blsStore.size).to.equal(0);
        expect(net.executor.storedMultiSigs).to.deep.equal([]);
        // evidence against the senders, except for a pool root that is simply unknown
        if (name !== 'an unknown pool state root') expect(suspicionsOf(net).length).to.be.greaterThan(0);
      });
    }

    it('honest ones made at pool state roots this node does not hold (older than its pool genesis) are not checked, stored nor held against their senders', () => {
      const net = catchUp(sim, undefined, (ex) => {
        (ex as StandInExecutor & { hasPoolStateRoot(root: string): boolean }).hasPoolStateRoot = () => false;
      });
      expectCaughtUp(net, sim);
      expect(net.executor.storedMultiSigs).to.deep.equal([]);
      expect(suspicionsOf(net)).to.deep.equal([]);
    });

    it('a non-array `multiSigs` refuses the reply (shape check) and catch-up completes from the others', () => {
      const net = catchUp(sim, (from, msg) => (from === 'Node1' && msg.op === 'CATCHUP_REP' ? { ...msg, multiSigs: 'x' } : msg));
      expectCaughtUp(net, sim);
      for (const ms of net.executor.blsStore.values()) expect(net.crypto.blsVerifyMulti(ms.participants, ms.value, ms.signature)).to.equal(true);
    });

    it("forged ones from one seeder are dropped, the honest seeders' ones are stored", () => {
      const forged = forgeMultiSigs(([, parts, value]) => [otherSignature, parts, value]);
      const net = catchUp(sim, (from, msg) => (from === 'Node1' ? forged(from, msg) : msg));
      expectCaughtUp(net, sim);
      const stored = [...net.executor.blsStore.values()];
      expect(stored.length).to.be.greaterThan(0);
      for (const ms of stored) {
        expect(ms.signature).to.not.equal(otherSignature);
        expect(net.crypto.blsVerifyMulti(ms.participants, ms.value, ms.signature)).to.equal(true);
      }
      expect(suspicionsOf(net).every((e) => e.kind === 'suspicion' && e.peer === 'Node1')).to.equal(true);
    });
  });

  describe('signatures verified together (blsVerifyMultiBatch)', () => {
    const sim = orderedPool('none', 2);
    interface Calls {
      one: number;
      batches: { size: number; ok: boolean }[];
    }
    /** the leecher's crypto with its verifications counted; `batch` false: without blsVerifyMultiBatch */
    const counting =
      (calls: Calls, batch = true) =>
      (c: ConsensusCrypto): ConsensusCrypto => {
        const out: ConsensusCrypto = {
          blsSign: (v) => c.blsSign(v),
          blsVerifyShare: (a, v, s) => c.blsVerifyShare(a, v, s),
          blsAggregate: (s) => c.blsAggregate(s),
          blsVerifyMulti: (p, v, s) => {
            calls.one++;
            return c.blsVerifyMulti(p, v, s);
          },
        };
        const together = c.blsVerifyMultiBatch?.bind(c);
        if (batch && together !== undefined)
          out.blsVerifyMultiBatch = (items) => {
            const ok = together(items);
            calls.batches.push({ size: items.length, ok });
            return ok;
          };
        return out;
      };
    const storedOf = (net: Net) => [...net.executor.blsStore.entries()].sort(([a], [b]) => (a < b ? -1 : 1));

    it('an honest reply: its multi-signatures are verified in one call, none on its own, and the same ones are stored', () => {
      const together: Calls = { one: 0, batches: [] };
      const net = catchUp(sim, undefined, undefined, counting(together));
      expectCaughtUp(net, sim);
      const alone: Calls = { one: 0, batches: [] };
      const reference = catchUp(sim, undefined, undefined, counting(alone, false));
      expect(together.batches.length).to.be.greaterThan(0);
      expect(together.batches.every((b) => b.ok)).to.equal(true);
      expect(together.one).to.equal(0);
      expect(together.batches.reduce((n, b) => n + b.size, 0)).to.equal(alone.one);
      expect(storedOf(net)).to.deep.equal(storedOf(reference));
      expect(storedOf(net).length).to.be.greaterThan(0);
    });

    it('a forged signature among them fails the call: each is then verified on its own, the forged one dropped, the others stored as without the call', () => {
      const otherSignature = b58encode(simBlsKey('Node1').sign(new Uint8Array([1, 2, 3])));
      // the last multi-signature of every audit-ledger reply gets another signature (a sender's entries after a bad
      // one are not verified, so the ones before it are what can be stored)
      const tamper: Tamper = (_from, msg) => {
        if (msg.op !== 'CATCHUP_REP' || msg.ledgerId !== 3 || !Array.isArray(msg.multiSigs)) return msg;
        const all = msg.multiSigs as MultiSigTuple[];
        const last = all.at(-1);
        return last === undefined ? msg : { ...msg, multiSigs: [...all.slice(0, -1), [otherSignature, last[1], last[2]]] };
      };
      const together: Calls = { one: 0, batches: [] };
      const net = catchUp(sim, tamper, undefined, counting(together));
      const reference = catchUp(sim, tamper, undefined, counting({ one: 0, batches: [] }, false));
      expectCaughtUp(net, sim);
      expect(together.batches.some((b) => !b.ok)).to.equal(true);
      expect(together.one).to.be.greaterThan(0);
      const stored = storedOf(net);
      expect(stored.length).to.be.greaterThan(0);
      expect(stored.every(([, ms]) => ms.signature !== otherSignature)).to.equal(true);
      expect(stored).to.deep.equal(storedOf(reference));
      expect(suspicionsOf(net).length).to.be.greaterThan(0);
    });
  });

  describe('the seeder', () => {
    it('sends with each audit-ledger reply the multi-signatures of the roots its txns name, split replies included', () => {
      const sim = orderedPool('none', 2, 60);
      const node = sim.nodes[0]!;
      const limit = 3000;
      const core = new ConsensusCore(
        { name: 'Node1', validators: GENESIS, msgLenLimit: limit },
        { executor: node.executor, crypto: node.replica.crypto, requests: node.replica.requests, clock: { now: () => 0, utcSeconds: () => 1_800_000_000 } },
      );
      const size = node.executor.committedSize(3);
      const reps = core
        .handle({ kind: 'nodeMessage', from: 'Node4', msg: { op: 'CATCHUP_REQ', ledgerId: 3, seqNoStart: 1, seqNoEnd: size, catchupTill: size } })
        .flatMap((e) => (e.kind === 'send' && e.msg.op === 'CATCHUP_REP' ? [e.msg] : []));
      expect(reps.length).to.be.greaterThan(2);
      const carried = new Set<string>();
      for (const rep of reps) {
        const txns = Object.values(rep.txns);
        if (txns.length > 1) expect(encodeMsgpack(rep).length).to.be.at.most(limit);
        const named = new Set(txns.flatMap((t) => node.executor.auditStateRoots(t).map((r) => r.stateRoot)));
        const tuples = (rep.multiSigs ?? []) as MultiSigTuple[];
        const roots = tuples.map((t) => t[2][1]);
        expect(new Set(roots).size, 'one per root').to.equal(roots.length);
        for (const r of roots) {
          expect(named.has(r)).to.equal(true);
          carried.add(r);
        }
      }
      expect([...carried].sort()).to.deep.equal([...node.executor.blsStore.keys()].sort());
    });

    it('sends no `multiSigs` with the txns of ledgers 0-2', () => {
      const sim = orderedPool('none', 2);
      const node = sim.nodes[0]!;
      const core = new ConsensusCore(
        { name: 'Node1', validators: GENESIS },
        { executor: node.executor, crypto: node.replica.crypto, requests: node.replica.requests, clock: { now: () => 0, utcSeconds: () => 1_800_000_000 } },
      );
      const size = node.executor.committedSize(1);
      const reps = core
        .handle({ kind: 'nodeMessage', from: 'Node4', msg: { op: 'CATCHUP_REQ', ledgerId: 1, seqNoStart: 1, seqNoEnd: size, catchupTill: size } })
        .flatMap((e) => (e.kind === 'send' && e.msg.op === 'CATCHUP_REP' ? [e.msg] : []));
      expect(reps.length).to.be.greaterThan(0);
      for (const rep of reps) expect(rep).to.not.have.property('multiSigs');
    });
  });
});
