/**
 * RICH_SCHEMA_PRES_DEF ("205", rsType `pdf`, mutable by its owner; requests.md §4.2): a
 * presentation definition; JSON-LD checks only (its content is otherwise undecided).
 */
import { TxnType } from '@quire/common';
import { RsType, richSchemaHandler } from './rich-schema-common.js';

export const richSchemaPresDefHandler = richSchemaHandler({
  type: TxnType.RICH_SCHEMA_PRES_DEF,
  name: 'RICH_SCHEMA_PRES_DEF',
  validator: 'ClientRichSchemaPresDefOperation',
  rsType: RsType.PRES_DEF,
  mutable: true,
  jsonLd: true,
});
