// Upgrade and restart scheduling of the node (requests.md §6, §8.1).
export { UpgradeError, UpgradeErrorCode } from './errors.js';
export { ManualClock, systemClock } from './clock.js';
export type { UpgradeClock, ClockTimer } from './clock.js';
export {
  ActionEvent,
  RESTART_LOG_FILE,
  RestartLog,
  UPGRADE_LOG_FILE,
  UpgradeLog,
  formatLogTimestamp,
  formatWhen,
  parseLogTime,
} from './action-log.js';
export type { LogEntry, RestartLogData, UpgradeLogData } from './action-log.js';
export { NodeUpgradeAction, buildNodeUpgradeRequest, checkUpgradeVersion, verifyNodeUpgradeSignature } from './node-upgrade-request.js';
export type { NodeUpgradeData } from './node-upgrade-request.js';
export { InProgressOrderWatch } from './order-wait.js';
export type { OrderWaitOutcome } from './order-wait.js';
export { runUpgradeAction } from './upgrade-action.js';
export type { UpgradeActionParams, UpgradeActionRunner } from './upgrade-action.js';
export { INSTALLED_VERSION_FILE, readInstalledVersion, writeInstalledVersion } from './installed-version.js';
export { DEFAULT_UPGRADE_TIMEOUT_MINUTES, Upgrader, defaultUpgraderOptions, parsePoolUpgrade } from './upgrader.js';
export type { PoolUpgrade, UpgradeStartupResult, UpgraderModules, UpgraderOptions } from './upgrader.js';
export { DEFAULT_RESTART_TIMEOUT_MINUTES, Restarter, defaultRestarterOptions } from './restarter.js';
export type { RestartDecision, RestarterModules, RestarterOptions } from './restarter.js';
export { DEFAULT_IN_PROGRESS_ORDER_TIMEOUT_MS, UpgradeService, defaultUpgradeServiceOptions, nodeUpgradeSubmitter } from './service.js';
export type { UpgradeServiceModules, UpgradeServiceOptions, UpgradeServiceStartup } from './service.js';
export { RESTART_EXIT_CODE } from './types.js';
export type { ExitProcess, SubmitNodeUpgrade, UpgradeLogger } from './types.js';
