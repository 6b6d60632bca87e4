// Liveness of the view change with exactly n-f validators up (#15): F1, a NEW_VIEW checkpoint that
// only f+1 VIEW_CHANGEs hold; and the membership loop, VIEW_CHANGE_ACKs that reach the new primary
// before it starts the view change. Both stalled the pool for good before their fixes.
import { expect } from 'chai';
import { Simulation, replayCommand, type SimNode } from '@quire/consensus/sim';

/** The parts of the simulator a hand-written scenario schedules with. */
interface Scripted {
  queue: { schedule(at: number, fn: () => void): void };
  crash(node: SimNode): void;
  restart(node: SimNode): void;
  submit(connId: string, request: unknown): void;
  network: { ctx: { deliver(target: SimNode, from: string, msg: unknown): void } };
}

interface Seen {
  name: string;
  view: number;
  waiting: boolean;
  lastOrdered: number;
  stable: number;
}

const seenOf = (nodes: readonly SimNode[]): Seen[] =>
  nodes.map((n) => {
    const st = n.core.status();
    return { name: n.name, view: st.viewNo, waiting: st.waitingForNewView, lastOrdered: st.lastOrdered.ppSeqNo, stable: st.stableCheckpoint };
  });

/**
 * n = 4, CHK_FREQ 5: Node4 is cut off from everyone at 100 ms while the others order many
 * checkpoints; the primary Node1 crashes for good at 1200 ms; Node4 is reconnected at `healAt`,
 * too late to catch up before the view change starts. Node1 comes back at 15 s for the final checks.
 */
function laggingBackupScenario(
  seed: number,
  healAt: number,
  lagging = 'Node4',
): { sim: Simulation; seen: () => Seen[]; viewChangesOf: (name: string) => { viewNo: number; stableCheckpoint: number }[] } {
  const sim = new Simulation({ seed, nodes: 4, faults: 'none', requests: 150, consensus: { chkFreq: 5, logSize: 15 } });
  const s = sim as unknown as Scripted;
  const n1 = sim.nodes[0]!;
  let cut = false;
  const deliver = s.network.ctx.deliver;
  const sent: { from: string; viewNo: number; stableCheckpoint: number }[] = [];
  s.network.ctx.deliver = (target, from, msg) => {
    if (cut && (target.name === lagging) !== (from === lagging)) return;
    const m = msg as { op?: string; viewNo: number; stableCheckpoint: number };
    if (m.op === 'VIEW_CHANGE' && target.name === 'Node3') sent.push({ from, viewNo: m.viewNo, stableCheckpoint: m.stableCheckpoint });
    deliver(target, from, msg);
  };
  s.queue.schedule(100, () => (cut = true));
  s.queue.schedule(1200, () => s.crash(n1));
  s.queue.schedule(healAt, () => (cut = false));
  let seen: Seen[] = [];
  s.queue.schedule(14_000, () => (seen = seenOf(sim.nodes.slice(1))));
  s.queue.schedule(15_000, () => s.restart(n1));
  return {
    sim,
    seen: () => seen,
    viewChangesOf: (name) => sent.filter((v) => v.from === name).map(({ viewNo, stableCheckpoint }) => ({ viewNo, stableCheckpoint })),
  };
}

describe('view change with the primary down and a backup checkpoints behind (#15 F1)', function () {
  this.timeout(120_000);

  it('builds NEW_VIEW on the checkpoint f+1 VIEW_CHANGEs hold; the lagging backup catches up and the pool orders', () => {
    for (const [seed, healAt] of [
      [1, 3500],
      [2, 4000],
      [3, 5000],
    ] as const) {
      const { sim, seen } = laggingBackupScenario(seed, healAt);
      const r = sim.run();
      const label = `seed ${seed}, heal at ${healAt} (${replayCommand(r)}): ${JSON.stringify(seen())}`;
      expect(seen(), label).to.have.length(3);
      // while Node1 was still down, every survivor entered a new view and reached the same batch
      expect(
        seen().every((st) => st.view >= 1 && !st.waiting),
        label,
      ).to.equal(true);
      expect(new Set(seen().map((st) => st.lastOrdered)).size, label).to.equal(1);
      // ... beyond a checkpoint that Node4 had not reached when it was reconnected
      expect(seen()[2]!.stable, label).to.be.greaterThan(10);
      expect(r.violations, label).to.deep.equal([]);
    }
  });

  it('the new primary itself checkpoints behind: it catches up while waiting, sends a fresher VIEW_CHANGE and builds NEW_VIEW', () => {
    for (const [seed, healAt] of [[1, 4000]] as const) {
      const { sim, seen, viewChangesOf } = laggingBackupScenario(seed, healAt, 'Node2');
      const r = sim.run();
      const label = `seed ${seed}, heal at ${healAt} (${replayCommand(r)}): ${JSON.stringify(seen())} ${JSON.stringify(viewChangesOf('Node2'))}`;
      expect(
        seen().every((st) => st.view >= 1 && !st.waiting),
        label,
      ).to.equal(true);
      expect(new Set(seen().map((st) => st.lastOrdered)).size, label).to.equal(1);
      // its first VIEW_CHANGE had the stable checkpoint it had when cut off, a later one the caught-up one
      const vcs = viewChangesOf('Node2');
      expect(vcs.length, label).to.be.at.least(2);
      expect(vcs[vcs.length - 1]!.stableCheckpoint, label).to.be.greaterThan(vcs[0]!.stableCheckpoint);
      expect(r.violations, label).to.deep.equal([]);
    }
  });
});

/**
 * The whole-pool membership scenario (test/pool/membership.test.ts) in the simulator: n = 4, Node5
 * is added by a NODE txn at 300 ms (n = 5, f = 1, vote 46 -> view 1) and starts at 3 s, Node4
 * crashes at 5 s and ten writes follow; Node4 comes back at 24 s for the final checks. Until Node5
 * runs, the view change to view 1 has exactly n - f = 4 validators, so the new primary must confirm
 * every VIEW_CHANGE with ACKs from all three others; an ACK that arrived before it had started the
 * view change itself was dropped, so NEW_VIEW could never be built, and with Node4 down the same
 * race repeated in every later view (the views 1, 2, 3, 4 of vote 28 seen on real processes).
 */
function membershipScenario(
  seed: number,
  o: { requests: number; lateWrites: number; seenAt: number; restartAt: number } = { requests: 40, lateWrites: 10, seenAt: 12_000, restartAt: 24_000 },
): { sim: Simulation; seen: () => Seen[]; lateWrites: string[] } {
  const sim = new Simulation({ seed, nodes: 4, faults: 'membership', requests: o.requests });
  const s = sim as unknown as Scripted;
  const plan = sim.membership!;
  plan.steps.splice(0, plan.steps.length, { at: 300, kind: 'add' });
  plan.joinerStartsAt = 3000;
  const n4 = sim.nodes[3]!;
  s.queue.schedule(5000, () => s.crash(n4));
  const lateWrites: string[] = [];
  for (let i = 0; i < o.lateWrites; i++) {
    const req = sim.pool.workload.write(1000 + i, false);
    lateWrites.push(sim.pool.workload.info(req).payloadDigest);
    s.queue.schedule(5200 + i * 100, () => s.submit(`late-${i}`, req));
  }
  let seen: Seen[] = [];
  let ordered = true;
  s.queue.schedule(o.seenAt, () => {
    seen = seenOf(sim.nodes.filter((n) => n !== n4));
    ordered = sim.nodes.filter((n) => n !== n4).every((n) => lateWrites.every((p) => n.executor.isPayloadCommitted(p)));
  });
  s.queue.schedule(o.restartAt, () => s.restart(n4));
  return {
    sim,
    seen: () => (ordered ? seen : [...seen, { name: 'late writes not ordered', view: -1, waiting: true, lastOrdered: -1, stable: -1 }]),
    lateWrites,
  };
}

describe('membership: a node added, then one of the original nodes down (#15, the view-change loop)', function () {
  this.timeout(120_000);

  it('completes the view change of vote 46 at once, and the five validators order without Node4', () => {
    for (const seed of [1, 2, 3, 4]) {
      const { sim, seen } = membershipScenario(seed);
      const r = sim.run();
      const label = `seed ${seed} (${replayCommand(r)}): ${JSON.stringify(seen())}`;
      expect(seen(), label).to.have.length(4);
      // view 1 (vote 46) was entered without any NEW_VIEW timeout, and the late writes were ordered
      expect(
        seen().every((st) => st.view === 1 && !st.waiting),
        label,
      ).to.equal(true);
      expect(r.violations, label).to.deep.equal([]);
    }
  });
});

/**
 * The same pool with Node2 behind when Node5 is added (seen on real processes: Node2 was still
 * catching up after its start): it gets no PRE-PREPARE between 250 and 900 ms, so it never orders
 * the NODE txn, but it hears the COMMITs for it and the three votes 46, which are a quorum for the
 * four validators it still knows. It alone enters view 1 while the other four order on in view 0;
 * nothing else is written until Node4 crashes at 5 s, after which the pool of five needs Node2.
 * Before the fix it waited in its view change for good (the pool one batch ahead of it, fewer than
 * the batches in flight), with a registry of four, and every later view change of the others failed.
 */
function missedNodeTxnScenario(seed: number): { sim: Simulation; seen: () => Seen[]; lateWrites: string[] } {
  const scenario = membershipScenario(seed, { requests: 0, lateWrites: 5, seenAt: 30_000, restartAt: 31_000 });
  const s = scenario.sim as unknown as Scripted;
  const deliver = s.network.ctx.deliver;
  let blind = false;
  s.network.ctx.deliver = (target, from, msg) => {
    const op = (msg as { op?: string }).op;
    if (blind && target.name === 'Node2' && (op === 'PREPREPARE' || op === 'MESSAGE_RESPONSE')) return;
    deliver(target, from, msg);
  };
  s.queue.schedule(250, () => (blind = true));
  s.queue.schedule(900, () => (blind = false));
  return scenario;
}

describe('membership: a node that missed the NODE txn enters a view change alone (#15, left behind)', function () {
  this.timeout(120_000);

  it('catches up while it waits for NEW_VIEW, learns the fifth validator, and the pool of five orders without Node4', () => {
    for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
      const { sim, seen } = missedNodeTxnScenario(seed);
      const r = sim.run();
      const label = `seed ${seed} (${replayCommand(r)}): ${JSON.stringify(seen())}`;
      expect(seen(), label).to.have.length(4);
      expect(
        seen().every((st) => st.view >= 1 && !st.waiting),
        label,
      ).to.equal(true);
      expect(new Set(seen().map((st) => st.lastOrdered)).size, label).to.equal(1);
      expect(r.violations, label).to.deep.equal([]);
    }
  });
});
