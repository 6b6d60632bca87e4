/**
 * AUTH_RULE ("120", config; requests.md §5.6, auth-rules.md §6.1): overrides the constraint of one
 * default-map action. State: `1:<rule key>` <- CJ(normalized constraint), no wrapper.
 */
import { canonicalJsonBytes } from '@quire/common';
import { parseRuleEntry } from '../auth/rule-entry.js';
import { authRuleStateKey } from '../auth/rule-key.js';
import type { Txn, WriteHandler } from '../handler.js';

const VALIDATOR = 'ClientAuthRuleOperation';

export const authRuleHandler: WriteHandler = {
  kind: 'write',
  type: '120',
  name: 'AUTH_RULE',
  validator: VALIDATOR,
  ledgerId: 2,

  validateStatic(request) {
    parseRuleEntry(request.operation, VALIDATOR);
  },

  validateDynamic(request, ctx) {
    ctx.auth.authorize(request, { kind: 'EDIT', field: '*', oldValue: '*', newValue: '*', isOwner: true });
  },

  updateState(txn: Txn, ctx) {
    const { key, constraint } = parseRuleEntry(txn.txn.data, VALIDATOR);
    ctx.state(2).set(authRuleStateKey(key), canonicalJsonBytes(constraint));
  },
};
