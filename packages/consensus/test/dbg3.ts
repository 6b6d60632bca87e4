import { Simulation } from '@quire/consensus';
const sim = new Simulation({ seed: 1, nodes: 4, faults: 'none' });
sim.run();
const ex = sim.nodes[0]!.executor;
const st = ex.ledgerStatus(3);
const p = ex.consistencyProof(3, 2, st.size);
console.log(st.size, p.length, ex.verifyConsistency(2, ex.rootAt(3, 2), st.size, st.root, p));
