/**
 * Request builders for every write, read and action type (formats.md 3.1, 4.5; requests.md 3-9). Each returns an
 * unsigned request `{identifier, reqId, protocolVersion: 2, operation}`; sign it with signRequest / multiSignRequest.
 * Builders check the shape of their arguments (ClientError INVALID_ARGUMENT); the ledger's own validation stays
 * authoritative.
 */
import { TxnType, isPlainObject, isValidDid, parseJson, stringifyJson, type Request, type TaaAcceptance } from '@quire/common';
import { ClientError, ClientErrorCode } from '../errors.js';

/** The identifier reads use when the caller has no DID (indy-vdr's). */
export const DEFAULT_READ_IDENTIFIER = 'LibindyDid111111111111';

export const PROTOCOL_VERSION = 2;

export interface BaseRequestOptions {
  /** Author DID (`identifier`). Required for writes; reads default to DEFAULT_READ_IDENTIFIER. */
  submitter?: string;
  /** Client-chosen request id (default: unique, from the clock in nanoseconds; above 2^53, a bigint). */
  reqId?: number | bigint;
  endorser?: string;
  taaAcceptance?: TaaAcceptance;
}

let lastReqId = 0n;

/** A unique request id: the wall clock in nanoseconds, strictly increasing within this process. */
export function nextReqId(): bigint {
  let id = BigInt(Date.now()) * 1_000_000n + (process.hrtime.bigint() % 1_000_000n);
  if (id <= lastReqId) id = lastReqId + 1n;
  lastReqId = id;
  return id;
}

function bad(field: string, reason: string): ClientError {
  return new ClientError(ClientErrorCode.INVALID_ARGUMENT, { field, reason });
}

function did(v: unknown, field: string): string {
  if (!isValidDid(v)) throw bad(field, 'not a DID (base58 of 16 or 32 bytes)');
  return v;
}

function text(v: unknown, field: string): string {
  if (typeof v !== 'string' || v.length === 0) throw bad(field, 'a non-empty string is required');
  return v;
}

function int(v: unknown, field: string, min = 0): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min) throw bad(field, `an integer >= ${min} is required`);
  return v;
}

function obj(v: unknown, field: string): Record<string, unknown> {
  if (!isPlainObject(v)) throw bad(field, 'an object is required');
  return v;
}

/** Sets optional fields only when given (absent fields are omitted, never null, unless null is meant). */
function put(op: Record<string, unknown>, field: string, v: unknown): void {
  if (v !== undefined) op[field] = v;
}

function envelope(operation: Record<string, unknown>, o: BaseRequestOptions, write: boolean): Request {
  const identifier = o.submitter === undefined ? (write ? undefined : DEFAULT_READ_IDENTIFIER) : did(o.submitter, 'submitter');
  if (identifier === undefined) throw bad('submitter', 'a write needs the author DID');
  const req: Request = { identifier, reqId: o.reqId ?? nextReqId(), protocolVersion: PROTOCOL_VERSION, operation };
  if (o.endorser !== undefined) req.endorser = did(o.endorser, 'endorser');
  if (o.taaAcceptance !== undefined) req.taaAcceptance = o.taaAcceptance;
  return req;
}

/** A JSON string from a string (kept verbatim after a parse check) or a value (written losslessly). */
function jsonString(v: unknown, field: string): string {
  if (typeof v === 'string') {
    try {
      parseJson(v);
    } catch {
      throw bad(field, 'not valid JSON');
    }
    return v;
  }
  return stringifyJson(v);
}

// ----------------------------------------------------------------------------------------------------- writes

export interface NymOptions extends BaseRequestOptions {
  dest: string;
  verkey?: string | null;
  /** '0' TRUSTEE, '2' STEWARD, '101' ENDORSER, '201' NETWORK_MONITOR, null = identity owner. */
  role?: string | null;
  alias?: string;
  diddocContent?: string | Record<string, unknown>;
  version?: 0 | 1 | 2;
}

export function buildNymRequest(o: NymOptions): Request {
  const op: Record<string, unknown> = { type: TxnType.NYM, dest: did(o.dest, 'dest') };
  put(op, 'verkey', o.verkey);
  put(op, 'role', o.role);
  put(op, 'alias', o.alias);
  if (o.diddocContent !== undefined) op.diddocContent = jsonString(o.diddocContent, 'diddocContent');
  put(op, 'version', o.version);
  return envelope(op, o, true);
}

export interface AttribOptions extends BaseRequestOptions {
  dest: string;
  /** One attribute: a JSON object with exactly one key (or its JSON text). */
  raw?: string | Record<string, unknown>;
  enc?: string;
  /** Lowercase hex SHA-256. */
  hash?: string;
}

export function buildAttribRequest(o: AttribOptions): Request {
  const op: Record<string, unknown> = { type: TxnType.ATTRIB, dest: did(o.dest, 'dest') };
  const given = [o.raw, o.enc, o.hash].filter((v) => v !== undefined).length;
  if (given !== 1) throw bad('raw/enc/hash', 'exactly one is required');
  if (o.raw !== undefined) op.raw = jsonString(o.raw, 'raw');
  if (o.enc !== undefined) op.enc = text(o.enc, 'enc');
  if (o.hash !== undefined) {
    if (!/^[0-9a-fA-F]{64}$/.test(o.hash)) throw bad('hash', 'not 64 hex digits');
    op.hash = o.hash;
  }
  return envelope(op, o, true);
}

export interface SchemaOptions extends BaseRequestOptions {
  name: string;
  version: string;
  attrNames: string[];
}

export function buildSchemaRequest(o: SchemaOptions): Request {
  if (!Array.isArray(o.attrNames) || o.attrNames.length === 0) throw bad('attrNames', 'a non-empty list is required');
  o.attrNames.forEach((a, i) => text(a, `attrNames[${i}]`));
  const op = { type: TxnType.SCHEMA, data: { name: text(o.name, 'name'), version: text(o.version, 'version'), attr_names: [...o.attrNames] } };
  return envelope(op, o, true);
}

export interface CredDefOptions extends BaseRequestOptions {
  /** seqNo of the schema. */
  ref: number;
  signatureType?: string;
  tag?: string;
  data: { primary: Record<string, unknown>; revocation?: Record<string, unknown> };
}

export function buildCredDefRequest(o: CredDefOptions): Request {
  const data: Record<string, unknown> = { primary: obj(obj(o.data, 'data').primary, 'data.primary') };
  if (o.data.revocation !== undefined) data.revocation = obj(o.data.revocation, 'data.revocation');
  const op: Record<string, unknown> = { type: TxnType.CLAIM_DEF, ref: int(o.ref, 'ref', 1), signature_type: o.signatureType ?? 'CL', data };
  put(op, 'tag', o.tag);
  return envelope(op, o, true);
}

export interface RevocRegDefOptions extends BaseRequestOptions {
  credDefId: string;
  tag: string;
  revocDefType?: string;
  value: {
    issuanceType: 'ISSUANCE_BY_DEFAULT' | 'ISSUANCE_ON_DEMAND';
    maxCredNum: number;
    publicKeys: Record<string, unknown>;
    tailsHash: string;
    tailsLocation: string;
  };
  /** Default: the state key `<submitter>:4:<credDefId>:<revocDefType>:<tag>` by which entries and reads address it. */
  id?: string;
}

/** The id of a revocation registry definition: `<author>:4:<credDefId>:<revocDefType>:<tag>`. */
export function revocRegDefId(author: string, credDefId: string, tag: string, revocDefType = 'CL_ACCUM'): string {
  return `${author}:4:${credDefId}:${revocDefType}:${tag}`;
}

export function buildRevocRegDefRequest(o: RevocRegDefOptions): Request {
  const revocDefType = o.revocDefType ?? 'CL_ACCUM';
  const author = did(o.submitter, 'submitter');
  const v = obj(o.value, 'value');
  const op = {
    type: TxnType.REVOC_REG_DEF,
    id: o.id ?? revocRegDefId(author, text(o.credDefId, 'credDefId'), text(o.tag, 'tag'), revocDefType),
    credDefId: text(o.credDefId, 'credDefId'),
    revocDefType,
    tag: text(o.tag, 'tag'),
    value: {
      issuanceType: text(v.issuanceType, 'value.issuanceType'),
      maxCredNum: int(v.maxCredNum, 'value.maxCredNum', 1),
      publicKeys: obj(v.publicKeys, 'value.publicKeys'),
      tailsHash: text(v.tailsHash, 'value.tailsHash'),
      tailsLocation: text(v.tailsLocation, 'value.tailsLocation'),
    },
  };
  return envelope(op, o, true);
}

export interface RevocRegEntryOptions extends BaseRequestOptions {
  revocRegDefId: string;
  revocDefType?: string;
  value: { accum: string; prevAccum?: string; issued?: (number | bigint)[]; revoked?: (number | bigint)[] };
}

export function buildRevocRegEntryRequest(o: RevocRegEntryOptions): Request {
  const v = obj(o.value, 'value');
  const value: Record<string, unknown> = { accum: text(v.accum, 'value.accum') };
  put(value, 'prevAccum', o.value.prevAccum);
  put(value, 'issued', o.value.issued);
  put(value, 'revoked', o.value.revoked);
  const op = { type: TxnType.REVOC_REG_ENTRY, revocRegDefId: text(o.revocRegDefId, 'revocRegDefId'), revocDefType: o.revocDefType ?? 'CL_ACCUM', value };
  return envelope(op, o, true);
}

/** The rich schema object kinds and their type codes (requests.md 4). */
export const RichSchemaType = {
  ctx: TxnType.JSON_LD_CONTEXT,
  sch: TxnType.RICH_SCHEMA,
  enc: TxnType.RICH_SCHEMA_ENCODING,
  map: TxnType.RICH_SCHEMA_MAPPING,
  cdf: TxnType.RICH_SCHEMA_CRED_DEF,
  pdf: TxnType.RICH_SCHEMA_PRES_DEF,
} as const;
export type RichSchemaKind = keyof typeof RichSchemaType;

export interface RichSchemaOptions extends BaseRequestOptions {
  kind: RichSchemaKind;
  id: string;
  /** The object: a JSON object or its JSON text (sent as a JSON string). */
  content: string | Record<string, unknown>;
  rsName: string;
  rsVersion: string;
  ver?: string;
}

export function buildRichSchemaRequest(o: RichSchemaOptions): Request {
  const type = RichSchemaType[o.kind];
  if (type === undefined) throw bad('kind', `one of ${Object.keys(RichSchemaType).join(', ')}`);
  const op: Record<string, unknown> = {
    type,
    id: text(o.id, 'id'),
    content: jsonString(o.content, 'content'),
    rsType: o.kind,
    rsName: text(o.rsName, 'rsName'),
    rsVersion: text(o.rsVersion, 'rsVersion'),
  };
  put(op, 'ver', o.ver);
  return envelope(op, o, true);
}

export interface NodeOptions extends BaseRequestOptions {
  /** The node's Ed25519 verkey (base58 of 32 bytes). */
  dest: string;
  data: {
    alias: string;
    client_ip?: string;
    client_port?: number;
    node_ip?: string;
    node_port?: number;
    services?: string[];
    blskey?: string;
    blskey_pop?: string;
  };
}

export function buildNodeRequest(o: NodeOptions): Request {
  const d = obj(o.data, 'data');
  text(d.alias, 'data.alias');
  const data: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(d)) if (v !== undefined) data[k] = v;
  return envelope({ type: TxnType.NODE, dest: text(o.dest, 'dest'), data }, o, true);
}

export interface PoolUpgradeOptions extends BaseRequestOptions {
  name: string;
  version: string;
  action: 'start' | 'cancel';
  sha256: string;
  /** node id (NODE.dest) -> ISO-8601 date-time with UTC offset. */
  schedule?: Record<string, string>;
  timeout?: number;
  justification?: string | null;
  reinstall?: boolean;
  force?: boolean;
  package?: string;
}

export function buildPoolUpgradeRequest(o: PoolUpgradeOptions): Request {
  if (o.action !== 'start' && o.action !== 'cancel') throw bad('action', "'start' or 'cancel'");
  const op: Record<string, unknown> = {
    type: TxnType.POOL_UPGRADE,
    name: text(o.name, 'name'),
    version: text(o.version, 'version'),
    action: o.action,
    sha256: text(o.sha256, 'sha256'),
    reinstall: o.reinstall ?? false,
    force: o.force ?? false,
  };
  put(op, 'schedule', o.schedule);
  put(op, 'timeout', o.timeout);
  put(op, 'justification', o.justification);
  put(op, 'package', o.package);
  return envelope(op, o, true);
}

export function buildPoolConfigRequest(o: BaseRequestOptions & { writes: boolean; force?: boolean }): Request {
  if (typeof o.writes !== 'boolean') throw bad('writes', 'a boolean is required');
  return envelope({ type: TxnType.POOL_CONFIG, writes: o.writes, force: o.force ?? false }, o, true);
}

/** POOL_RESTART (an action: sent to every node, not ordered; replies may never come). */
export function buildPoolRestartRequest(o: BaseRequestOptions & { action: 'start' | 'cancel'; datetime?: string }): Request {
  if (o.action !== 'start' && o.action !== 'cancel') throw bad('action', "'start' or 'cancel'");
  const op: Record<string, unknown> = { type: TxnType.POOL_RESTART, action: o.action };
  put(op, 'datetime', o.datetime);
  return envelope(op, o, true);
}

/** VALIDATOR_INFO (an action: every node answers with its own information). */
export function buildValidatorInfoRequest(o: BaseRequestOptions): Request {
  return envelope({ type: TxnType.VALIDATOR_INFO }, o, true);
}

export interface AuthRuleFields {
  authType: string;
  authAction: 'ADD' | 'EDIT';
  field: string;
  oldValue?: string | null;
  newValue: string | null;
  constraint: Record<string, unknown>;
}

function authRuleOperationFields(r: AuthRuleFields, at: string): Record<string, unknown> {
  if (r.authAction !== 'ADD' && r.authAction !== 'EDIT') throw bad(`${at}authAction`, "'ADD' or 'EDIT'");
  const f: Record<string, unknown> = { auth_type: text(r.authType, `${at}authType`), auth_action: r.authAction, field: text(r.field, `${at}field`) };
  if (r.authAction === 'EDIT') f.old_value = r.oldValue ?? null;
  else if (r.oldValue !== undefined) throw bad(`${at}oldValue`, 'ADD rules have no old value');
  f.new_value = r.newValue;
  f.constraint = obj(r.constraint, `${at}constraint`);
  return f;
}

export function buildAuthRuleRequest(o: BaseRequestOptions & AuthRuleFields): Request {
  return envelope({ type: TxnType.AUTH_RULE, ...authRuleOperationFields(o, '') }, o, true);
}

export function buildAuthRulesRequest(o: BaseRequestOptions & { rules: AuthRuleFields[] }): Request {
  if (!Array.isArray(o.rules) || o.rules.length === 0) throw bad('rules', 'a non-empty list is required');
  return envelope({ type: TxnType.AUTH_RULES, rules: o.rules.map((r, i) => authRuleOperationFields(r, `rules[${i}].`)) }, o, true);
}

export interface TaaOptions extends BaseRequestOptions {
  version: string;
  text?: string;
  ratificationTs?: number;
  retirementTs?: number;
}

export function buildTxnAuthorAgreementRequest(o: TaaOptions): Request {
  const op: Record<string, unknown> = { type: TxnType.TXN_AUTHOR_AGREEMENT, version: text(o.version, 'version') };
  if (o.text !== undefined) {
    if (typeof o.text !== 'string') throw bad('text', 'a string is required');
    op.text = o.text;
  }
  if (o.ratificationTs !== undefined) op.ratification_ts = int(o.ratificationTs, 'ratificationTs');
  if (o.retirementTs !== undefined) op.retirement_ts = int(o.retirementTs, 'retirementTs');
  return envelope(op, o, true);
}

export function buildTxnAuthorAgreementAmlRequest(o: BaseRequestOptions & { version: string; aml: Record<string, string>; amlContext?: string }): Request {
  const aml = obj(o.aml, 'aml');
  if (Object.keys(aml).length === 0) throw bad('aml', 'at least one acceptance mechanism is required');
  const op: Record<string, unknown> = { type: TxnType.TXN_AUTHOR_AGREEMENT_AML, version: text(o.version, 'version'), aml };
  put(op, 'amlContext', o.amlContext);
  return envelope(op, o, true);
}

/**
 * TXN_AUTHOR_AGREEMENT_DISABLE (8, config; requests.md 7.2): a trustee turns the agreement off. Every version is
 * retired at the txn time and none is the latest; a later TXN_AUTHOR_AGREEMENT enables acceptance again.
 */
export function buildDisableAllTxnAuthorAgreementsRequest(o: BaseRequestOptions): Request {
  return envelope({ type: TxnType.TXN_AUTHOR_AGREEMENT_DISABLE }, o, true);
}

/** The base ledgers (pool, domain, config, audit): they cannot be frozen. */
export const BASE_LEDGER_IDS: readonly number[] = [0, 1, 2, 3];

/**
 * LEDGERS_FREEZE (9, config; requests.md 7.3): freeze plugin or unused ledgers (default rule: 3 trustee
 * signatures, so multi-sign it). The base ledgers 0-3 cannot be frozen; there is no unfreeze.
 */
export function buildLedgersFreezeRequest(o: BaseRequestOptions & { ledgersIds: number[] }): Request {
  if (!Array.isArray(o.ledgersIds)) throw bad('ledgersIds', 'a list of ledger ids is required');
  const ids = o.ledgersIds.map((id, i) => int(id, `ledgersIds[${i}]`));
  if (ids.some((id) => BASE_LEDGER_IDS.includes(id))) throw bad('ledgersIds', "(0, 1, 2, 3) ledgers can't be frozen");
  return envelope({ type: TxnType.LEDGERS_FREEZE, ledgers_ids: ids }, o, true);
}

// ------------------------------------------------------------------------------------------------------ reads

function historic(op: Record<string, unknown>, o: { seqNo?: number; timestamp?: number }): void {
  if (o.seqNo !== undefined && o.timestamp !== undefined) throw bad('seqNo/timestamp', 'mutually exclusive');
  if (o.seqNo !== undefined) op.seqNo = int(o.seqNo, 'seqNo', 1);
  if (o.timestamp !== undefined) op.timestamp = int(o.timestamp, 'timestamp');
}

export function buildGetNymRequest(o: BaseRequestOptions & { dest: string; seqNo?: number; timestamp?: number }): Request {
  const op: Record<string, unknown> = { type: TxnType.GET_NYM, dest: did(o.dest, 'dest') };
  historic(op, o);
  return envelope(op, o, false);
}

export function buildGetAttribRequest(
  o: BaseRequestOptions & { dest: string; raw?: string; enc?: string; hash?: string; seqNo?: number; timestamp?: number },
): Request {
  const op: Record<string, unknown> = { type: TxnType.GET_ATTR, dest: did(o.dest, 'dest') };
  const given = (['raw', 'enc', 'hash'] as const).filter((k) => o[k] !== undefined);
  if (given.length !== 1) throw bad('raw/enc/hash', 'exactly one is required');
  const kind = given[0];
  op[kind] = text(o[kind], kind);
  historic(op, o);
  return envelope(op, o, false);
}

export function buildGetSchemaRequest(o: BaseRequestOptions & { dest: string; name: string; version: string }): Request {
  return envelope({ type: TxnType.GET_SCHEMA, dest: did(o.dest, 'dest'), data: { name: text(o.name, 'name'), version: text(o.version, 'version') } }, o, false);
}

export function buildGetCredDefRequest(o: BaseRequestOptions & { origin: string; ref: number; signatureType?: string; tag?: string }): Request {
  const op: Record<string, unknown> = {
    type: TxnType.GET_CLAIM_DEF,
    origin: did(o.origin, 'origin'),
    ref: int(o.ref, 'ref', 1),
    signature_type: o.signatureType ?? 'CL',
  };
  put(op, 'tag', o.tag);
  return envelope(op, o, false);
}

export function buildGetRevocRegDefRequest(o: BaseRequestOptions & { id: string }): Request {
  return envelope({ type: TxnType.GET_REVOC_REG_DEF, id: text(o.id, 'id') }, o, false);
}

export function buildGetRevocRegRequest(o: BaseRequestOptions & { revocRegDefId: string; timestamp: number }): Request {
  return envelope({ type: TxnType.GET_REVOC_REG, revocRegDefId: text(o.revocRegDefId, 'revocRegDefId'), timestamp: int(o.timestamp, 'timestamp') }, o, false);
}

export function buildGetRevocRegDeltaRequest(o: BaseRequestOptions & { revocRegDefId: string; from?: number; to: number }): Request {
  const op: Record<string, unknown> = { type: TxnType.GET_REVOC_REG_DELTA, revocRegDefId: text(o.revocRegDefId, 'revocRegDefId') };
  if (o.from !== undefined) op.from = int(o.from, 'from');
  op.to = int(o.to, 'to');
  if (o.from !== undefined && o.from > o.to) throw bad('from', 'later than to');
  return envelope(op, o, false);
}

/** GET_AUTH_RULE: no fields = every rule (no proof); otherwise one rule, with a proof. */
export function buildGetAuthRuleRequest(o: BaseRequestOptions & Partial<Omit<AuthRuleFields, 'constraint'>>): Request {
  const op: Record<string, unknown> = { type: TxnType.GET_AUTH_RULE };
  const any = o.authType !== undefined || o.authAction !== undefined || o.field !== undefined || o.newValue !== undefined || o.oldValue !== undefined;
  if (any) {
    if (o.authAction !== 'ADD' && o.authAction !== 'EDIT') throw bad('authAction', "'ADD' or 'EDIT'");
    op.auth_type = text(o.authType, 'authType');
    op.auth_action = o.authAction;
    op.field = text(o.field, 'field');
    if (o.authAction === 'EDIT') op.old_value = o.oldValue ?? null;
    if (o.newValue === undefined) throw bad('newValue', 'required for one rule');
    op.new_value = o.newValue;
  }
  return envelope(op, o, false);
}

export function buildGetTxnAuthorAgreementRequest(o: BaseRequestOptions & { version?: string; digest?: string; timestamp?: number } = {}): Request {
  const op: Record<string, unknown> = { type: TxnType.GET_TXN_AUTHOR_AGREEMENT };
  if ([o.version, o.digest, o.timestamp].filter((v) => v !== undefined).length > 1) throw bad('version/digest/timestamp', 'at most one');
  if (o.version !== undefined) op.version = text(o.version, 'version');
  if (o.digest !== undefined) op.digest = text(o.digest, 'digest');
  if (o.timestamp !== undefined) op.timestamp = int(o.timestamp, 'timestamp');
  return envelope(op, o, false);
}

export function buildGetAcceptanceMechanismsRequest(o: BaseRequestOptions & { version?: string; timestamp?: number } = {}): Request {
  const op: Record<string, unknown> = { type: TxnType.GET_TXN_AUTHOR_AGREEMENT_AML };
  if (o.version !== undefined && o.timestamp !== undefined) throw bad('version/timestamp', 'mutually exclusive');
  if (o.version !== undefined) op.version = text(o.version, 'version');
  if (o.timestamp !== undefined) op.timestamp = int(o.timestamp, 'timestamp');
  return envelope(op, o, false);
}

/** GET_FROZEN_LEDGERS (10, config; requests.md 7.3): the frozen ledgers with their roots and sizes, by state proof. */
export function buildGetFrozenLedgersRequest(o: BaseRequestOptions = {}): Request {
  return envelope({ type: TxnType.GET_FROZEN_LEDGERS }, o, false);
}

export function buildGetTxnRequest(o: BaseRequestOptions & { ledgerId?: number; seqNo: number }): Request {
  const ledgerId = o.ledgerId ?? 1;
  // a plugin ledger of the pool: ids from 1000 (requests' LedgerPlugin)
  const plugin = Number.isSafeInteger(ledgerId) && ledgerId >= 1000 && ledgerId <= 0x7fff_ffff;
  if (![0, 1, 2, 3].includes(ledgerId) && !plugin)
    throw bad('ledgerId', 'one of 0 (pool), 1 (domain), 2 (config), 3 (audit) or a plugin ledger (1000 and above)');
  return envelope({ type: TxnType.GET_TXN, ledgerId, data: int(o.seqNo, 'seqNo', 1) }, o, false);
}

export function buildGetRichSchemaObjectByIdRequest(o: BaseRequestOptions & { id: string }): Request {
  return envelope({ type: TxnType.GET_RICH_SCHEMA_OBJECT_BY_ID, id: text(o.id, 'id') }, o, false);
}

export function buildGetRichSchemaObjectByMetadataRequest(o: BaseRequestOptions & { rsType: RichSchemaKind; rsName: string; rsVersion: string }): Request {
  return envelope(
    {
      type: TxnType.GET_RICH_SCHEMA_OBJECT_BY_METADATA,
      rsType: text(o.rsType, 'rsType'),
      rsName: text(o.rsName, 'rsName'),
      rsVersion: text(o.rsVersion, 'rsVersion'),
    },
    o,
    false,
  );
}
