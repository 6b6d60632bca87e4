// BLS multi-signatures travel with catch-up (formats.md §12.1) on the real stack: the node's
// ConsensusExecutor names the state roots of its audit txns, the seeder sends the multi-signatures
// its BlsStore holds for them, and a node with empty ledgers stores the ones that check (with the
// proof-of-possession-checked keys of its pool state) in its BlsStore, durably.
import { expect } from 'chai';
import { b58encode } from '@quire/common';
import { ConsensusCore, type ConsensusEffect, type MultiSigTuple, Suspicion } from '@quire/consensus';
import { Simulation } from '@quire/consensus/sim';
import { type RealSimPool, type SimConsensusExecutor, type SimReplica, realSimPool, simBlsKey } from '../../src/sim/index.js';
import { PeerMessageDecoder, encodePeerMessage } from '../../src/peer-wire.js';

/** A message as the leecher's peer wire gives it: encoded as a node sends it, decoded as a node reads it. */
const overPeerWire = (msg: unknown): unknown => new PeerMessageDecoder().decode(encodePeerMessage(msg as object));

const GENESIS = ['Node1', 'Node2', 'Node3', 'Node4'];

type Tamper = (from: string, msg: Record<string, unknown>) => Record<string, unknown>;

/** A run on the real stack whose stores stay open after it (closed by `close`). */
async function orderedPool(faults: string, seed: number): Promise<{ sim: Simulation<SimConsensusExecutor>; pool: RealSimPool }> {
  let pool!: RealSimPool;
  const sim = new Simulation<SimConsensusExecutor>(
    { seed, nodes: 4, faults, requests: 20 },
    {
      pool: (ctx) => {
        pool = realSimPool(ctx);
        return { replica: (a) => pool.replica(a), workload: pool.workload };
      },
    },
  );
  expect((await sim.runAsync()).violations).to.deep.equal([]);
  return { sim, pool };
}

/** Node4 over fresh stores (genesis only) catches up from fresh cores over Node1-3's stores. */
async function catchUp(sim: Simulation<SimConsensusExecutor>, pool: RealSimPool, tamper: Tamper = (_f, m) => m) {
  const clock = { t: 0, now: () => clock.t, utcSeconds: () => 1_800_000_000 + Math.floor(clock.t / 1000) };
  const seeders = new Map<string, ConsensusCore>();
  for (const n of sim.nodes.filter((x) => ['Node1', 'Node2', 'Node3'].includes(x.name))) {
    seeders.set(
      n.name,
      new ConsensusCore(
        { name: n.name, validators: n.executor.lastAudit()?.nodeReg ?? GENESIS },
        { executor: n.executor, crypto: n.replica.crypto, requests: n.replica.requests, clock },
      ),
    );
  }
  const replica: SimReplica = await pool.replica('Node4');
  const leecher = new ConsensusCore(
    { name: 'Node4', validators: GENESIS },
    { executor: replica.executor, crypto: replica.crypto, requests: replica.requests, clock },
  );
  const effects: ConsensusEffect[] = [];
  const queue: { from: string; to: string; msg: unknown }[] = [];
  const fromLeecher = async (out: ConsensusEffect[]): Promise<void> => {
    await replica.settle();
    effects.push(...out);
    for (const e of out) {
      if (e.kind === 'broadcast') for (const to of seeders.keys()) queue.push({ from: 'Node4', to, msg: e.msg });
      if (e.kind === 'send' && seeders.has(e.to)) queue.push({ from: 'Node4', to: e.to, msg: e.msg });
    }
  };
  await fromLeecher(leecher.start());
  for (let round = 0; round < 200 && leecher.status().catchingUp; round++) {
    while (queue.length > 0) {
      const { from, to, msg } = queue.shift()!;
      if (to === 'Node4') {
        await fromLeecher(leecher.handle({ kind: 'nodeMessage', from, msg: overPeerWire(msg) }));
        continue;
      }
      for (const e of seeders.get(to)!.handle({ kind: 'nodeMessage', from, msg })) {
        if (e.kind === 'send' && e.to === 'Node4') queue.push({ from: to, to: 'Node4', msg: tamper(to, e.msg as unknown as Record<string, unknown>) });
      }
    }
    clock.t += 500;
    await fromLeecher(leecher.handle({ kind: 'timer', id: 'tick' }));
  }
  expect(leecher.status().catchingUp).to.equal(false);
  const seeder = sim.nodes[0]!.executor;
  for (const l of [0, 1, 2, 3]) expect(replica.executor.ledgerStatus(l)).to.deep.equal(seeder.ledgerStatus(l));
  expect(effects.filter((e) => e.kind === 'ordered')).to.deep.equal([]);
  return { replica, effects };
}

/** Each ledger's state root after its last batch, read from the audit ledger. */
function currentStateRoots(ex: SimConsensusExecutor): Map<number, string> {
  const out = new Map<number, string>();
  for (let s = ex.committedSize(3); s >= 1 && out.size < 3; s--) {
    for (const r of ex.auditStateRoots(ex.txnRange(3, s, s)[0])) if (!out.has(r.ledgerId)) out.set(r.ledgerId, r.stateRoot);
  }
  return out;
}

function expectVerifyingMultiSigs(replica: SimReplica, roots: Map<number, string>): void {
  for (const [lid, root] of roots) {
    const ms = replica.executor.multiSignatureFor(root);
    expect(ms, `ledger ${lid}`).to.not.equal(undefined);
    expect(ms!.value.state_root_hash).to.equal(root);
    expect(replica.crypto.blsVerifyMulti(ms!.participants, ms!.value, ms!.signature)).to.equal(true);
  }
}

describe('multi-signatures in catch-up on the real executor and storage (formats.md §12.1)', function () {
  this.timeout(120_000);

  it('a node that caught up holds verifying multi-signatures of the current roots, also after a restart', async () => {
    const { sim, pool } = await orderedPool('none', 3);
    try {
      const { replica, effects } = await catchUp(sim, pool);
      const roots = currentStateRoots(replica.executor);
      expect(roots.get(1)).to.be.a('string');
      expectVerifyingMultiSigs(replica, roots);
      expect(replica.executor.storedMultiSigs.length).to.be.greaterThan(0);
      expect(effects.filter((e) => e.kind === 'suspicion' && e.code === Suspicion.INVALID_CATCHUP_DATA)).to.deep.equal([]);
      // written with the caught-up txns: a new process over the same store has them
      await replica.crash();
      await replica.restart();
      expectVerifyingMultiSigs(replica, roots);
    } finally {
      await pool.close();
    }
  });

  it('checks the ones over pool state roots it only knows once its pool ledger caught up (membership changes)', async () => {
    const { sim, pool } = await orderedPool('membership', 1105);
    try {
      expect(sim.nodes[0]!.executor.committedSize(0)).to.be.greaterThan(GENESIS.length);
      const { replica, effects } = await catchUp(sim, pool);
      expectVerifyingMultiSigs(replica, currentStateRoots(replica.executor));
      const poolRoots = new Set(replica.executor.storedMultiSigs.map((ms) => ms.value.pool_state_root_hash));
      expect(poolRoots.size, 'multi-signatures over more than one pool state').to.be.greaterThan(1);
      expect(effects.filter((e) => e.kind === 'suspicion' && e.code === Suspicion.INVALID_CATCHUP_DATA)).to.deep.equal([]);
    } finally {
      await pool.close();
    }
  });

  it('holds exactly the pool state roots it has been through (hasPoolStateRoot)', async () => {
    const { sim, pool } = await orderedPool('membership', 1105);
    try {
      const { replica } = await catchUp(sim, pool);
      const ex = replica.executor;
      for (const ms of ex.storedMultiSigs) expect(ex.hasPoolStateRoot(ms.value.pool_state_root_hash), ms.value.pool_state_root_hash).to.equal(true);
      expect(ex.hasPoolStateRoot(ex.uncommittedPoolStateRoot())).to.equal(true);
      expect(ex.hasPoolStateRoot(b58encode(new Uint8Array(32).fill(7)))).to.equal(false);
      expect(ex.hasPoolStateRoot('not base58 0OIl')).to.equal(false);
      expect(ex.hasPoolStateRoot(b58encode(new Uint8Array(31)))).to.equal(false);
    } finally {
      await pool.close();
    }
  });

  it('stores nothing of forged multi-signatures and still completes catch-up', async () => {
    const { sim, pool } = await orderedPool('none', 3);
    try {
      const forged = b58encode(simBlsKey('Node1', 0).secret.sign(new Uint8Array([1, 2, 3])));
      const { replica, effects } = await catchUp(sim, pool, (_from, msg) =>
        msg.op === 'CATCHUP_REP' && Array.isArray(msg.multiSigs)
          ? { ...msg, multiSigs: (msg.multiSigs as MultiSigTuple[]).map(([, parts, value]) => [forged, parts, value]) }
          : msg,
      );
      expect(replica.executor.storedMultiSigs).to.deep.equal([]);
      for (const root of currentStateRoots(replica.executor).values()) expect(replica.executor.multiSignatureFor(root)).to.equal(undefined);
      expect(effects.filter((e) => e.kind === 'suspicion' && e.code === Suspicion.INVALID_CATCHUP_DATA).length).to.be.greaterThan(0);
    } finally {
      await pool.close();
    }
  });
});
