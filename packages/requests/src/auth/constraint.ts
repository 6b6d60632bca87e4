/**
 * Auth constraints (auth-rules.md §3): shapes, validation of submitted constraints (AUTH_RULE /
 * AUTH_RULES static validation), normalization (the form stored in config state and returned by
 * GET_AUTH_RULE), and the human-readable text used in reasons (§8).
 */
import { RequestError, RequestErrorCode } from '../errors.js';
import { fieldData, isInteger, isPlainObject, pyType } from '../validation/fields.js';

export interface RoleConstraint {
  constraint_id: 'ROLE';
  /** Role code, null (identity owner) or '*' (any role). */
  role: string | null;
  sig_count: number;
  need_to_be_owner: boolean;
  metadata: Record<string, unknown>;
  /** Present only when it was given. */
  off_ledger_signature?: boolean;
}
export interface ListConstraint {
  constraint_id: 'AND' | 'OR';
  auth_constraints: Constraint[];
}
export interface ForbiddenConstraint {
  constraint_id: 'FORBIDDEN';
}
export type Constraint = RoleConstraint | ListConstraint | ForbiddenConstraint;

export const CONSTRAINT_IDS = ['ROLE', 'AND', 'OR', 'FORBIDDEN'] as const;
const ACCEPTED_ROLES = new Set<string | null>(['0', '2', '101', '201', null, '*']);
const VALIDATOR = 'ConstraintField';
const MAX_DEPTH = 32;

/** Role names used in reasons (auth-rules.md §4.1). */
export function roleName(role: string | null | undefined): string {
  switch (role) {
    case '0':
      return 'TRUSTEE';
    case '2':
      return 'STEWARD';
    case '101':
      return 'ENDORSER';
    case '201':
      return 'NETWORK_MONITOR';
    case '*':
      return '*';
    case null:
      return 'IDENTITY_OWNER';
    default:
      return String(role);
  }
}

/**
 * Validates a submitted constraint and returns its normalized form (auth-rules.md §3.2, §6.1).
 * Throws RequestError with the spec's texts.
 */
export function parseConstraint(value: unknown, path = 'constraint', depth = 0): Constraint {
  if (value === undefined || value === null || (isPlainObject(value) && Object.keys(value).length === 0)) {
    throw new RequestError(RequestErrorCode.CONSTRAINT_REQUIRED);
  }
  const at = { validator: VALIDATOR, field: path };
  if (!isPlainObject(value)) throw new RequestError(RequestErrorCode.FIELD_TYPE, { ...fieldData(at, value), expected: 'dict', got: pyType(value) });
  if (depth > MAX_DEPTH) throw new RequestError(RequestErrorCode.FIELD_INVALID, { ...fieldData(at, '...'), problem: `nesting deeper than ${MAX_DEPTH}` });
  if (!Object.hasOwn(value, 'constraint_id')) throw new RequestError(RequestErrorCode.CONSTRAINT_ID_REQUIRED);
  const id = value.constraint_id;
  if (typeof id !== 'string' || !(CONSTRAINT_IDS as readonly string[]).includes(id)) {
    throw new RequestError(RequestErrorCode.FIELD_ENUM, {
      ...fieldData({ validator: VALIDATOR, field: `${path}.constraint_id` }, id),
      allowed: [CONSTRAINT_IDS.join(', ')],
    });
  }
  if (id === 'FORBIDDEN') return { constraint_id: 'FORBIDDEN' };
  if (id === 'AND' || id === 'OR') {
    for (const k of Object.keys(value)) {
      if (k !== 'constraint_id' && k !== 'auth_constraints')
        throw new RequestError(RequestErrorCode.CONSTRAINT_UNEXPECTED_FIELD, { name: k, constraintId: id });
    }
    const list = value.auth_constraints;
    if (!Array.isArray(list) || list.length === 0) throw new RequestError(RequestErrorCode.CONSTRAINT_LIST_EMPTY);
    return { constraint_id: id, auth_constraints: list.map((c, i) => parseConstraint(c, `${path}.auth_constraints[${i}]`, depth + 1)) };
  }
  // ROLE
  const missing = ['role', 'sig_count'].filter((k) => !Object.hasOwn(value, k));
  if (missing.length > 0) throw new RequestError(RequestErrorCode.FIELD_MISSING, { validator: VALIDATOR, fields: missing.map((m) => `${path}.${m}`) });
  const role = value.role;
  if (role !== null && typeof role !== 'string')
    throw new RequestError(RequestErrorCode.FIELD_TYPE, {
      ...fieldData({ validator: VALIDATOR, field: `${path}.role` }, role),
      expected: 'str',
      got: pyType(role),
    });
  const sig = value.sig_count;
  if (!isInteger(sig))
    throw new RequestError(RequestErrorCode.FIELD_TYPE, {
      ...fieldData({ validator: VALIDATOR, field: `${path}.sig_count` }, sig),
      expected: 'int',
      got: pyType(sig),
    });
  if (sig < 0) throw new RequestError(RequestErrorCode.FIELD_TOO_SMALL, { ...fieldData({ validator: VALIDATOR, field: `${path}.sig_count` }, sig), min: 0 });
  if (sig > 1_000_000)
    throw new RequestError(RequestErrorCode.FIELD_TOO_LARGE, { ...fieldData({ validator: VALIDATOR, field: `${path}.sig_count` }, sig), max: 1_000_000 });
  for (const k of ['need_to_be_owner', 'off_ledger_signature'] as const) {
    const v = value[k];
    if (Object.hasOwn(value, k) && typeof v !== 'boolean')
      throw new RequestError(RequestErrorCode.FIELD_TYPE, {
        ...fieldData({ validator: VALIDATOR, field: `${path}.${k}` }, v),
        expected: 'bool',
        got: pyType(v),
      });
  }
  const metadata = value.metadata;
  if (Object.hasOwn(value, 'metadata') && !isPlainObject(metadata))
    throw new RequestError(RequestErrorCode.FIELD_TYPE, {
      ...fieldData({ validator: VALIDATOR, field: `${path}.metadata` }, metadata),
      expected: 'dict',
      got: pyType(metadata),
    });
  if (!ACCEPTED_ROLES.has(role as string | null)) throw new RequestError(RequestErrorCode.CONSTRAINT_ROLE, { role });
  if (value.off_ledger_signature === true && role !== '*') throw new RequestError(RequestErrorCode.CONSTRAINT_OFF_LEDGER_ROLE, { role });
  const out: RoleConstraint = {
    constraint_id: 'ROLE',
    role: role as string | null,
    sig_count: Number(sig),
    need_to_be_owner: value.need_to_be_owner === true,
    metadata: (metadata as Record<string, unknown> | undefined) ?? {},
  };
  if (typeof value.off_ledger_signature === 'boolean') out.off_ledger_signature = value.off_ledger_signature;
  return out;
}

/** Human-readable constraint text, `str(c)` of auth-rules.md §8. */
export function constraintText(c: Constraint): string {
  switch (c.constraint_id) {
    case 'FORBIDDEN':
      return 'The action is forbidden';
    case 'AND':
      return c.auth_constraints.map(constraintText).join(' AND ');
    case 'OR':
      return c.auth_constraints.map(constraintText).join(' OR ');
    case 'ROLE':
      return roleText(c);
  }
}

function roleText(c: RoleConstraint): string {
  const n = c.sig_count;
  let text: string;
  if (n === 0) text = '';
  else if (c.off_ledger_signature)
    text = n > 1 ? `${n} signatures of any role (off-ledger included) are required` : '1 signature of any role (off-ledger included) is required';
  else if (c.role === '*') {
    if (n === 1) text = c.need_to_be_owner ? '1 signature of any role is required and needs to be owner' : '1 signature of any role is required ALL';
    else text = c.need_to_be_owner ? `${n} signatures of any role are required and needs to be owner` : `${n} signatures of any role are required`;
  } else {
    const r = c.role === null ? 'None role' : roleName(c.role);
    if (n === 1) text = c.need_to_be_owner ? `1 ${r} signature is required and needs to be owner` : `1 ${r} signature is required`;
    else text = c.need_to_be_owner ? `${n} ${r} signatures are required and needs to be owner` : `${n} ${r} signatures are required`;
  }
  const meta = Object.entries(c.metadata ?? {});
  if (text !== '' && meta.length > 0)
    text += ` with additional metadata ${meta.map(([k, v]) => `${k} ${typeof v === 'string' ? v : JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? x.toString() : x))}`).join(' ')}`;
  return text;
}

/** Decodes a normalized constraint read back from config state (throws STATE_CORRUPT when malformed). */
export function constraintFromState(value: unknown, key: string): Constraint {
  try {
    return parseConstraint(value);
  } catch (e) {
    throw new RequestError(RequestErrorCode.STATE_CORRUPT, { key, problem: e instanceof RequestError ? e.reason : 'bad constraint' });
  }
}
