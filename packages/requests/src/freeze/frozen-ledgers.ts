/**
 * Config-state layout of the frozen ledgers (formats.md 8.3, requests.md §7.3; indy-plenum's
 * StaticLedgersFreezeHelper): `4:FROZEN_LEDGERS` -> W({"<lid>": {ledger: <b58 ledger root>, state:
 * <b58 state root>, seq_no: <size>}}, n, t). A ledger named there takes no more writes.
 */
import { RequestError, RequestErrorCode } from '../errors.js';
import type { StateAccess } from '../handler.js';
import { decodeWrapped, isJsonObject } from '../state-keys.js';

import { FROZEN_LEDGERS_KEY } from '@quire/common';

export { FROZEN_LEDGERS_KEY };

/** The base ledgers (pool, domain, config, audit), which cannot be frozen. */
export const BASE_LEDGER_IDS: readonly number[] = [0, 1, 2, 3];

export interface FrozenLedger {
  ledger: string;
  state: string;
  seq_no: number;
}

/** The frozen ledgers by id (decimal text), as stored; empty when none is frozen. */
export function readFrozenLedgers(get: (key: string) => Uint8Array | undefined): Record<string, FrozenLedger> {
  const bytes = get(FROZEN_LEDGERS_KEY);
  if (bytes === undefined) return {};
  const w = decodeWrapped<unknown>(bytes, FROZEN_LEDGERS_KEY);
  if (!isJsonObject(w.val)) throw new RequestError(RequestErrorCode.STATE_CORRUPT, { key: FROZEN_LEDGERS_KEY, problem: 'not an object' });
  return w.val as Record<string, FrozenLedger>;
}

/** True when the uncommitted config state names `ledgerId` as frozen. */
export function isLedgerFrozen(config: StateAccess, ledgerId: number): boolean {
  return Object.hasOwn(
    readFrozenLedgers((k) => config.get(k)),
    String(ledgerId),
  );
}
