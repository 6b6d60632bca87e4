export { GenesisError, GenesisErrorCode } from './genesis-error.js';
export type { GenesisErrorData } from './genesis-error.js';
export { parseGenesis } from './parse-genesis.js';
export type { GenesisEntry, ParseGenesisOptions } from './parse-genesis.js';
export { loadGenesis, loadGenesisEntries, readGenesisFile } from './load-genesis.js';
export type { GenesisLedger, GenesisLoadResult, LoadGenesisOptions } from './load-genesis.js';
