/**
 * Request digests (formats.md 3.3). `payloadDigest` identifies the request (what was asked, by whom),
 * `digest` also covers the signatures. Both are lowercase hex SHA-256 of SER with nothing skipped and
 * the ATTRIB rule applied to ATTRIB writes only: indy-node hashes `raw` / `enc` / `hash` in the digests of
 * an ATTRIB (indy_common/types.py), not of a GET_ATTR, whose digests cover the attribute name as sent
 * (the signature input keeps the rule for both types, as indy-vdr does).
 */
import { sha256Hex } from './hash.js';
import { codePointCompare, isPlainObject, unsupported } from './json-value.js';
import { TxnType } from './codes.js';
import { applyAttribRule, signingSerialization } from './signing-serialization.js';

/** The request fields the digests read. */
export interface DigestableRequest {
  identifier?: string | null;
  reqId: unknown;
  operation: Record<string, unknown>;
  protocolVersion?: unknown;
  taaAcceptance?: unknown;
  endorser?: string | null;
  signature?: string | null;
  signatures?: Record<string, string> | null;
}

/**
 * The author of a request: `identifier` when present (non-empty), otherwise the code-point-sorted
 * keys of `signatures` joined with `,`; `undefined` when the request has neither.
 */
export function requestAuthor(request: Pick<DigestableRequest, 'identifier' | 'signatures'>): string | undefined {
  if (request.identifier) return request.identifier;
  if (isPlainObject(request.signatures)) return Object.keys(request.signatures).sort(codePointCompare).join(',');
  return undefined;
}

function payloadOf(request: DigestableRequest): Record<string, unknown> {
  if (!isPlainObject(request)) throw unsupported(request);
  const payload: Record<string, unknown> = {
    identifier: requestAuthor(request) ?? null,
    reqId: request.reqId,
    operation: isPlainObject(request.operation) && request.operation.type === TxnType.ATTRIB ? applyAttribRule(request.operation) : request.operation,
  };
  if (request.protocolVersion != null) payload.protocolVersion = request.protocolVersion;
  if (request.taaAcceptance != null) payload.taaAcceptance = request.taaAcceptance;
  if (request.endorser != null) payload.endorser = request.endorser;
  return payload;
}

/** The SER string hashed by {@link payloadDigest}. */
export function payloadDigestInput(request: DigestableRequest): string {
  return signingSerialization(payloadOf(request));
}

/** The SER string hashed by {@link requestDigest}. */
export function requestDigestInput(request: DigestableRequest): string {
  const full = payloadOf(request);
  if (request.signatures != null) full.signatures = request.signatures;
  if (request.signature != null) full.signature = request.signature;
  return signingSerialization(full);
}

/** Lowercase hex SHA-256 of SER(payload): the identity of a request regardless of its signatures. */
export function payloadDigest(request: DigestableRequest): string {
  return sha256Hex(payloadDigestInput(request));
}

/** Lowercase hex SHA-256 of SER(payload + signatures + signature): the full request digest. */
export function requestDigest(request: DigestableRequest): string {
  return sha256Hex(requestDigestInput(request));
}

/** Both digests in one pass. */
export function requestDigests(request: DigestableRequest): { digest: string; payloadDigest: string } {
  const payload = payloadOf(request);
  const payloadDigestHex = sha256Hex(signingSerialization(payload));
  if (request.signatures != null) payload.signatures = request.signatures;
  if (request.signature != null) payload.signature = request.signature;
  return { digest: sha256Hex(signingSerialization(payload)), payloadDigest: payloadDigestHex };
}

/** TAA digest (formats.md 3.5): lowercase hex SHA-256 of `version` immediately followed by `text`. */
export function taaDigest(version: string, text: string): string {
  return sha256Hex(version + text);
}

/** A TAA acceptance time rounded down to UTC midnight: t - (t mod 86400). */
export function taaAcceptanceDay(t: number): number {
  return t - (((t % 86400) + 86400) % 86400);
}

/**
 * Batch digest (formats.md 10.2): lowercase hex SHA-256 of SER([viewNo, ppTime, d1, …, dk]), the
 * request digests in batch order. The digest names a batch in VIEW_CHANGE and NEW_VIEW, so it must
 * fix everything the batch's execution depends on. A non-empty batch's requests fix its ledger
 * (a PRE-PREPARE whose requests belong to another ledger is refused); an empty batch (a freshness
 * update) has no request, so its ledger is hashed as a last element `ledger=<id>`. Without it two
 * empty batches of one view and second on different ledgers share a digest, and a primary could
 * send each half of the pool its own (docs/consensus-deviations.md §8).
 */
export function batchDigest(viewNo: number, ppTime: number, requestDigestsInOrder: readonly string[], ledgerId: number): string {
  const tail = requestDigestsInOrder.length > 0 ? requestDigestsInOrder : [`ledger=${ledgerId}`];
  return sha256Hex(signingSerialization([viewNo, ppTime, ...tail]));
}
