// @quire/node: the composition root and the validator process.
export { NodeError, NodeErrorCode } from './errors.js';
export { defaultNodeConfig, mergeConfig, validateConfig, loadConfigFile, resolvePath, consensusOptionsOf } from './config.js';
export type { NodeConfig, NodeLimits, UpgradeConfig, ConsensusTimers, LogLevel } from './config.js';
export { parseSeedArgument, deriveNodeKeys, publicKeys, writeKeyFile, readKeyFile, KEY_FILE_VERSION } from './keys.js';
export type { NodeKeys, NodePublicKeys } from './keys.js';
export {
  POOL_GENESIS_FILE,
  DOMAIN_GENESIS_FILE,
  STANDARD_DOMAIN_GENESIS,
  TRUSTEE_SEED,
  stewardSeed,
  nodeSeed,
  poolGenesisLine,
  poolGenesis,
  standardDomainGenesis,
  standardPoolNodes,
  writeGenesisFiles,
} from './genesis-gen.js';
export type { GenesisNodeSpec } from './genesis-gen.js';
export { createLogger, testLogger } from './logger.js';
export type { NodeLogger, LoggerOptions } from './logger.js';
export { NodeMetrics } from './metrics.js';
export { LoopWaitHistogram, LoopWaitMonitor, type LoopWaitSummary } from './loop-wait.js';
export { PoolRegistry } from './pool-registry.js';
export type { NodeRecord } from './pool-registry.js';
export { AuditTrail } from './audit-trail.js';
export { ConsensusExecutor } from './consensus-executor.js';
export type { NodeStores, ConsensusExecutorOptions, ConsensusExecutorModules } from './consensus-executor.js';
export { openNodeStores } from './node-setup.js';
export { ExecutorRequestAnalyzer } from './request-analyzer.js';
export { ClientPath, defaultClientPathOptions, encodeReply } from './client-path.js';
export type { ActionOutcome, ActionRequest, ClientChannel, ClientPathModules, ClientPathOptions } from './client-path.js';
export { CLIENT_CATCHUP_OPS, answerClientCatchup, defaultClientCatchupOptions, isClientCatchupMessage } from './client-catchup.js';
export type { ClientCatchupAnswer, ClientCatchupOptions } from './client-catchup.js';
export { ForcedRequests } from './forced-requests.js';
export type { ForcedRequestsModules } from './forced-requests.js';
export { NODE_PACKAGE, NodeUpgrades } from './node-upgrades.js';
export type { NodeUpgradesModules, NodeUpgradesOptions, SoftwareInfo } from './node-upgrades.js';
export { nodePackageVersion } from './version.js';
export { readInstalledVersion } from './upgrade/installed-version.js';
export { VALIDATOR_INFO_VERSION, validatorInfo } from './validator-info.js';
export type { ValidatorInfoSource } from './validator-info.js';
export { QuireNode, WRITE_FAILED_EXIT_CODE } from './node.js';
export type { QuireNodeOptions, QuireNodeModules } from './node.js';
export { main } from './cli.js';
export type { CliIo } from './cli.js';
export * from './upgrade/index.js';
