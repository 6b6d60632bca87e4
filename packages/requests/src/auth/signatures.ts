/**
 * Authentication (requests.md §1.2 step 4, formats.md 3.2-3.4): every entry of `signature` /
 * `signatures` must verify, over the signature input, against the signer's current verkey (the
 * uncommitted domain state). The one exception: a NYM whose `identifier` equals `dest` and whose
 * author is not on the ledger is verified with the request's own `verkey` (permissionless
 * creation), or with the DID itself when it is a 32-byte cryptonym sent without a verkey. Two caches keep the hot path cheap: resolved keys, and the (digest, signer, key)
 * triples already verified, so a request's signatures are verified once (at receipt) and not
 * again when it is ordered.
 */
import { b58decodeOrUndefined } from '@quire/common';
import { Ed25519Verifier, LruCache } from '@quire/crypto';
import { RequestError, RequestErrorCode } from '../errors.js';
import type { IdrCache, ParsedRequest, StateAccess } from '../handler.js';
import { signatureInputFor } from '../pipeline/parse.js';
import { signingVerkey } from './verkey.js';

export interface SignatureVerifierOptions {
  /** Verified (digest, signer, key) triples remembered. Default 100,000. */
  verifiedCacheSize?: number;
  /** Resolved (did, verkey) -> key entries remembered. Default 100,000. */
  keyCacheSize?: number;
}

export const defaultSignatureVerifierOptions: Required<SignatureVerifierOptions> = { verifiedCacheSize: 100_000, keyCacheSize: 100_000 };

const NYM = '1';
const NODE_UPGRADE = '110';

export class SignatureVerifier {
  readonly #ed = new Ed25519Verifier();
  readonly #verified: LruCache<string, true>;
  readonly #keys: LruCache<string, Uint8Array | null>;

  constructor(opts: SignatureVerifierOptions = {}) {
    const o = { ...defaultSignatureVerifierOptions, ...opts };
    this.#verified = new LruCache(o.verifiedCacheSize);
    this.#keys = new LruCache(o.keyCacheSize);
  }

  /** Throws RequestError (UNKNOWN_SIGNER, INSUFFICIENT_SIGNATURES, SIGNATURE_MISSING) unless every signature verifies. */
  verify(req: ParsedRequest, idr: IdrCache, pool?: StateAccess): void {
    if (req.signers.length === 0) throw new RequestError(RequestErrorCode.SIGNATURE_MISSING);
    const keys = req.signers.map(([did]) => this.#keyOf(req, did, idr, pool));
    const bad: { did: string; signature: string }[] = [];
    let valid = 0;
    let input: Uint8Array | undefined;
    for (let i = 0; i < req.signers.length; i++) {
      const [did, sigText] = req.signers[i];
      const { key, id } = keys[i];
      const cacheKey = `${req.digest}|${id}`;
      if (this.#verified.get(cacheKey)) {
        valid++;
        continue;
      }
      const sig = b58decodeOrUndefined(sigText);
      input ??= signatureInputFor(req);
      if (sig !== undefined && this.#ed.verify(key, input, sig)) {
        this.#verified.set(cacheKey, true);
        valid++;
      } else bad.push({ did, signature: sigText });
    }
    if (bad.length > 0) {
      throw new RequestError(RequestErrorCode.INSUFFICIENT_SIGNATURES, { required: req.signers.length, valid, invalid: bad.length, bad });
    }
  }

  /** The signer's key and `did|verkey` (what the key was resolved from, part of the verified-cache key). */
  #keyOf(req: ParsedRequest, did: string, idr: IdrCache, pool?: StateAccess): { key: Uint8Array; id: string } {
    const nym = idr.getNym(did);
    let verkey: string | null | undefined;
    if (nym !== undefined) verkey = nym.verkey;
    else if (req.type === NODE_UPGRADE && pool?.get(did) !== undefined)
      verkey = null; // the node id is its key
    else if (req.type === NYM && did === req.identifier && req.operation.dest === did) {
      // self-creation: the key is the request's own verkey, or, without one, the DID itself when it
      // is a 32-byte cryptonym (formats.md 2.1); a 16-byte DID without a verkey has no key
      verkey = typeof req.operation.verkey === 'string' ? req.operation.verkey : null;
    } else throw new RequestError(RequestErrorCode.UNKNOWN_SIGNER, { did });
    const ck = `${did}|${verkey ?? ''}`;
    let key = this.#keys.get(ck);
    if (key === undefined) {
      key = signingVerkey(did, verkey);
      this.#keys.set(ck, key);
    }
    if (key === null) throw new RequestError(RequestErrorCode.UNKNOWN_SIGNER, { did });
    return { key, id: ck };
  }
}
