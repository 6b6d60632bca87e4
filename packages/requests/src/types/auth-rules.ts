/**
 * AUTH_RULES ("122", config; requests.md §5.6): several overrides in one transaction, applied in
 * array order (a later rule for the same key wins); any failing rule fails the whole request.
 */
import { canonicalJsonBytes, LedgerId, TxnType } from '@quire/common';
import { parseRuleEntry, type RuleEntry } from '../auth/rule-entry.js';
import { authRuleStateKey } from '../auth/rule-key.js';
import { RequestError, RequestErrorCode } from '../errors.js';
import type { Txn, WriteHandler } from '../handler.js';
import { isPlainObject, pyType } from '../validation/fields.js';

const VALIDATOR = 'ClientAuthRulesOperation';
const MAX_RULES = 1000;

function parseRules(data: Record<string, unknown>): RuleEntry[] {
  if (!Object.hasOwn(data, 'rules')) throw new RequestError(RequestErrorCode.FIELD_MISSING, { validator: VALIDATOR, fields: ['rules'] });
  const rules = data.rules;
  if (!Array.isArray(rules))
    throw new RequestError(RequestErrorCode.FIELD_TYPE, { validator: VALIDATOR, field: 'rules', value: rules, expected: 'list', got: pyType(rules) });
  if (rules.length === 0) throw new RequestError(RequestErrorCode.FIELD_EMPTY, { validator: VALIDATOR, field: 'rules', value: rules });
  if (rules.length > MAX_RULES)
    throw new RequestError(RequestErrorCode.FIELD_TOO_LONG, { validator: VALIDATOR, field: 'rules', value: `${rules.length} rules`, max: MAX_RULES });
  return rules.map((r, i) => {
    if (!isPlainObject(r))
      throw new RequestError(RequestErrorCode.FIELD_TYPE, { validator: VALIDATOR, field: `rules[${i}]`, value: r, expected: 'dict', got: pyType(r) });
    return parseRuleEntry(r, VALIDATOR, `rules[${i}]`);
  });
}

export const authRulesHandler: WriteHandler = {
  kind: 'write',
  type: TxnType.AUTH_RULES,
  name: 'AUTH_RULES',
  validator: VALIDATOR,
  ledgerId: LedgerId.CONFIG,

  validateStatic(request) {
    parseRules(request.operation);
  },

  validateDynamic(request, ctx) {
    ctx.auth.authorize(request, { kind: 'EDIT', field: '*', oldValue: '*', newValue: '*', isOwner: true });
  },

  updateState(txn: Txn, ctx) {
    const state = ctx.state(LedgerId.CONFIG);
    for (const { key, constraint } of parseRules(txn.txn.data)) state.set(authRuleStateKey(key), canonicalJsonBytes(constraint));
  },
};
