// The simulator of @quire/consensus run on the real stack (consensus.md §12.2): each simulated node
// is a SimReplica (the node's ConsensusExecutor over @quire/requests and @quire/storage, its
// request analyzer and BLS crypto), the pool starts from real genesis files for n validators, and
// clients send real signed requests (sim-workload.ts). This module is also the runner module of
// `runSweep` (`SIM_RUNNER`): sweep workers load it and call `simulate`.
import { fileURLToPath } from 'node:url';
import { Simulation, type SimPool, type SimPoolContext, type SimulationOptions, type SimulationResult } from '@quire/consensus/sim';
import { SignatureVerifier } from '@quire/requests';
import { simDomainGenesis, simPoolGenesis } from './sim-identities.js';
import { type SimConsensusExecutor, SimReplica, type SimRunShared } from './sim-replica.js';
import { SimWorkload } from './sim-workload.js';

/** What the simulator tells the pool of one run. */
export type SimRunContext = SimPoolContext;

/** The real stack's implementation of the simulator's world contract. */
export interface RealSimPool extends SimPool<SimConsensusExecutor> {
  replica(alias: string): Promise<SimReplica>;
  readonly workload: SimWorkload;
  close(): Promise<void>;
}

/** The world of one run: replicas over in-memory stores from the same genesis, and the workload. */
export function realSimPool(ctx: SimRunContext): RealSimPool {
  const generations = new Map<string, number>();
  // the joiner's steward must be on the domain ledger to add its node
  const stewards = ctx.genesis.length + (ctx.joiner !== undefined ? 1 : 0);
  const shared: SimRunShared = {
    verifier: new SignatureVerifier(),
    checks: new WeakMap(),
    generations,
    poolGenesis: simPoolGenesis(ctx.genesis),
    domainGenesis: simDomainGenesis(stewards),
  };
  const replicas: SimReplica[] = [];
  return {
    replica: async (alias) => {
      const r = await SimReplica.create({ alias }, { shared });
      replicas.push(r);
      return r;
    },
    workload: new SimWorkload(ctx.genesis.length, generations),
    close: async () => {
      for (const r of replicas.splice(0)) await r.close();
    },
  };
}

/** A simulation of the real stack (for inspection in tests: `await sim.runAsync()`). */
export function realSimulation(opts: SimulationOptions): Simulation<SimConsensusExecutor> {
  return new Simulation(opts, { pool: realSimPool });
}

/** One run on the real stack; an exception is a failed run. */
export function simulate(opts: SimulationOptions): Promise<SimulationResult> {
  return Simulation.simulate(opts, { pool: realSimPool });
}

/** This module's file: the `runner` to give `runSweep` so that its workers run the real stack. */
export const SIM_RUNNER = fileURLToPath(import.meta.url);
