/**
 * RequestError: the one error of @quire/requests. Every refusal of a request, at any stage
 * (envelope, schema, static checks, signatures, TAA, authorization, dynamic validation, reads),
 * is a RequestError with a stable {@link RequestErrorCode} and the data its reason needs. The
 * reason text sent to clients is built here, from the code and the data, and nowhere else; texts
 * follow requests.md / auth-rules.md word for word where those specs quote them.
 */
import { QuireError, RejectCode, rejectReason } from '@quire/common';

/**
 * How the reason is wrapped in a REQNACK/REJECT (requests.md §1.8):
 * `client request invalid: <Kind>('<identifier>', <reqId>, '<text>')`, except `signature` errors
 * which are `client request invalid: <text>` and `plain` (transport) errors which are sent as is.
 */
export const ErrorKind = {
  INVALID: 'InvalidClientRequest',
  UNAUTHORIZED: 'UnauthorizedClientRequest',
  TAA: 'InvalidClientTaaAcceptanceError',
  SIGNATURE: 'signature',
  PLAIN: 'plain',
} as const;
export type ErrorKind = (typeof ErrorKind)[keyof typeof ErrorKind];

/** The Python type names a field check reports (`expected types 'dict', got 'list'`). */
export type PyType = 'NoneType' | 'str' | 'bool' | 'int' | 'float' | 'list' | 'dict';

/** The data of every field code: the schema validator's name, the (dotted) field path, the value refused. */
export type FieldData = { validator: string; field: string; value: unknown };

/** The texts of a NODE's conflict with another node or with its stored record (NODE_CONFLICT). */
export type NodeConflict =
  | "Node's alias must be unique"
  | "Node's nodestack addresses must be unique"
  | "Node's clientstack addresses must be unique"
  | "Node's alias cannot be changed";

type None = Record<string, never>;

/**
 * The data of each {@link RequestErrorCode}, checked wherever a RequestError is made: the reason a client sees is
 * built from it (the catalogue below takes each code's data as typed here).
 */
export type RequestErrorData = {
  MESSAGE_TOO_LARGE: { length: number; limit: number };
  MALFORMED_JSON: { problem: string };
  FIELD_MISSING: { validator: string; fields: readonly string[] };
  FIELD_TYPE: FieldData & { expected: PyType; got: PyType };
  FIELD_EMPTY: FieldData;
  FIELD_TOO_LONG: FieldData & { max: number };
  FIELD_ENUM: FieldData & { allowed: readonly string[] };
  FIELD_BASE58_CHARS: FieldData & { chars: readonly string[] };
  FIELD_BASE58_LENGTH: FieldData & { length: number; allowed: readonly number[] };
  FIELD_VERKEY: FieldData;
  FIELD_HASH: FieldData;
  FIELD_VERSION_PARTS: FieldData & { parts: number };
  FIELD_VERSION_CHARS: FieldData;
  FIELD_ROLE: FieldData;
  FIELD_IP: FieldData;
  FIELD_PORT: FieldData;
  FIELD_TOO_SMALL: FieldData & { min: number | bigint };
  FIELD_TOO_LARGE: FieldData & { max: number | bigint };
  FIELD_INVALID: FieldData & { problem: string };
  UNKNOWN_TYPE: { type: string };
  SIGNATURE_AND_SIGNATURES: None;
  MISSING_IDENTIFIER: None;
  IDENTIFIER_NOT_IN_SIGNATURES: None;
  ENDORSER_NOT_SIGNED: None;
  ENDORSED_WITHOUT_AUTHOR: None;
  ENDORSED_AUTHOR_NOT_SIGNED: None;
  PROTOCOL_VERSION_MISSING: None;
  PROTOCOL_VERSION_OLD: { version: 1 };
  PROTOCOL_VERSION_UNKNOWN: { version: unknown };
  SIGNATURE_MISSING: None;
  SERIALIZATION_FAILED: { problem: string };
  UNKNOWN_SIGNER: { did: string };
  INSUFFICIENT_SIGNATURES: { required: number; valid: number; invalid: number; bad: readonly { did: string; signature: string }[] };
  POOL_READ_ONLY: None;
  DUPLICATE_DIFFERENT_SIGNATURES: None;
  ALREADY_ORDERED: { payloadDigest: string };
  WRONG_LEDGER: { type: string; ledgerId: number };
  NOT_A_WRITE: { type: string };
  EXTERNAL_NODE_UPGRADE: None;
  EXTERNAL_AUDIT: None;
  TAA_NOT_EXPECTED: { ledgerId: number };
  TAA_MISSING: { ledgerId: number };
  TAA_WRONG_DIGEST: { digest: string };
  TAA_RETIRED: { version: string; seqNo: number; txnTime: number | null };
  TAA_TIME_TOO_PRECISE: { time: number };
  TAA_TIME_INAPPROPRIATE: { time: number; low: string; high: string };
  TAA_MECHANISM_INAPPROPRIATE: { mechanism: string; labels: readonly string[] };
  TAA_TIME_OUT_OF_RANGE: { time: number | bigint };
  AUTH_NOT_ALLOWED: { request: string };
  AUTH_FORBIDDEN: None;
  AUTH_NOT_OWNER: { roleName: string; field: string; typeName: string };
  AUTH_AUTHOR_NOT_FOUND: { did: string };
  AUTH_AUTHOR_MUST_SIGN: None;
  AUTH_NOT_ENOUGH_SIGNATURES: { roleName: string };
  AUTH_OR_FAILED: { rule: string; failures: readonly string[] };
  AUTH_ENDORSER_ROLE: None;
  AUTH_ENDORSER_MUST_SIGN: None;
  AUTH_ENDORSER_FIELD_REQUIRED: None;
  AUTH_EMPTY: { dest: string };
  CONSTRAINT_REQUIRED: None;
  CONSTRAINT_ID_REQUIRED: None;
  CONSTRAINT_LIST_EMPTY: None;
  CONSTRAINT_ROLE: { role: unknown };
  CONSTRAINT_OFF_LEDGER_ROLE: { role: unknown };
  CONSTRAINT_UNEXPECTED_FIELD: { name: string; constraintId: string };
  AUTH_RULE_EDIT_NEEDS_OLD: None;
  AUTH_RULE_ADD_WITH_OLD: None;
  AUTH_RULE_UNKNOWN: { key: string };
  AUTH_RULE_KEY_INCOMPLETE: None;
  NODE_DEST_NOT_KEY: { dest: unknown };
  NODE_VERKEY_NOT_ALLOWED: None;
  NODE_BLS_POP_MISSING: None;
  NODE_BLS_POP_UNNEEDED: None;
  NODE_BLS_POP_INCORRECT: { pop: string; key: string };
  NODE_MISSING_FIELDS: None;
  NODE_SAME_HA: None;
  NODE_STEWARD_HAS_NODE: { author: string };
  NODE_CONFLICT: { data: Record<string, unknown>; problem: NodeConflict };
  NODE_SAME_DATA: None;
  UPGRADE_SCHEDULE_INVALID: { schedule: unknown; problem: string };
  UPGRADE_ALREADY_SCHEDULED: { name: unknown };
  UPGRADE_PACKAGE_EMPTY: None;
  UPGRADE_VERSION_INVALID: { version: string; versionClass: 'NodeVersion' };
  UPGRADE_PACKAGE_NOT_INSTALLED: { pkg: string };
  UPGRADE_PACKAGE_FOREIGN: { pkg: string };
  UPGRADE_NOT_UPGRADABLE: { version: string };
  RESTART_DATETIME_INVALID: { value: unknown };
  TAA_AML_NOT_SET: None;
  TAA_CREATE_WITHOUT_TEXT: None;
  TAA_CREATE_WITH_RETIREMENT: None;
  TAA_RATIFICATION_IN_FUTURE: None;
  TAA_TEXT_CHANGE: None;
  TAA_RATIFICATION_CHANGE: None;
  TAA_RETIRE_WHILE_DISABLED: None;
  TAA_RETIRE_LATEST: None;
  TAA_TS_OUT_OF_RANGE: { field: 'ratification_ts' | 'retirement_ts'; ts: number | bigint };
  AML_EMPTY: None;
  AML_VERSION_EXISTS: None;
  TAA_ALREADY_DISABLED: None;
  FREEZE_BASE_LEDGER: None;
  FREEZE_LEDGER_NEVER_EXISTED: { ids: readonly number[] };
  LEDGER_FROZEN: { type: string; ledgerId: number };
  READ_INVALID_LEDGER: { ledgerId: number | bigint };
  READ_INVALID_SEQNO: { seqNo: number | bigint };
  READ_SEQNO_AND_TIMESTAMP: None;
  GET_TAA_SELECTORS: None;
  GET_TAA_AML_SELECTORS: None;
  NYM_DEST_MISSING: { validator: string; field: string };
  NYM_VERSION_INVALID: { version: unknown; field: string };
  NYM_DIDDOC_ID: { field: 'diddocContent' };
  NYM_DIDDOC_VERKEY_FRAGMENT: { field: 'diddocContent' };
  NYM_OFF_LEDGER_NOT_SELF: { dest: string };
  NYM_OFF_LEDGER_NO_VERKEY: { dest: string };
  NYM_VERSION_1_MISMATCH: { dest: string; version: 1 };
  NYM_VERSION_2_MISMATCH: { dest: string; version: 2 };
  NYM_VERSION_ON_UPDATE: { dest: string };
  ATTRIB_NONE: { validator?: string };
  ATTRIB_SEVERAL: { fields: readonly string[] };
  ATTRIB_DEST_UNKNOWN: { dest: string };
  ATTRIB_ENDPOINT_FORMAT: { field: string };
  ATTRIB_ENDPOINT_ADDRESS: { field: string };
  ATTRIB_ENDPOINT_PORT: { field: string };
  GET_ATTR_SELECTOR: None;
  SCHEMA_IMMUTABLE: { key: string };
  CLAIM_DEF_REF_UNKNOWN: { ref: string };
  CLAIM_DEF_REF_NOT_SCHEMA: { ref: string };
  REVOC_CRED_DEF_ID_FORMAT: { credDefId: string };
  REVOC_CRED_DEF_UNKNOWN: { credDefId: string };
  REVOC_DEF_UNKNOWN: { revocRegDefId: string };
  REVOC_INDEX_IN_BOTH: { revocRegDefId: string };
  REVOC_PREV_ACCUM_WITHOUT_ENTRY: { prevAccum: string };
  REVOC_ACCUM_MISMATCH: { current: unknown; last: unknown };
  REVOC_LISTS_EMPTY: { revocRegDefId: string };
  REVOC_ACCUM_UNCHANGED: { revocRegDefId: string };
  REVOC_ISSUED_NOT_REVOKED: { indices: string; current: string };
  REVOC_ALREADY_REVOKED: { indices: string; current: string };
  REVOC_REVOKED_NOT_ISSUED: { indices: string; current: string };
  REVOC_ALREADY_ISSUED: { indices: string; current: string };
  GET_REVOC_DELTA_RANGE: { from: number | bigint; to: number | bigint };
  RS_CONTENT_NOT_JSON: { field: 'content' };
  RS_JSONLD_FIELD: { field: '@id' | '@type' };
  RS_ID_MISMATCH: { id: string };
  RS_DUPLICATE_METADATA: { rsType: string; rsName: string; rsVersion: string };
  RS_IMMUTABLE: { typeName: string; id: string };
  RS_NAME_VERSION_CHANGE: { id: string };
  RS_CONTEXT_MISSING: { field: 'content' };
  RS_CONTEXT_TYPE: { field: 'content.@context' };
  RS_CONTEXT_URI: { uri: string };
  RS_CONTENT_MEMBERS: { missing: readonly string[]; where: string; joiner: ', ' | ' and ' };
  RS_MAPPING_DEFAULT_ATTRIBUTES: { field: 'content.attributes' };
  RS_MAPPING_ENC_RANK: { missing: 'enc and rank' | 'enc' | 'rank'; name: string };
  RS_MAPPING_RANKS: { count: number };
  RS_REFERENCE_MISSING: { id: unknown; text: string };
  RS_REFERENCE_WRONG_TYPE: { id: unknown; text: string };
  RS_CRED_DEF_MAPPING_SCHEMA: { schema: unknown };
  RS_ID_RESERVED: { id: string };
  RS_ID_TAKEN: { id: string };
  STATE_CORRUPT: { key: string; problem: string };
  CATCHUP_TXNS_REFUSED: { ledgerId: number; problem: string };
  REGISTRY_INVALID: { problem: string };
  HANDLER_NOT_SYNCHRONOUS: { type: string; method: 'validateDynamic' };
  INTERNAL: { problem: string };
};

/** What the catalogue holds for a code: its wrapper kind, its reason built from its data, its REJECT code. */
interface CodeSpec<D> {
  kind: ErrorKind;
  reason: (d: D) => string;
  /** Numeric code put in the REJECT `code` member (TAA rejections only). */
  replyCode?: number;
}

const s = (v: unknown): string => (typeof v === 'string' ? v : renderValue(v));

/** Renders a value inside a reason: strings as is, everything else as compact JSON, truncated. */
export function renderValue(v: unknown, max = 200): string {
  let text: string;
  if (typeof v === 'string') text = v;
  else if (v === undefined) text = 'None';
  else if (v === null) text = 'None';
  else if (typeof v === 'boolean') text = v ? 'True' : 'False';
  else if (typeof v === 'bigint' || typeof v === 'number') text = String(v);
  else {
    try {
      text = JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? x.toString() : x)) ?? String(v);
    } catch {
      text = Object.prototype.toString.call(v);
    }
  }
  return text.length > max ? `${text.slice(0, max)}...` : text;
}

/** A list as Python prints it (`[4, 5]`), for reasons that quote a request's list of integers. */
const pyList = (v: unknown): string => (Array.isArray(v) ? `[${v.map((x) => renderValue(x, 40)).join(', ')}]` : renderValue(v));

/** `validation error [<Validator>]: <problem> (<field>=<value>)` (requests.md §1.2). */
const field =
  <D extends FieldData>(problem: (d: D) => string) =>
  (d: D) =>
    `validation error [${s(d.validator)}]: ${problem(d)} (${s(d.field)}=${renderValue(d.value, 100)})`;

/** Each code's wrapper kind and reason; each reason takes its code's data as {@link RequestErrorData} types it. */
const CATALOGUE = {
  // ---- transport and parsing -------------------------------------------------------------------
  /** Message longer than MSG_LEN_LIMIT. Data: length, limit. */
  MESSAGE_TOO_LARGE: {
    kind: ErrorKind.PLAIN,
    reason: (d) => `Message will be discarded due to Message len ${s(d.length)} exceeded allowed limit of ${s(d.limit)}`,
  },
  /** Not parseable JSON (lossless parser), or not a JSON object. Data: problem. */
  MALFORMED_JSON: { kind: ErrorKind.INVALID, reason: (d) => `invalid request: ${s(d.problem)}` },

  // ---- schema (field) errors: all read `validation error [V]: <problem> (<field>=<value>)` ------
  // (every FIELD_* code but FIELD_MISSING carries FieldData, validator, field and value, and the data named below)
  /** Required fields absent. Data: validator, fields (string[]). */
  FIELD_MISSING: { kind: ErrorKind.INVALID, reason: (d) => `validation error [${s(d.validator)}]: missed fields - ${d.fields.join(', ')}. ` },
  /** Wrong JSON type. Data: validator, field, value, expected, got. */
  FIELD_TYPE: { kind: ErrorKind.INVALID, reason: field((d) => `expected types '${s(d.expected)}', got '${s(d.got)}'`) },
  /** An empty string, list or object where a non-empty one is required. */
  FIELD_EMPTY: { kind: ErrorKind.INVALID, reason: field(() => 'empty string') },
  /** String or array over its limit. Data: max. */
  FIELD_TOO_LONG: { kind: ErrorKind.INVALID, reason: field((d) => `${renderValue(d.value, 100)}... is longer than ${s(d.max)} symbols`) },
  /** Value not in an enum. Data: allowed (string[]). */
  FIELD_ENUM: {
    kind: ErrorKind.INVALID,
    reason: field((d) => `expected one of '${d.allowed.join(', ')}', unknown value '${renderValue(d.value)}'`),
  },
  /** Base58 text with characters outside the alphabet. Data: chars. */
  FIELD_BASE58_CHARS: { kind: ErrorKind.INVALID, reason: field((d) => `should not contain the following chars ${renderValue(d.chars)}`) },
  /** Base58 decodes to the wrong number of bytes. Data: length, allowed (number[]). */
  FIELD_BASE58_LENGTH: {
    kind: ErrorKind.INVALID,
    reason: field((d) => {
      const allowed = d.allowed;
      return allowed.length === 1
        ? `b58 decoded value length ${s(d.length)} should be ${allowed[0]}`
        : `b58 decoded value length ${s(d.length)} should be one of [${allowed.join(', ')}]`;
    }),
  },
  /** Neither a full nor an abbreviated verkey. */
  FIELD_VERKEY: { kind: ErrorKind.INVALID, reason: field(() => 'Neither a full verkey nor an abbreviated one. One of them was expected') },
  /** Not 64 hex digits. */
  FIELD_HASH: { kind: ErrorKind.INVALID, reason: field(() => 'not a valid hash (needs to be in hex too)') },
  /** SchemaVersion with the wrong number of parts. Data: parts. */
  FIELD_VERSION_PARTS: { kind: ErrorKind.INVALID, reason: field((d) => `invalid number of parts ${s(d.parts)}, should contain 2 or 3`) },
  /** SchemaVersion with characters other than digits and dots. */
  FIELD_VERSION_CHARS: { kind: ErrorKind.INVALID, reason: field(() => 'only dots and digits are expected') },
  /** Role not one of the role codes. */
  FIELD_ROLE: { kind: ErrorKind.INVALID, reason: field((d) => `${renderValue(d.value)} not a valid role`) },
  /** Not a usable IP literal. */
  FIELD_IP: { kind: ErrorKind.INVALID, reason: field((d) => `invalid network ip address (${renderValue(d.value)})`) },
  /** Port outside 1..65535. */
  FIELD_PORT: { kind: ErrorKind.INVALID, reason: field(() => 'network port out of the range 0-65535') },
  /** Integer below its minimum. Data: min. */
  FIELD_TOO_SMALL: { kind: ErrorKind.INVALID, reason: field((d) => (d.min === 0 ? 'negative value' : `cannot be smaller than ${s(d.min)}`)) },
  /** Integer above its maximum. Data: max. */
  FIELD_TOO_LARGE: { kind: ErrorKind.INVALID, reason: field((d) => `cannot be greater than ${s(d.max)}`) },
  /** Any other field rule; data.problem is the fragment (e.g. `should be a dict`). */
  FIELD_INVALID: { kind: ErrorKind.INVALID, reason: field((d) => s(d.problem)) },

  // ---- envelope (requests.md §1.1) --------------------------------------------------------------
  UNKNOWN_TYPE: { kind: ErrorKind.INVALID, reason: (d) => `invalid type: ${s(d.type)}` },
  SIGNATURE_AND_SIGNATURES: { kind: ErrorKind.INVALID, reason: () => 'Request can not contain both fields "signatures" and "signature"' },
  MISSING_IDENTIFIER: { kind: ErrorKind.INVALID, reason: () => 'Missing both signatures and identifier' },
  IDENTIFIER_NOT_IN_SIGNATURES: { kind: ErrorKind.INVALID, reason: () => 'The identifier is not contained in signatures' },
  ENDORSER_NOT_SIGNED: { kind: ErrorKind.INVALID, reason: () => 'Endorser must sign the request' },
  ENDORSED_WITHOUT_AUTHOR: { kind: ErrorKind.INVALID, reason: () => "Author's Identifier must be present when sending via Endorser" },
  ENDORSED_AUTHOR_NOT_SIGNED: { kind: ErrorKind.INVALID, reason: () => 'Author must sign the request when sending via Endorser' },
  PROTOCOL_VERSION_MISSING: { kind: ErrorKind.INVALID, reason: () => 'missed fields - protocolVersion' },
  PROTOCOL_VERSION_OLD: {
    kind: ErrorKind.INVALID,
    reason: (d) =>
      `Message version (${s(d.version)}) differs from current protocol version. Make sure that the latest LibIndy is used and \`set_protocol_version(2)\` is called`,
  },
  /** Data: version (the value sent). */
  PROTOCOL_VERSION_UNKNOWN: {
    kind: ErrorKind.INVALID,
    reason: () => 'Unknown protocol version value. Make sure that the latest LibIndy is used and `set_protocol_version(2)` is called',
  },
  /** A write or action without any signature. */
  SIGNATURE_MISSING: { kind: ErrorKind.SIGNATURE, reason: () => 'missing signature' },
  /** Request JSON whose ATTRIB hashing or serialization fails (e.g. non-string raw). Data: problem. */
  SERIALIZATION_FAILED: { kind: ErrorKind.INVALID, reason: (d) => `request cannot be serialized: ${s(d.problem)}` },

  // ---- authentication (requests.md §1.2 step 4) -----------------------------------------------
  UNKNOWN_SIGNER: { kind: ErrorKind.SIGNATURE, reason: (d) => `could not authenticate, verkey for ${s(d.did)} cannot be found` },
  /** Data: required, valid, invalid (count), bad ([{did, signature}]). */
  INSUFFICIENT_SIGNATURES: {
    kind: ErrorKind.SIGNATURE,
    reason: (d) => {
      const bad = d.bad.map((b) => `did=${b.did}, signature=${b.signature}`).join('; ');
      return `insufficient number of valid signatures, ${s(d.required)} is required but ${s(d.valid)} valid and ${s(d.invalid)} invalid have been provided. The following signatures are invalid: ${bad}`;
    },
  },

  // ---- receipt-level refusals -------------------------------------------------------------------
  POOL_READ_ONLY: { kind: ErrorKind.INVALID, reason: () => 'Pool is in readonly mode, try again in 60 seconds' },
  DUPLICATE_DIFFERENT_SIGNATURES: { kind: ErrorKind.INVALID, reason: () => 'Same txn was already ordered with different signatures or pluggable fields' },
  /** At ordering: the payload is already ordered or already in an uncommitted batch. Data: payloadDigest. */
  ALREADY_ORDERED: { kind: ErrorKind.INVALID, reason: (d) => `Request with payload digest ${s(d.payloadDigest)} was already ordered` },
  /** The request's type does not belong to the ledger of the batch. Data: type, ledgerId. */
  WRONG_LEDGER: { kind: ErrorKind.INVALID, reason: (d) => `Request of type ${s(d.type)} cannot be ordered in a batch of ledger ${s(d.ledgerId)}` },
  /** Reads and actions are not ordered. Data: type. */
  NOT_A_WRITE: { kind: ErrorKind.INVALID, reason: (d) => `Request of type ${s(d.type)} is not a write and cannot be ordered` },
  EXTERNAL_NODE_UPGRADE: { kind: ErrorKind.INVALID, reason: () => 'External NODE_UPGRADE requests are not allowed' },
  /** A client's AUDIT txn: the nodes append one to every batch (formats.md §10.1). */
  EXTERNAL_AUDIT: { kind: ErrorKind.INVALID, reason: () => 'External audit requests are not allowed' },

  // ---- TAA acceptance (requests.md §1.6; REJECT codes 200-207) ---------------------------------
  TAA_NOT_EXPECTED: {
    kind: ErrorKind.TAA,
    replyCode: RejectCode.TAA_NOT_EXPECTED_FOR_LEDGER,
    reason: (d) => rejectReason(RejectCode.TAA_NOT_EXPECTED_FOR_LEDGER, s(d.ledgerId)),
  },
  TAA_MISSING: { kind: ErrorKind.TAA, replyCode: RejectCode.TAA_MISSING, reason: (d) => rejectReason(RejectCode.TAA_MISSING, s(d.ledgerId)) },
  TAA_WRONG_DIGEST: { kind: ErrorKind.TAA, replyCode: RejectCode.TAA_WRONG_DIGEST, reason: (d) => rejectReason(RejectCode.TAA_WRONG_DIGEST, s(d.digest)) },
  TAA_RETIRED: {
    kind: ErrorKind.TAA,
    replyCode: RejectCode.TAA_RETIRED,
    reason: (d) => rejectReason(RejectCode.TAA_RETIRED, s(d.version), s(d.seqNo), s(d.txnTime)),
  },
  TAA_TIME_TOO_PRECISE: { kind: ErrorKind.TAA, replyCode: RejectCode.TAA_TOO_PRECISE, reason: (d) => rejectReason(RejectCode.TAA_TOO_PRECISE, s(d.time)) },
  TAA_TIME_INAPPROPRIATE: {
    kind: ErrorKind.TAA,
    replyCode: RejectCode.TAA_TIME_INAPPROPRIATE,
    reason: (d) => rejectReason(RejectCode.TAA_TIME_INAPPROPRIATE, s(d.time), s(d.low), s(d.high)),
  },
  /** Data: mechanism, labels (string[], rendered as Python renders a list of strings). */
  TAA_MECHANISM_INAPPROPRIATE: {
    kind: ErrorKind.TAA,
    replyCode: RejectCode.TAA_MECHANISM_INAPPROPRIATE,
    reason: (d) => rejectReason(RejectCode.TAA_MECHANISM_INAPPROPRIATE, s(d.mechanism), `[${d.labels.map((l) => `'${l}'`).join(', ')}]`),
  },
  TAA_TIME_OUT_OF_RANGE: {
    kind: ErrorKind.TAA,
    replyCode: RejectCode.TAA_TIME_OUT_OF_RANGE,
    reason: (d) => rejectReason(RejectCode.TAA_TIME_OUT_OF_RANGE, s(d.time)),
  },

  // ---- authorization (auth-rules.md §4) --------------------------------------------------------
  AUTH_NOT_ALLOWED: { kind: ErrorKind.UNAUTHORIZED, reason: (d) => `Request can not be authorized as action is not allowed: ${s(d.request)}` },
  AUTH_FORBIDDEN: { kind: ErrorKind.UNAUTHORIZED, reason: () => 'The action is forbidden' },
  /** Data: roleName, field, typeName. */
  AUTH_NOT_OWNER: {
    kind: ErrorKind.UNAUTHORIZED,
    reason: (d) =>
      d.field !== '*'
        ? `${s(d.roleName)} can not touch ${s(d.field)} field since only the owner can modify it`
        : `${s(d.roleName)} can not edit ${s(d.typeName)} txn since only owner can modify it`,
  },
  AUTH_AUTHOR_NOT_FOUND: { kind: ErrorKind.UNAUTHORIZED, reason: (d) => `sender's DID ${s(d.did)} is not found in the Ledger` },
  AUTH_AUTHOR_MUST_SIGN: { kind: ErrorKind.UNAUTHORIZED, reason: () => 'Author must sign the transaction' },
  AUTH_NOT_ENOUGH_SIGNATURES: { kind: ErrorKind.UNAUTHORIZED, reason: (d) => `Not enough ${s(d.roleName)} signatures` },
  /** Data: rule (str of the OR), failures (string[] already rendered). */
  AUTH_OR_FAILED: {
    kind: ErrorKind.UNAUTHORIZED,
    reason: (d) => `Rule for this action is: ${s(d.rule)}\nFailed checks:\n${d.failures.join('\n')}`,
  },
  AUTH_ENDORSER_ROLE: { kind: ErrorKind.UNAUTHORIZED, reason: () => "Endorser must have one of the following roles: {'ENDORSER'}" },
  AUTH_ENDORSER_MUST_SIGN: { kind: ErrorKind.UNAUTHORIZED, reason: () => 'Endorser must sign the transaction' },
  AUTH_ENDORSER_FIELD_REQUIRED: { kind: ErrorKind.UNAUTHORIZED, reason: () => "'Endorser' field must be explicitly set for the endorsed transaction" },
  /** An update of an object by someone else where no rule applies (NYM alias-only update). Data: dest. */
  AUTH_EMPTY: { kind: ErrorKind.UNAUTHORIZED, reason: () => '' },

  // ---- auth rules (AUTH_RULE / AUTH_RULES / GET_AUTH_RULE; auth-rules.md §3.2, §6) --------------
  CONSTRAINT_REQUIRED: { kind: ErrorKind.INVALID, reason: () => 'Fields auth_constraints and constraint are required and should not be an empty list.' },
  CONSTRAINT_ID_REQUIRED: { kind: ErrorKind.INVALID, reason: () => 'Field constraint_id is required' },
  CONSTRAINT_LIST_EMPTY: { kind: ErrorKind.INVALID, reason: () => 'Fields auth_constraints should not be an empty list.' },
  CONSTRAINT_ROLE: { kind: ErrorKind.INVALID, reason: (d) => `Role ${renderValue(d.role)} is not acceptable` },
  CONSTRAINT_OFF_LEDGER_ROLE: {
    kind: ErrorKind.INVALID,
    reason: (d) => `'off_ledger_signature' can be set to True only if any role is accepted (role='*'). Got ${renderValue(d.role)} role instead.`,
  },
  CONSTRAINT_UNEXPECTED_FIELD: { kind: ErrorKind.INVALID, reason: (d) => `Unexpected field ${s(d.name)} in ${s(d.constraintId)} constraint` },
  AUTH_RULE_EDIT_NEEDS_OLD: {
    kind: ErrorKind.INVALID,
    reason: () => 'Transaction for change authentication rule for auth_action=EDIT must contain field old_value',
  },
  AUTH_RULE_ADD_WITH_OLD: {
    kind: ErrorKind.INVALID,
    reason: () => 'Transaction for change authentication rule for auth_action=ADD must not contain field old_value',
  },
  AUTH_RULE_UNKNOWN: { kind: ErrorKind.INVALID, reason: (d) => `Unknown authorization rule: key '${s(d.key)}' is not found in authorization map.` },
  AUTH_RULE_KEY_INCOMPLETE: { kind: ErrorKind.INVALID, reason: () => 'Not enough fields to build an auth key.' },

  // ---- NODE (requests.md §5.1) ----------------------------------------------------------------
  NODE_DEST_NOT_KEY: { kind: ErrorKind.INVALID, reason: (d) => `Node's dest is not correct Ed25519 key. Dest: ${s(d.dest)}` },
  NODE_VERKEY_NOT_ALLOWED: { kind: ErrorKind.INVALID, reason: () => "Node's verkey cannot be set: the node id is its key" },
  NODE_BLS_POP_MISSING: { kind: ErrorKind.INVALID, reason: () => 'A Proof of possession must be provided with BLS key' },
  NODE_BLS_POP_UNNEEDED: { kind: ErrorKind.INVALID, reason: () => 'A Proof of possession is not needed without BLS key' },
  NODE_BLS_POP_INCORRECT: { kind: ErrorKind.INVALID, reason: (d) => `Proof of possession ${s(d.pop)} is incorrect for BLS key ${s(d.key)}` },
  NODE_MISSING_FIELDS: { kind: ErrorKind.UNAUTHORIZED, reason: () => "Missing some of {'node_ip', 'node_port', 'client_ip', 'client_port', 'alias'}" },
  NODE_SAME_HA: { kind: ErrorKind.UNAUTHORIZED, reason: () => 'node and client ha cannot be same' },
  NODE_STEWARD_HAS_NODE: { kind: ErrorKind.UNAUTHORIZED, reason: (d) => `${s(d.author)} already has a node` },
  /** Data: data (request data), problem: one of the conflict texts. */
  NODE_CONFLICT: {
    kind: ErrorKind.UNAUTHORIZED,
    reason: (d) => `existing data has conflicts with request data ${renderValue(d.data, 1000)}. Error: ${s(d.problem)}`,
  },
  NODE_SAME_DATA: { kind: ErrorKind.UNAUTHORIZED, reason: () => 'node already has the same data as requested' },

  // ---- POOL_UPGRADE (requests.md §5.2) ----------------------------------------------------------
  /** Data: schedule, problem. */
  UPGRADE_SCHEDULE_INVALID: { kind: ErrorKind.INVALID, reason: (d) => `${renderValue(d.schedule, 1000)} not a valid schedule since ${s(d.problem)}` },
  UPGRADE_ALREADY_SCHEDULED: { kind: ErrorKind.INVALID, reason: (d) => `Upgrade '${s(d.name)}' is already scheduled` },
  UPGRADE_PACKAGE_EMPTY: { kind: ErrorKind.INVALID, reason: () => 'Upgrade package name is empty' },
  UPGRADE_VERSION_INVALID: { kind: ErrorKind.INVALID, reason: (d) => `invalid target version ${s(d.version)} for version class ${s(d.versionClass)}: ` },
  UPGRADE_PACKAGE_NOT_INSTALLED: { kind: ErrorKind.INVALID, reason: (d) => `package ${s(d.pkg)} is not installed and cannot be upgraded` },
  UPGRADE_PACKAGE_FOREIGN: { kind: ErrorKind.INVALID, reason: (d) => `Package ${s(d.pkg)} doesn't belong to pool` },
  UPGRADE_NOT_UPGRADABLE: { kind: ErrorKind.INVALID, reason: (d) => `Version ${s(d.version)} is not upgradable` },

  // ---- POOL_RESTART (requests.md §8.1) ----------------------------------------------------------
  RESTART_DATETIME_INVALID: { kind: ErrorKind.INVALID, reason: (d) => `datetime ${s(d.value)} is not valid` },

  // ---- TAA / AML writes (requests.md §5.7, §5.8) --------------------------------------------------
  TAA_AML_NOT_SET: { kind: ErrorKind.INVALID, reason: () => 'TAA txn is forbidden until TAA AML is set. Send TAA AML first.' },
  TAA_CREATE_WITHOUT_TEXT: { kind: ErrorKind.INVALID, reason: () => "Cannot create transaction author agreement without a 'text' field." },
  TAA_CREATE_WITH_RETIREMENT: { kind: ErrorKind.INVALID, reason: () => "Cannot create transaction author agreement with a 'retirement_ts' field." },
  TAA_RATIFICATION_IN_FUTURE: { kind: ErrorKind.INVALID, reason: () => "Cannot create transaction author agreement with 'ratification_ts' set in future." },
  TAA_TEXT_CHANGE: { kind: ErrorKind.INVALID, reason: () => 'Changing a text of existing transaction author agreement is forbidden' },
  TAA_RATIFICATION_CHANGE: { kind: ErrorKind.INVALID, reason: () => 'Changing ratification date of existing transaction author agreement is forbidden' },
  TAA_RETIRE_WHILE_DISABLED: { kind: ErrorKind.INVALID, reason: () => 'Retirement date cannot be changed when TAA enforcement is disabled.' },
  TAA_RETIRE_LATEST: { kind: ErrorKind.INVALID, reason: () => 'The latest transaction author agreement cannot be retired.' },
  TAA_TS_OUT_OF_RANGE: { kind: ErrorKind.INVALID, reason: (d) => `${s(d.field)} = ${s(d.ts)} is out of range.` },
  AML_EMPTY: { kind: ErrorKind.INVALID, reason: () => 'TXN_AUTHOR_AGREEMENT_AML request must contain at least one acceptance mechanism' },
  AML_VERSION_EXISTS: { kind: ErrorKind.INVALID, reason: () => 'Version of TAA AML must be unique and it cannot be modified' },
  /** TXN_AUTHOR_AGREEMENT_DISABLE while no agreement is enabled (requests.md §7.2). */
  TAA_ALREADY_DISABLED: { kind: ErrorKind.INVALID, reason: () => 'Transaction author agreement is already disabled.' },

  // ---- LEDGERS_FREEZE (requests.md §7.3) ----------------------------------------------------------
  /** A base ledger (pool, domain, config, audit) named in `ledgers_ids`. */
  FREEZE_BASE_LEDGER: { kind: ErrorKind.INVALID, reason: () => "(0, 1, 2, 3) ledgers can't be frozen" },
  /** A ledger id the last audit txn does not size. Data: ids (the requested list). */
  FREEZE_LEDGER_NEVER_EXISTED: { kind: ErrorKind.INVALID, reason: (d) => `One or more ledgers from ${pyList(d.ids)} have never existed` },
  /** A write to a frozen ledger. Data: type (type code), ledgerId. */
  LEDGER_FROZEN: { kind: ErrorKind.INVALID, reason: (d) => `'${s(d.type)}' transaction is forbidden because of '${s(d.ledgerId)}' ledger is frozen` },

  // ---- reads (requests.md §9) -------------------------------------------------------------------
  READ_INVALID_LEDGER: { kind: ErrorKind.INVALID, reason: (d) => `Invalid ledger id ${s(d.ledgerId)}` },
  READ_INVALID_SEQNO: { kind: ErrorKind.INVALID, reason: (d) => `Invalid sequence number: ${s(d.seqNo)} is smaller than 1` },
  READ_SEQNO_AND_TIMESTAMP: { kind: ErrorKind.INVALID, reason: () => 'seqNo and timestamp are mutually exclusive; only one should be specified' },
  GET_TAA_SELECTORS: {
    kind: ErrorKind.INVALID,
    reason: () => 'GET_TXN_AUTHOR_AGREEMENT request can have at most one of the following parameters: version, digest, timestamp',
  },
  GET_TAA_AML_SELECTORS: { kind: ErrorKind.INVALID, reason: () => '"version" and "timestamp" cannot be used in GET_TXN_AUTHOR_AGREEMENT_AML request together' },

  // ---- NYM (requests.md §3.1) -------------------------------------------------------------------
  NYM_DEST_MISSING: { kind: ErrorKind.INVALID, reason: () => 'dest needs to be present' },
  NYM_VERSION_INVALID: { kind: ErrorKind.INVALID, reason: (d) => `Version must be one of {0, 1, 2}, received ${s(d.version)}` },
  NYM_DIDDOC_ID: { kind: ErrorKind.INVALID, reason: () => 'diddocContent must not have `id` at root' },
  NYM_DIDDOC_VERKEY_FRAGMENT: { kind: ErrorKind.INVALID, reason: () => 'diddocContent must not have object with `id` containing fragment `verkey`' },
  NYM_OFF_LEDGER_NOT_SELF: {
    kind: ErrorKind.INVALID,
    reason: () => 'DID which is not stored on ledger can send nym txn only if appropriate auth_rules set and sender did equal to destination nym',
  },
  NYM_OFF_LEDGER_NO_VERKEY: { kind: ErrorKind.INVALID, reason: () => 'Non-ledger nym txn must contain verkey for new did' },
  NYM_VERSION_1_MISMATCH: { kind: ErrorKind.INVALID, reason: () => 'Identifier with version 1 must be first 16 bytes of verkey' },
  NYM_VERSION_2_MISMATCH: { kind: ErrorKind.INVALID, reason: () => 'Identifier with version 2 must be first 16 bytes of SHA256 of verkey' },
  NYM_VERSION_ON_UPDATE: { kind: ErrorKind.INVALID, reason: () => 'Cannot set version on existing nym' },

  // ---- ATTRIB (requests.md §3.2) ----------------------------------------------------------------
  ATTRIB_NONE: { kind: ErrorKind.INVALID, reason: (d) => `validation error [${s(d.validator ?? 'ClientAttribOperation')}]: missed fields - raw, enc, hash. ` },
  ATTRIB_SEVERAL: { kind: ErrorKind.INVALID, reason: () => 'only one field from raw, enc, hash is expected' },
  ATTRIB_DEST_UNKNOWN: { kind: ErrorKind.INVALID, reason: () => 'dest should be added before adding attribute for it' },
  ATTRIB_ENDPOINT_FORMAT: { kind: ErrorKind.INVALID, reason: () => 'invalid endpoint format ip_address:port' },
  ATTRIB_ENDPOINT_ADDRESS: { kind: ErrorKind.INVALID, reason: () => 'invalid endpoint address' },
  ATTRIB_ENDPOINT_PORT: { kind: ErrorKind.INVALID, reason: () => 'invalid endpoint port' },
  GET_ATTR_SELECTOR: { kind: ErrorKind.INVALID, reason: () => 'ATTRIB should have one and only one of raw, enc, hash' },

  // ---- SCHEMA / CLAIM_DEF / revocation (requests.md §3.3-§3.6) -----------------------------------
  SCHEMA_IMMUTABLE: { kind: ErrorKind.INVALID, reason: () => 'SCHEMA objects are immutable and cannot be updated' },
  CLAIM_DEF_REF_UNKNOWN: { kind: ErrorKind.INVALID, reason: (d) => `Mentioned seqNo (${s(d.ref)}) doesn't exist.` },
  CLAIM_DEF_REF_NOT_SCHEMA: { kind: ErrorKind.INVALID, reason: (d) => `Mentioned seqNo (${s(d.ref)}) isn't seqNo of the schema.` },
  REVOC_CRED_DEF_ID_FORMAT: {
    kind: ErrorKind.INVALID,
    reason: () => "Format of credDefId field is not acceptable. Expected: 'did:marker:signature_type:schema_ref' or 'did:marker:signature_type:schema_ref:tag'",
  },
  REVOC_CRED_DEF_UNKNOWN: { kind: ErrorKind.INVALID, reason: (d) => `There is no any CRED_DEF by path: ${s(d.credDefId)}` },
  REVOC_DEF_UNKNOWN: { kind: ErrorKind.INVALID, reason: (d) => `There is no any REVOC_REG_DEF by path: ${s(d.revocRegDefId)}` },
  REVOC_INDEX_IN_BOTH: { kind: ErrorKind.INVALID, reason: () => "Can not have an index in both 'issued' and 'revoked' lists" },
  REVOC_PREV_ACCUM_WITHOUT_ENTRY: { kind: ErrorKind.INVALID, reason: (d) => `Got 'prevAccum': ${s(d.prevAccum)} but there is no previous REVOC_REG_ENTRY` },
  REVOC_ACCUM_MISMATCH: {
    kind: ErrorKind.INVALID,
    reason: (d) => `The current accumulator value: ${s(d.current)} must be equal to the last accumulator value: ${s(d.last)} in transaction`,
  },
  REVOC_LISTS_EMPTY: { kind: ErrorKind.INVALID, reason: () => "Got 'prevAccum' and 'accum' but 'issued' and 'revoked' lists are empty" },
  REVOC_ACCUM_UNCHANGED: { kind: ErrorKind.INVALID, reason: () => 'Got equal accum and prev_accum but issued and revoked indices are not empty' },
  /** ISSUANCE_BY_DEFAULT: issued indices not in the revoked set. Data: indices, current (rendered lists). */
  REVOC_ISSUED_NOT_REVOKED: {
    kind: ErrorKind.INVALID,
    reason: (d) => `Issued indices from txn: ${s(d.indices)} are not present in the current revoked list from state: ${s(d.current)}`,
  },
  /** ISSUANCE_BY_DEFAULT: revoked indices already revoked. Data: indices, current. */
  REVOC_ALREADY_REVOKED: {
    kind: ErrorKind.INVALID,
    reason: (d) => `Revoked indices from txn: ${s(d.indices)} are already revoked in current state: ${s(d.current)}`,
  },
  /** ISSUANCE_ON_DEMAND: revoked indices not in the issued set. Data: indices, current. */
  REVOC_REVOKED_NOT_ISSUED: {
    kind: ErrorKind.INVALID,
    reason: (d) => `Revoked indices from txn: ${s(d.indices)} are not present in the current issued list from state: ${s(d.current)}`,
  },
  /** ISSUANCE_ON_DEMAND: issued indices already issued. Data: indices, current. */
  REVOC_ALREADY_ISSUED: {
    kind: ErrorKind.INVALID,
    reason: (d) => `Issued indices from txn: ${s(d.indices)} are already issued in current state: ${s(d.current)}`,
  },
  GET_REVOC_DELTA_RANGE: { kind: ErrorKind.INVALID, reason: (d) => `Timestamp FROM more then TO: ${s(d.from)} > ${s(d.to)}` },

  // ---- rich schema (requests.md §4) ---------------------------------------------------------------
  RS_CONTENT_NOT_JSON: { kind: ErrorKind.INVALID, reason: () => "'content' must be a JSON serialized string" },
  RS_JSONLD_FIELD: { kind: ErrorKind.INVALID, reason: (d) => `'content' must be a valid JSON-LD and have non-empty '${s(d.field)}' field` },
  RS_ID_MISMATCH: { kind: ErrorKind.INVALID, reason: (d) => `content's @id must be equal to id=${s(d.id)}` },
  RS_DUPLICATE_METADATA: {
    kind: ErrorKind.INVALID,
    reason: (d) =>
      `An object with rsName="${s(d.rsName)}", rsVersion="${s(d.rsVersion)}" and rsType="${s(d.rsType)}" already exists. Please choose different rsName, rsVersion or rsType`,
  },
  RS_IMMUTABLE: { kind: ErrorKind.INVALID, reason: (d) => `${s(d.typeName)} objects are immutable and cannot be updated` },
  RS_NAME_VERSION_CHANGE: { kind: ErrorKind.INVALID, reason: () => 'rsName and rsVersion of an existing object cannot be changed' },
  /** JSON_LD_CONTEXT content without `@context`. */
  RS_CONTEXT_MISSING: { kind: ErrorKind.INVALID, reason: () => "'content' must contain a @context field" },
  /** `@context` neither a URI, an array nor an object. */
  RS_CONTEXT_TYPE: { kind: ErrorKind.INVALID, reason: () => "'@context' value must be url, array, or object" },
  /** A `@context` URI not matching the URI pattern. Data: uri. */
  RS_CONTEXT_URI: { kind: ErrorKind.INVALID, reason: (d) => `@context URI ${s(d.uri)} badly formed` },
  /** Required members of a content object missing. Data: missing (string[]), where, joiner (', ' or ' and '). */
  RS_CONTENT_MEMBERS: {
    kind: ErrorKind.INVALID,
    reason: (d) => `${d.missing.map((m) => `'${m}'`).join(s(d.joiner))} must be set in '${s(d.where)}'`,
  },
  /** A mapping whose attributes lack `issuer` or `issuanceDate`. */
  RS_MAPPING_DEFAULT_ATTRIBUTES: { kind: ErrorKind.INVALID, reason: () => "'issuer' and 'issuanceDate' must be in content's 'attributes'" },
  /** A mapping leaf without enc and/or rank. Data: missing ('enc and rank' | 'enc' | 'rank'), name. */
  RS_MAPPING_ENC_RANK: { kind: ErrorKind.INVALID, reason: (d) => `${s(d.missing)} must be set for the attribute '${s(d.name)}'` },
  /** Mapping ranks not exactly 1..N. Data: count. */
  RS_MAPPING_RANKS: {
    kind: ErrorKind.INVALID,
    reason: (d) => `the attribute's ranks are not sequential: expected ranks are all values from 1 to ${s(d.count)}`,
  },
  /** A referenced rich schema object that is not on the ledger (wording per type, requests.md §4.2). Data: text, id. */
  RS_REFERENCE_MISSING: { kind: ErrorKind.INVALID, reason: (d) => s(d.text) },
  /** A referenced object of the wrong rsType (wording per field, requests.md §4.2). Data: text, id. */
  RS_REFERENCE_WRONG_TYPE: { kind: ErrorKind.INVALID, reason: (d) => s(d.text) },
  /** A cred def whose mapping is for another schema (transactions.md §7). Data: schema. */
  RS_CRED_DEF_MAPPING_SCHEMA: { kind: ErrorKind.INVALID, reason: (d) => `'mapping' field must reference a mapping whose 'schema' is ${s(d.schema)}` },
  /** (Quire) A rich schema id shaped like another domain state key. Data: id. */
  RS_ID_RESERVED: { kind: ErrorKind.INVALID, reason: (d) => `id=${s(d.id)} has the form of a ledger state key and cannot name a rich schema object` },
  /** (Quire) The id already names a ledger value of another kind or another rsType. Data: id. */
  RS_ID_TAKEN: { kind: ErrorKind.INVALID, reason: (d) => `id=${s(d.id)} is already used by another ledger object` },

  // ---- internal --------------------------------------------------------------------------------
  /** A stored state value that does not decode. Data: key, problem. */
  STATE_CORRUPT: { kind: ErrorKind.INVALID, reason: (d) => `state value at ${s(d.key)} is corrupt: ${s(d.problem)}` },
  /** Txns received in catch-up that do not append, prove or apply. Data: ledgerId, problem. */
  CATCHUP_TXNS_REFUSED: { kind: ErrorKind.INVALID, reason: (d) => `caught-up txns of ledger ${s(d.ledgerId)} refused: ${s(d.problem)}` },
  /** (Quire) A handler registry or auth map built with a conflict or a malformed entry: a programming or plugin configuration error. Data: problem. */
  REGISTRY_INVALID: { kind: ErrorKind.PLAIN, reason: (d) => `request handlers: ${s(d.problem)}` },
  /** (Quire) A plugin handler's synchronous method returned a promise, which is not awaited: the request is refused. Data: type, method. */
  HANDLER_NOT_SYNCHRONOUS: {
    kind: ErrorKind.INVALID,
    reason: (d) => `the handler of type ${s(d.type)} returned a promise from ${s(d.method)}, which must be synchronous`,
  },
  /** Any unexpected failure while processing a request (never escapes the executor). Data: problem. */
  INTERNAL: { kind: ErrorKind.INVALID, reason: (d) => `internal error while processing the request: ${s(d.problem)}` },
} satisfies { [K in keyof RequestErrorData]: CodeSpec<RequestErrorData[K]> };

/** Stable codes of {@link RequestError}: `RequestErrorCode.TAA_MISSING === 'TAA_MISSING'`. */
export const RequestErrorCode = Object.fromEntries(Object.keys(CATALOGUE).map((k) => [k, k])) as { readonly [K in keyof typeof CATALOGUE]: K };
export type RequestErrorCode = keyof typeof CATALOGUE;

/**
 * The catalogue entry of a code known only at run time. Sound: every RequestError and every {@link reasonFor} pairs a
 * code with that code's data (the constructor's and reasonFor's parameters check it), so the entry's reason is given
 * the data it was written for.
 */
function specOf(code: RequestErrorCode): CodeSpec<Record<string, unknown>> | undefined {
  return CATALOGUE[code] as CodeSpec<Record<string, unknown>> | undefined;
}

/** The reason text for a code and its data (the one place reasons are built). */
export function reasonFor<K extends RequestErrorCode>(code: K, data: RequestErrorData[K]): string {
  return specOf(code)?.reason(data) ?? String(code);
}

export interface RequestErrorOptions {
  /** Overrides the code's default wrapper kind. */
  kind?: ErrorKind;
}

/**
 * The arguments of `new RequestError`: a code, the data of that code (optional when none of its fields is required;
 * another code's data is refused), options.
 */
export type RequestErrorArgs = {
  [K in RequestErrorCode]: None extends RequestErrorData[K]
    ? [code: K, data?: RequestErrorData[K], opts?: RequestErrorOptions]
    : [code: K, data: RequestErrorData[K], opts?: RequestErrorOptions];
}[RequestErrorCode];

/** The arguments of `new RequestError` for the codes K only: what a relay that can raise no other code keeps. */
export type RequestErrorArgsOf<K extends RequestErrorCode> = Extract<RequestErrorArgs, [K, ...unknown[]]>;

/** A refused request: stable `code`, `data` for the reason, `reason` text, wrapper `kind`, TAA `replyCode`. */
export class RequestError extends QuireError {
  declare readonly code: RequestErrorCode;
  /** The data of the code (any code's, as read: narrow by `code`). */
  declare readonly data: RequestErrorData[RequestErrorCode] & Record<string, unknown>;
  readonly kind: ErrorKind;
  readonly reason: string;
  /** The integer REJECT `code` (200-207 for TAA rejections), else null. */
  readonly replyCode: number | null;

  constructor(...args: RequestErrorArgs) {
    const [code, data = {}, opts = {}] = args;
    const spec = specOf(code);
    const reason = spec ? spec.reason(data) : String(code);
    super(code, data, reason);
    this.name = 'RequestError';
    this.reason = reason;
    this.kind = opts.kind ?? spec?.kind ?? ErrorKind.INVALID;
    this.replyCode = spec?.replyCode ?? null;
  }
}

export function isRequestError(e: unknown): e is RequestError {
  return e instanceof RequestError;
}

/** Converts anything thrown into a RequestError (unexpected errors become INTERNAL, never escape). */
export function toRequestError(e: unknown): RequestError {
  if (e instanceof RequestError) return e;
  const problem = e instanceof Error ? `${e.name}: ${e.message}` : renderValue(e);
  return new RequestError(RequestErrorCode.INTERNAL, { problem });
}

/** Python `repr` of a string (single quotes unless the text holds `'` and no `"`). */
export function pyRepr(text: string): string {
  const useDouble = text.includes("'") && !text.includes('"');
  const q = useDouble ? '"' : "'";
  let out = '';
  for (const ch of text) {
    if (ch === '\\') out += '\\\\';
    else if (ch === q) out += `\\${q}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch < ' ' || ch === '\x7f') out += `\\x${ch.charCodeAt(0).toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return q + out + q;
}

/**
 * The reason as it goes into a REQNACK/REJECT (requests.md §1.8):
 * `client request invalid: InvalidClientRequest('<identifier>', <reqId>, '<text>')`.
 */
export function wrapReason(err: RequestError, identifier: string | null | undefined, reqId: unknown): string {
  if (err.kind === ErrorKind.PLAIN) return err.reason;
  if (err.kind === ErrorKind.SIGNATURE) return `client request invalid: ${err.reason}`;
  const idText = identifier === null || identifier === undefined ? 'None' : pyRepr(identifier);
  const reqIdText = typeof reqId === 'number' || typeof reqId === 'bigint' ? String(reqId) : 'None';
  const tail = err.replyCode !== null ? `, ${err.replyCode}` : '';
  return `client request invalid: ${err.kind}(${idText}, ${reqIdText}, ${pyRepr(err.reason)}${tail})`;
}
