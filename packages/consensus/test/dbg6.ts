import { Simulation } from '@quire/consensus';
const [seed, nodes, faults, who] = process.argv.slice(2);
const sim = new Simulation({ seed: Number(seed), nodes: Number(nodes), faults: faults! });
const orig = (sim as any).apply.bind(sim);
const seen = new Map<string, number>();
(sim as any).apply = (node: any, effects: any[]) => {
  for (const e of effects) {
    if (node.name === who && (e.kind === 'suspicion' || e.kind === 'alarm')) { const k = JSON.stringify(e); if ((seen.get(k) ?? 0) < 3) console.log((sim as any).queue.now, k); seen.set(k, (seen.get(k) ?? 0) + 1); }
  }
  return orig(node, effects);
};
const r = sim.run();
console.log(r.violations);
const n = sim.nodes.find((x) => x.name === who)!;
const core: any = n.core;
console.log('held', [...core.ordering.held.keys()], 'log', [...core.ordering.log.entries()].map(([k, r]: any) => [k, !!r.pp, r.prepares.size, r.commits.size, r.prepared, r.ordered]));
console.log('missing', core.intake.missing.size, 'inBatches', core.intake.payloadsInBatches.size);
