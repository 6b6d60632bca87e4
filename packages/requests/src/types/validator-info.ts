/**
 * VALIDATOR_INFO ("119", action; requests.md §7.5): every node that receives it answers with its
 * own information (node, pool, protocol, software, hardware, configuration). Not ordered, not
 * written; allowed while the pool is read-only. Each node authorizes it at receipt
 * (119--ADD--*--*--*: 1 TRUSTEE, 1 STEWARD or 1 NETWORK_MONITOR); the node builds the `data`.
 */
import { TxnType } from '@quire/common';
import type { ActionHandler } from '../handler.js';
import { objectSchema } from '../validation/index.js';

const VALIDATOR = 'ClientValidatorInfoOperation';

/** No fields of its own: `{type: "119"}`; extra operation fields are tolerated (requests.md §1.1). */
const schema = objectSchema(VALIDATOR, {});

export const validatorInfoHandler: ActionHandler = {
  kind: 'action',
  type: TxnType.VALIDATOR_INFO,
  name: 'VALIDATOR_INFO',
  validator: VALIDATOR,

  validateStatic(request) {
    schema.validate(request.operation);
  },

  validateDynamic(request, ctx) {
    ctx.auth.authorize(request, { kind: 'ADD', field: '*', newValue: '*', isOwner: true });
  },
};
