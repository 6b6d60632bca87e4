/**
 * @quire/requests: everything about one request, organised by transaction type: static
 * validation, authentication, authorization, dynamic validation, state updates, reads, and the
 * executor that applies ordered batches.
 */
export * from './errors.js';
export type * from './handler.js';
export { HandlerRegistry, createDefaultRegistry } from './registry.js';
export { PLUGIN_LEDGER_ID_MIN, PLUGIN_LEDGER_ID_MAX, ledgerPluginProblem, type LedgerPlugin } from './plugin.js';
export * as validation from './validation/index.js';
export { Limits } from './validation/limits.js';
// authentication and authorization
export { AuthorizationEngine, DEFAULT_MAP, renderRequest } from './auth/engine.js';
export { AuthMap, type AuthMapRule, buildRuleKey, renderKeyPart, authRuleStateKey } from './auth/rule-key.js';
export { DEFAULT_AUTH_MAP } from './auth/default-map.js';
export { parseConstraint, constraintText, roleName } from './auth/constraint.js';
export type { Constraint, RoleConstraint, ListConstraint, ForbiddenConstraint } from './auth/constraint.js';
export { ruleElement, entryKey } from './auth/rule-entry.js';
export { SignatureVerifier, defaultSignatureVerifierOptions } from './auth/signatures.js';
export type { SignatureVerifierOptions } from './auth/signatures.js';
export { StateIdrCache } from './auth/idr-cache.js';
export { signingVerkey } from './auth/verkey.js';
// TAA
export { checkTaaAcceptance, ledgerRequiresTaa, utcDate } from './taa/acceptance.js';
export { taaDigest, readLatestTaa, readAml, taaEnabled, TAA_LATEST_KEY, AML_LATEST_KEY } from './taa/taa-state.js';
// request parsing and the receipt path
export { parseRequest, parseMessage, digests } from './pipeline/parse.js';
export { RequestPipeline } from './pipeline/receive.js';
export type { ReceiveOptions, ReceiveOutcome } from './pipeline/receive.js';
// execution
export { RequestExecutor, defaultExecutorOptions } from './executor/executor.js';
export type {
  ExecutorOptions,
  ExecutorModules,
  BatchResult,
  RequestResult,
  CommittedLedgerBatch,
  OrderedRequest,
  RequestIdentity,
} from './executor/executor.js';
export type { CaughtUpTxns } from './executor/replay.js';
export { catchupFormOf, storedFormOfCaughtUp } from './executor/catchup-txns.js';
export type { StoredFormOfCaughtUp } from './executor/catchup-txns.js';
export { StatePoolNodeIndex, LedgerUpgradeIndex } from './executor/indexes.js';
export type { PoolTrieReader, CommittedLedgerSource } from './executor/indexes.js';
export type {
  ExecutorStores,
  ExecutorLedger,
  ExecutorStateTrie,
  ExecutorAttributeStore,
  ExecutorTimestampStore,
  ExecutorSeqNoIndex,
} from './executor/stores.js';
export { parsedRequestToTxn, cloneJson } from './executor/txn.js';
// reads
export { StoresReadContext, answerRead, stateProofOf, type ReadRootChoice } from './reads/read-context.js';
export type { UnsignedReadReply } from './reads/read-context.js';
// pool / config types
export { poolConfigHandler, poolWritesFromTxns } from './types/pool-config.js';
export { nodeHandler, isValidatorRecord, nodeIndexKeys } from './types/node.js';
export { poolUpgradeHandler, compareNodeVersions, parseNodeVersion, upgradePackageName, parseSchedule, upgradeEntryOf } from './types/pool-upgrade.js';
export { poolRestartHandler, restartTime } from './types/pool-restart.js';
export { validatorInfoHandler } from './types/validator-info.js';
export { nodeUpgradeHandler } from './types/node-upgrade.js';
export { authRuleHandler } from './types/auth-rule.js';
export { authRulesHandler } from './types/auth-rules.js';
export { txnAuthorAgreementHandler } from './types/txn-author-agreement.js';
export { txnAuthorAgreementAmlHandler } from './types/txn-author-agreement-aml.js';
export { getTxnHandler } from './types/get-txn.js';
export { getAuthRuleHandler } from './types/get-auth-rule.js';
export { getTaaHandler } from './types/get-taa.js';
export { getTaaAmlHandler } from './types/get-taa-aml.js';
// domain identity types and their state layout (formats.md §8.2)
export * from './state-keys.js';
export { nymHandler } from './types/nym.js';
export { attribHandler, attribSelectors } from './types/attrib.js';
export { schemaHandler } from './types/schema.js';
export { claimDefHandler } from './types/claim-def.js';
export { revocRegDefHandler } from './types/revoc-reg-def.js';
export { revocRegEntryHandler } from './types/revoc-reg-entry.js';
export { jsonLdContextHandler } from './types/json-ld-context.js';
export { richSchemaSchemaHandler } from './types/rich-schema.js';
export { richSchemaEncodingHandler } from './types/rich-schema-encoding.js';
export { richSchemaMappingHandler } from './types/rich-schema-mapping.js';
export { richSchemaCredDefHandler } from './types/rich-schema-cred-def.js';
export { richSchemaPresDefHandler } from './types/rich-schema-pres-def.js';
export { RsType } from './types/rich-schema-common.js';
export { getNymHandler } from './types/get-nym.js';
export { getAttrHandler } from './types/get-attr.js';
export { getSchemaHandler } from './types/get-schema.js';
export { getClaimDefHandler } from './types/get-claim-def.js';
export { getRevocRegDefHandler } from './types/get-revoc-reg-def.js';
export { getRevocRegHandler } from './types/get-revoc-reg.js';
export { getRevocRegDeltaHandler, revocDelta } from './types/get-revoc-reg-delta.js';
export { getRichSchemaObjectByIdHandler, getRichSchemaObjectByMetadataHandler } from './types/get-rich-schema-object.js';
