// @quire/gateway: the HTTP face of a Quire pool (indy-vdr-proxy's REST routes, did:indy resolution, health and
// metrics), a client of the pool through @quire/client: every read it serves was verified first.
export { Gateway, defaultGatewayOptions } from './gateway.js';
export type { GatewayOptions, GatewayModules } from './gateway.js';
export { GatewayError, GatewayErrorCode, GATEWAY_ERROR_STATUS } from './errors.js';
export { VERIFIED_HEADER, NODES_HEADER } from './http.js';
export type { Verified } from './http.js';
export { parseDid, parseSchemaId, parseCredDefId, parseRevRegDefId, parseLedger } from './ids.js';
export type { ParsedDid, SchemaId, CredDefId, RevRegDefId } from './ids.js';
export { resolveDid, indyDidDocument, expandVerkey, ResolutionFailure, DID_RESOLUTION_CONTEXT } from './resolver.js';
export type { ResolutionResult, ResolutionError, DocumentInput } from './resolver.js';
export { prettyJson } from './json.js';
export { GatewayMetrics } from './metrics.js';
export type { GatewayPool } from './pool-call.js';
