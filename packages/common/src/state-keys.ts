/**
 * The state keys of the domain and config ledgers (formats.md §8.2, §8.3): one definition for the write and read
 * handlers that store and look up state, and for the light client that checks a reply's proof against the key it
 * rebuilds from the query (if the two drifted, the client would reject honest proofs).
 *
 * | Domain txn         | Key                                                    |
 * |--------------------|--------------------------------------------------------|
 * | NYM                | raw SHA-256(UTF-8 dest)                                |
 * | ATTRIB             | `<dest>:1:<hex sha256(name)>` / `<dest>:1:<hash>`      |
 * | SCHEMA             | `<from>:2:<name>:<version>`                            |
 * | CLAIM_DEF          | `<from>:3:<signature_type>:<ref>:<tag>`                |
 * | REVOC_REG_DEF      | `<from>:4:<credDefId>:<revocDefType>:<tag>`            |
 * | REVOC_REG_ENTRY    | `5:<revocRegDefId>`                                    |
 * | accumulator        | `6:<revocRegDefId>`                                    |
 * | rich schema object | UTF-8 `id`; secondary `<rsType>:<rsName>:<rsVersion>`  |
 *
 * Config: auth rule overrides `1:<rule key>`; the TAA `2:d:<digest>`, `2:v:<version>`, `2:latest`; its acceptance
 * mechanisms `3:v:<version>`, `3:latest`; frozen ledgers `4:FROZEN_LEDGERS`.
 */
import { BoundedFifo } from './bounded-fifo.js';
import { canonicalJsonBytes } from './canonical-json.js';
import { sha256, sha256Hex } from './hash.js';
import { toHex } from './hex.js';

/** Markers of the domain ledger's textual keys. */
export const DomainMarker = {
  ATTRIB: '1',
  SCHEMA: '2',
  CLAIM_DEF: '3',
  REVOC_REG_DEF: '4',
  REVOC_REG_ENTRY: '5',
  REVOC_REG_ACCUM: '6',
} as const;

/** CLAIM_DEF defaults used in the state key when the request leaves them out. */
export const CLAIM_DEF_DEFAULT_SIGNATURE_TYPE = 'CL';
export const CLAIM_DEF_DEFAULT_TAG = 'tag';

const textEncoder = new TextEncoder();

/**
 * The NYM keys of the DIDs seen last, shared (callers get copies): one NYM write asks for the key of its `dest` and
 * author several times (DID index, state update, txnId).
 */
const RECENT_NYM_KEYS = 4096;
const recentNymKeys = new BoundedFifo<string, Uint8Array>(RECENT_NYM_KEYS);

function nymKeyShared(dest: string): Uint8Array {
  let key = recentNymKeys.get(dest);
  if (key === undefined) {
    key = sha256(textEncoder.encode(dest));
    recentNymKeys.set(dest, key);
  }
  return key;
}

/** NYM: the raw 32-byte SHA-256 of the UTF-8 `dest`. */
export function nymKey(dest: string): Uint8Array {
  return nymKeyShared(dest).slice();
}

/** NYM `txnId`: lowercase hex of the state key. */
export function nymTxnId(dest: string): string {
  return toHex(nymKeyShared(dest));
}

/** The attribute selector of an ATTRIB / GET_ATTR request. */
export type AttribKind = 'raw' | 'enc' | 'hash';

/**
 * ATTRIB key: `<dest>:1:<hex sha256(name)>` for raw (name = the single key of the raw object) and enc (name = the
 * enc string); `<dest>:1:<hash>` for hash (the hash as given).
 */
export function attribKey(dest: string, kind: AttribKind, name: string): string {
  const suffix = kind === 'hash' ? name : sha256Hex(textEncoder.encode(name));
  return `${dest}:${DomainMarker.ATTRIB}:${suffix}`;
}

/** SCHEMA key `<from>:2:<name>:<version>`. */
export function schemaKey(from: string, name: string, version: string): string {
  return `${from}:${DomainMarker.SCHEMA}:${name}:${version}`;
}

/** CLAIM_DEF key `<from>:3:<signature_type>:<ref>:<tag>` with `ref` in decimal. */
export function claimDefKey(
  from: string,
  ref: number | bigint | string,
  signatureType: string = CLAIM_DEF_DEFAULT_SIGNATURE_TYPE,
  tag: string = CLAIM_DEF_DEFAULT_TAG,
): string {
  return `${from}:${DomainMarker.CLAIM_DEF}:${signatureType}:${typeof ref === 'string' ? ref : ref.toString(10)}:${tag}`;
}

/** REVOC_REG_DEF key `<from>:4:<credDefId>:<revocDefType>:<tag>` (the `id` field of the txn, which reads use). */
export function revocRegDefKey(from: string, credDefId: string, revocDefType: string, tag: string): string {
  return `${from}:${DomainMarker.REVOC_REG_DEF}:${credDefId}:${revocDefType}:${tag}`;
}

/** REVOC_REG_ENTRY key `5:<revocRegDefId>` (the accumulated entry; also its `txnId`). */
export function revocRegEntryKey(revocRegDefId: string): string {
  return `${DomainMarker.REVOC_REG_ENTRY}:${revocRegDefId}`;
}

/** Accumulator key `6:<revocRegDefId>`. */
export function revocRegAccumKey(revocRegDefId: string): string {
  return `${DomainMarker.REVOC_REG_ACCUM}:${revocRegDefId}`;
}

/** Rich schema primary key: the UTF-8 of `id`. */
export function richSchemaIdKey(id: string): string {
  return id;
}

/** Rich schema secondary key `<rsType>:<rsName>:<rsVersion>`; its value is the raw `id`. */
export function richSchemaMetadataKey(rsType: string, rsName: string, rsVersion: string): string {
  return `${rsType}:${rsName}:${rsVersion}`;
}

/** The separator of an auth rule key `<type>--<ADD|EDIT>--<field>--<old>--<new>` (auth-rules.md §1). */
export const RULE_KEY_DELIMITER = '--';

/** Config state key of an auth rule override: `1:<rule key>`. */
export function authRuleStateKey(ruleKey: string): string {
  return `1:${ruleKey}`;
}

/** Config keys of the transaction author agreement and its acceptance mechanisms. */
export const TAA_LATEST_KEY = '2:latest';
export const AML_LATEST_KEY = '3:latest';
export const taaDigestKey = (digest: string): string => `2:d:${digest}`;
export const taaVersionKey = (version: string): string => `2:v:${version}`;
export const amlVersionKey = (version: string): string => `3:v:${version}`;

/** Config key of the frozen ledgers record (requests.md 7.3). */
export const FROZEN_LEDGERS_KEY = '4:FROZEN_LEDGERS';

/**
 * W(v, n, t) (formats.md §8.2): the state value of the domain objects other than NYM, CJ({"lsn": n, "lut": t, "val":
 * v}) as UTF-8, `n` the seqNo of the last write and `t` its txnTime (null in genesis). The write handlers store it and
 * the light client recomputes it from a reply to check the proof: one definition, as for the keys.
 */
export function wrappedStateValue(val: unknown, seqNo: number | bigint | null, txnTime: number | bigint | null): Uint8Array {
  return canonicalJsonBytes({ lsn: seqNo, lut: txnTime, val });
}
