import { Simulation } from '@quire/consensus';
const [seed, nodes, faults] = process.argv.slice(2);
const sim = new Simulation({ seed: Number(seed), nodes: Number(nodes), faults: faults!, consensus: { chkFreq: 5, logSize: 15 } });
const r = sim.run();
console.log(r.violations, r.orderedBatches, r.simulatedMs);
for (const n of sim.nodes) { const s = n.core.status(); const c: any = n.core; console.log(n.name, n.alive, n.byzantine, 'v', s.viewNo, s.waitingForNewView, 'lo', s.lastOrdered.ppSeqNo, s.lastPrePrepareSeqNo, 'st', s.stableCheckpoint, s.watermarks, 'pend', s.pendingRequests, 'stash', s.stashed, s.catchingUp, s.catchupRounds, n.executor.ledgerStatus(3).size, 'held', [...c.ordering.held.keys()].join(','), 'prevCert', c.ctx.prevViewPrepareCert); }
