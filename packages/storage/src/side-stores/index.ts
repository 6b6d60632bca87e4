export { SideStoreError, SideStoreErrorCode } from './errors.js';
export { BlsStore, BLS_STORE_BUCKET, multiSignatureProblem } from './bls-store.js';
export type { MultiSignature, MultiSignatureValue } from './bls-store.js';
export { SeqNoIndex, SEQ_NO_INDEX_BUCKET, DIGEST_INDEX_BUCKET } from './seq-no-index.js';
export type { SeqNoIndexEntry, TxnLocation } from './seq-no-index.js';
export { TimestampStore, timestampBucket, timestampKey } from './timestamp-store.js';
export type { TimestampedRoot } from './timestamp-store.js';
export { AttributeStore, ATTRIBUTE_STORE_BUCKET, rawAttributeHash, encAttributeHash } from './attribute-store.js';
