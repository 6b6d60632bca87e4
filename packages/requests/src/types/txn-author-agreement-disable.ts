/**
 * TXN_AUTHOR_AGREEMENT_DISABLE ("8", config, no fields; requests.md §7.2, an Indy extension): a
 * trustee turns the agreement off. Authorize `8--ADD--*--*--*` (default 1 TRUSTEE); no agreement
 * enabled -> `Transaction author agreement is already disabled.`.
 * State (formats.md 8.3): every agreement `2:d:<digest>` without `retirement_ts`, or retiring after
 * this txn's time, is rewritten with `retirement_ts` = txnTime (lsn/lut of this txn); `2:latest` is
 * removed. GET_TAA then answers null for the latest agreement, domain writes need no acceptance,
 * and a later TXN_AUTHOR_AGREEMENT with a new version enables acceptance again.
 */
import { LedgerId, TxnType } from '@quire/common';
import { RequestError, RequestErrorCode } from '../errors.js';
import type { Txn, WriteHandler } from '../handler.js';
import { encodeWrapped } from '../state-keys.js';
import { TAA_LATEST_KEY, readTaaByDigest, reader, taaEnabled } from '../taa/taa-state.js';
import { objectSchema } from '../validation/index.js';

const VALIDATOR = 'ClientTxnAuthorAgreementDisableOperation';
const DIGEST_PREFIX = '2:d:';

const schema = objectSchema(VALIDATOR, {});

export const txnAuthorAgreementDisableHandler: WriteHandler = {
  kind: 'write',
  type: TxnType.TXN_AUTHOR_AGREEMENT_DISABLE,
  name: 'TXN_AUTHOR_AGREEMENT_DISABLE',
  validator: VALIDATOR,
  ledgerId: LedgerId.CONFIG,

  validateStatic(request) {
    schema.validate(request.operation);
  },

  validateDynamic(request, ctx) {
    ctx.auth.authorize(request, { kind: 'ADD', field: '*', newValue: '*', isOwner: true });
    if (taaEnabled(reader(ctx.state(LedgerId.CONFIG))) === undefined) throw new RequestError(RequestErrorCode.TAA_ALREADY_DISABLED);
  },

  updateState(_txn: Txn, ctx) {
    const state = ctx.state(LedgerId.CONFIG);
    const get = reader(state);
    const { seqNo, txnTime } = ctx.txn;
    for (const key of state.keysWithPrefix(DIGEST_PREFIX)) {
      const stored = readTaaByDigest(get, key.slice(DIGEST_PREFIX.length));
      if (stored === undefined) continue;
      if (stored.retirement_ts !== undefined && txnTime !== null && stored.retirement_ts <= txnTime) continue;
      const val: Record<string, unknown> = {
        digest: stored.digest,
        ratification_ts: stored.ratification_ts ?? stored.lut,
        retirement_ts: txnTime,
        text: stored.text,
        version: stored.version,
      };
      state.set(key, encodeWrapped(val, seqNo, txnTime));
    }
    state.remove(TAA_LATEST_KEY);
  },
};
