/**
 * GET_AUTH_RULE ("121", config; auth-rules.md §6.2): all rules (override or default, map order,
 * no proof), or one rule with a proof of its `1:<key>` state key. Elements feed back into
 * AUTH_RULE / AUTH_RULES unchanged.
 */
import { LedgerId, parseJson, TxnType } from '@quire/common';
import { constraintFromState, type Constraint } from '../auth/constraint.js';
import { DEFAULT_MAP } from '../auth/engine.js';
import { checkEntryRule, ruleElement } from '../auth/rule-entry.js';
import { authRuleStateKey } from '../auth/rule-key.js';
import { RequestError, RequestErrorCode } from '../errors.js';
import type { ReadContext, ReadHandler } from '../handler.js';
import { Limits, nullable, objectSchema, oneOf, optional, str } from '../validation/index.js';

const VALIDATOR = 'ClientGetAuthRuleOperation';
const schema = objectSchema(VALIDATOR, {
  auth_type: optional(str({ max: Limits.NAME })),
  auth_action: optional(oneOf(['ADD', 'EDIT'])),
  field: optional(str({ max: Limits.NAME })),
  old_value: optional(nullable(str({ max: Limits.NAME, allowEmpty: true }))),
  new_value: optional(nullable(str({ max: Limits.NAME, allowEmpty: true }))),
});
const KEY_FIELDS = ['auth_type', 'auth_action', 'field', 'new_value'];
const decoder = new TextDecoder();

function decode(bytes: Uint8Array | undefined, key: string): Constraint | undefined {
  if (bytes === undefined) return undefined;
  return constraintFromState(parseJson(decoder.decode(bytes)), authRuleStateKey(key));
}

function isAll(op: Readonly<Record<string, unknown>>): boolean {
  return [...KEY_FIELDS, 'old_value'].every((f) => op[f] === undefined);
}

export const getAuthRuleHandler: ReadHandler = {
  kind: 'read',
  type: TxnType.GET_AUTH_RULE,
  name: 'GET_AUTH_RULE',
  validator: VALIDATOR,
  ledgerId: LedgerId.CONFIG,

  validateStatic(request) {
    const op = request.operation;
    schema.validate(op);
    if (isAll(op)) return;
    if (KEY_FIELDS.some((f) => op[f] === undefined)) throw new RequestError(RequestErrorCode.AUTH_RULE_KEY_INCOMPLETE);
    checkEntryRule(op);
  },

  async read(request, ctx: ReadContext) {
    const op = request.operation;
    if (isAll(op)) {
      const data = DEFAULT_MAP.rules.map((rule) =>
        ruleElement(rule, decode(ctx.get(LedgerId.CONFIG, authRuleStateKey(rule.key)), rule.key) ?? rule.constraint),
      );
      return { data, seqNo: null, txnTime: null };
    }
    const rule = checkEntryRule(op);
    const lookup = ctx.lookup(LedgerId.CONFIG, authRuleStateKey(rule.key));
    const constraint = decode(lookup.value, rule.key) ?? rule.constraint;
    return { data: [ruleElement(rule, constraint)], seqNo: null, txnTime: null, proof: { ledgerId: LedgerId.CONFIG, lookup } };
  },
};
