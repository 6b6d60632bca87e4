import { Simulation } from '@quire/consensus';
const [seed, nodes, faults] = process.argv.slice(2);
const sim = new Simulation({ seed: Number(seed), nodes: Number(nodes), faults: faults! });
const r = sim.run();
console.log(r.violations, r.orderedBatches, r.simulatedMs);
for (const n of sim.nodes) console.log(n.name, n.alive, n.byzantine, JSON.stringify(n.core.status()));
