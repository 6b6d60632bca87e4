import { expect } from 'chai';
import { SWEEP_MIXES, replayCommand, runSimulation } from '@quire/consensus';

// Fixed seeds that once failed, kept as regressions.
const REGRESSIONS: { seed: number; nodes: number; faults: string }[] = [
  { seed: 20, nodes: 7, faults: 'crash' }, // discarded requests re-queued by late PROPAGATEs
];

describe('simulator seed sweep', () => {
  it('is deterministic: one seed, one outcome', () => {
    const a = runSimulation({ seed: 77, nodes: 4, faults: 'mixed' });
    const b = runSimulation({ seed: 77, nodes: 4, faults: 'mixed' });
    expect(a).to.deep.equal(b);
  });

  it('holds safety, liveness and multi-signature validity over the fault mixes (n = 4 and 7)', function () {
    this.timeout(120_000);
    const failures: string[] = [];
    const seeds = Number(process.env.QUIRE_SIM_SEEDS ?? 16);
    for (let i = 0; i < seeds; i++) {
      const run = { seed: 1000 + i, nodes: i % 2 === 0 ? 4 : 7, faults: SWEEP_MIXES[i % SWEEP_MIXES.length]! };
      const r = runSimulation(run);
      if (!r.ok) failures.push(`${replayCommand(r)}: ${r.violations.join('; ')}`);
    }
    for (const run of REGRESSIONS) {
      const r = runSimulation(run);
      if (!r.ok) failures.push(`${replayCommand(r)}: ${r.violations.join('; ')}`);
    }
    expect(failures).to.deep.equal([]);
  });

  it('never lets honest nodes diverge under an equivocating or lying primary', () => {
    for (const seed of [1, 2, 3, 4]) {
      const r = runSimulation({ seed, nodes: 4, faults: 'primary' });
      expect(r.violations, replayCommand(r)).to.deep.equal([]);
    }
  });
});
