/** RICH_SCHEMA ("201", rsType `sch`, immutable; requests.md §4.2): a JSON-LD schema; JSON-LD checks only. */
import { TxnType } from '@quire/common';
import { RsType, richSchemaHandler } from './rich-schema-common.js';

export const richSchemaSchemaHandler = richSchemaHandler({
  type: TxnType.RICH_SCHEMA,
  name: 'RICH_SCHEMA',
  validator: 'ClientRichSchemaOperation',
  rsType: RsType.SCHEMA,
  mutable: false,
  jsonLd: true,
});
