/**
 * Request envelope (requests.md §1.1, formats.md 3.1-3.4): size check, lossless parse, the kept
 * fields, their schema, the signature/endorser rules, and the derived author and digests.
 */
import { EncodingError, codePointCompare, parseJson, requestDigests, signatureInput } from '@quire/common';
import { RequestError, RequestErrorCode } from '../errors.js';
import type { ParsedRequest, Request, TaaAcceptance } from '../handler.js';
import { did, integer, isPlainObject, mapOf, pyType, sha256Hex as sha256HexCheck, signatureText, str } from '../validation/fields.js';
import { Limits } from '../validation/limits.js';
import { objectSchema, optional } from '../validation/schema.js';

const VALIDATOR = 'ClientMessageValidator';
const textEncoder = new TextEncoder();

const taaAcceptanceSchema = objectSchema(VALIDATOR, {
  taaDigest: sha256HexCheck,
  mechanism: str({ max: Limits.TAA_MECHANISM }),
  time: integer({ min: Limits.TAA_TIME_MIN }),
});

const envelopeSchema = objectSchema(VALIDATOR, {
  identifier: optional(did),
  reqId: integer({ min: 0, max: Limits.REQ_ID_MAX }),
  operation: (v, at) => {
    if (!isPlainObject(v))
      throw new RequestError(RequestErrorCode.FIELD_TYPE, { validator: at.validator, field: at.field, value: v, expected: 'dict', got: pyType(v) });
    if (!Object.hasOwn(v, 'type')) throw new RequestError(RequestErrorCode.FIELD_MISSING, { validator: at.validator, fields: ['operation.type'] });
    if (typeof v.type !== 'string')
      throw new RequestError(RequestErrorCode.FIELD_TYPE, {
        validator: at.validator,
        field: 'operation.type',
        value: v.type,
        expected: 'str',
        got: pyType(v.type),
      });
  },
  signature: optional(signatureText),
  signatures: optional((v, at) => {
    mapOf(signatureText, did)(v, at);
    if (Object.keys(v as object).length === 0) throw new RequestError(RequestErrorCode.FIELD_EMPTY, { validator: at.validator, field: at.field, value: v });
  }),
  endorser: optional(did),
  taaAcceptance: optional(taaAcceptanceSchema.check),
  digest: optional(str({ max: Limits.DIGEST_TEXT, allowEmpty: true })),
});

/** Parses raw client bytes/text (size-checked, lossless) into a JSON value. */
export function parseMessage(message: string | Uint8Array): unknown {
  // a UTF-16 unit is at most 3 bytes of UTF-8 (a surrogate pair, two units, 4): a text of at most a third of the limit
  // in units is within it, and is not encoded to be measured (the client path's door parses every client frame)
  if (typeof message !== 'string' || message.length * 3 > Limits.MESSAGE_BYTES) {
    const length = typeof message === 'string' ? textEncoder.encode(message).length : message.length;
    if (length > Limits.MESSAGE_BYTES) throw new RequestError(RequestErrorCode.MESSAGE_TOO_LARGE, { length, limit: Limits.MESSAGE_BYTES });
  }
  try {
    return parseJson(message);
  } catch (e) {
    throw new RequestError(RequestErrorCode.MALFORMED_JSON, { problem: e instanceof EncodingError ? e.message : 'not JSON' });
  }
}

/**
 * Validates the envelope of a request (a parsed JSON value, or raw text/bytes) and returns the
 * ParsedRequest of its kept fields. Throws RequestError (REQNACK) on any problem.
 */
export function parseRequest(input: unknown): ParsedRequest {
  const value = typeof input === 'string' || input instanceof Uint8Array ? parseMessage(input) : input;
  if (!isPlainObject(value)) throw new RequestError(RequestErrorCode.MALFORMED_JSON, { problem: `a request must be a JSON object, got ${pyType(value)}` });
  const known = parsedObjects.get(value);
  if (known !== undefined) return known;
  const parsed = parseObject(value);
  // a request object travels through receipt, consensus and execution: its envelope is checked and its digests are
  // computed once (request objects are never modified after parsing)
  parsedObjects.set(value, parsed);
  parsedObjects.set(parsed.request, parsed);
  return parsed;
}

/** Parsed requests by the object they were parsed from (and by their kept-fields object). */
const parsedObjects = new WeakMap<object, Parsed>();

function parseObject(value: Record<string, unknown>): Parsed {
  if (value.signature !== undefined && value.signatures !== undefined) throw new RequestError(RequestErrorCode.SIGNATURE_AND_SIGNATURES);
  if ((value.identifier === undefined || value.identifier === null) && (value.signatures === undefined || value.signatures === null)) {
    throw new RequestError(RequestErrorCode.MISSING_IDENTIFIER);
  }
  if (value.protocolVersion === undefined) throw new RequestError(RequestErrorCode.PROTOCOL_VERSION_MISSING);
  const pv = value.protocolVersion;
  if (pv === 1) throw new RequestError(RequestErrorCode.PROTOCOL_VERSION_OLD, { version: 1 });
  if (pv !== Limits.PROTOCOL_VERSION) throw new RequestError(RequestErrorCode.PROTOCOL_VERSION_UNKNOWN, { version: pv });
  // Indy treats reqId 0 (and null) as missing.
  if (value.reqId === 0 || value.reqId === 0n || value.reqId === null)
    throw new RequestError(RequestErrorCode.FIELD_MISSING, { validator: VALIDATOR, fields: ['reqId'] });
  // null optional members count as absent
  const kept: Record<string, unknown> = {};
  for (const k of ['identifier', 'reqId', 'operation', 'protocolVersion', 'signature', 'signatures', 'endorser', 'taaAcceptance', 'digest'] as const) {
    if (value[k] !== undefined && value[k] !== null) kept[k] = value[k];
  }
  envelopeSchema.validate(kept);
  const identifier = (kept.identifier as string | undefined) ?? null;
  const signatures = kept.signatures as Record<string, string> | undefined;
  const endorser = (kept.endorser as string | undefined) ?? null;
  if (identifier !== null && signatures !== undefined && !Object.hasOwn(signatures, identifier))
    throw new RequestError(RequestErrorCode.IDENTIFIER_NOT_IN_SIGNATURES);
  if (endorser !== null) {
    if (identifier === null) throw new RequestError(RequestErrorCode.ENDORSED_WITHOUT_AUTHOR);
    if (signatures === undefined || !Object.hasOwn(signatures, endorser)) throw new RequestError(RequestErrorCode.ENDORSER_NOT_SIGNED);
    if (!Object.hasOwn(signatures, identifier)) throw new RequestError(RequestErrorCode.ENDORSED_AUTHOR_NOT_SIGNED);
  }
  delete kept.digest;
  return new Parsed(kept as unknown as Request);
}

/** The ParsedRequest implementation: derived members are computed once, on first use. */
class Parsed implements ParsedRequest {
  readonly type: string;
  readonly operation: Readonly<Record<string, unknown>>;
  readonly identifier: string | null;
  readonly author: string;
  readonly reqId: number | bigint;
  readonly endorser: string | null;
  readonly taaAcceptance: TaaAcceptance | null;
  readonly signers: readonly (readonly [string, string])[];
  readonly multiSigned: boolean;
  #digest: string | undefined;
  #payloadDigest: string | undefined;
  #signatureInput: Uint8Array | undefined;

  constructor(readonly request: Request) {
    this.operation = request.operation;
    this.type = request.operation.type as string;
    this.identifier = request.identifier ?? null;
    this.reqId = request.reqId;
    this.endorser = request.endorser ?? null;
    this.taaAcceptance = request.taaAcceptance ?? null;
    const signatures = request.signatures;
    if (signatures !== undefined) {
      this.multiSigned = true;
      this.signers = Object.keys(signatures)
        .sort(codePointCompare)
        .map((d) => [d, signatures[d]] as const);
    } else {
      this.multiSigned = false;
      this.signers = request.signature !== undefined && this.identifier !== null ? [[this.identifier, request.signature] as const] : [];
    }
    this.author = this.identifier ?? this.signers.map(([d]) => d).join(',');
  }

  get digest(): string {
    return this.#digest ?? this.#computeDigests().digest;
  }

  get payloadDigest(): string {
    return this.#payloadDigest ?? this.#computeDigests().payloadDigest;
  }

  #computeDigests(): { digest: string; payloadDigest: string } {
    const d = digests(this.request);
    this.#digest = d.digest;
    this.#payloadDigest = d.payloadDigest;
    return d;
  }

  /** Bytes every signer signed (formats.md 3.2). */
  get signatureInput(): Uint8Array {
    return (this.#signatureInput ??= signatureInputOf(this.request));
  }
}

function signatureInputOf(request: Request): Uint8Array {
  try {
    return signatureInput(request);
  } catch (e) {
    throw new RequestError(RequestErrorCode.SERIALIZATION_FAILED, { problem: e instanceof Error ? e.message : 'unserializable' });
  }
}

/** The signature input of a parsed request (cached on the request). */
export function signatureInputFor(req: ParsedRequest): Uint8Array {
  return req instanceof Parsed ? req.signatureInput : signatureInputOf(req.request);
}

/** `digest` and `payloadDigest` of formats.md 3.3 (`requestDigests` of @quire/common), failures as RequestError. */
export function digests(request: Request): { digest: string; payloadDigest: string } {
  try {
    return requestDigests(request);
  } catch (e) {
    throw new RequestError(RequestErrorCode.SERIALIZATION_FAILED, { problem: e instanceof Error ? e.message : 'unserializable' });
  }
}
