/**
 * What the six rich schema types (JSON_LD_CONTEXT, RICH_SCHEMA, RICH_SCHEMA_ENCODING,
 * RICH_SCHEMA_MAPPING, RICH_SCHEMA_CRED_DEF, RICH_SCHEMA_PRES_DEF; codes 200-205) share
 * (requests.md §4.1, transactions.md §2.7):
 *
 * - static: `id` non-empty, `rsType` the type's constant, `rsName` str≤256, `rsVersion`
 *   SchemaVersion, `content` a non-empty JSON text, optional `ver` str≤256; JSON-LD types need
 *   non-empty `@id` (equal to `id`) and `@type`. (Quire) an `id` shaped like another domain state
 *   key (`<did>:<1-4>:...`, `5:...`, `6:...`, `<rsType>:...`) is refused, so that no object can
 *   take the state slot of a schema, claim definition, revocation entry or metadata index;
 * - dynamic: (rsType, rsName, rsVersion) unique; EDIT when an object with `id` exists (owner = its
 *   `from`), else ADD; immutable types are never updated; mutable ones keep rsName/rsVersion;
 *   then the type's own content checks;
 * - state: `id` -> W({content, endorser, from, id, rsName, rsType, rsVersion, ver}, n, t) and
 *   `<rsType>:<rsName>:<rsVersion>` -> raw `id`; txnId = `id`.
 */
import { isValidDid, LedgerId, parseJson } from '@quire/common';
import { RequestError, RequestErrorCode } from '../errors.js';
import type { HandlerContext, ParsedRequest, StateAccess, Txn, WriteHandler } from '../handler.js';
import { constant, isPlainObject, nonEmptyStr, objectSchema, optional, required, schemaVersion, str } from '../validation/index.js';
import { Limits } from '../validation/limits.js';
import {
  type RichSchemaObject,
  decodeText,
  decodeWrapped,
  encodeText,
  encodeWrapped,
  richSchemaIdKey,
  richSchemaMetadataKey,
  richSchemaObjectFromValue,
} from '../state-keys.js';

const DOMAIN = LedgerId.DOMAIN;

/** rsType of each rich schema type. */
export const RsType = {
  CONTEXT: 'ctx',
  SCHEMA: 'sch',
  ENCODING: 'enc',
  MAPPING: 'map',
  CRED_DEF: 'cdf',
  PRES_DEF: 'pdf',
} as const;
export type RsType = (typeof RsType)[keyof typeof RsType];
const RS_TYPES = new Set<string>(Object.values(RsType));

/** A parsed `content` (an object; other JSON values are seen as an object without members). */
export type Content = Record<string, unknown>;

export interface RichSchemaTypeSpec {
  type: string;
  name: string;
  validator: string;
  rsType: RsType;
  /** CRED_DEF and PRES_DEF may be updated by their owner; the others never. */
  mutable: boolean;
  /** RICH_SCHEMA, MAPPING and PRES_DEF contents are JSON-LD objects (`@id`, `@type`). */
  jsonLd: boolean;
  /** Type-specific static content rules (requests.md §4.2). */
  checkContentStatic?(content: Content, request: ParsedRequest): void;
  /** Type-specific content rules against state (requests.md §4.2), on create and on edit. */
  checkContentDynamic?(content: Content, request: ParsedRequest, ctx: HandlerContext): void;
}

/** Python truthiness of a JSON value (Indy's "non-empty"). */
export function truthy(v: unknown): boolean {
  if (v === null || v === undefined || v === false || v === 0 || v === 0n || v === '') return false;
  if (Array.isArray(v)) return v.length > 0;
  if (isPlainObject(v)) return Object.keys(v).length > 0;
  return true;
}

/** The members of `obj` (a JSON object, else none) that are not truthy, in the given order. */
export function missingMembers(obj: unknown, names: readonly string[]): string[] {
  const o = isPlainObject(obj) ? obj : {};
  return names.filter((n) => !truthy(o[n]));
}

/** Parses `content`; not JSON -> RS_CONTENT_NOT_JSON. */
export function parseContent(text: string): Content {
  let v: unknown;
  try {
    v = parseJson(text);
  } catch {
    throw new RequestError(RequestErrorCode.RS_CONTENT_NOT_JSON, { field: 'content' });
  }
  return isPlainObject(v) ? v : {};
}

/** Whether an `id` has the shape of another domain state key (see the module comment). */
export function isReservedRichSchemaId(id: string): boolean {
  const parts = id.split(':');
  if (parts.length < 2) return false;
  if (parts[0] === '5' || parts[0] === '6') return true;
  if (RS_TYPES.has(parts[0])) return true;
  return ['1', '2', '3', '4'].includes(parts[1]) && isValidDid(parts[0]);
}

/** The rich schema object stored under `id` at the uncommitted head, or undefined. */
export function loadRichSchemaObject(state: StateAccess, id: string): RichSchemaObject | undefined {
  const key = richSchemaIdKey(id);
  const bytes = state.get(key);
  if (bytes === undefined) return undefined;
  return richSchemaObjectFromValue(decodeWrapped(bytes, key).val, key);
}

/** Like loadRichSchemaObject, but a value that is not a rich schema object counts as absent. */
export function findRichSchemaObject(state: StateAccess, id: string): RichSchemaObject | undefined {
  try {
    return loadRichSchemaObject(state, id);
  } catch (e) {
    if (e instanceof RequestError && e.code === RequestErrorCode.STATE_CORRUPT) return undefined;
    throw e;
  }
}

/** The id indexed under (rsType, rsName, rsVersion), or undefined. */
export function richSchemaIdByMetadata(state: StateAccess, rsType: string, rsName: string, rsVersion: string): string | undefined {
  const key = richSchemaMetadataKey(rsType, rsName, rsVersion);
  const bytes = state.get(key);
  return bytes === undefined ? undefined : decodeText(bytes, key);
}

/** Builds the write handler of one rich schema type. */
export function richSchemaHandler(spec: RichSchemaTypeSpec): WriteHandler {
  const schema = objectSchema(spec.validator, {
    id: required(nonEmptyStr),
    rsType: required(constant(spec.rsType)),
    rsName: required(str({ max: Limits.NAME })),
    rsVersion: required(schemaVersion),
    content: required(nonEmptyStr),
    ver: optional(str({ max: Limits.NAME }), { nullAsAbsent: true }),
  });

  return {
    kind: 'write',
    type: spec.type,
    name: spec.name,
    validator: spec.validator,
    ledgerId: DOMAIN,

    validateStatic(request) {
      const op = request.operation;
      schema.validate(op);
      const id = op.id as string;
      if (isReservedRichSchemaId(id)) throw new RequestError(RequestErrorCode.RS_ID_RESERVED, { id });
      const content = parseContent(op.content as string);
      if (spec.jsonLd) {
        if (!truthy(content['@id'])) throw new RequestError(RequestErrorCode.RS_JSONLD_FIELD, { field: '@id' });
        if (!truthy(content['@type'])) throw new RequestError(RequestErrorCode.RS_JSONLD_FIELD, { field: '@type' });
        if (content['@id'] !== id) throw new RequestError(RequestErrorCode.RS_ID_MISMATCH, { id });
      }
      spec.checkContentStatic?.(content, request);
    },

    validateDynamic(request: ParsedRequest, ctx: HandlerContext) {
      const op = request.operation;
      const state = ctx.state(DOMAIN);
      const id = op.id as string;
      const rsName = op.rsName as string;
      const rsVersion = op.rsVersion as string;
      let existing: RichSchemaObject | undefined;
      try {
        existing = loadRichSchemaObject(state, id);
      } catch (e) {
        if (e instanceof RequestError && e.code === RequestErrorCode.STATE_CORRUPT) throw new RequestError(RequestErrorCode.RS_ID_TAKEN, { id });
        throw e;
      }
      if (existing === undefined && richSchemaIdByMetadata(state, spec.rsType, rsName, rsVersion) !== undefined) {
        throw new RequestError(RequestErrorCode.RS_DUPLICATE_METADATA, { rsType: spec.rsType, rsName, rsVersion });
      }
      if (existing !== undefined && existing.rsType !== spec.rsType) throw new RequestError(RequestErrorCode.RS_ID_TAKEN, { id });
      if (existing !== undefined) {
        ctx.auth.authorize(request, { kind: 'EDIT', field: '*', oldValue: '*', newValue: '*', isOwner: existing.from === request.author });
        if (!spec.mutable) throw new RequestError(RequestErrorCode.RS_IMMUTABLE, { typeName: spec.name, id });
        if (existing.rsName !== rsName || existing.rsVersion !== rsVersion) throw new RequestError(RequestErrorCode.RS_NAME_VERSION_CHANGE, { id });
      } else {
        ctx.auth.authorize(request, { kind: 'ADD', field: '*', newValue: '*', isOwner: true });
      }
      spec.checkContentDynamic?.(parseContent(op.content as string), request, ctx);
    },

    prepareTxn(txn: Txn) {
      return txn.txn.data.id as string;
    },

    updateState(txn: Txn, ctx: HandlerContext) {
      const data = txn.txn.data;
      const meta = txn.txn.metadata;
      const id = data.id as string;
      const object: RichSchemaObject = {
        content: data.content as string,
        endorser: typeof meta.endorser === 'string' ? meta.endorser : null,
        from: typeof meta.from === 'string' ? meta.from : null,
        id,
        rsName: data.rsName as string,
        rsType: data.rsType as string,
        rsVersion: data.rsVersion as string,
        ver: txn.txn.ver ?? null,
      };
      const state = ctx.state(DOMAIN);
      state.set(richSchemaIdKey(id), encodeWrapped(object, ctx.txn.seqNo, ctx.txn.txnTime));
      state.set(richSchemaMetadataKey(object.rsType, object.rsName, object.rsVersion), encodeText(id));
    },
  };
}

/**
 * A referenced object for a content check: undefined when absent (or not a rich schema object).
 */
export function referencedObject(ctx: HandlerContext, id: unknown): RichSchemaObject | undefined {
  return typeof id === 'string' ? findRichSchemaObject(ctx.state(DOMAIN), id) : undefined;
}
