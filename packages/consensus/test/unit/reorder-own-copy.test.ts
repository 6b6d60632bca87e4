// A NEW_VIEW batch re-applied from this node's own copy of the old view's PRE-PREPARE (consensus.md
// §6.7): when that copy fails the checks its digest does not bind (roots), the fault is the copy's —
// it came from the primary of its view — not the new primary's. Found by the stand-in sweep (issue
// #15): twin primaries sent the two halves two versions of an empty batch 3 with one digest and two
// audit roots (chained over two versions of batch 2); in view 1 Node3 re-applied its own copy on top
// of the batch 2 the pool ordered and voted 44 against Node2, the honest new primary.
import { expect } from 'chai';
import { runSimulation } from '../../src/sim/simulator.js';

describe('NEW_VIEW batches re-applied from the own copy of an equivocating primary', () => {
  it('accuse no honest new primary (sim seed 186, n=4, equivocation, stand-in)', () => {
    const r = runSimulation({ seed: 186, nodes: 4, faults: 'equivocation' });
    expect(r.violations).to.deep.equal([]);
    expect(r.maxView).to.be.greaterThan(0);
  });
});
