/**
 * GET_RICH_SCHEMA_OBJECT_BY_ID ("300") and GET_RICH_SCHEMA_OBJECT_BY_METADATA ("301"), domain
 * (requests.md §9.2): a rich schema object by `id`, or by (rsType, rsName, rsVersion) through the
 * metadata index. `data` = `{id, rsType, rsName, rsVersion, content, from, endorser, ver}` or null.
 * The proof covers the primary key when found; by metadata, the secondary key when nothing is
 * indexed. Only the six rsTypes exist, and ids shaped like other domain keys are refused (as for
 * writes), so a read can never present another record as a rich schema object.
 */
import { TxnType } from '@quire/common';
import { RequestError, RequestErrorCode } from '../errors.js';
import type { ReadAnswer, ReadContext, ReadHandler, StateLookup } from '../handler.js';
import { nonEmptyStr, objectSchema, oneOf, required, schemaVersion, str } from '../validation/index.js';
import { Limits } from '../validation/limits.js';
import { decodeText, decodeWrapped, richSchemaIdKey, richSchemaMetadataKey, richSchemaObjectFromValue } from '../state-keys.js';
import { DOMAIN, absent } from './get-common.js';
import { RsType, isReservedRichSchemaId } from './rich-schema-common.js';

function objectAnswer(ctx: ReadContext, id: string): ReadAnswer {
  const key = richSchemaIdKey(id);
  const lookup: StateLookup = ctx.lookup(DOMAIN, key);
  if (lookup.value === undefined) return absent(lookup);
  const w = decodeWrapped(lookup.value, key);
  return { data: richSchemaObjectFromValue(w.val, key), seqNo: w.lsn, txnTime: w.lut, proof: { ledgerId: DOMAIN, lookup } };
}

const BY_ID = 'ClientGetRichSchemaObjectByIdOperation';
const byIdSchema = objectSchema(BY_ID, { id: required(nonEmptyStr) });

export const getRichSchemaObjectByIdHandler: ReadHandler = {
  kind: 'read',
  type: TxnType.GET_RICH_SCHEMA_OBJECT_BY_ID,
  name: 'GET_RICH_SCHEMA_OBJECT_BY_ID',
  validator: BY_ID,
  ledgerId: DOMAIN,
  validateStatic(request) {
    byIdSchema.validate(request.operation);
    // such ids name other domain records, never a rich schema object
    const id = request.operation.id as string;
    if (isReservedRichSchemaId(id)) throw new RequestError(RequestErrorCode.RS_ID_RESERVED, { id });
  },
  async read(request, ctx) {
    return objectAnswer(ctx, request.operation.id as string);
  },
};

const BY_METADATA = 'ClientGetRichSchemaObjectByMetadataOperation';
const byMetadataSchema = objectSchema(BY_METADATA, {
  rsType: required(oneOf(Object.values(RsType))),
  rsName: required(str({ max: Limits.NAME })),
  rsVersion: required(schemaVersion),
});

export const getRichSchemaObjectByMetadataHandler: ReadHandler = {
  kind: 'read',
  type: TxnType.GET_RICH_SCHEMA_OBJECT_BY_METADATA,
  name: 'GET_RICH_SCHEMA_OBJECT_BY_METADATA',
  validator: BY_METADATA,
  ledgerId: DOMAIN,
  validateStatic(request) {
    byMetadataSchema.validate(request.operation);
  },
  async read(request, ctx) {
    const op = request.operation;
    const key = richSchemaMetadataKey(op.rsType as string, op.rsName as string, op.rsVersion as string);
    const secondary = ctx.lookup(DOMAIN, key);
    if (secondary.value === undefined) return absent(secondary);
    return objectAnswer(ctx, decodeText(secondary.value, key));
  },
};
