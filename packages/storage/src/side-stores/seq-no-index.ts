// Request digests -> where the txn was ordered (formats.md 12.1): `seqno-index` maps a
// payloadDigest to "<ledgerId>~<seqNo>" and `digest-index` maps a full request digest to its
// payloadDigest. Used to answer a re-sent request with its original reply and to reject a request
// whose payload was already written under another signature.
import type { KvStore, WriteBatch } from '../kv/kv-store.js';
import { asciiBytes, corrupt, invalid, isHexDigest, utf8Decoder } from './errors.js';
import { withBatch } from './write.js';

export const SEQ_NO_INDEX_BUCKET = 'seqno-index';
export const DIGEST_INDEX_BUCKET = 'digest-index';

const STORE = 'SeqNoIndex';
const LOCATION = /^(0|[1-9][0-9]{0,9})~([1-9][0-9]{0,15})$/;

/** Where a txn was ordered. */
export interface TxnLocation {
  ledgerId: number;
  seqNo: number;
}

export interface SeqNoIndexEntry extends TxnLocation {
  payloadDigest: string;
  /** The full request digest; when given, digest -> payloadDigest is recorded too. */
  digest?: string;
}

function checkDigest(d: unknown, field: string): asserts d is string {
  if (!isHexDigest(d)) throw invalid(STORE, field, 'not a lowercase hex SHA-256 digest');
}

function decodeLocation(key: string, bytes: Uint8Array): TxnLocation {
  let text: string;
  try {
    text = utf8Decoder.decode(bytes);
  } catch {
    throw corrupt(STORE, key, 'not UTF-8');
  }
  const m = LOCATION.exec(text);
  const ledgerId = m === null ? NaN : Number(m[1]);
  const seqNo = m === null ? NaN : Number(m[2]);
  if (!Number.isSafeInteger(ledgerId) || !Number.isSafeInteger(seqNo)) throw corrupt(STORE, key, `bad location ${JSON.stringify(text)}`);
  return { ledgerId, seqNo };
}

export class SeqNoIndex {
  readonly #kv: KvStore;

  constructor(kv: KvStore) {
    this.#kv = kv;
  }

  /** Records payloadDigest -> ledgerId~seqNo and, when `digest` is given, digest -> payloadDigest. */
  add(entry: SeqNoIndexEntry, batch: WriteBatch): void;
  add(entry: SeqNoIndexEntry): Promise<void>;
  add(entry: SeqNoIndexEntry, batch?: WriteBatch): Promise<void> | void {
    checkDigest(entry.payloadDigest, 'payloadDigest');
    if (entry.digest !== undefined) checkDigest(entry.digest, 'digest');
    if (!Number.isSafeInteger(entry.ledgerId) || entry.ledgerId < 0 || entry.ledgerId > 0x7fffffff)
      throw invalid(STORE, 'ledgerId', 'not an integer in [0, 2^31-1]');
    if (!Number.isSafeInteger(entry.seqNo) || entry.seqNo < 1) throw invalid(STORE, 'seqNo', 'not a positive integer');
    const payloadKey = asciiBytes(entry.payloadDigest);
    const location = asciiBytes(`${entry.ledgerId}~${entry.seqNo}`);
    const digestKey = entry.digest === undefined ? undefined : asciiBytes(entry.digest);
    return withBatch(this.#kv, batch, (b) => {
      b.put(SEQ_NO_INDEX_BUCKET, payloadKey, location);
      if (digestKey !== undefined) b.put(DIGEST_INDEX_BUCKET, digestKey, payloadKey);
    });
  }

  /** Where the txn with this payloadDigest was ordered. */
  async getByPayloadDigest(payloadDigest: string): Promise<TxnLocation | undefined> {
    checkDigest(payloadDigest, 'payloadDigest');
    const v = await this.#kv.get(SEQ_NO_INDEX_BUCKET, asciiBytes(payloadDigest));
    return v === undefined ? undefined : decodeLocation(payloadDigest, v);
  }

  getByPayloadDigestSync(payloadDigest: string): TxnLocation | undefined {
    checkDigest(payloadDigest, 'payloadDigest');
    const v = this.#kv.getSync(SEQ_NO_INDEX_BUCKET, asciiBytes(payloadDigest));
    return v === undefined ? undefined : decodeLocation(payloadDigest, v);
  }

  /** The payloadDigest recorded for a full request digest. */
  async getPayloadDigest(digest: string): Promise<string | undefined> {
    checkDigest(digest, 'digest');
    return this.#decodePayloadDigest(digest, await this.#kv.get(DIGEST_INDEX_BUCKET, asciiBytes(digest)));
  }

  getPayloadDigestSync(digest: string): string | undefined {
    checkDigest(digest, 'digest');
    return this.#decodePayloadDigest(digest, this.#kv.getSync(DIGEST_INDEX_BUCKET, asciiBytes(digest)));
  }

  /** Where the request with this full digest was ordered, with its payloadDigest. */
  async getByDigest(digest: string): Promise<(TxnLocation & { payloadDigest: string }) | undefined> {
    const payloadDigest = await this.getPayloadDigest(digest);
    if (payloadDigest === undefined) return undefined;
    const loc = await this.getByPayloadDigest(payloadDigest);
    return loc === undefined ? undefined : { ...loc, payloadDigest };
  }

  getByDigestSync(digest: string): (TxnLocation & { payloadDigest: string }) | undefined {
    const payloadDigest = this.getPayloadDigestSync(digest);
    if (payloadDigest === undefined) return undefined;
    const loc = this.getByPayloadDigestSync(payloadDigest);
    return loc === undefined ? undefined : { ...loc, payloadDigest };
  }

  /** Removes the entries of a txn (reverting an uncommitted batch or repairing a torn tail). */
  remove(entry: { payloadDigest: string; digest?: string }, batch: WriteBatch): void;
  remove(entry: { payloadDigest: string; digest?: string }): Promise<void>;
  remove(entry: { payloadDigest: string; digest?: string }, batch?: WriteBatch): Promise<void> | void {
    checkDigest(entry.payloadDigest, 'payloadDigest');
    if (entry.digest !== undefined) checkDigest(entry.digest, 'digest');
    return withBatch(this.#kv, batch, (b) => {
      b.del(SEQ_NO_INDEX_BUCKET, asciiBytes(entry.payloadDigest));
      if (entry.digest !== undefined) b.del(DIGEST_INDEX_BUCKET, asciiBytes(entry.digest));
    });
  }

  #decodePayloadDigest(digest: string, bytes: Uint8Array | undefined): string | undefined {
    if (bytes === undefined) return undefined;
    let text: string;
    try {
      text = utf8Decoder.decode(bytes);
    } catch {
      throw corrupt(STORE, digest, 'not UTF-8');
    }
    if (!isHexDigest(text)) throw corrupt(STORE, digest, 'stored payloadDigest is not a hex digest');
    return text;
  }
}
