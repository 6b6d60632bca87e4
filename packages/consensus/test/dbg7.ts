import { Simulation } from '@quire/consensus';
const [seed, nodes, faults, who] = process.argv.slice(2);
const sim = new Simulation({ seed: Number(seed), nodes: Number(nodes), faults: faults! });
const orig = (sim as any).apply.bind(sim);
(sim as any).apply = (node: any, effects: any[]) => {
  for (const e of effects) {
    const m = e.msg;
    if (m && (node.name === who || e.to === who) && (m.op.startsWith('MESSAGE') )) console.log((sim as any).queue.now, node.name, e.kind, e.to ?? '*', m.op, m.msg_type, JSON.stringify(m.params), m.msg ? m.msg.op : '');
  }
  return orig(node, effects);
};
sim.run();
