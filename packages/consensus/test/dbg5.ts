import { Simulation } from '@quire/consensus';
const [seed, nodes, faults] = process.argv.slice(2);
const sim = new Simulation({ seed: Number(seed), nodes: Number(nodes), faults: faults!, });
const r = sim.run();
console.log(r.violations, r.orderedBatches, r.simulatedMs);
for (const n of sim.nodes) { const s = n.core.status(); console.log(n.name, n.alive, n.byzantine, s.viewNo, s.waitingForNewView, s.lastOrdered.ppSeqNo, s.lastPrePrepareSeqNo, s.stableCheckpoint, s.pendingRequests, s.stashed, s.catchingUp, s.catchupRounds, n.executor.ledgerStatus(3).size); }
