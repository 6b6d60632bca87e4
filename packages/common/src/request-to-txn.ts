/**
 * Request -> stored transaction (formats.md 4.2-4.5). The txn has no seqNo / txnTime / txnId yet:
 * ordering adds them.
 */
import { TxnType, defaultPayloadVersion } from './codes.js';
import { canonicalJson } from './canonical-json.js';
import { requestDigests, type DigestableRequest } from './digests.js';
import { TxnError, TxnErrorCode } from './errors.js';
import { sha256Hex } from './hash.js';
import { codePointCompare, deepCopy, isPlainObject } from './json-value.js';
import { parseJson } from './lossless-json.js';
import type { ReqSignature, Txn, TxnPayload, TxnPayloadMetadata } from './types/txn.js';

export interface RequestToTxnOptions {
  /** The request's digest, when already computed (formats.md 3.3). */
  digest?: string;
  /** The request's payloadDigest, when already computed. */
  payloadDigest?: string;
}

/**
 * Builds the stored txn of a request:
 * - `txn.data` = deep copy of the operation without `type` and `ver`; `txn.type` = operation.type;
 * - `txn.protocolVersion` when the request has a non-zero one;
 * - `txn.ver` = operation.ver as received, else the type's default payload version when above "1"
 *   ("2" for TXN_AUTHOR_AGREEMENT);
 * - `reqSignature`: `{}` when unsigned, else `ED25519` for one value and `ED25519_MULTI` for two or
 *   more, values sorted by signer DID (code-point order);
 * - `metadata`: `from` (= identifier, omitted when absent), `reqId`, `digest`, `payloadDigest`,
 *   `endorser` and `taaAcceptance` when present;
 * - ATTRIB ledger transform: `raw` -> hex SHA-256 of CJ(parsed raw), `enc` -> hex SHA-256 of the enc
 *   string (an empty value becomes `""`, as in Indy), `hash` kept.
 * Throws TxnError (INVALID_OPERATION, SIGNATURE_WITHOUT_IDENTIFIER, INVALID_SIGNATURES) and
 * EncodingError (an ATTRIB `raw` that is not JSON, unrepresentable values).
 */
export function requestToTxn(request: DigestableRequest, opts?: RequestToTxnOptions): Txn {
  const operation = request.operation;
  if (!isPlainObject(operation) || typeof operation.type !== 'string') {
    throw new TxnError(TxnErrorCode.INVALID_OPERATION, {}, 'operation must be an object with a string type');
  }
  const data = deepCopy(operation);
  const type = operation.type;
  delete data.type;
  const hasVer = data.ver !== undefined;
  const pver = data.ver;
  delete data.ver;

  let digest = opts?.digest;
  let payloadDigest = opts?.payloadDigest;
  if (digest === undefined || payloadDigest === undefined) {
    const d = requestDigests(request);
    digest ??= d.digest;
    payloadDigest ??= d.payloadDigest;
  }

  const metadata: TxnPayloadMetadata = {};
  if (request.identifier != null) metadata.from = request.identifier;
  metadata.reqId = request.reqId as number | bigint;
  metadata.digest = digest;
  metadata.payloadDigest = payloadDigest;
  if (request.taaAcceptance != null) metadata.taaAcceptance = deepCopy(request.taaAcceptance) as TxnPayloadMetadata['taaAcceptance'];
  if (request.endorser != null) metadata.endorser = request.endorser;

  const payload: TxnPayload = { type, data, metadata };
  const pv = request.protocolVersion;
  if (pv != null && pv !== 0 && pv !== 0n) payload.protocolVersion = pv as number;
  if (hasVer) payload.ver = pver as string | number;
  else {
    const dv = defaultPayloadVersion(type);
    if (dv !== '1') payload.ver = dv;
  }

  if (type === TxnType.ATTRIB) transformAttrib(data);

  return { ver: '1', txn: payload, txnMetadata: {}, reqSignature: reqSignatureOf(request) };
}

/** `reqSignature` of a request (formats.md 4.2-4.3). */
export function reqSignatureOf(request: Pick<DigestableRequest, 'identifier' | 'signature' | 'signatures'>): ReqSignature {
  let sigs: Record<string, unknown> | undefined;
  if (request.signature) {
    if (!request.identifier) throw new TxnError(TxnErrorCode.SIGNATURE_WITHOUT_IDENTIFIER, {}, 'a signature needs an identifier');
    sigs = { [request.identifier]: request.signature };
  } else if (request.signatures != null) {
    if (!isPlainObject(request.signatures)) throw new TxnError(TxnErrorCode.INVALID_SIGNATURES, {}, 'signatures must be an object');
    sigs = request.signatures;
  }
  if (sigs === undefined) return {};
  const dids = Object.keys(sigs).sort(codePointCompare);
  if (dids.length === 0) return {};
  const values = dids.map((from) => {
    const value = sigs[from];
    if (typeof value !== 'string') throw new TxnError(TxnErrorCode.INVALID_SIGNATURES, { from }, 'every signature must be a string');
    return { from, value };
  });
  return { type: values.length === 1 ? 'ED25519' : 'ED25519_MULTI', values };
}

/** The ATTRIB ledger transform, in place on a copy of the operation's data (formats.md 4.5). */
function transformAttrib(data: Record<string, unknown>): void {
  // valid ATTRIBs carry exactly one of raw / enc / hash; both are transformed if both are present so
  // that attribute content never reaches the ledger
  if (data.raw !== undefined && data.raw !== null) {
    const raw = data.raw;
    if (typeof raw !== 'string') throw new TxnError(TxnErrorCode.INVALID_OPERATION, { field: 'raw' }, 'ATTRIB raw must be a JSON string');
    data.raw = raw === '' ? '' : attribRawHash(raw);
  }
  if (data.enc !== undefined && data.enc !== null) {
    const enc = data.enc;
    if (typeof enc !== 'string') throw new TxnError(TxnErrorCode.INVALID_OPERATION, { field: 'enc' }, 'ATTRIB enc must be a string');
    data.enc = enc === '' ? '' : sha256Hex(enc);
  }
}

/** The hash an ATTRIB txn stores for a `raw` value: hex SHA-256 of CJ(parsed raw). */
export function attribRawHash(raw: string): string {
  return sha256Hex(canonicalJson(parseJson(raw)));
}
