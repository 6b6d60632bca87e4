// `@quire/consensus/sim`: the deterministic simulator of the consensus core (consensus.md §12.2),
// for tests, `npm run sim`, `npm run mutate` and benchmarks. A subpath of its own so that the main
// entry, which nodes load, carries no simulator (its sweeps fork worker processes).
export { Simulation, runSimulation, replayCommand } from './simulator.js';
export type { SimNode, SimulationModules, SimulationOptions, SimulationResult } from './simulator.js';
// the world a simulation runs in: the stand-in of this package, or one built on the real stack
export type { SimAuditEntry, SimExecutor, SimPool, SimPoolContext, SimPoolFactory, SimReplica, SimRequestInfo, SimWorkload } from './backend.js';
export { standInPool } from './standin-backend.js';
export { checkRun } from './checks.js';
export type { CheckedNode, CheckOptions, RunRecord, SubmittedRequest } from './checks.js';
export { loadRunner, runSweep } from './sweep.js';
export type { SimulateFn, SweepOptions } from './sweep.js';
export { membershipPlan } from './membership.js';
export type { MembershipPlan, MembershipStep, MembershipStepKind } from './membership.js';
export { simBlsKey, simBlsPublicKey } from './sim-keys.js';
export { FAULT_MIXES, SWEEP_MIXES, faultMix } from './faults.js';
export type { FaultMix } from './faults.js';
export { Prng } from './prng.js';
export { StandInExecutor, nodeDest } from './standin-executor.js';
export type { StandInGenesisNode } from './standin-executor.js';
export { SimClient, SimRequestAnalyzer, simRequestDigest } from './sim-requests.js';
export { BACKUP_BEHAVIOURS, ByzantineKind, PRIMARY_BEHAVIOURS } from './byzantine.js';
