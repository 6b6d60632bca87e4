/**
 * AUTH_RULE ("120", config; requests.md §5.6, auth-rules.md §6.1): overrides the constraint of one
 * default-map action. State: `1:<rule key>` <- CJ(normalized constraint), no wrapper.
 */
import { canonicalJsonBytes, LedgerId, TxnType } from '@quire/common';
import { parseRuleEntry } from '../auth/rule-entry.js';
import { authRuleStateKey } from '../auth/rule-key.js';
import type { Txn, WriteHandler } from '../handler.js';

const VALIDATOR = 'ClientAuthRuleOperation';

export const authRuleHandler: WriteHandler = {
  kind: 'write',
  type: TxnType.AUTH_RULE,
  name: 'AUTH_RULE',
  validator: VALIDATOR,
  ledgerId: LedgerId.CONFIG,

  validateStatic(request) {
    parseRuleEntry(request.operation, VALIDATOR);
  },

  validateDynamic(request, ctx) {
    ctx.auth.authorize(request, { kind: 'EDIT', field: '*', oldValue: '*', newValue: '*', isOwner: true });
  },

  updateState(txn: Txn, ctx) {
    const { key, constraint } = parseRuleEntry(txn.txn.data, VALIDATOR);
    ctx.state(LedgerId.CONFIG).set(authRuleStateKey(key), canonicalJsonBytes(constraint));
  },
};
