/**
 * CLAIM_DEF ("102", domain; requests.md §3.4, transactions.md §2.6): an issuer's credential
 * definition (public keys) for a schema.
 *
 * - static: `ref` seqNo (integer or decimal-digit string), `signature_type` `CL`, optional `tag`
 *   str≤256 (default `tag`), `data.primary` object, optional `data.revocation` object;
 * - dynamic: `ref` must be the seqNo of a SCHEMA txn of the domain ledger (uncommitted included);
 *   key `<author>:3:CL:<ref>:<tag>` present -> EDIT (1 signature of any role, owner: key
 *   rotation by the issuer) else ADD (1 TRUSTEE, STEWARD or ENDORSER);
 * - state: key -> W(data, n, t), overwritten on edit; txnId = key.
 */
import { LedgerId, TxnType } from '@quire/common';
import { RequestError, RequestErrorCode } from '../errors.js';
import type { HandlerContext, ParsedRequest, Txn, WriteHandler } from '../handler.js';
import { integerOrDigits, object, objectSchema, oneOf, optional, required, str } from '../validation/index.js';
import { Limits } from '../validation/limits.js';
import { CLAIM_DEF_DEFAULT_SIGNATURE_TYPE, CLAIM_DEF_DEFAULT_TAG, claimDefKey, encodeWrapped } from '../state-keys.js';

const VALIDATOR = 'ClientClaimDefSubmitOperation';
const DOMAIN = LedgerId.DOMAIN;
const SCHEMA_TYPE = TxnType.SCHEMA;

/** Supported signature types (transactions.md §8). */
export const SIGNATURE_TYPES = ['CL'] as const;

/** `signature_type`: str≤16 and one of the supported types. */
const signatureType = (v: unknown, at: { validator: string; field: string }): void => {
  str({ max: Limits.SIGNATURE_TYPE })(v, at);
  oneOf(SIGNATURE_TYPES)(v, at);
};

const claimDefData = objectSchema(VALIDATOR, {
  primary: required(object),
  revocation: optional(object, { nullAsAbsent: true }),
});

const schema = objectSchema(VALIDATOR, {
  ref: required(integerOrDigits({ min: 1 })),
  signature_type: required(signatureType),
  tag: optional(str({ max: Limits.NAME }), { nullAsAbsent: true }),
  data: required(claimDefData.check),
});

/** `ref` (integer or decimal digits) as a bigint. */
export function refOf(ref: unknown): bigint {
  return BigInt(ref as number | bigint | string);
}

/** The state key of CLAIM_DEF data (request operation or txn.data). */
export function claimDefKeyOf(author: string, data: Readonly<Record<string, unknown>>): string {
  const sigType = typeof data.signature_type === 'string' ? data.signature_type : CLAIM_DEF_DEFAULT_SIGNATURE_TYPE;
  const tag = typeof data.tag === 'string' ? data.tag : CLAIM_DEF_DEFAULT_TAG;
  return claimDefKey(author, refOf(data.ref), sigType, tag);
}

export const claimDefHandler: WriteHandler = {
  kind: 'write',
  type: TxnType.CLAIM_DEF,
  name: 'CLAIM_DEF',
  validator: VALIDATOR,
  ledgerId: DOMAIN,

  validateStatic(request) {
    schema.validate(request.operation);
  },

  validateDynamic(request: ParsedRequest, ctx: HandlerContext) {
    const op = request.operation;
    const ref = refOf(op.ref);
    const ledger = ctx.ledger(DOMAIN);
    const referenced = ref <= BigInt(ledger.uncommittedSize) ? ledger.getTxn(Number(ref)) : undefined;
    if (referenced === undefined) throw new RequestError(RequestErrorCode.CLAIM_DEF_REF_UNKNOWN, { ref: ref.toString() });
    if (referenced.txn.type !== SCHEMA_TYPE) throw new RequestError(RequestErrorCode.CLAIM_DEF_REF_NOT_SCHEMA, { ref: ref.toString() });
    const key = claimDefKeyOf(request.author, op);
    if (ctx.state(DOMAIN).get(key) !== undefined) {
      ctx.auth.authorize(request, { kind: 'EDIT', field: '*', oldValue: '*', newValue: '*', isOwner: true });
    } else {
      ctx.auth.authorize(request, { kind: 'ADD', field: '*', newValue: '*', isOwner: true });
    }
  },

  prepareTxn(txn: Txn, request: ParsedRequest) {
    return claimDefKeyOf(request.author, txn.txn.data);
  },

  updateState(txn: Txn, ctx: HandlerContext) {
    const from = String(txn.txn.metadata.from ?? '');
    ctx.state(DOMAIN).set(claimDefKeyOf(from, txn.txn.data), encodeWrapped(txn.txn.data.data, ctx.txn.seqNo, ctx.txn.txnTime));
  },
};
