/**
 * LEDGERS_FREEZE ("9", config; requests.md §7.3, an Indy extension): trustees freeze plugin or unused
 * ledgers so that they take no more writes. `ledgers_ids`: a list of integers; the base ledgers
 * (0, 1, 2, 3) cannot be frozen (static). Authorize `9--EDIT--*--*--*` (default 3 TRUSTEE signatures);
 * every id must name a ledger the node has (Indy: a ledger sized in the last audit txn), else
 * `One or more ledgers from {ids} have never existed`.
 * State: `4:FROZEN_LEDGERS` <- W({"<lid>": {ledger, state, seq_no}}, n, t) with the ledger's root,
 * state root and size when it is frozen; ledgers frozen before keep their entry. There is no unfreeze.
 */
import { b58encode, LedgerId, TxnType } from '@quire/common';
import { RequestError, RequestErrorCode } from '../errors.js';
import type { Txn, WriteHandler } from '../handler.js';
import { BASE_LEDGER_IDS, FROZEN_LEDGERS_KEY, type FrozenLedger, readFrozenLedgers } from '../freeze/frozen-ledgers.js';
import { encodeWrapped } from '../state-keys.js';
import { arrayOf, integer, objectSchema, required } from '../validation/index.js';

const VALIDATOR = 'LedgersFreezeOperation';
/** Largest ledger id accepted (ledger ids are small integers; this keeps them exact and the record small). */
const MAX_LEDGER_ID = 2 ** 31 - 1;

const schema = objectSchema(VALIDATOR, {
  ledgers_ids: required(arrayOf(integer({ min: 0, max: MAX_LEDGER_ID }))),
});

const idsOf = (op: Readonly<Record<string, unknown>>): number[] => (op.ledgers_ids as (number | bigint)[]).map(Number);

export const ledgersFreezeHandler: WriteHandler = {
  kind: 'write',
  type: TxnType.LEDGERS_FREEZE,
  name: 'LEDGERS_FREEZE',
  validator: VALIDATOR,
  ledgerId: LedgerId.CONFIG,

  validateStatic(request) {
    const op = request.operation;
    schema.validate(op);
    if (idsOf(op).some((id) => BASE_LEDGER_IDS.includes(id))) throw new RequestError(RequestErrorCode.FREEZE_BASE_LEDGER);
  },

  validateDynamic(request, ctx) {
    ctx.auth.authorize(request, { kind: 'EDIT', field: '*', oldValue: '*', newValue: '*', isOwner: true });
    const ids = idsOf(request.operation);
    if (ids.some((id) => ctx.ledgerSnapshot(id) === undefined)) throw new RequestError(RequestErrorCode.FREEZE_LEDGER_NEVER_EXISTED, { ids });
  },

  updateState(txn: Txn, ctx) {
    const state = ctx.state(LedgerId.CONFIG);
    const frozen: Record<string, FrozenLedger> = { ...readFrozenLedgers((k) => state.get(k)) };
    const ids = Array.isArray(txn.txn.data.ledgers_ids) ? (txn.txn.data.ledgers_ids as unknown[]).map(Number) : [];
    for (const id of ids) {
      const key = String(id);
      // a base ledger (refused by validation, possible only in an unvalidated genesis txn) is never recorded: its
      // snapshot would depend on when the txn is replayed
      if (Object.hasOwn(frozen, key) || BASE_LEDGER_IDS.includes(id)) continue;
      const snap = ctx.ledgerSnapshot(id);
      // a ledger the node does not have is refused by validation; a replayed txn naming one records nothing for it
      if (snap === undefined) continue;
      frozen[key] = { ledger: b58encode(snap.root), state: b58encode(snap.stateRoot), seq_no: snap.size };
    }
    state.set(FROZEN_LEDGERS_KEY, encodeWrapped(frozen, ctx.txn.seqNo, ctx.txn.txnTime));
  },
};
