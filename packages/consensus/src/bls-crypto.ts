// ConsensusCrypto over BLS12-381 (@quire/crypto): shares and multi-signatures over the canonical
// msgpack of the multi-signature value (formats.md §9.2). Public keys are looked up at the pool
// state root inside the value, so key rotation applies from the batch after the rotation batch.
import { b58decodeOrUndefined, b58encode, multiSignatureMessage } from '@quire/common';
import {
  type BlsAggregateToVerify,
  type BlsSecretKey,
  LruCache,
  blsAggregateSignatures,
  blsVerify,
  blsVerifyAggregate,
  blsVerifyAggregateBatch,
} from '@quire/crypto';
import type { ConsensusCrypto } from './interfaces.js';
import type { MultiSignatureValue } from './messages.js';

export interface BlsConsensusCryptoOptions {
  /** cached verification results (a verification costs ~1.5 ms) */
  verifyCacheSize: number;
}

export const defaultBlsConsensusCryptoOptions: BlsConsensusCryptoOptions = { verifyCacheSize: 4096 };

export interface BlsConsensusCryptoModules {
  /** this node's secret key registered at a pool state root (rotation keeps old and new keys) */
  secretKeyAt(poolStateRoot: string): BlsSecretKey;
  /** a validator's 48-byte public key in pool state at `poolStateRoot`, undefined if it has none */
  publicKeyAt(alias: string, poolStateRoot: string): Uint8Array | undefined;
  /** optional verification cache shared between cores (simulator: one per process) */
  verifyCache?: LruCache<string, boolean>;
}

export function createBlsConsensusCrypto(
  modules: BlsConsensusCryptoModules,
  options: BlsConsensusCryptoOptions = defaultBlsConsensusCryptoOptions,
): ConsensusCrypto {
  const cache = modules.verifyCache ?? new LruCache<string, boolean>(options.verifyCacheSize);
  const cached = (key: string, compute: () => boolean): boolean => {
    const hit = cache.get(key);
    if (hit !== undefined) return hit;
    const r = compute();
    cache.set(key, r);
    return r;
  };
  const valueKey = (v: MultiSignatureValue): string => `${v.ledger_id}|${v.pool_state_root_hash}|${v.state_root_hash}|${v.timestamp}|${v.txn_root_hash}`;
  const multiKey = (participants: string[], value: MultiSignatureValue, signature: string): string =>
    `m|${participants.join(',')}|${signature}|${valueKey(value)}`;
  /** the aggregate to verify: undefined when a participant has no key at the root or the signature does not decode */
  const aggregateToVerify = (participants: string[], value: MultiSignatureValue, signature: string): BlsAggregateToVerify | undefined => {
    const publicKeys: Uint8Array[] = [];
    for (const p of participants) {
      const pk = modules.publicKeyAt(p, value.pool_state_root_hash);
      if (pk === undefined) return undefined;
      publicKeys.push(pk);
    }
    const sig = b58decodeOrUndefined(signature);
    return sig === undefined ? undefined : { publicKeys, msg: multiSignatureMessage(value), signature: sig };
  };
  return {
    blsSign(value) {
      return b58encode(modules.secretKeyAt(value.pool_state_root_hash).sign(multiSignatureMessage(value)));
    },
    blsVerifyShare(alias, value, share) {
      return cached(`s|${alias}|${share}|${valueKey(value)}`, () => {
        const pk = modules.publicKeyAt(alias, value.pool_state_root_hash);
        const sig = b58decodeOrUndefined(share);
        return pk !== undefined && sig !== undefined && blsVerify(pk, multiSignatureMessage(value), sig);
      });
    },
    blsAggregate(shares) {
      const decoded: Uint8Array[] = [];
      for (const s of shares) {
        const b = b58decodeOrUndefined(s);
        if (b === undefined) return undefined;
        decoded.push(b);
      }
      try {
        // shares are summed without the per-share subgroup check: the core only uses an aggregate
        // after verifying it (strict decoding) or when every share in it verified on its own
        return b58encode(blsAggregateSignatures(decoded, { verified: true }));
      } catch {
        return undefined;
      }
    },
    blsVerifyMulti(participants, value, signature) {
      return cached(multiKey(participants, value, signature), () => {
        const a = aggregateToVerify(participants, value, signature);
        return a !== undefined && blsVerifyAggregate(a.publicKeys, a.msg, a.signature);
      });
    },
    blsVerifyMultiBatch(items) {
      // the ones verified before are not verified again; a false result is not cached (blsVerifyMulti finds which)
      const keys: string[] = [];
      const sets: BlsAggregateToVerify[] = [];
      for (const it of items) {
        const key = multiKey(it.participants, it.value, it.signature);
        const hit = cache.get(key);
        if (hit === true) continue;
        if (hit === false) return false;
        const a = aggregateToVerify(it.participants, it.value, it.signature);
        if (a === undefined) return false;
        keys.push(key);
        sets.push(a);
      }
      if (sets.length === 0) return true;
      if (!blsVerifyAggregateBatch(sets)) return false;
      for (const k of keys) cache.set(k, true);
      return true;
    },
  };
}
