import { Simulation } from '@quire/consensus';
const sim = new Simulation({ seed: 1, nodes: 4, faults: 'crash' });
const n2 = sim.nodes[1]!;
const orig = (sim as any).apply.bind(sim);
(sim as any).apply = (node: any, effects: any[]) => {
  for (const e of effects) {
    const m = e.msg;
    if (node.name === 'Node2' && e.kind === 'suspicion') console.log('SUSP', e); if (m && ['LEDGER_STATUS', 'CONSISTENCY_PROOF', 'CATCHUP_REQ', 'CATCHUP_REP'].includes(m.op) || (m && m.op === 'MESSAGE_REQUEST' && m.msg_type === 'CONSISTENCY_PROOF'))
      console.log((sim as any).queue.now, node.name, e.kind, e.to ?? '*', m.op, m.txnSeqNo ?? m.seqNoStart, m.seqNoEnd ?? '', m.ledgerId, m.msg_type ?? '');
  }
  return orig(node, effects);
};
const r = sim.run();
console.log(r.violations, n2.core.status().catchingUp);
