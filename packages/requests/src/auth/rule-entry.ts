/**
 * One rule entry of AUTH_RULE / AUTH_RULES / GET_AUTH_RULE (auth-rules.md §6, requests.md §5.6):
 * validation of the six fields, the rule key they build, and the GET_AUTH_RULE element shape.
 */
import { RequestError, RequestErrorCode } from '../errors.js';
import { isPlainObject, nullable, oneOf, str } from '../validation/fields.js';
import { Limits } from '../validation/limits.js';
import { objectSchema, optional, required } from '../validation/schema.js';
import { type Constraint, parseConstraint } from './constraint.js';
import { DEFAULT_MAP } from './engine.js';
import { type AuthMapRule, RULE_KEY_DELIMITER } from './rule-key.js';

export interface RuleEntry {
  key: string;
  constraint: Constraint;
}

const entryFields = {
  auth_type: required(str({ max: Limits.NAME })),
  auth_action: required(oneOf(['ADD', 'EDIT'])),
  field: required(str({ max: Limits.NAME })),
  old_value: optional(nullable(str({ max: Limits.NAME, allowEmpty: true }))),
  new_value: optional(nullable(str({ max: Limits.NAME, allowEmpty: true }))),
};

const schemas = new Map<string, ReturnType<typeof objectSchema>>();
function schemaOf(validator: string): ReturnType<typeof objectSchema> {
  let s = schemas.get(validator);
  if (!s) schemas.set(validator, (s = objectSchema(validator, entryFields)));
  return s;
}

/** Builds the key of an entry's (auth_type, auth_action, field, old_value, new_value); null renders "". */
export function entryKey(e: Record<string, unknown>): string {
  const old = e.auth_action === 'ADD' ? '*' : ((e.old_value as string | null | undefined) ?? '');
  return [e.auth_type, e.auth_action, e.field, old, (e.new_value as string | null | undefined) ?? ''].join(RULE_KEY_DELIMITER);
}

/** Checks the ADD/EDIT old_value rule and that the key is a default-map key; returns the default-map rule. */
export function checkEntryRule(e: Record<string, unknown>): AuthMapRule {
  const hasOld = Object.hasOwn(e, 'old_value') && e.old_value !== undefined;
  if (e.auth_action === 'EDIT' && !hasOld) throw new RequestError(RequestErrorCode.AUTH_RULE_EDIT_NEEDS_OLD);
  if (e.auth_action === 'ADD' && hasOld) throw new RequestError(RequestErrorCode.AUTH_RULE_ADD_WITH_OLD);
  const key = entryKey(e);
  const rule = DEFAULT_MAP.rule(key);
  if (rule === undefined) throw new RequestError(RequestErrorCode.AUTH_RULE_UNKNOWN, { key });
  return rule;
}

/** Validates one AUTH_RULE operation / AUTH_RULES element and returns (key, normalized constraint). */
export function parseRuleEntry(value: unknown, validator: string, path = ''): RuleEntry {
  schemaOf(validator).validate(value, path);
  const v = value as Record<string, unknown>;
  if (!isPlainObject(v.constraint) || Object.keys(v.constraint).length === 0) {
    if (v.constraint === undefined || v.constraint === null || isPlainObject(v.constraint)) throw new RequestError(RequestErrorCode.CONSTRAINT_REQUIRED);
  }
  const constraint = parseConstraint(v.constraint, path ? `${path}.constraint` : 'constraint');
  const { key } = checkEntryRule(v);
  return { key, constraint };
}

/** A GET_AUTH_RULE element (auth-rules.md §6.2) for a default-map rule and its constraint (the override or the default). */
export function ruleElement(rule: AuthMapRule, constraint: Constraint): Record<string, unknown> {
  const out: Record<string, unknown> = { auth_type: rule.type, auth_action: rule.kind, field: rule.field };
  if (rule.kind === 'EDIT') out.old_value = rule.old;
  out.new_value = rule.new;
  out.constraint = constraint;
  return out;
}
