// The catch-up tests' leecher: a node of a scripted pool restarted with an empty store, its consensus options and
// its stand-in executor (the txns each appendCaughtUp call hands it), without BLS work (signatures accepted as made).
import { b58encode } from '@quire/common';
import { ConsensusCore, type ConsensusCrypto, type ConsensusOptions } from '@quire/consensus';
import { SimRequestAnalyzer, StandInExecutor, simBlsPublicKey } from '@quire/consensus/sim';
import { type Pool, VALIDATORS } from './scripted-pool.js';

/** Small batches and checkpoints, replies cut at 4 KiB: a catch-up of a few hundred txns has many ranges and pieces. */
export const LEECHER_OPTIONS: Partial<ConsensusOptions> = {
  chkFreq: 2,
  logSize: 6,
  max3pcBatchSize: 20,
  msgLenLimit: 4096,
  stateFreshnessUpdateIntervalSec: 3600,
};
const SIGNATURE = b58encode(new Uint8Array(96).fill(7));
const noCrypto: ConsensusCrypto = { blsSign: () => SIGNATURE, blsVerifyShare: () => true, blsAggregate: () => SIGNATURE, blsVerifyMulti: () => true };

/** `name` of `pool` replaced by a node with an empty store (a restart after losing its data). */
export function restarted(pool: Pool, name: string): ConsensusCore {
  const analyzer = new SimRequestAnalyzer();
  const clock = { now: () => pool.now, utcSeconds: () => 1_700_000_000 + Math.floor(pool.now / 1000) };
  const genesis = VALIDATORS.map((alias) => ({ alias, blskey: simBlsPublicKey(alias) }));
  const core = new ConsensusCore(
    { name, validators: VALIDATORS, ...LEECHER_OPTIONS },
    { executor: new StandInExecutor(analyzer, genesis), crypto: noCrypto, requests: analyzer, clock },
  );
  pool.cores.set(name, core);
  return core;
}

/** The stand-in executor of `core`. */
export const executorOf = (core: ConsensusCore): StandInExecutor =>
  (core as unknown as { ctx: { modules: { executor: StandInExecutor } } }).ctx.modules.executor;

/**
 * `name` of `pool` restarted with an empty store (`restarted`), each domain-ledger (`ledgerId`) appendCaughtUp call of
 * its executor recorded in `applies`: the txns handed over and whether they applied.
 */
export function restartedRecording(pool: Pool, name: string, ledgerId: number, applies: { txns: number; applied: boolean }[]): ConsensusCore {
  const core = restarted(pool, name);
  const ex = executorOf(core);
  const append = ex.appendCaughtUp.bind(ex);
  ex.appendCaughtUp = (id, txns, ...rest) => {
    const applied = append(id, txns, ...rest);
    if (id === ledgerId) applies.push({ txns: txns.length, applied });
    return applied;
  };
  return core;
}

/**
 * The catch-up scenario of the tests: `pool` starts, Node1-3 order `writes` writes from 1 s while Node4 is cut off (the
 * test's `pool.drop`), at 20 s Node4 is restarted with an empty store (`restartedRecording`), `up()` lets it talk
 * again, and the pool runs until `until` ms.
 */
export function catchUpScenario(
  pool: Pool,
  writes: number,
  ledgerId: number,
  applies: { txns: number; applied: boolean }[],
  up: () => void,
  until: number,
): void {
  pool.start();
  pool.submitAt(1_000, writes, ['Node1', 'Node2', 'Node3']);
  pool.runUntil(20_000);
  const node4 = restartedRecording(pool, 'Node4', ledgerId, applies);
  up();
  pool.apply('Node4', node4.start());
  pool.runUntil(until);
}
