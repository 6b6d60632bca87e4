/**
 * SCHEMA ("101", domain; requests.md §3.3, transactions.md §2.5): publishes a credential schema.
 *
 * - static: `data.name` str≤256, `data.version` SchemaVersion, `data.attr_names` 1..125 str≤256;
 * - dynamic: key `<author>:2:<name>:<version>`; present -> EDIT `101--EDIT--*--*--*` (FORBIDDEN by
 *   default) and, whatever the rule says, rejected: schemas are immutable; absent -> ADD
 *   `101--ADD--*--*--*` (1 TRUSTEE, STEWARD or ENDORSER);
 * - state: key -> W({attr_names}, n, t); txnId = key. Other txns refer to a schema by its seqNo.
 */
import { LedgerId, TxnType } from '@quire/common';
import { RequestError, RequestErrorCode } from '../errors.js';
import type { HandlerContext, ParsedRequest, Txn, WriteHandler } from '../handler.js';
import { arrayOf, objectSchema, required, schemaVersion, str } from '../validation/index.js';
import { Limits } from '../validation/limits.js';
import { encodeWrapped, schemaKey } from '../state-keys.js';

const VALIDATOR = 'ClientSchemaOperation';
const DOMAIN = LedgerId.DOMAIN;

const schemaData = objectSchema(VALIDATOR, {
  name: required(str({ max: Limits.NAME })),
  version: required(schemaVersion),
  attr_names: required(arrayOf(str({ max: Limits.NAME }), { min: 1, max: Limits.SCHEMA_ATTRIBUTES })),
});

const schema = objectSchema(VALIDATOR, {
  data: required(schemaData.check),
});

/** The state key of a SCHEMA request or txn data (`data.name`, `data.version`). */
export function schemaKeyOf(author: string, data: Record<string, unknown>): string {
  const d = data.data as Record<string, unknown>;
  return schemaKey(author, d.name as string, d.version as string);
}

export const schemaHandler: WriteHandler = {
  kind: 'write',
  type: TxnType.SCHEMA,
  name: 'SCHEMA',
  validator: VALIDATOR,
  ledgerId: DOMAIN,

  validateStatic(request) {
    schema.validate(request.operation);
  },

  validateDynamic(request: ParsedRequest, ctx: HandlerContext) {
    const key = schemaKeyOf(request.author, request.operation);
    if (ctx.state(DOMAIN).get(key) !== undefined) {
      ctx.auth.authorize(request, { kind: 'EDIT', field: '*', oldValue: '*', newValue: '*', isOwner: true });
      // Quire: immutable even when a pool overrides the EDIT rule (requests.md §10.6).
      throw new RequestError(RequestErrorCode.SCHEMA_IMMUTABLE, { key });
    }
    ctx.auth.authorize(request, { kind: 'ADD', field: '*', newValue: '*', isOwner: true });
  },

  prepareTxn(txn: Txn, request: ParsedRequest) {
    return schemaKeyOf(request.author, txn.txn.data);
  },

  updateState(txn: Txn, ctx: HandlerContext) {
    const from = String(txn.txn.metadata.from ?? '');
    const data = txn.txn.data.data as Record<string, unknown>;
    ctx.state(DOMAIN).set(schemaKeyOf(from, txn.txn.data), encodeWrapped({ attr_names: data.attr_names }, ctx.txn.seqNo, ctx.txn.txnTime));
  },
};
