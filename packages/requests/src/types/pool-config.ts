/**
 * POOL_CONFIG ("111", config ledger; requests.md §5.4): switches the pool between accepting writes
 * and read-only. No state: the node recomputes its writable flag by replaying POOL_CONFIG txns
 * (last wins, default true; see `poolWritesFromTxns`). With `force: true` every node also applies
 * it when it receives the request (§5.5).
 */
import { LedgerId, TxnType } from '@quire/common';
import type { Txn, WriteHandler } from '../handler.js';
import { bool, objectSchema, optional, required } from '../validation/index.js';

const schema = objectSchema('ClientPoolConfigOperation', {
  writes: required(bool),
  force: optional(bool),
});

export const poolConfigHandler: WriteHandler = {
  kind: 'write',
  type: TxnType.POOL_CONFIG,
  name: 'POOL_CONFIG',
  validator: 'ClientPoolConfigOperation',
  ledgerId: LedgerId.CONFIG,
  forceable: true,

  validateStatic(request) {
    schema.validate(request.operation);
  },

  validateDynamic(request, ctx) {
    // 111--EDIT--action--*--* (1 TRUSTEE by default)
    ctx.auth.authorize(request, { kind: 'EDIT', field: 'action', oldValue: '*', newValue: '*', isOwner: true });
  },

  updateState() {
    // POOL_CONFIG has no state (formats.md 8.3); its effect is derived from the config ledger.
  },
};

/** The writable flag after a sequence of config-ledger txns (last POOL_CONFIG wins; default true). */
export function poolWritesFromTxns(txns: Iterable<Txn>, initial = true): boolean {
  let writes = initial;
  for (const t of txns) {
    if (t.txn.type === TxnType.POOL_CONFIG && typeof t.txn.data.writes === 'boolean') writes = t.txn.data.writes;
  }
  return writes;
}
