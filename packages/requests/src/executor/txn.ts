/**
 * Request -> stored transaction (formats.md 4.2-4.5): the `requestToTxn` of @quire/common, fed
 * with the digests the parsed request already holds (so they are not computed twice) and with its
 * failures turned into a RequestError.
 */
import { QuireError, deepCopy, requestToTxn as commonRequestToTxn } from '@quire/common';
import { RequestError, RequestErrorCode } from '../errors.js';
import type { ParsedRequest, Txn } from '../handler.js';

/** Deep copy of a JSON value of the lossless model (bigint, JsonFloat and received key order kept). */
export const cloneJson: <T>(v: T) => T = deepCopy;

/**
 * The stored txn of a parsed request, without seqNo / txnTime / txnId (ordering adds them). ATTRIB
 * `raw` / `enc` are already replaced by their hashes; the handler's `prepareTxn` keeps the originals.
 */
export function parsedRequestToTxn(req: ParsedRequest): Txn {
  try {
    return commonRequestToTxn(req.request, { digest: req.digest, payloadDigest: req.payloadDigest });
  } catch (e) {
    if (e instanceof QuireError) throw new RequestError(RequestErrorCode.SERIALIZATION_FAILED, { problem: e.message });
    throw e;
  }
}
