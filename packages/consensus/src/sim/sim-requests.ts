// Simulator workload: clients that sign NYM-like requests with real ed25519 keys, and the
// STAND-IN request analyzer the simulated nodes use (digests over canonical JSON, signature over the
// canonical JSON of the payload). The node wires the analyzer of @quire/requests instead.
import { LedgerId, TxnType, b58decodeOrUndefined, b58encode, canonicalJson, sha256Hex } from '@quire/common';
import { type Ed25519KeyPair, ed25519KeyPairFromSeed, ed25519Sign, ed25519Verify } from '@quire/crypto';
import type { RequestAnalyzer, RequestCheck } from '../interfaces.js';
import type { ClientRequestBody } from '../messages.js';
import type { StandInRequestView } from './standin-executor.js';
import { ConsensusError, ConsensusErrorCode } from '../errors.js';

/** the request without its signature fields (what the client signs, and the dedup key) */
function payloadOf(request: ClientRequestBody): Record<string, unknown> {
  const { signature: _s, signatures: _m, ...payload } = request;
  return payload;
}

export function simPayloadDigest(request: ClientRequestBody): string {
  return sha256Hex(canonicalJson(payloadOf(request)));
}

export function simRequestDigest(request: ClientRequestBody): string {
  return sha256Hex(canonicalJson(request));
}

export class SimClient {
  private readonly keys: Ed25519KeyPair;
  readonly identifier: string;
  private nextReqId = 1;

  constructor(seed: Uint8Array) {
    this.keys = ed25519KeyPairFromSeed(seed);
    this.identifier = b58encode(this.keys.publicKey);
  }

  /** A signed write of `dest`; `invalid` makes it fail dynamic validation (discarded, REJECT). */
  request(dest: string, opts: { invalid?: boolean; reqId?: number } = {}): ClientRequestBody {
    const operation: Record<string, unknown> = { type: TxnType.NYM, dest, verkey: `~${dest.slice(0, 22)}` };
    if (opts.invalid === true) operation.invalid = true;
    const payload = { identifier: this.identifier, reqId: opts.reqId ?? this.nextReqId++, operation, protocolVersion: 2 };
    const signature = b58encode(ed25519Sign(this.keys.privateKeyObject, new TextEncoder().encode(canonicalJson(payload))));
    return { ...payload, signature };
  }

  /** A signed NODE txn (pool ledger): add / promote (`services: ['VALIDATOR']`), demote (`services: []`) or key rotation. */
  nodeRequest(dest: string, data: Record<string, unknown>): ClientRequestBody {
    return this.sign({ identifier: this.identifier, reqId: this.nextReqId++, operation: { type: TxnType.NODE, dest, data }, protocolVersion: 2 });
  }

  private sign(payload: Record<string, unknown>): ClientRequestBody {
    const signature = b58encode(ed25519Sign(this.keys.privateKeyObject, new TextEncoder().encode(canonicalJson(payload))));
    return { ...payload, signature };
  }

  /** The same payload under another full digest (an added `signatures` map): payload dedup must let
   *  at most one of the two be committed. */
  variant(request: ClientRequestBody): ClientRequestBody {
    return { ...request, signatures: { [this.identifier]: request.signature } };
  }
}

export class SimRequestAnalyzer implements RequestAnalyzer, StandInRequestView {
  /** results by request object: simulated messages pass requests by reference and never mutate them */
  private readonly byObject = new WeakMap<object, RequestCheck>();

  /** `cache` may be shared by the simulated nodes of one run: a check is a pure function of the request */
  constructor(private readonly cache: Map<string, RequestCheck> = new Map()) {}

  analyze(request: ClientRequestBody): RequestCheck {
    const known = this.byObject.get(request);
    if (known !== undefined) return known;
    const r = this.analyzeUncached(request);
    this.byObject.set(request, r);
    return r;
  }

  private analyzeUncached(request: ClientRequestBody): RequestCheck {
    let digest: string;
    try {
      digest = simRequestDigest(request);
    } catch {
      return { ok: false, code: 'INVALID_REQUEST', reason: 'request does not encode' };
    }
    const hit = this.cache.get(digest);
    if (hit !== undefined) return hit;
    const r = this.check(request, digest);
    this.cache.set(digest, r);
    return r;
  }

  private check(request: ClientRequestBody, digest: string): RequestCheck {
    const { identifier, reqId, operation, signature } = request;
    if (typeof identifier !== 'string' || typeof reqId !== 'number' || typeof operation !== 'object' || operation === null || typeof signature !== 'string') {
      return { ok: false, code: 'INVALID_REQUEST', reason: 'malformed request' };
    }
    const pk = b58decodeOrUndefined(identifier);
    const sig = b58decodeOrUndefined(signature);
    const signed = payloadOf(request);
    if (pk?.length !== 32 || sig?.length !== 64 || !ed25519Verify(pk, new TextEncoder().encode(canonicalJson(signed)), sig)) {
      return { ok: false, code: 'INVALID_SIGNATURE', reason: 'signature does not verify' };
    }
    const payloadDigest = sha256Hex(canonicalJson(signed));
    // NODE (type "0") is ordered on the pool ledger, everything else on the domain ledger
    const ledgerId = (operation as Record<string, unknown>).type === TxnType.NODE ? LedgerId.POOL : LedgerId.DOMAIN;
    return { ok: true, info: { digest, payloadDigest, ledgerId, identifier, reqId } };
  }

  payloadDigestOf(request: ClientRequestBody): string {
    const r = this.analyze(request);
    if (!r.ok) throw new ConsensusError(ConsensusErrorCode.SIMULATION, { reason: 'stand-in executor given an unverified request' });
    return r.info.payloadDigest;
  }
}
