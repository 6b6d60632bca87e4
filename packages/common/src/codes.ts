/**
 * Protocol codes: transaction types (formats.md appendix A), roles, ledger ids, and what kind of
 * request each type is.
 */

/** Transaction / request type codes, as the string the wire carries in `operation.type` and `txn.type`. */
export const TxnType = {
  NODE: '0',
  NYM: '1',
  AUDIT: '2',
  GET_TXN: '3',
  TXN_AUTHOR_AGREEMENT: '4',
  TXN_AUTHOR_AGREEMENT_AML: '5',
  GET_TXN_AUTHOR_AGREEMENT: '6',
  GET_TXN_AUTHOR_AGREEMENT_AML: '7',
  TXN_AUTHOR_AGREEMENT_DISABLE: '8',
  LEDGERS_FREEZE: '9',
  GET_FROZEN_LEDGERS: '10',
  ATTRIB: '100',
  SCHEMA: '101',
  CLAIM_DEF: '102',
  GET_ATTR: '104',
  GET_NYM: '105',
  GET_SCHEMA: '107',
  GET_CLAIM_DEF: '108',
  POOL_UPGRADE: '109',
  NODE_UPGRADE: '110',
  POOL_CONFIG: '111',
  REVOC_REG_DEF: '113',
  REVOC_REG_ENTRY: '114',
  GET_REVOC_REG_DEF: '115',
  GET_REVOC_REG: '116',
  GET_REVOC_REG_DELTA: '117',
  POOL_RESTART: '118',
  VALIDATOR_INFO: '119',
  AUTH_RULE: '120',
  GET_AUTH_RULE: '121',
  AUTH_RULES: '122',
  FLAG: '130',
  GET_FLAG: '131',
  JSON_LD_CONTEXT: '200',
  RICH_SCHEMA: '201',
  RICH_SCHEMA_ENCODING: '202',
  RICH_SCHEMA_MAPPING: '203',
  RICH_SCHEMA_CRED_DEF: '204',
  RICH_SCHEMA_PRES_DEF: '205',
  GET_RICH_SCHEMA_OBJECT_BY_ID: '300',
  GET_RICH_SCHEMA_OBJECT_BY_METADATA: '301',
} as const;
export type TxnType = (typeof TxnType)[keyof typeof TxnType];

/** Roles as written on the wire; the identity owner has no role (`null`). */
export const Role = {
  TRUSTEE: '0',
  STEWARD: '2',
  ENDORSER: '101',
  NETWORK_MONITOR: '201',
} as const;
export type Role = (typeof Role)[keyof typeof Role];

/** Ledger ids. */
export const LedgerId = {
  POOL: 0,
  DOMAIN: 1,
  CONFIG: 2,
  AUDIT: 3,
} as const;
export type LedgerId = (typeof LedgerId)[keyof typeof LedgerId];

/** What a request of a type does: writes are ordered and stored, reads are answered from state,
 * actions are executed by the receiving node and never stored, internal types are made by nodes only. */
export type TxnKind = 'write' | 'read' | 'action' | 'internal';

interface TypeInfo {
  readonly kind: TxnKind;
  readonly ledger: LedgerId | undefined;
}

const T = TxnType;
const L = LedgerId;
const TYPE_INFO: ReadonlyMap<string, TypeInfo> = new Map<string, TypeInfo>([
  [T.NODE, { kind: 'write', ledger: L.POOL }],
  [T.NYM, { kind: 'write', ledger: L.DOMAIN }],
  [T.AUDIT, { kind: 'internal', ledger: L.AUDIT }],
  [T.GET_TXN, { kind: 'read', ledger: undefined }],
  [T.TXN_AUTHOR_AGREEMENT, { kind: 'write', ledger: L.CONFIG }],
  [T.TXN_AUTHOR_AGREEMENT_AML, { kind: 'write', ledger: L.CONFIG }],
  [T.GET_TXN_AUTHOR_AGREEMENT, { kind: 'read', ledger: L.CONFIG }],
  [T.GET_TXN_AUTHOR_AGREEMENT_AML, { kind: 'read', ledger: L.CONFIG }],
  [T.TXN_AUTHOR_AGREEMENT_DISABLE, { kind: 'write', ledger: L.CONFIG }],
  [T.LEDGERS_FREEZE, { kind: 'write', ledger: L.CONFIG }],
  [T.GET_FROZEN_LEDGERS, { kind: 'read', ledger: L.CONFIG }],
  [T.ATTRIB, { kind: 'write', ledger: L.DOMAIN }],
  [T.SCHEMA, { kind: 'write', ledger: L.DOMAIN }],
  [T.CLAIM_DEF, { kind: 'write', ledger: L.DOMAIN }],
  [T.GET_ATTR, { kind: 'read', ledger: L.DOMAIN }],
  [T.GET_NYM, { kind: 'read', ledger: L.DOMAIN }],
  [T.GET_SCHEMA, { kind: 'read', ledger: L.DOMAIN }],
  [T.GET_CLAIM_DEF, { kind: 'read', ledger: L.DOMAIN }],
  [T.POOL_UPGRADE, { kind: 'write', ledger: L.CONFIG }],
  [T.NODE_UPGRADE, { kind: 'write', ledger: L.CONFIG }],
  [T.POOL_CONFIG, { kind: 'write', ledger: L.CONFIG }],
  [T.REVOC_REG_DEF, { kind: 'write', ledger: L.DOMAIN }],
  [T.REVOC_REG_ENTRY, { kind: 'write', ledger: L.DOMAIN }],
  [T.GET_REVOC_REG_DEF, { kind: 'read', ledger: L.DOMAIN }],
  [T.GET_REVOC_REG, { kind: 'read', ledger: L.DOMAIN }],
  [T.GET_REVOC_REG_DELTA, { kind: 'read', ledger: L.DOMAIN }],
  [T.POOL_RESTART, { kind: 'action', ledger: undefined }],
  [T.VALIDATOR_INFO, { kind: 'action', ledger: undefined }],
  [T.AUTH_RULE, { kind: 'write', ledger: L.CONFIG }],
  [T.GET_AUTH_RULE, { kind: 'read', ledger: L.CONFIG }],
  [T.AUTH_RULES, { kind: 'write', ledger: L.CONFIG }],
  [T.FLAG, { kind: 'write', ledger: L.CONFIG }],
  [T.GET_FLAG, { kind: 'read', ledger: L.CONFIG }],
  [T.JSON_LD_CONTEXT, { kind: 'write', ledger: L.DOMAIN }],
  [T.RICH_SCHEMA, { kind: 'write', ledger: L.DOMAIN }],
  [T.RICH_SCHEMA_ENCODING, { kind: 'write', ledger: L.DOMAIN }],
  [T.RICH_SCHEMA_MAPPING, { kind: 'write', ledger: L.DOMAIN }],
  [T.RICH_SCHEMA_CRED_DEF, { kind: 'write', ledger: L.DOMAIN }],
  [T.RICH_SCHEMA_PRES_DEF, { kind: 'write', ledger: L.DOMAIN }],
  [T.GET_RICH_SCHEMA_OBJECT_BY_ID, { kind: 'read', ledger: L.DOMAIN }],
  [T.GET_RICH_SCHEMA_OBJECT_BY_METADATA, { kind: 'read', ledger: L.DOMAIN }],
]);

/**
 * The ledger a type belongs to: for writes (and AUDIT) the ledger that stores it, for reads the ledger
 * whose state answers it. `undefined` for GET_TXN (its ledger is `operation.ledgerId`), for actions
 * (POOL_RESTART, VALIDATOR_INFO) and for unknown types. Use {@link txnKind} to tell writes from reads.
 */
export function ledgerOfType(type: string): LedgerId | undefined {
  return TYPE_INFO.get(type)?.ledger;
}

/** The kind of a type code, or `undefined` for an unknown code. */
export function txnKind(type: string): TxnKind | undefined {
  return TYPE_INFO.get(type)?.kind;
}

export function isKnownTxnType(type: string): boolean {
  return TYPE_INFO.has(type);
}

export function isWriteType(type: string): boolean {
  return TYPE_INFO.get(type)?.kind === 'write';
}

export function isReadType(type: string): boolean {
  return TYPE_INFO.get(type)?.kind === 'read';
}

/** True for `0`..`3`. */
export function isLedgerId(v: unknown): v is LedgerId {
  return v === 0 || v === 1 || v === 2 || v === 3;
}

/** True for the four role codes (not for `null`, the identity owner). */
export function isRole(v: unknown): v is Role {
  return v === Role.TRUSTEE || v === Role.STEWARD || v === Role.ENDORSER || v === Role.NETWORK_MONITOR;
}

/** The payload version written to `txn.ver` when the operation has no `ver` (formats.md 4.2):
 * "2" for TXN_AUTHOR_AGREEMENT, "1" (hence not written) for every other type. */
export function defaultPayloadVersion(type: string): string {
  return type === TxnType.TXN_AUTHOR_AGREEMENT ? '2' : '1';
}
