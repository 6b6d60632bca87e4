// The short chaos run of `npm test`: a 4-node pool in network namespaces, about two minutes of
// seeded perturbations under an SDK workload, then the black-box invariants of `npm run chaos`
// (no acknowledged write lost, no fork, no stale or unverified read, liveness back after every
// heal, no node exit the harness did not cause). Skipped, with the reason printed, where network
// namespaces cannot be made (not root, no `ip` or `nft`; CI installs nftables). QUIRE_CHAOS=0 skips
// it; QUIRE_CHAOS_SEED replays a seed; QUIRE_CHAOS_LOOPBACK=1 runs the loopback variant (process
// faults only) instead; QUIRE_CHAOS_VERBOSE=1 prints the progress lines.
import { expect } from 'chai';
import { summary } from '../../scripts/chaos/summary.js';
import { netnsUnavailableReason } from '../../scripts/chaos/netns.js';
import { runChaos, type ChaosReport } from '../../scripts/chaos/run.js';
import { ALL_KINDS, PROCESS_KINDS, type PerturbationKind, randomSeed } from '../../scripts/chaos/schedule.js';

/**
 * The kinds of the short run: all but the two that reshape the pool (pool-upgrade restarts every
 * node in turn, node-add-demote catches up a fresh validator): each can take minutes on a loaded
 * machine, beyond this run's two minutes. `npm run chaos` draws them.
 */
const SHORT_KINDS: readonly PerturbationKind[] = (process.env.QUIRE_CHAOS_LOOPBACK === '1' ? PROCESS_KINDS : ALL_KINDS).filter(
  (k) => k !== 'pool-upgrade' && k !== 'node-add-demote',
);

describe('chaos: a short seeded run on real processes', function () {
  this.timeout(15 * 60_000);
  const loopback = process.env.QUIRE_CHAOS_LOOPBACK === '1';
  const why = process.env.QUIRE_CHAOS === '0' ? 'QUIRE_CHAOS=0' : loopback ? undefined : netnsUnavailableReason();
  let report: ChaosReport | undefined;

  before(async function () {
    if (why !== undefined) {
      console.log(`    (skipped: ${why})`);
      this.skip();
    }
    const seed = process.env.QUIRE_CHAOS_SEED !== undefined ? Number(process.env.QUIRE_CHAOS_SEED) : randomSeed();
    console.log(
      `    chaos seed ${seed} (replay: QUIRE_CHAOS_SEED=${seed}, or npm run chaos -- --seed ${seed} --minutes 2 --clients 2${loopback ? ' --loopback' : ''} --kinds ${SHORT_KINDS.join(',')})`,
    );
    report = await runChaos({
      seed,
      minutes: 2,
      nodes: 4,
      clients: 2,
      concurrency: 2,
      loopback,
      kinds: [...SHORT_KINDS],
      recoveryBoundMs: 60_000,
      catchupBoundMs: 120_000,
      rssLimitMb: 1536,
      keep: false,
      log: (line) => {
        if (process.env.QUIRE_CHAOS_VERBOSE === '1') console.log(`    ${line}`);
      },
    });
    console.log(summary(report).replace(/^/gm, '    '));
  });

  it('acknowledged writes: some, and none lost (each on n-f ledgers at its seqNo)', () => {
    expect(report!.writes.acks).to.be.greaterThan(0);
    expect(report!.ledgers.lostExamples).to.deep.equal([]);
  });

  it('every ledger is the same on every node, seqNo by seqNo', () => {
    expect(report!.ledgers.forks).to.deep.equal([]);
  });

  it("no stale or unverified read was accepted after a client's own acknowledged write", () => {
    expect(report!.reads.examples).to.deep.equal([]);
  });

  it('liveness and catch-up came back within their bounds after every heal', () => {
    expect(report!.perturbations.length).to.be.greaterThan(0);
    expect(report!.perturbations.filter((p) => p.recoveryMs === null || p.catchupMs === null)).to.deep.equal([]);
  });

  it('no node exited without the harness causing it, and the run ended clean', () => {
    expect(report!.unexpectedExits).to.deep.equal([]);
    expect(report!.failures).to.deep.equal([]);
  });
});
