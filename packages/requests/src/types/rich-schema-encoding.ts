/**
 * RICH_SCHEMA_ENCODING ("202", rsType `enc`, immutable; requests.md §4.2): how an attribute value
 * is encoded as an integer. `content` needs non-empty `input`, `output`, `algorithm`,
 * `testVectors`; `input` and `output` need `id` and `type`; `algorithm` needs `description`,
 * `documentation` and `implementation`.
 */
import { TxnType } from '@quire/common';
import { RequestError, RequestErrorCode, type RequestErrorData } from '../errors.js';
import { RsType, missingMembers, richSchemaHandler } from './rich-schema-common.js';

const members = (missing: string[], where: string, joiner: RequestErrorData['RS_CONTENT_MEMBERS']['joiner']): RequestError =>
  new RequestError(RequestErrorCode.RS_CONTENT_MEMBERS, { missing, where, joiner });

export const richSchemaEncodingHandler = richSchemaHandler({
  type: TxnType.RICH_SCHEMA_ENCODING,
  name: 'RICH_SCHEMA_ENCODING',
  validator: 'ClientRichSchemaEncodingOperation',
  rsType: RsType.ENCODING,
  mutable: false,
  jsonLd: false,
  checkContentStatic(content) {
    const missing = missingMembers(content, ['input', 'output', 'algorithm', 'testVectors']);
    if (missing.length > 0) throw members(missing, 'content', ', ');
    for (const part of ['input', 'output']) {
      const m = missingMembers(content[part], ['id', 'type']);
      if (m.length > 0) throw members(m, part, ' and ');
    }
    const m = missingMembers(content.algorithm, ['description', 'documentation', 'implementation']);
    if (m.length > 0) throw members(m, 'algorithm', ', ');
  },
});
