/**
 * JSON_LD_CONTEXT ("200", rsType `ctx`, immutable; requests.md §4.2): a JSON-LD context. `content`
 * must hold `@context`: an object, a URI, or an array of objects and URIs. URIs must match Indy's
 * pattern (anchored at the start only):
 * `^(?P<scheme>\w+):(?:(?:(?P<url>//[.\w]+)(?:(/(?P<path>[/\w]+)?)?))|(?:(?P<method>\w+):(?P<id>\w+)))`
 * with `\w` Unicode-aware as in Python.
 */
import { TxnType } from '@quire/common';
import { RequestError, RequestErrorCode } from '../errors.js';
import { isPlainObject } from '../validation/index.js';
import { RsType, richSchemaHandler } from './rich-schema-common.js';

const W = '[\\p{L}\\p{N}_]';
const URI_PATTERN = new RegExp(`^${W}+:(?:(?://[.\\p{L}\\p{N}_]+(?:/(?:[/\\p{L}\\p{N}_]+)?)?)|(?:${W}+:${W}+))`, 'u');

/** Whether a `@context` URI is well formed (requests.md §4.2). */
export function isContextUri(v: unknown): boolean {
  return typeof v === 'string' && URI_PATTERN.test(v);
}

function badUri(uri: unknown): RequestError {
  return new RequestError(RequestErrorCode.RS_CONTEXT_URI, { uri: typeof uri === 'string' ? uri : JSON.stringify(uri) });
}

export const jsonLdContextHandler = richSchemaHandler({
  type: TxnType.JSON_LD_CONTEXT,
  name: 'JSON_LD_CONTEXT',
  validator: 'ClientJsonLdContextOperation',
  rsType: RsType.CONTEXT,
  mutable: false,
  jsonLd: false,
  checkContentStatic(content) {
    if (!Object.hasOwn(content, '@context')) throw new RequestError(RequestErrorCode.RS_CONTEXT_MISSING, { field: 'content' });
    const ctx = content['@context'];
    if (isPlainObject(ctx)) return;
    if (typeof ctx === 'string') {
      if (!isContextUri(ctx)) throw badUri(ctx);
      return;
    }
    if (Array.isArray(ctx)) {
      for (const item of ctx) if (!isPlainObject(item) && !isContextUri(item)) throw badUri(item);
      return;
    }
    throw new RequestError(RequestErrorCode.RS_CONTEXT_TYPE, { field: 'content.@context' });
  },
});
