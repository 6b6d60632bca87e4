// @quire/common: type codes, roles, ledger ids, shapes, canonical encodings, identifiers, errors.
// No I/O and no dependency on other Quire packages. This file is the package's only public face.

// errors
export { QuireError, CodedError, EncodingError, EncodingErrorCode, IdentifierError, IdentifierErrorCode, TxnError, TxnErrorCode } from './errors.js';
export type { CodeData, CodedErrorArgs, EncodingErrorData, IdentifierErrorData, TxnErrorData } from './errors.js';

// bounded memories: the oldest entry goes past a capacity (or the least recently used one)
export { BoundedFifo, BoundedFifoSet, LruCache } from './bounded-fifo.js';

// codes and ids (formats appendix A)
export { TxnType, Role, LedgerId, ledgerOfType, txnKind, isKnownTxnType, isWriteType, isReadType, isLedgerId, isRole, defaultPayloadVersion } from './codes.js';
export type { TxnKind } from './codes.js';

// bytes and hashes (formats 1.1-1.3)
export { concatBytes, equalBytes } from './bytes.js';
export { b58encode, b58decode, b58decodeOrUndefined, isBase58 } from './base58.js';
export { b64encode, b64decode } from './base64.js';
export { toHex, fromHex, isSha256Hex } from './hex.js';
export { decodeSeed } from './seed.js';
export { fnv1a32, sha256, sha256Hex, sha3_256 } from './hash.js';
export type { HashInput } from './hash.js';

// the JSON value model shared by every encoder
export { JsonFloat, RECEIVED_KEY_ORDER, receivedKeys, setReceivedKeys, codePointCompare, isPlainObject, pythonFloatRepr, deepCopy } from './json-value.js';

// encodings (formats 1.4-1.7)
export { parseJson, stringifyJson } from './lossless-json.js';
export { JsonText } from './json-writer.js';
export type { ParseJsonOptions } from './lossless-json.js';
export { signingSerialization, signatureInput, signatureInputString, applyAttribRule, SIGNED_REQUEST_FIELDS } from './signing-serialization.js';
export type { SigningSerializationOptions } from './signing-serialization.js';
export { canonicalJson, canonicalJsonBytes } from './canonical-json.js';
export { MsgpackEncoded, encodeMsgpack, encodedMsgpackSize } from './msgpack-encode.js';
export { decodeMsgpack, takeDecodedEncoding, type DecodeMsgpackOptions } from './msgpack-decode.js';

// digests (formats 3.3, 3.5, 10.2)
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

// identifiers (formats 2.1-2.2)
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
  peerIdOfNodeDest,
} from './identifiers.js';

// shapes: requests, txns, replies, multi-signatures
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
export { POOL_OVERLOADED_REASON, reqAck, reqNack, reject, rejectReason, multiSignatureMessage } from './replies.js';

// request -> txn (formats 4.2-4.5) and audit txns (10.1)
export { requestToTxn, reqSignatureOf, attribRawHash } from './request-to-txn.js';
export type { RequestToTxnOptions } from './request-to-txn.js';
export { AUDIT_INTEGER_KEYED_FIELDS, integerKeyedMap, restoreAuditIntegerKeys } from './audit.js';

// ordered-batch announcements (consensus.md 9.2)
export { orderedBatchTopic, observedBatchDigest, observedBatchSigningInput, observedBatchSigningInputOfDigest } from './observed-batch.js';
export type { BatchCommitted, MultiSigTuple, ObservedBatch } from './observed-batch.js';

// the client protocol's framing and envelopes (/quire/client/1.0.0), shared by node and client
export {
  ClientWireError,
  ClientWireErrorCode,
  MSG_LEN_LIMIT,
  varintLength,
  writeVarint,
  readVarint,
  encodeFrame,
  FrameDecoder,
  CLIENT_PROTOCOL,
  EnvelopeKind,
  ClientRefusalCode,
  clientRefusalReason,
  encodeEnvelope,
  encodeEnvelopeFrames,
  decodeEnvelope,
  peekRequestId,
  encodeErrorPayload,
  decodeErrorPayload,
} from './client-wire.js';
export type { ClientWireErrorData, DecodedFrame, FrameDecoderOptions, Envelope } from './client-wire.js';
export { TypedEmitter } from './typed-emitter.js';
export { backoffDelay } from './backoff.js';
export { canRepairGossipOutbound, repairGossipOutbound, type GossipRepairConnection } from './gossip-streams.js';
export { gossipInboundLimit, gossipMessageId } from './gossip-message.js';
// the state-key layout (formats.md §8.2): one definition, shared by the write and read handlers and the light client
export * from './state-keys.js';
