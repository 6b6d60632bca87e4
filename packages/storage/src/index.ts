// the pure part (errors, proofs, genesis parsing), also the subpath @quire/storage/proofs
export * from './proofs.js';
export type { KvStore, KvRange, WriteBatch, BatchWriteListener } from './kv/kv-store.js';
export { bucketPrefix, seqNoKey, decodeSeqNoKey, MAX_BUCKET_NAME_BYTES } from './kv/kv-store.js';
export type { LevelKvStoreOptions } from './kv/level-kv-store.js';
export { openLevelKvStore, openMemoryKvStore, defaultLevelKvStoreOptions, writeBufferBytes } from './kv/level-kv-store.js';
export type { AppendResult, LedgerModules, LedgerOpenOptions, LedgerOptions } from './ledger/ledger.js';
export { Ledger, defaultLedgerOptions } from './ledger/ledger.js';
export type { LedgerRecovery } from './ledger/recovery.js';
export type { LedgerBuckets } from './ledger/hash-store.js';
export { ledgerBuckets } from './ledger/hash-store.js';
export * from './side-stores/index.js';
export * from './genesis/index.js';
export { snapshotLevelDb, SnapshotError, SnapshotErrorCode, defaultSnapshotOptions } from './snapshot.js';
export type { DbSnapshot, SnapshotErrorData, SnapshotOptions } from './snapshot.js';
export { DATA_DIR_ENV, NODE_DATABASE_DIRNAME, defaultDataDir, nodeDatabasePath, findDatabase } from './cli/data-dir.js';
export * from './state/index.js';
