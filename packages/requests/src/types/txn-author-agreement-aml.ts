/**
 * TXN_AUTHOR_AGREEMENT_AML ("5", config; requests.md §5.8): a new, immutable list of acceptance
 * mechanisms; the latest one defines the mechanisms TAA acceptances may name.
 * State: `3:latest` and `3:v:<version>` <- W({version, aml, [amlContext]}, n, t).
 */
import { LedgerId, TxnType } from '@quire/common';
import { RequestError, RequestErrorCode } from '../errors.js';
import type { Txn, WriteHandler } from '../handler.js';
import { encodeWrapped } from '../state-keys.js';
import { AML_LATEST_KEY, amlVersionKey } from '../taa/taa-state.js';
import { Limits, mapOf, object, objectSchema, optional, required, str } from '../validation/index.js';

const VALIDATOR = 'ClientTxnAuthorAgreementOperationAML';

const schema = objectSchema(VALIDATOR, {
  version: required(str({ max: Limits.NAME })),
  aml: required((v, at) => {
    object(v, at);
    mapOf(str({ max: Limits.TAA_TEXT, allowEmpty: true }), str({ max: Limits.TAA_MECHANISM }))(v, at);
  }),
  amlContext: optional(str({ max: Limits.TAA_TEXT, allowEmpty: true }), { nullAsAbsent: true }),
});

export const txnAuthorAgreementAmlHandler: WriteHandler = {
  kind: 'write',
  type: TxnType.TXN_AUTHOR_AGREEMENT_AML,
  name: 'TXN_AUTHOR_AGREEMENT_AML',
  validator: VALIDATOR,
  ledgerId: LedgerId.CONFIG,

  validateStatic(request) {
    schema.validate(request.operation);
    if (Object.keys(request.operation.aml as object).length === 0) throw new RequestError(RequestErrorCode.AML_EMPTY);
  },

  validateDynamic(request, ctx) {
    ctx.auth.authorize(request, { kind: 'ADD', field: '*', newValue: '*', isOwner: true });
    if (ctx.state(LedgerId.CONFIG).get(amlVersionKey(request.operation.version as string)) !== undefined)
      throw new RequestError(RequestErrorCode.AML_VERSION_EXISTS);
  },

  updateState(txn: Txn, ctx) {
    const d = txn.txn.data;
    const val: Record<string, unknown> = { version: d.version, aml: d.aml };
    if (typeof d.amlContext === 'string') val.amlContext = d.amlContext;
    const bytes = encodeWrapped(val, ctx.txn.seqNo, ctx.txn.txnTime);
    const state = ctx.state(LedgerId.CONFIG);
    state.set(AML_LATEST_KEY, bytes);
    state.set(amlVersionKey(d.version as string), bytes);
  },
};
