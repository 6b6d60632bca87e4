// ATTRIB contents (formats.md 8.2): the ledger and state hold only hashes; the attribute itself is
// kept here under the lowercase hex SHA-256 of the stored string: CJ(raw object) for `raw`, the enc
// string for `enc`. It cannot be rebuilt from the ledger, so it is kept and transferred in catch-up.
import { canonicalJson, parseJson, sha256Hex } from '@quire/common';
import type { KvStore, WriteBatch } from '../kv/kv-store.js';
import { corrupt, invalid, isHexDigest, utf8Decoder, utf8Encoder } from './errors.js';
import { withBatch } from './write.js';

export const ATTRIBUTE_STORE_BUCKET = 'attr';
const STORE = 'AttributeStore';

/** The key of a raw attribute: hex SHA-256 of CJ(raw object) (what ATTRIB's txn.data.raw becomes). */
export function rawAttributeHash(raw: unknown): string {
  return sha256Hex(canonicalJson(raw));
}

/** The key of an enc attribute: hex SHA-256 of the enc string. */
export function encAttributeHash(enc: string): string {
  return sha256Hex(enc);
}

export class AttributeStore {
  readonly #kv: KvStore;

  constructor(kv: KvStore) {
    this.#kv = kv;
  }

  /** Stores a string under its hex SHA-256; returns the hash (with a batch, once the caller writes it). */
  put(stored: string, batch: WriteBatch): string;
  put(stored: string): Promise<string>;
  put(stored: string, batch?: WriteBatch): Promise<string> | string {
    if (typeof stored !== 'string') throw invalid(STORE, 'value', 'not a string');
    const hash = sha256Hex(stored);
    const key = utf8Encoder.encode(hash);
    const value = utf8Encoder.encode(stored);
    const written = withBatch(this.#kv, batch, (b) => b.put(ATTRIBUTE_STORE_BUCKET, key, value));
    return written === undefined ? hash : written.then(() => hash);
  }

  /** Stores a raw attribute (the parsed JSON object of ATTRIB `raw`) as CJ; returns its hash. */
  putRaw(raw: unknown, batch: WriteBatch): string;
  putRaw(raw: unknown): Promise<string>;
  putRaw(raw: unknown, batch?: WriteBatch): Promise<string> | string {
    if (typeof raw === 'string') raw = parseRaw(raw);
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw invalid(STORE, 'raw', 'not a JSON object');
    const text = canonicalJson(raw);
    return batch === undefined ? this.put(text) : this.put(text, batch);
  }

  /** Stores an enc attribute string; returns its hash. */
  putEnc(enc: string, batch: WriteBatch): string;
  putEnc(enc: string): Promise<string>;
  putEnc(enc: string, batch?: WriteBatch): Promise<string> | string {
    if (typeof enc !== 'string') throw invalid(STORE, 'enc', 'not a string');
    return batch === undefined ? this.put(enc) : this.put(enc, batch);
  }

  /** The stored string (CJ of the raw object, or the enc string) for a hash. */
  async get(hash: string): Promise<string | undefined> {
    if (!isHexDigest(hash)) throw invalid(STORE, 'hash', 'not a lowercase hex SHA-256 digest');
    return decode(hash, await this.#kv.get(ATTRIBUTE_STORE_BUCKET, utf8Encoder.encode(hash)));
  }

  getSync(hash: string): string | undefined {
    if (!isHexDigest(hash)) throw invalid(STORE, 'hash', 'not a lowercase hex SHA-256 digest');
    return decode(hash, this.#kv.getSync(ATTRIBUTE_STORE_BUCKET, utf8Encoder.encode(hash)));
  }

  remove(hash: string, batch: WriteBatch): void;
  remove(hash: string): Promise<void>;
  remove(hash: string, batch?: WriteBatch): Promise<void> | void {
    if (!isHexDigest(hash)) throw invalid(STORE, 'hash', 'not a lowercase hex SHA-256 digest');
    const key = utf8Encoder.encode(hash);
    return withBatch(this.#kv, batch, (b) => b.del(ATTRIBUTE_STORE_BUCKET, key));
  }
}

function parseRaw(text: string): unknown {
  try {
    return parseJson(text);
  } catch (e) {
    throw invalid(STORE, 'raw', `not JSON: ${e instanceof Error ? e.message : String(e)}`);
  }
}

function decode(hash: string, bytes: Uint8Array | undefined): string | undefined {
  if (bytes === undefined) return undefined;
  let text: string;
  try {
    text = utf8Decoder.decode(bytes);
  } catch {
    throw corrupt(STORE, hash, 'not UTF-8');
  }
  // content addressing makes corruption detectable
  if (sha256Hex(text) !== hash) throw corrupt(STORE, hash, 'content does not hash to its key');
  return text;
}
