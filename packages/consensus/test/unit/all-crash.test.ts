// Every validator crashing at the same instant (a power loss, kill -9 of the whole pool) while a
// batch is prepared and ordered by none: after the restart every vote journal names that batch as
// prepared, so the next NEW_VIEW re-proposes it, and some node must still hold its PRE-PREPARE and
// its requests, or no view can ever order it again (docs/reliability.md, F4). The journal keeps
// them beside the votes.
import { expect } from 'chai';
import { Simulation, replayCommand, type SimNode } from '@quire/consensus/sim';

interface Scripted {
  queue: { schedule(at: number, fn: () => void): void };
  crash(node: SimNode): void;
  restart(node: SimNode): void;
  submit(connId: string, request: unknown): void;
}

interface Outcome {
  /** the batch prepared and ordered by none when the pool crashed (0: no such instant found) */
  batch: number;
  crashAt: number;
  lateOrdered: boolean;
  /** the requests of that batch (as journaled) are committed on every node at the end */
  batchOrdered: boolean;
  violations: string[];
  replay: string;
  views: number[];
  lastOrdered: number[];
}

/**
 * n = 4: from 400 ms on, the first instant at which a batch above every node's last ordered one is
 * prepared by one node (its COMMIT sent) and pre-prepared by f+1: every node crashes then, and all
 * restart 1 s later. Five writes follow; they must be ordered. `dropBatches` removes the journaled
 * PRE-PREPAREs at the crash (a journal of votes only).
 */
function allCrash(seed: number, dropBatches: boolean): Outcome {
  const sim = new Simulation({ seed, nodes: 4, faults: 'none', requests: 40 });
  const s = sim as unknown as Scripted;
  let batch = 0;
  let crashAt = 0;
  const lateWrites: string[] = [];
  const batchPayloads: string[] = [];
  const poll = (t: number): void => {
    s.queue.schedule(t, () => {
      if (batch !== 0 || !sim.nodes.every((n) => n.alive)) return t < 8_000 ? poll(t + 1) : undefined;
      const ordered = Math.max(...sim.nodes.map((n) => n.core.status().lastOrdered.ppSeqNo));
      const prepared = sim.nodes.flatMap((n) => (n.threePc?.prepared ?? []).filter((b) => b.pp_seq_no > ordered).map((b) => b.pp_seq_no));
      const candidate = prepared[0];
      const witnesses = candidate === undefined ? 0 : sim.nodes.filter((n) => (n.threePc?.preprepared ?? []).some((b) => b.pp_seq_no === candidate)).length;
      if (candidate === undefined || witnesses < 2) return t < 8_000 ? poll(t + 1) : undefined;
      batch = candidate;
      crashAt = t;
      const held = sim.nodes.flatMap((n) => n.threePc?.batches ?? []).find((b) => b.pp.ppSeqNo === candidate);
      for (const req of held?.requests ?? []) batchPayloads.push(sim.pool.workload.info(req).payloadDigest);
      for (const n of sim.nodes) {
        if (dropBatches && n.threePc !== undefined) delete n.threePc.batches;
        s.crash(n);
      }
      for (const n of sim.nodes) s.queue.schedule(t + 1000, () => s.restart(n));
      for (let i = 0; i < 5; i++) {
        const req = sim.pool.workload.write(5000 + i, false);
        lateWrites.push(sim.pool.workload.info(req).payloadDigest);
        s.queue.schedule(t + 2000 + i * 50, () => s.submit(`late-${i}`, req));
      }
    });
  };
  poll(400);
  const r = sim.run();
  const lateOrdered = lateWrites.length > 0 && sim.nodes.every((n) => lateWrites.every((p) => n.executor.isPayloadCommitted(p)));
  const batchOrdered = batchPayloads.length > 0 && sim.nodes.every((n) => batchPayloads.every((p) => n.executor.isPayloadCommitted(p)));
  const views = sim.nodes.map((n) => n.core.status().viewNo);
  const lastOrdered = sim.nodes.map((n) => n.core.status().lastOrdered.ppSeqNo);
  return { batch, crashAt, lateOrdered, batchOrdered, violations: r.violations, replay: replayCommand(r), views, lastOrdered };
}

// the requests that were waiting when every node crashed (none in a batch) are lost with them, as
// they would be with Indy: clients send them again; the sim's clients do not, so their liveness
// findings are expected here and only the other checks must hold
const safetyOnly = (violations: readonly string[]): string[] => violations.filter((v) => !v.startsWith('liveness:'));
const SEEDS = [1, 2, 3, 4, 5, 6, 7, 8];

describe('every validator crashes at once with a batch prepared and ordered by none (F4)', function () {
  this.timeout(120_000);

  it('the restarted pool re-orders the batch from the journaled PRE-PREPAREs and orders new writes', () => {
    let scenarios = 0;
    let reordered = 0;
    for (const seed of SEEDS) {
      const o = allCrash(seed, false);
      if (o.batch === 0) continue;
      scenarios++;
      if (o.batchOrdered) reordered++;
      const label = `seed ${seed}: batch ${o.batch} prepared at the crash (${o.crashAt} ms), views ${o.views.join(',')}, last ordered ${o.lastOrdered.join(',')} (${o.replay})`;
      expect(o.lateOrdered, label).to.equal(true);
      expect(safetyOnly(o.violations), label).to.deep.equal([]);
    }
    expect(scenarios, 'seeds that reached the crash instant').to.equal(SEEDS.length);
    // a NEW_VIEW may also leave out a batch prepared by too few (seed 1): it was ordered nowhere
    expect(reordered, 'runs in which the batch prepared at the crash was ordered after it').to.be.at.least(SEEDS.length - 1);
  });

  it('control: with votes journaled but not the PRE-PREPAREs, the same crash stops the pool for good', () => {
    let stalled = 0;
    for (const seed of SEEDS) {
      const o = allCrash(seed, true);
      expect(o.batch, `seed ${seed}`).to.be.greaterThan(0);
      if (!o.lateOrdered) stalled++;
    }
    // 3 of the 8 seeds stalled until a restarted node's catch-up answered peers that connect during its status round
    // (b58e493): it recovers one of them by catch-up; the other two still stop for good without the journal
    expect(stalled, 'runs in which no later write was ordered').to.be.at.least(2);
  });
});
