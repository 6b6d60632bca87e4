import { runSimulation, SWEEP_MIXES } from '@quire/consensus';
let fails = 0; let views = 0;
const t = Date.now();
const start = Number(process.argv[3] ?? 500);
for (let i = 0; i < Number(process.argv[2] ?? 40); i++) {
  const r = runSimulation({ seed: start + i, nodes: i % 2 ? 7 : 4, faults: SWEEP_MIXES[i % SWEEP_MIXES.length]!, consensus: { chkFreq: 5, logSize: 15 } });
  if (r.maxView > 0) views++;
  if (!r.ok) { fails++; console.log(r.seed, r.nodes, r.faults, r.violations.slice(0, 3).map((v) => v.slice(0, 300))); }
}
console.log('fails', fails, 'views', views, (Date.now() - t) / 1000);
