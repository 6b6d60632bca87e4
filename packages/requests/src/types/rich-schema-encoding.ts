/**
 * RICH_SCHEMA_ENCODING ("202", rsType `enc`, immutable; requests.md §4.2): how an attribute value
 * is encoded as an integer. `content` needs non-empty `input`, `output`, `algorithm`,
 * `testVectors`; `input` and `output` need `id` and `type`; `algorithm` needs `description`,
 * `documentation` and `implementation`.
 */
import { RequestError, RequestErrorCode } from '../errors.js';
import { RsType, missingMembers, quotedAnd, quotedList, richSchemaHandler } from './rich-schema-common.js';

const invalid = (text: string): RequestError => new RequestError(RequestErrorCode.RS_CONTENT_INVALID, { text });

export const richSchemaEncodingHandler = richSchemaHandler({
  type: '202',
  name: 'RICH_SCHEMA_ENCODING',
  validator: 'ClientRichSchemaEncodingOperation',
  rsType: RsType.ENCODING,
  mutable: false,
  jsonLd: false,
  checkContentStatic(content) {
    const missing = missingMembers(content, ['input', 'output', 'algorithm', 'testVectors']);
    if (missing.length > 0) throw invalid(`${quotedList(missing)} must be set in 'content'`);
    for (const part of ['input', 'output']) {
      const m = missingMembers(content[part], ['id', 'type']);
      if (m.length > 0) throw invalid(`${quotedAnd(m)} must be set in '${part}'`);
    }
    const m = missingMembers(content.algorithm, ['description', 'documentation', 'implementation']);
    if (m.length > 0) throw invalid(`${quotedList(m)} must be set in 'algorithm'`);
  },
});
