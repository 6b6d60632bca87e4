/**
 * Limits of requests (transactions.md §8, requests.md §1.1, §2-§9). One place, named, so that the
 * validators of every type and the tests use the same numbers.
 */
export const Limits = {
  /** Client message size (bytes), MSG_LEN_LIMIT. */
  MESSAGE_BYTES: 131072,
  /** NYM diddocContent (characters; transactions.md §8: 10 KiB). */
  DIDDOC_CONTENT: 10 * 1024,
  /** Decoded DID lengths (bytes). */
  DID_BYTES: [16, 32] as readonly number[],
  /** Full verkey (bytes decoded). */
  FULL_VERKEY_BYTES: 32,
  /** Abbreviated verkey (bytes decoded, after '~'). */
  ABBREVIATED_VERKEY_BYTES: 16,
  /** Ed25519 signature (bytes decoded) and its base58 text length. */
  SIGNATURE_BYTES: 64,
  SIGNATURE_TEXT: 512,
  /** Compressed BLS12-381 G1 public key / G2 proof of possession (bytes decoded). */
  BLS_KEY_BYTES: 48,
  BLS_POP_BYTES: 96,
  /** Generic name-like strings (alias, name, auth rule fields...). */
  NAME: 256,
  /** Versions (SchemaVersion, upgrade version). */
  VERSION: 128,
  /** POOL_UPGRADE justification. */
  JUSTIFICATION: 1000,
  /** TAA text and AML context. */
  TAA_TEXT: 129024,
  /** taaAcceptance.mechanism. */
  TAA_MECHANISM: 64,
  /** Smallest accepted taaAcceptance.time. */
  TAA_TIME_MIN: 1499906902,
  /** ATTRIB raw / enc. */
  ATTRIB_CONTENT: 5120,
  /** SCHEMA attr_names count. */
  SCHEMA_ATTRIBUTES: 125,
  /** CLAIM_DEF signature_type. */
  SIGNATURE_TYPE: 16,
  /** POOL_RESTART datetime. */
  DATETIME: 35,
  /** Ignored `digest` envelope field. */
  DIGEST_TEXT: 512,
  /** Minimum spacing between node upgrade times when not forced (seconds; transactions.md §8). */
  UPGRADE_MIN_SEPARATION_SECONDS: 300,
  /** Largest reqId. */
  REQ_ID_MAX: (1n << 64n) - 1n,
  /** The only protocol version. */
  PROTOCOL_VERSION: 2,
} as const;
