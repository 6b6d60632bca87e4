/**
 * POOL_RESTART ("118", action; requests.md §8.1): restarts every node, now or at `datetime`. Not
 * ordered, not written; each receiving node authorizes it (118--ADD--action--*--*, 1 TRUSTEE) and
 * schedules the restart itself.
 */
import { TxnType } from '@quire/common';
import { RequestError, RequestErrorCode } from '../errors.js';
import type { ActionHandler } from '../handler.js';
import { Limits, integer, objectSchema, oneOf, optional, parseDateTimeWithOffset, required, str } from '../validation/index.js';

const VALIDATOR = 'ClientPoolRestartOperation';

const schema = objectSchema(VALIDATOR, {
  action: required(oneOf(['start', 'cancel'])),
  datetime: optional(str({ max: Limits.DATETIME, allowEmpty: true }), { nullAsAbsent: true }),
  timeout: optional(integer({ min: 0 }), { nullAsAbsent: true }),
});

/** Restart time in epoch seconds, or null for "as early as possible" (absent, "0", ""). */
export function restartTime(datetime: unknown): number | null {
  if (datetime === undefined || datetime === null || datetime === '' || datetime === '0') return null;
  const t = parseDateTimeWithOffset(String(datetime));
  if (t === null) throw new RequestError(RequestErrorCode.RESTART_DATETIME_INVALID, { value: datetime });
  return t;
}

export const poolRestartHandler: ActionHandler = {
  kind: 'action',
  type: TxnType.POOL_RESTART,
  name: 'POOL_RESTART',
  validator: VALIDATOR,

  validateStatic(request) {
    schema.validate(request.operation);
    restartTime(request.operation.datetime);
  },

  validateDynamic(request, ctx) {
    ctx.auth.authorize(request, { kind: 'ADD', field: 'action', newValue: request.operation.action, isOwner: true });
  },
};
