// A view change after backups restarted or caught up: the batches they hold only in their ledgers
// (not in their 3PC log) must still reach NEW_VIEW, else no primary can ever build it.
import { expect } from 'chai';
import { Simulation, replayCommand, type SimNode } from '@quire/consensus/sim';

/** The parts of the simulator a hand-written scenario schedules with. */
interface Scripted {
  queue: { schedule(at: number, fn: () => void): void };
  crash(node: SimNode): void;
  restart(node: SimNode): void;
}

interface Seen {
  name: string;
  view: number;
  waiting: boolean;
}

/**
 * n = 4: Node3 is down for a while and catches up, then Node4 is killed and restarted (its 3PC log
 * is lost), then the primary Node1 crashes for good. The batches ordered while Node3 was down are
 * then in the 3PC log of Node2 alone among the survivors.
 */
function scenario(seed: number): { sim: Simulation; seen: () => Seen[] } {
  const sim = new Simulation({ seed, nodes: 4, faults: 'none', requests: 80 });
  const s = sim as unknown as Scripted;
  const [n1, , n3, n4] = sim.nodes as [SimNode, SimNode, SimNode, SimNode];
  s.queue.schedule(150, () => s.crash(n3));
  s.queue.schedule(600, () => s.restart(n3));
  s.queue.schedule(900, () => s.crash(n4));
  s.queue.schedule(1200, () => s.restart(n4));
  s.queue.schedule(1800, () => s.crash(n1));
  let seen: Seen[] = [];
  s.queue.schedule(11_000, () => {
    seen = sim.nodes.slice(1).map((n) => ({ name: n.name, view: n.core.status().viewNo, waiting: n.core.status().waitingForNewView }));
  });
  // back for the liveness checks at the end of the run
  s.queue.schedule(12_000, () => s.restart(n1));
  return { sim, seen: () => seen };
}

describe('view change after backups restarted and caught up', () => {
  it('replaces a crashed primary although only one survivor holds the earlier batches in its 3PC log', () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const { sim, seen } = scenario(seed);
      const r = sim.run();
      const label = `seed ${seed} (${replayCommand(r)}): ${JSON.stringify(seen())}`;
      expect(seen(), label).to.have.length(3);
      // every survivor entered a new view while Node1 was still down
      expect(
        seen().every((st) => st.view >= 1 && !st.waiting),
        label,
      ).to.equal(true);
      expect(r.violations, label).to.deep.equal([]);
      expect(r.orderedRequests, label).to.be.greaterThan(0);
    }
  });
});
