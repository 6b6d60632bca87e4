/**
 * REVOC_REG_DEF ("113", domain; requests.md §3.5, transactions.md §2.6.1): a revocation registry
 * definition for a credential definition.
 *
 * - static: `id`, `credDefId` non-empty (4 or 5 `:`-separated parts), `revocDefType` `CL_ACCUM`,
 *   `tag` str≤256, `value` {issuanceType ISSUANCE_BY_DEFAULT|ISSUANCE_ON_DEMAND, maxCredNum
 *   integer, publicKeys object, tailsHash, tailsLocation non-empty};
 * - dynamic: key K = `<author>:4:<credDefId>:<revocDefType>:<tag>`; authorize EDIT (K present; 1
 *   signature of any role, owner) or ADD (1 TRUSTEE, STEWARD or ENDORSER); then the credential
 *   definition must exist at key `credDefId`;
 * - state: K -> W(txn.data, n, t); txnId = K. The `id` field is not checked against K.
 */
import { LedgerId, TxnType } from '@quire/common';
import { RequestError, RequestErrorCode } from '../errors.js';
import type { HandlerContext, ParsedRequest, Txn, WriteHandler } from '../handler.js';
import { integer, nonEmptyStr, object, objectSchema, oneOf, required, str } from '../validation/index.js';
import { Limits } from '../validation/limits.js';
import { IssuanceType, encodeWrapped, revocRegDefKey } from '../state-keys.js';

const VALIDATOR = 'ClientRevocDefSubmitField';
const DOMAIN = LedgerId.DOMAIN;

/** Supported revocation types (transactions.md §8). */
export const REVOC_DEF_TYPES = ['CL_ACCUM'] as const;

/** `revocDefType`: str≤256 and one of the supported types. */
export const revocDefType = (v: unknown, at: { validator: string; field: string }): void => {
  str({ max: Limits.NAME })(v, at);
  oneOf(REVOC_DEF_TYPES)(v, at);
};

const valueSchema = objectSchema(VALIDATOR, {
  issuanceType: required(oneOf([IssuanceType.ISSUANCE_BY_DEFAULT, IssuanceType.ISSUANCE_ON_DEMAND])),
  maxCredNum: required(integer()),
  publicKeys: required(object),
  tailsHash: required(nonEmptyStr),
  tailsLocation: required(nonEmptyStr),
});

const schema = objectSchema(VALIDATOR, {
  id: required(nonEmptyStr),
  revocDefType: required(revocDefType),
  tag: required(str({ max: Limits.NAME })),
  credDefId: required(nonEmptyStr),
  value: required(valueSchema.check),
});

/** The state key K of REVOC_REG_DEF data. */
export function revocRegDefKeyOf(author: string, data: Readonly<Record<string, unknown>>): string {
  return revocRegDefKey(author, data.credDefId as string, data.revocDefType as string, data.tag as string);
}

export const revocRegDefHandler: WriteHandler = {
  kind: 'write',
  type: TxnType.REVOC_REG_DEF,
  name: 'REVOC_REG_DEF',
  validator: VALIDATOR,
  ledgerId: DOMAIN,

  validateStatic(request) {
    const op = request.operation;
    schema.validate(op);
    const credDefId = op.credDefId as string;
    const parts = credDefId.split(':').length;
    if (parts !== 4 && parts !== 5) throw new RequestError(RequestErrorCode.REVOC_CRED_DEF_ID_FORMAT, { credDefId });
  },

  validateDynamic(request: ParsedRequest, ctx: HandlerContext) {
    const op = request.operation;
    const state = ctx.state(DOMAIN);
    const key = revocRegDefKeyOf(request.author, op);
    if (state.get(key) !== undefined) {
      ctx.auth.authorize(request, { kind: 'EDIT', field: '*', oldValue: '*', newValue: '*', isOwner: true });
    } else {
      ctx.auth.authorize(request, { kind: 'ADD', field: '*', newValue: '*', isOwner: true });
    }
    const credDefId = op.credDefId as string;
    if (state.get(credDefId) === undefined) throw new RequestError(RequestErrorCode.REVOC_CRED_DEF_UNKNOWN, { credDefId });
  },

  prepareTxn(txn: Txn, request: ParsedRequest) {
    return revocRegDefKeyOf(request.author, txn.txn.data);
  },

  updateState(txn: Txn, ctx: HandlerContext) {
    const from = String(txn.txn.metadata.from ?? '');
    ctx.state(DOMAIN).set(revocRegDefKeyOf(from, txn.txn.data), encodeWrapped(txn.txn.data, ctx.txn.seqNo, ctx.txn.txnTime));
  },
};
