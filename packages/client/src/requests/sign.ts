/**
 * Signing (formats.md 3.2, 3.4): single signatures, multi-signatures and the endorser flow. Every signer signs the
 * same input, signatureInput(request) of @quire/common, so the fields that are signed (endorser, taaAcceptance)
 * must be set before anyone signs.
 */
import { isPlainObject, signatureInput, type Request } from '@quire/common';
import { ClientError, ClientErrorCode } from '../errors.js';
import type { DidKey } from './did.js';

function checkRequest(request: unknown): asserts request is Request {
  if (!isPlainObject(request) || !isPlainObject(request.operation))
    throw new ClientError(ClientErrorCode.INVALID_REQUEST, { reason: 'not a request object with an operation' });
}

/**
 * Signs a request. When the key is the author and nobody else signs, the signature goes to `signature`; when the
 * request has an endorser, already has `signatures`, or the key is not the author, it is added to `signatures`
 * (see {@link multiSignRequest}). Returns a new request object.
 */
export function signRequest<T extends Request>(request: T, key: DidKey): T {
  checkRequest(request);
  if (request.endorser === undefined && request.signatures === undefined && request.signature === undefined && request.identifier === key.did) {
    return { ...request, signature: key.signBase58(signatureInput(request)) };
  }
  return multiSignRequest(request, key);
}

/**
 * Adds `key`'s signature to `signatures`. An existing single `signature` moves to `signatures[identifier]` first
 * (indy-vdr's behaviour). Returns a new request object.
 */
export function multiSignRequest<T extends Request>(request: T, key: DidKey): T {
  checkRequest(request);
  const out: T = { ...request };
  const sigs: Record<string, string> = { ...(request.signatures ?? {}) };
  if (request.signature !== undefined) {
    if (request.identifier === undefined) throw new ClientError(ClientErrorCode.INVALID_REQUEST, { reason: 'signature without identifier' });
    sigs[request.identifier] = request.signature;
    delete out.signature;
  }
  sigs[key.did] = key.signBase58(signatureInput(request));
  out.signatures = sigs;
  return out;
}

/**
 * Endorser flow, author side: names the endorser (a signed field) and adds the author's signature to `signatures`.
 * The endorser then calls {@link endorseRequest}. Throws INVALID_REQUEST when the request is already signed.
 */
export function prepareForEndorser<T extends Request>(request: T, endorserDid: string, author: DidKey): T {
  checkRequest(request);
  if (request.signature !== undefined || request.signatures !== undefined) {
    throw new ClientError(ClientErrorCode.INVALID_REQUEST, { reason: 'the endorser must be set before anyone signs' });
  }
  if (request.identifier !== author.did)
    throw new ClientError(ClientErrorCode.SIGNER_MISMATCH, { did: author.did, reason: 'the author must be the request identifier' });
  return multiSignRequest({ ...request, endorser: endorserDid }, author);
}

/** Endorser flow, endorser side: adds the endorser's signature. Throws SIGNER_MISMATCH when `key` is not the named endorser. */
export function endorseRequest<T extends Request>(request: T, key: DidKey): T {
  checkRequest(request);
  if (request.endorser !== key.did)
    throw new ClientError(ClientErrorCode.SIGNER_MISMATCH, { did: key.did, reason: `the request names endorser ${String(request.endorser)}` });
  return multiSignRequest(request, key);
}
