// BLS multi-signatures by state root (formats.md 9.4): key = base58 state root, value = CJ of
// {"participants", "signature", "value"}. They cannot be recomputed, so this store is kept and
// transferred in catch-up (12.1).
import { BoundedFifo, b58decode, b58encode, canonicalJson, parseJson, type MultiSignature } from '@quire/common';
import type { KvStore, WriteBatch } from '../kv/kv-store.js';
import { corrupt, invalid, utf8Decoder, utf8Encoder } from './errors.js';
import { withBatch } from './write.js';

export const BLS_STORE_BUCKET = 'bls';

const STORE = 'BlsStore';

function isB58OfLength(s: unknown, length: number): s is string {
  if (typeof s !== 'string') return false;
  try {
    return b58decode(s).length === length;
  } catch {
    return false;
  }
}

function isRoot(s: unknown): s is string {
  return isB58OfLength(s, 32);
}

function isUint(n: unknown): boolean {
  return (typeof n === 'number' && Number.isSafeInteger(n) && n >= 0) || (typeof n === 'bigint' && n >= 0n);
}

/** Checks the shape of a multi-signature; returns the name of the first bad field, or undefined. */
export function multiSignatureProblem(ms: unknown): string | undefined {
  if (typeof ms !== 'object' || ms === null) return 'multiSignature';
  const m = ms as Record<string, unknown>;
  if (!isB58OfLength(m.signature, 96)) return 'signature';
  if (!Array.isArray(m.participants) || m.participants.length === 0 || !m.participants.every((p) => typeof p === 'string' && p.length > 0))
    return 'participants';
  if (typeof m.value !== 'object' || m.value === null) return 'value';
  const v = m.value as Record<string, unknown>;
  if (!isUint(v.ledger_id)) return 'value.ledger_id';
  if (!isRoot(v.state_root_hash)) return 'value.state_root_hash';
  if (!isRoot(v.pool_state_root_hash)) return 'value.pool_state_root_hash';
  if (!isRoot(v.txn_root_hash)) return 'value.txn_root_hash';
  if (!isUint(v.timestamp)) return 'value.timestamp';
  return undefined;
}

function rootKey(stateRoot: string | Uint8Array): string {
  if (typeof stateRoot === 'string') {
    if (!isRoot(stateRoot)) throw invalid(STORE, 'stateRoot', 'not base58 of 32 bytes');
    return stateRoot;
  }
  if (!(stateRoot instanceof Uint8Array) || stateRoot.length !== 32) throw invalid(STORE, 'stateRoot', 'not 32 bytes');
  return b58encode(stateRoot);
}

/**
 * Decoded multi-signatures kept in memory: every verified read asks for the one of the latest state root. The cache
 * sees the writes made through its own instance only: one BlsStore per database.
 */
const RECENT = 64;

export class BlsStore {
  readonly #kv: KvStore;
  /** base58 state root -> decoded, checked multi-signature (insertion order = age) */
  readonly #recent = new BoundedFifo<string, MultiSignature>(RECENT);

  constructor(kv: KvStore) {
    this.#kv = kv;
  }

  #remember(key: string, ms: MultiSignature | undefined): MultiSignature | undefined {
    if (ms === undefined) return undefined;
    // shared by every reader from now on: frozen, so that no reader can change what the next one gets
    Object.freeze(ms.participants);
    Object.freeze(ms.value);
    this.#recent.set(key, Object.freeze(ms));
    return ms;
  }

  /** Stores a multi-signature under its `value.state_root_hash`; with a batch, the caller writes it. */
  put(ms: MultiSignature, batch: WriteBatch): void;
  put(ms: MultiSignature): Promise<void>;
  put(ms: MultiSignature, batch?: WriteBatch): Promise<void> | void {
    const problem = multiSignatureProblem(ms);
    if (problem !== undefined) throw invalid(STORE, problem, 'missing or malformed');
    const record = { participants: ms.participants, signature: ms.signature, value: ms.value };
    const root = ms.value.state_root_hash;
    const key = utf8Encoder.encode(root);
    const value = utf8Encoder.encode(canonicalJson(record));
    // a read between now and the write would cache the value being replaced: forget the root again once written
    this.#recent.delete(root);
    return withBatch(this.#kv, batch, (b) => b.put(BLS_STORE_BUCKET, key, value).afterWrite(() => this.#recent.delete(root)));
  }

  /** The multi-signature stored for a state root (base58 string or 32 raw bytes). */
  async get(stateRoot: string | Uint8Array): Promise<MultiSignature | undefined> {
    const hit = typeof stateRoot === 'string' ? this.#recent.get(stateRoot) : undefined;
    if (hit !== undefined) return hit;
    const key = rootKey(stateRoot);
    return this.#remember(key, decode(key, await this.#kv.get(BLS_STORE_BUCKET, utf8Encoder.encode(key))));
  }

  getSync(stateRoot: string | Uint8Array): MultiSignature | undefined {
    const hit = typeof stateRoot === 'string' ? this.#recent.get(stateRoot) : undefined;
    if (hit !== undefined) return hit;
    const key = rootKey(stateRoot);
    return this.#remember(key, decode(key, this.#kv.getSync(BLS_STORE_BUCKET, utf8Encoder.encode(key))));
  }

  /** The stored CJ text, as sent in replies and catch-up, without decoding it. */
  async getEncoded(stateRoot: string | Uint8Array): Promise<Uint8Array | undefined> {
    return this.#kv.get(BLS_STORE_BUCKET, utf8Encoder.encode(rootKey(stateRoot)));
  }

  remove(stateRoot: string | Uint8Array, batch: WriteBatch): void;
  remove(stateRoot: string | Uint8Array): Promise<void>;
  remove(stateRoot: string | Uint8Array, batch?: WriteBatch): Promise<void> | void {
    const root = rootKey(stateRoot);
    this.#recent.delete(root);
    const key = utf8Encoder.encode(root);
    return withBatch(this.#kv, batch, (b) => b.del(BLS_STORE_BUCKET, key).afterWrite(() => this.#recent.delete(root)));
  }
}

function decode(key: string, bytes: Uint8Array | undefined): MultiSignature | undefined {
  if (bytes === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = parseJson(utf8Decoder.decode(bytes));
  } catch (e) {
    throw corrupt(STORE, key, e instanceof Error ? e.message : String(e));
  }
  const problem = multiSignatureProblem(parsed);
  if (problem !== undefined) throw corrupt(STORE, key, `bad ${problem}`);
  const ms = parsed as MultiSignature;
  if (ms.value.state_root_hash !== key) throw corrupt(STORE, key, 'stored under another state root');
  return ms;
}
