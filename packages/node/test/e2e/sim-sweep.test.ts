// The acceptance sweep of the consensus simulator on the real stack: every simulated node runs the
// node's ConsensusExecutor over @quire/requests and @quire/storage (in-memory key-value stores
// that survive crashes), starts from real genesis files, and orders real signed NYM and NODE
// requests. Safety, liveness and multi-signature validity are checked after every run
// (consensus.md §12.3). Runs go to 2 worker processes; QUIRE_SIM_SEEDS and QUIRE_SIM_JOBS override.
import { expect } from 'chai';
import { SWEEP_MIXES, replayCommand, runSweep, type SimulationOptions } from '@quire/consensus';
import { SIM_RUNNER } from '../../src/sim/index.js';

// Seeds that once failed on the real stack or on the stand-in, kept as regressions.
const REGRESSIONS: SimulationOptions[] = [
  { seed: 103, nodes: 7, faults: 'crash' }, // a payload variant of a variant (signatures -> signature)
  { seed: 20, nodes: 7, faults: 'crash' },
  { seed: 7156, nodes: 4, faults: 'mixed' },
  { seed: 2056, nodes: 4, faults: 'partition', consensus: { chkFreq: 5, logSize: 15 } },
];

describe('simulator sweep on the real executor and storage', () => {
  it('holds safety, liveness and multi-signature validity over every fault mix (n = 4 and 7)', async function () {
    // CI budget: 200 seeds in well under 5 minutes on 2 cores
    this.timeout(600_000);
    const seeds = Number(process.env.QUIRE_SIM_SEEDS ?? 200);
    const jobs = Number(process.env.QUIRE_SIM_JOBS ?? 2);
    const runs: SimulationOptions[] = Array.from({ length: seeds }, (_, i) => ({ seed: 1000 + i, nodes: i % 2 === 0 ? 4 : 7, faults: SWEEP_MIXES[i % SWEEP_MIXES.length]! }));
    runs.push(...REGRESSIONS);
    const started = Date.now();
    const results = await runSweep(runs, { jobs, runner: SIM_RUNNER });
    const wall = (Date.now() - started) / 1000;
    const cpu = results.reduce((a, r) => a + (r.cpuMs ?? 0), 0) / 1000;
    console.log(
      `      real-stack sweep: ${seeds} seeds over ${SWEEP_MIXES.length} fault mixes + ${REGRESSIONS.length} regressions, ` +
        `${jobs} jobs, ${wall.toFixed(1)} s wall, ${cpu.toFixed(1)} s CPU in the runs`,
    );
    const failures = results.filter((r) => !r.ok).map((r) => `${replayCommand(r)}: ${r.violations.slice(0, 4).join('; ')}`);
    expect(results).to.have.length(runs.length);
    expect(failures).to.deep.equal([]);
    // the sweep exercised what it claims: batches ordered, view changes, every mix at both sizes
    expect(results.reduce((a, r) => a + r.orderedRequests, 0)).to.be.greaterThan(seeds * 20);
    expect(results.filter((r) => r.maxView > 0).length).to.be.greaterThan(0);
    if (seeds >= 2 * SWEEP_MIXES.length) {
      for (const mix of SWEEP_MIXES) for (const n of [4, 7]) expect(results.some((r) => r.faults === mix && r.nodes === n), `${mix} n=${n}`).to.equal(true);
    }
  });
});
