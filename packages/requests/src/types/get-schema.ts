/**
 * GET_SCHEMA ("107", domain; requests.md §9.2): the schema `<dest>:2:<name>:<version>`. `data` is
 * `{attr_names, name, version}`, or `{name, version}` (seqNo null) when absent; `data.origin` is
 * accepted and ignored.
 */
import { TxnType } from '@quire/common';
import type { ReadHandler } from '../handler.js';
import { any, did, objectSchema, optional, required, schemaVersion, str } from '../validation/index.js';
import { Limits } from '../validation/limits.js';
import { decodeWrapped, isJsonObject, schemaKey } from '../state-keys.js';
import { DOMAIN, absent } from './get-common.js';

const VALIDATOR = 'ClientGetSchemaOperation';
const dataSchema = objectSchema(VALIDATOR, {
  name: required(str({ max: Limits.NAME })),
  version: required(schemaVersion),
  origin: optional(any),
});
const schema = objectSchema(VALIDATOR, { dest: required(did), data: required(dataSchema.check) });

export const getSchemaHandler: ReadHandler = {
  kind: 'read',
  type: TxnType.GET_SCHEMA,
  name: 'GET_SCHEMA',
  validator: VALIDATOR,
  ledgerId: DOMAIN,

  validateStatic(request) {
    schema.validate(request.operation);
  },

  async read(request, ctx) {
    const op = request.operation;
    const q = op.data as Record<string, unknown>;
    const name = q.name as string;
    const version = q.version as string;
    const key = schemaKey(op.dest as string, name, version);
    const lookup = ctx.lookup(DOMAIN, key);
    if (lookup.value === undefined) return absent(lookup, { name, version });
    const w = decodeWrapped(lookup.value, key);
    const attrNames = isJsonObject(w.val) ? w.val.attr_names : undefined;
    return { data: { attr_names: attrNames, name, version }, seqNo: w.lsn, txnTime: w.lut, proof: { ledgerId: DOMAIN, lookup } };
  },
};
