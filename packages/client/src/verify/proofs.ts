/**
 * Light-client proof verifiers over the wire encodings of replies: trie proofs (formats.md 7.5) and ledger audit
 * paths (6.3). Pure functions; they wrap the verifiers of @quire/storage, which walk the bytes.
 */
import { b58decode, deepCopy, encodeMsgpack, isPlainObject, restoreAuditIntegerKeys, sha256Hex, attribRawHash, TxnType, type Txn } from '@quire/common';
import { LruCache } from '@quire/crypto';
import { ProofError, ProofNodeCache, StorageErrorCode, merkleLeafHash, verifyInclusion, verifyTrieProofAt } from '@quire/storage/proofs';
import { ClientErrorCode, VerificationError } from '../errors.js';

export interface TrieProofInput {
  /** base58 state root (`state_proof.root_hash`). */
  rootHash: string;
  /** The state key: bytes, or a string taken as its UTF-8 bytes. */
  key: Uint8Array | string;
  /** base64 RLP list of trie nodes (`state_proof.proof_nodes`). */
  proofNodes: string;
  /** Trie nodes decoded by earlier proofs, by hash (default: one cache shared by the process; see sharedProofNodes). */
  nodeCache?: ProofNodeCache;
}

/**
 * The trie nodes of the proofs verified in this process, by hash: the reads of one root share their upper nodes.
 * Content-addressed (a hash names one encoding, hence one decoded node), so one cache serves every pool handle.
 */
export const sharedProofNodes = new ProofNodeCache();

/** the last state roots decoded (the reads of a pool are answered at one root per ledger at a time) */
const recentRoots: { text: string; bytes: Uint8Array }[] = [];
const RECENT_ROOTS = 8;

/** hash32 of a state root, remembered for the next proofs of the same root. */
function rootBytes(b58: unknown): Uint8Array {
  for (const r of recentRoots) if (r.text === b58) return r.bytes;
  const bytes = hash32(b58, 'rootHash');
  recentRoots.unshift({ text: b58 as string, bytes });
  if (recentRoots.length > RECENT_ROOTS) recentRoots.pop();
  return bytes;
}

/** base58 of exactly 32 bytes, or a ProofError PROOF_MALFORMED naming `what`. */
function hash32(b58: unknown, what: string): Uint8Array {
  if (typeof b58 !== 'string') throw new ProofError(StorageErrorCode.PROOF_MALFORMED, { what, reason: 'not a string' });
  let bytes: Uint8Array;
  try {
    bytes = b58decode(b58);
  } catch {
    throw new ProofError(StorageErrorCode.PROOF_MALFORMED, { what, reason: 'not base58' });
  }
  if (bytes.length !== 32) throw new ProofError(StorageErrorCode.PROOF_MALFORMED, { what, length: bytes.length });
  return bytes;
}

/**
 * Verifies a single-key trie proof against a state root. Returns the stored state value (formats.md 8) of `key`,
 * or null when the proof shows the key absent. Throws ProofError (codes of @quire/storage: PROOF_MALFORMED,
 * PROOF_ROOT_MISMATCH, PROOF_INCOMPLETE) when the proof does not lead to the root.
 */
export function verifyTrieProof(input: TrieProofInput): Uint8Array | null {
  const root = rootBytes(input.rootHash);
  if (typeof input.proofNodes !== 'string') throw new ProofError(StorageErrorCode.PROOF_MALFORMED, { what: 'proofNodes' });
  return verifyTrieProofAt(root, input.key, input.proofNodes, input.nodeCache ?? sharedProofNodes);
}

/** Proofs of at most this many characters (base64) are remembered by ProvenValues. */
export const PROVEN_MAX_PROOF_CHARS = 8 * 1024;
/** Values of at most this many bytes are remembered by ProvenValues. */
export const PROVEN_MAX_VALUE_BYTES = 8 * 1024;

/**
 * The outcomes of the trie proofs verified last, by the root and key each proved, with the proof's text: a client that
 * reads a key again at the same root gets the same proof text, and `verifyTrieProof` is a pure function of (root, key,
 * proof), so the value it proved is the answer again without decoding the base64, hashing the nodes and walking them.
 * Only verified proofs are kept (a proof that fails is walked every time), an entry answers only the exact root text,
 * key and proof text it was verified with, and the values it holds are never handed out (the caller compares them).
 * Bounded: at most `maxEntries` entries (least recently used first out) of proofs up to PROVEN_MAX_PROOF_CHARS and values up to
 * PROVEN_MAX_VALUE_BYTES, so at most maxEntries x 16 KiB.
 */
export class ProvenValues {
  /** by root text and key: the proof text verified for them and the value it proved */
  private readonly entries: LruCache<string, { proofNodes: string; value: Uint8Array | null }>;

  constructor(maxEntries = 1024) {
    this.entries = new LruCache(maxEntries);
  }

  /** The value `verifyTrieProof` gives for this input (null = absent); throws its ProofError. Read the value only. */
  verify(input: TrieProofInput): Uint8Array | null {
    const { rootHash, proofNodes } = input;
    const k = input.key;
    // a short id (the proof text is compared, not hashed): root text (only a base58 root is ever kept, so no "|" in it),
    // then the key as a string or its bytes as latin1
    const id =
      typeof rootHash !== 'string'
        ? undefined
        : typeof k === 'string'
          ? `${rootHash}|s${k}`
          : `${rootHash}|b${Buffer.from(k.buffer, k.byteOffset, k.byteLength).toString('latin1')}`;
    const hit = id === undefined ? undefined : this.entries.get(id);
    if (hit !== undefined && hit.proofNodes === proofNodes) return hit.value;
    const value = verifyTrieProof(input);
    if (id !== undefined && proofNodes.length <= PROVEN_MAX_PROOF_CHARS && (value === null || value.byteLength <= PROVEN_MAX_VALUE_BYTES)) {
      this.entries.set(id, { proofNodes, value: value === null ? null : Uint8Array.from(value) });
    }
    return value;
  }

  get size(): number {
    return this.entries.size;
  }

  clear(): void {
    this.entries.clear();
  }
}

/** The trie proofs verified last in this process (see ProvenValues); read replies are checked through it. */
export const sharedProvenValues = new ProvenValues();

export interface AuditPathInput {
  /** base58 ledger root the path must lead to. */
  rootHash: string;
  /** 1-based sequence number of the txn (leaf index seqNo-1). */
  seqNo: number;
  /** Tree size the path is for (seqNo for a write REPLY, ledgerSize for GET_TXN). */
  ledgerSize: number;
  /** base58 hashes, leaf level first. */
  auditPath: readonly string[];
  /** The leaf: the stored txn (as in a reply; rootHash/auditPath/ledgerSize are ignored), or its MP bytes. */
  txn: Record<string, unknown> | Uint8Array;
}

/**
 * The ledger form of a txn taken from a reply: without the reply-only fields `rootHash`, `auditPath`,
 * `ledgerSize`; ATTRIB `raw` / `enc` hashed back as the ledger stores them (formats.md 4.5); audit-ledger map
 * keys turned back into integers (10.1).
 */
export function ledgerTxnOfReply(txn: Record<string, unknown>): Txn {
  const copy = deepCopy(txn);
  delete copy.rootHash;
  delete copy.auditPath;
  delete copy.ledgerSize;
  const inner = copy.txn;
  if (isPlainObject(inner) && inner.type === TxnType.ATTRIB && isPlainObject(inner.data)) {
    const data = inner.data;
    // a reply restores the original content; the ledger holds its hash (a 64-hex value is already a hash only if
    // the ledger kept it, which it never does for raw/enc)
    if (typeof data.raw === 'string' && data.raw !== '') data.raw = attribRawHash(data.raw);
    if (typeof data.enc === 'string' && data.enc !== '') data.enc = sha256Hex(data.enc);
  }
  return restoreAuditIntegerKeys(copy as unknown as Txn);
}

/**
 * Verifies that the txn is leaf seqNo-1 of the ledger of size `ledgerSize` whose root is `rootHash` (RFC 6962
 * inclusion, formats.md 6.3). Returns normally; throws ProofError (PROOF_MALFORMED, PROOF_TOO_SHORT,
 * PROOF_TOO_LONG, PROOF_ROOT_MISMATCH) or VerificationError REPLY_MALFORMED for a txn that cannot be encoded.
 */
export function verifyAuditPath(input: AuditPathInput): void {
  const root = hash32(input.rootHash, 'rootHash');
  if (!Array.isArray(input.auditPath)) throw new ProofError(StorageErrorCode.PROOF_MALFORMED, { what: 'auditPath' });
  const path = input.auditPath.map((h, i) => hash32(h, `auditPath[${i}]`));
  const { seqNo, ledgerSize } = input;
  if (!Number.isSafeInteger(seqNo) || seqNo < 1 || !Number.isSafeInteger(ledgerSize) || ledgerSize < seqNo) {
    throw new ProofError(StorageErrorCode.PROOF_MALFORMED, { what: 'seqNo', seqNo, ledgerSize });
  }
  let leaf: Uint8Array;
  if (input.txn instanceof Uint8Array) leaf = input.txn;
  else {
    try {
      leaf = encodeMsgpack(ledgerTxnOfReply(input.txn));
    } catch (e) {
      throw new VerificationError(ClientErrorCode.REPLY_MALFORMED, { field: 'txn', reason: (e as { code?: string }).code ?? String(e) });
    }
  }
  verifyInclusion(merkleLeafHash(leaf), seqNo - 1, ledgerSize, path, root);
}
