// @quire/common: type codes, roles, ledger ids, canonical encodings, identifiers, errors. No I/O.
export { QuireError, EncodingError, EncodingErrorCode, IdentifierError, IdentifierErrorCode } from './errors.js';
export {
  TxnType,
  Role,
  LedgerId,
  ledgerOfType,
  txnKind,
  isKnownTxnType,
  isWriteType,
  isReadType,
  isLedgerId,
  isRole,
  defaultPayloadVersion,
} from './codes.js';
export type { TxnKind } from './codes.js';
export { b58encode, b58decode, b58decodeOrUndefined, isBase58 } from './base58.js';
export { b64encode, b64decode } from './base64.js';
export { toHex, fromHex, isSha256Hex } from './hex.js';
export { sha256, sha256Hex, sha3_256 } from './hash.js';
export type { HashInput } from './hash.js';
export {
  JsonFloat,
  RECEIVED_KEY_ORDER,
  receivedKeys,
  setReceivedKeys,
  codePointCompare,
  isPlainObject,
  pythonFloatRepr,
} from './json-value.js';
export { parseJson, stringifyJson } from './lossless-json.js';
export type { ParseJsonOptions } from './lossless-json.js';
export { signingSerialization, signatureInput, signatureInputString, applyAttribRule, SIGNED_REQUEST_FIELDS } from './signing-serialization.js';
export type { SigningSerializationOptions } from './signing-serialization.js';
export { canonicalJson, canonicalJsonBytes } from './canonical-json.js';
export { encodeMsgpack } from './msgpack-encode.js';
export { decodeMsgpack } from './msgpack-decode.js';
export { TxnError, TxnErrorCode } from './errors.js';
export { deepCopy } from './json-value.js';
export {
  requestAuthor,
  requestDigest,
  payloadDigest,
  requestDigests,
  requestDigestInput,
  payloadDigestInput,
  taaDigest,
  taaAcceptanceDay,
  batchDigest,
} from './digests.js';
export type { DigestableRequest } from './digests.js';
export {
  didFromVerkey,
  abbreviatedVerkey,
  fullVerkey,
  didIndyV2Id,
  decodeDid,
  isValidDid,
  isFullVerkey,
  isAbbreviatedVerkey,
  isValidVerkey,
  unqualifiedDid,
  resolveVerkey,
  NymVersion,
  NYM_VERSION_1_MISMATCH,
  NYM_VERSION_2_MISMATCH,
  NYM_VERSION_ON_EXISTING,
  checkNymVersionValue,
  checkNymDidBinding,
} from './identifiers.js';
export type { TaaAcceptance, Operation, Request } from './types/request.js';
export { REQUEST_FIELDS } from './types/request.js';
export { SignatureType } from './types/txn.js';
export type { SignatureValue, ReqSignature, TxnPayloadMetadata, TxnPayload, TxnMetadata, Txn, AuditTxnData } from './types/txn.js';
export { RejectCode, REJECT_REASON_TEMPLATES } from './types/reply.js';
export type {
  MultiSignatureValue,
  MultiSignature,
  StateProof,
  ReqAck,
  ReqNack,
  Reject,
  WriteResult,
  ReadResult,
  GetTxnData,
  WriteReply,
  ReadReply,
  Reply,
  ClientReply,
} from './types/reply.js';
export { reqAck, reqNack, reject, rejectReason, multiSignatureMessage } from './replies.js';
export { requestToTxn, reqSignatureOf, attribRawHash } from './request-to-txn.js';
export type { RequestToTxnOptions } from './request-to-txn.js';
export { AUDIT_INTEGER_KEYED_FIELDS, integerKeyedMap, restoreAuditIntegerKeys } from './audit.js';
