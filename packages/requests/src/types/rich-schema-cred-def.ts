/**
 * RICH_SCHEMA_CRED_DEF ("204", rsType `cdf`, mutable by its owner for key rotation; requests.md
 * §4.2, transactions.md §2.7 and §7): a credential definition over a rich schema and a mapping.
 *
 * - static: non-empty `signatureType` (only `CL`), `mapping`, `schema`, `publicKey`;
 * - dynamic: `schema` names an existing `sch` object, `mapping` an existing `map` object, and the
 *   mapping's own `schema` is this `schema` (a mapping for another schema is refused).
 */
import { TxnType } from '@quire/common';
import { RequestError, RequestErrorCode } from '../errors.js';
import { oneOf } from '../validation/index.js';
import { SIGNATURE_TYPES } from './claim-def.js';
import { type Content, RsType, missingMembers, parseContent, referencedObject, richSchemaHandler } from './rich-schema-common.js';

const VALIDATOR = 'ClientRichSchemaCredDefOperation';
const notFound = (field: string, id: unknown): RequestError =>
  new RequestError(RequestErrorCode.RS_REFERENCE_MISSING, {
    id,
    text: `Can not find a referenced '${field}' with id=${String(id)}; please make sure that it has been added to the ledger`,
  });
const wrongType = (id: unknown, text: string): RequestError => new RequestError(RequestErrorCode.RS_REFERENCE_WRONG_TYPE, { id, text });

export const richSchemaCredDefHandler = richSchemaHandler({
  type: TxnType.RICH_SCHEMA_CRED_DEF,
  name: 'RICH_SCHEMA_CRED_DEF',
  validator: VALIDATOR,
  rsType: RsType.CRED_DEF,
  mutable: true,
  jsonLd: false,
  checkContentStatic(content: Content) {
    const missing = missingMembers(content, ['signatureType', 'mapping', 'schema', 'publicKey']);
    if (missing.length > 0) throw new RequestError(RequestErrorCode.RS_CONTENT_MEMBERS, { missing, where: 'content', joiner: ', ' });
    oneOf(SIGNATURE_TYPES)(content.signatureType, { validator: VALIDATOR, field: 'content.signatureType' });
  },
  checkContentDynamic(content: Content, _request, ctx) {
    const schema = referencedObject(ctx, content.schema);
    if (schema === undefined) throw notFound('schema', content.schema);
    const mapping = referencedObject(ctx, content.mapping);
    if (mapping === undefined) throw notFound('mapping', content.mapping);
    if (schema.rsType !== RsType.SCHEMA) throw wrongType(content.schema, "'schema' field must reference a schema with rsType=sch");
    if (mapping.rsType !== RsType.MAPPING) throw wrongType(content.mapping, "'mapping' field must reference a mapping with rsType=map");
    const mappingContent = parseContent(mapping.content);
    if (mappingContent.schema !== content.schema) {
      throw new RequestError(RequestErrorCode.RS_CRED_DEF_MAPPING_SCHEMA, { schema: content.schema });
    }
  },
});
