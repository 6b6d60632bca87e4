/**
 * RICH_SCHEMA_PRES_DEF ("205", rsType `pdf`, mutable by its owner; requests.md §4.2): a
 * presentation definition; JSON-LD checks only (its content is otherwise undecided).
 */
import { RsType, richSchemaHandler } from './rich-schema-common.js';

export const richSchemaPresDefHandler = richSchemaHandler({
  type: '205',
  name: 'RICH_SCHEMA_PRES_DEF',
  validator: 'ClientRichSchemaPresDefOperation',
  rsType: RsType.PRES_DEF,
  mutable: true,
  jsonLd: true,
});
