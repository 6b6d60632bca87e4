/**
 * Request -> stored transaction (formats.md 4.2). The operation is deep-copied keeping exact
 * integers, integral floats and the received key order.
 */
import { JsonFloat, codePointCompare, defaultPayloadVersion, receivedKeys, setReceivedKeys } from '@quire/common';
import type { ParsedRequest, Txn } from '../handler.js';

/** Deep copy of a JSON value of the lossless model (bigint, JsonFloat and key order kept). */
export function cloneJson<T>(v: T): T {
  if (v === null || typeof v !== 'object' || v instanceof JsonFloat) return v;
  if (Array.isArray(v)) return v.map(cloneJson) as T;
  if (v instanceof Map) return new Map([...v].map(([k, x]) => [k, cloneJson(x)])) as T;
  const src = v as Record<string, unknown>;
  const keys = receivedKeys(src);
  const out: Record<string, unknown> = {};
  for (const k of keys) out[k] = cloneJson(src[k]);
  if (keys.join('\u0000') !== Object.keys(out).join('\u0000')) setReceivedKeys(out, keys);
  return out as T;
}

/** The stored txn of a request, without txnMetadata (ordering adds seqNo, txnTime, txnId). */
export function requestToTxn(req: ParsedRequest): Txn {
  const op = cloneJson(req.operation) as Record<string, unknown>;
  const type = op.type as string;
  delete op.type;
  const hasVer = Object.hasOwn(op, 'ver') && op.ver !== undefined;
  const pver = op.ver;
  delete op.ver;
  const txn: Txn = { ver: '1', txn: { type, data: op, metadata: {} }, txnMetadata: {}, reqSignature: {} };
  const r = req.request;
  if (r.protocolVersion !== undefined && r.protocolVersion !== 0) txn.txn.protocolVersion = r.protocolVersion;
  if (hasVer) txn.txn.ver = pver;
  else if (defaultPayloadVersion(type) !== '1') txn.txn.ver = defaultPayloadVersion(type);
  if (req.signers.length > 0) {
    const values = [...req.signers].sort((a, b) => codePointCompare(a[0], b[0])).map(([from, value]) => ({ from, value }));
    txn.reqSignature = { type: values.length === 1 ? 'ED25519' : 'ED25519_MULTI', values };
  }
  const md: Record<string, unknown> = {};
  if (req.identifier !== null) md.from = req.identifier;
  md.reqId = req.reqId;
  md.digest = req.digest;
  md.payloadDigest = req.payloadDigest;
  if (req.taaAcceptance !== null) md.taaAcceptance = cloneJson(req.taaAcceptance);
  if (req.endorser !== null) md.endorser = req.endorser;
  txn.txn.metadata = md;
  return txn;
}
