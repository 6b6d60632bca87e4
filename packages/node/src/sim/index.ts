// The consensus simulator on the real executor and storage (see sim-pool.ts).
export { SIM_RUNNER, realSimPool, realSimulation, simulate } from './sim-pool.js';
export type { RealSimPool, SimRunContext } from './sim-pool.js';
export { SimConsensusExecutor, SimReplica } from './sim-replica.js';
export type { SimRunShared } from './sim-replica.js';
export { SimWorkload } from './sim-workload.js';
export { simBlsKey, simDomainGenesis, simNodeAddress, simNodeKeys, simPoolGenesis } from './sim-identities.js';
