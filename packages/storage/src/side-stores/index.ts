export { SideStoreError, SideStoreErrorCode } from './errors.js';
export type { SideStoreErrorData } from './errors.js';
export { BlsStore, BLS_STORE_BUCKET, multiSignatureProblem } from './bls-store.js';
// the multi-signature shapes are those of @quire/common, re-exported for the store's users
export type { MultiSignature, MultiSignatureValue } from '@quire/common';
export { SeqNoIndex, SEQ_NO_INDEX_BUCKET, DIGEST_INDEX_BUCKET } from './seq-no-index.js';
export type { SeqNoIndexEntry, TxnLocation } from './seq-no-index.js';
export { TimestampStore, timestampBucket, timestampKey } from './timestamp-store.js';
export type { TimestampedRoot } from './timestamp-store.js';
export { AttributeStore, ATTRIBUTE_STORE_BUCKET, rawAttributeHash, encAttributeHash } from './attribute-store.js';
