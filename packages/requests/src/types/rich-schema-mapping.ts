/**
 * RICH_SCHEMA_MAPPING ("203", rsType `map`, immutable; requests.md §4.2): maps the attributes of
 * a rich schema to encodings and signing ranks.
 *
 * - static: JSON-LD checks; non-empty `schema` and `attributes`; `attributes` holds `issuer` and
 *   `issuanceDate`;
 * - dynamic: `schema` names an existing `sch` object; every leaf attribute is `{enc, rank}`; the
 *   ranks are exactly 1..N; every `enc` names an existing `enc` object.
 */
import { receivedKeys, TxnType } from '@quire/common';
import { RequestError, RequestErrorCode } from '../errors.js';
import { isPlainObject } from '../validation/index.js';
import { type Content, RsType, missingMembers, referencedObject, richSchemaHandler, truthy } from './rich-schema-common.js';

/** A leaf of `attributes` with the name of the member it sits under. */
export interface AttributeLeaf {
  node: unknown;
  name: string;
}

/**
 * The leaves of `attributes` (requests.md §4.2 step 2): a node is a leaf if it is not an object,
 * or an object none of whose values is an object or an array; arrays are walked item by item
 * under the member's name. Members are visited in the order they were received.
 */
export function attributeLeaves(attributes: unknown): AttributeLeaf[] {
  const out: AttributeLeaf[] = [];
  // depth is bounded by the JSON parser's nesting limit
  const walk = (node: unknown, name: string): void => {
    const isLeaf = !isPlainObject(node) || Object.values(node).every((v) => !isPlainObject(v) && !Array.isArray(v));
    if (isLeaf) {
      out.push({ node, name });
      return;
    }
    for (const k of receivedKeys(node as object)) {
      const v = (node as Record<string, unknown>)[k];
      if (Array.isArray(v)) for (const item of v) walk(item, k);
      else walk(v, k);
    }
  };
  walk(attributes, 'attributes');
  return out;
}

const present = (o: unknown, k: string): boolean => isPlainObject(o) && o[k] !== undefined && o[k] !== null;

export const richSchemaMappingHandler = richSchemaHandler({
  type: TxnType.RICH_SCHEMA_MAPPING,
  name: 'RICH_SCHEMA_MAPPING',
  validator: 'ClientRichSchemaMappingOperation',
  rsType: RsType.MAPPING,
  mutable: false,
  jsonLd: true,
  checkContentStatic(content: Content) {
    const missing = missingMembers(content, ['schema', 'attributes']);
    if (missing.length > 0) throw new RequestError(RequestErrorCode.RS_CONTENT_MEMBERS, { missing, where: 'content', joiner: ' and ' });
    const attrs = content.attributes;
    if (!isPlainObject(attrs) || !truthy(attrs.issuer) || !truthy(attrs.issuanceDate)) {
      throw new RequestError(RequestErrorCode.RS_MAPPING_DEFAULT_ATTRIBUTES, { field: 'content.attributes' });
    }
  },
  checkContentDynamic(content: Content, _request, ctx) {
    const schemaId = content.schema;
    const schema = referencedObject(ctx, schemaId);
    if (schema === undefined) {
      throw new RequestError(RequestErrorCode.RS_REFERENCE_MISSING, {
        id: schemaId,
        text: `Can not find a schema with id=${String(schemaId)}; please make sure that it has been added to the ledger`,
      });
    }
    if (schema.rsType !== RsType.SCHEMA)
      throw new RequestError(RequestErrorCode.RS_REFERENCE_WRONG_TYPE, { id: schemaId, text: "'schema' field must reference a schema with rsType=sch" });

    const leaves = attributeLeaves(content.attributes);
    for (const { node, name } of leaves) {
      const hasEnc = present(node, 'enc');
      const hasRank = present(node, 'rank');
      if (!hasEnc || !hasRank) {
        const missing = !hasEnc && !hasRank ? 'enc and rank' : !hasEnc ? 'enc' : 'rank';
        throw new RequestError(RequestErrorCode.RS_MAPPING_ENC_RANK, { missing, name });
      }
    }
    const ranks = leaves.map(({ node }) => (node as Record<string, unknown>).rank);
    const n = leaves.length;
    const sorted = ranks
      .filter((r) => (typeof r === 'number' && Number.isInteger(r)) || typeof r === 'bigint')
      .map((r) => BigInt(r as number | bigint))
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    if (sorted.length !== n || sorted.some((r, i) => r !== BigInt(i + 1))) {
      throw new RequestError(RequestErrorCode.RS_MAPPING_RANKS, { count: n });
    }
    for (const { node, name } of leaves) {
      const encId = (node as Record<string, unknown>).enc;
      const enc = referencedObject(ctx, encId);
      if (enc === undefined) {
        throw new RequestError(RequestErrorCode.RS_REFERENCE_MISSING, {
          id: encId,
          text: `Can not find a referenced 'enc' with id=${String(encId)} in the '${name}' attribute; please make sure that it has been added to the ledger`,
        });
      }
      if (enc.rsType !== RsType.ENCODING) {
        throw new RequestError(RequestErrorCode.RS_REFERENCE_WRONG_TYPE, {
          id: encId,
          text: `'enc' field in the '${name}' attribute must reference an encoding with rsType=enc`,
        });
      }
    }
  },
});
