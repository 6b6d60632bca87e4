// The messages the client path sends (formats.md §5, requests.md §1.8): JSON encoding, REQNACK of
// a request, the REPLY result of an ordered write, and the multi-signatures attached to a read.
import { JsonText, LedgerId, TxnType, b58encode, equalBytes, isPlainObject, receivedKeys, stringifyJson, type MultiSignature } from '@quire/common';
import { LruCache } from '@quire/crypto';
import type { UnsignedReadReply, RequestError } from '@quire/requests';
import { wrapReason } from '@quire/requests';
import type { AttributeStore, BlsStore, Ledger, StateTrie } from '@quire/storage';

const textEncoder = new TextEncoder();

/** The JSON bytes of a client message (lossless: big integers stay integers). */
export function encodeReply(msg: unknown): Uint8Array {
  return textEncoder.encode(stringifyJson(msg));
}

/** REQNACK `{op, identifier, reqId, reason[, code]}` of a refused request. */
export function nackMessage(identifier: string, reqId: number | bigint, error: RequestError): Record<string, unknown> {
  const m: Record<string, unknown> = { op: 'REQNACK', identifier, reqId, reason: wrapReason(error, identifier === '' ? null : identifier, reqId) };
  if (error.replyCode !== null) m.code = error.replyCode;
  return m;
}

/** identifier / reqId echoed in a REQNACK for a request that did not parse. */
export function envelopeGuess(text: string): { identifier: string; reqId: number | bigint } {
  const id = /"identifier"\s*:\s*"([^"\\]{0,256})"/.exec(text)?.[1] ?? '';
  const rq = /"reqId"\s*:\s*(\d{1,20})/.exec(text)?.[1];
  let reqId: number | bigint = 0;
  if (rq !== undefined) {
    const n = BigInt(rq);
    reqId = n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n;
  }
  return { identifier: id, reqId };
}

/** TAA rejections carry their code (formats.md §5.4): `..., <code>)` at the end of the wrapped reason. */
export function rejectCode(reason: string): number | null {
  const m = /, (20[0-7])\)$/.exec(reason);
  return m === null ? null : Number(m[1]);
}

export interface ReplyStores {
  ledgers: Record<0 | 1 | 2 | 3, Ledger>;
  states: Record<0 | 1 | 2, StateTrie> & Record<number, StateTrie>;
  bls: BlsStore;
  attributes: AttributeStore;
}

/** formats.md §5.2: the stored txn (ATTRIB raw/enc restored) + rootHash + auditPath at size seqNo. */
export async function writeResult(stores: ReplyStores, ledgerId: number, seqNo: number, proof?: WriteProof): Promise<Record<string, unknown>> {
  const ledger = stores.ledgers[ledgerId as 0 | 1 | 2 | 3];
  const txn = (await ledger.get(seqNo)) as unknown as Record<string, unknown>;
  await restoreAttrib(stores.attributes, txn);
  if (proof !== undefined) return { ...txn, rootHash: proof.rootHash, auditPath: proof.auditPath };
  const rootHash = b58encode(await ledger.rootAt(seqNo));
  const auditPath = (await ledger.inclusionProof(seqNo, seqNo)).map((h) => b58encode(h));
  return { ...txn, rootHash, auditPath };
}

/** rootHash and auditPath of a write's REPLY, base58. */
export interface WriteProof {
  rootHash: string;
  auditPath: string[];
}

/**
 * The WriteProofs of txns `from`..`to` of a ledger, by seqNo (Ledger.writeProofs): an ordered batch's
 * replies share most of their audit paths, so each distinct hash is read and encoded once.
 */
export function writeProofs(ledger: Ledger, from: number, to: number): Map<number, WriteProof> {
  const encoded = new Map<Uint8Array, string>();
  const enc = (h: Uint8Array): string => {
    let s = encoded.get(h);
    if (s === undefined) {
      s = b58encode(h);
      encoded.set(h, s);
    }
    return s;
  };
  const out = new Map<number, WriteProof>();
  ledger.writeProofs(from, to).forEach((p, i) => out.set(from + i, { rootHash: b58encode(p.root), auditPath: p.auditPath.map(enc) }));
  return out;
}

async function restoreAttrib(attributes: AttributeStore, txn: Record<string, unknown>): Promise<void> {
  const body = txn.txn;
  if (!isPlainObject(body) || body.type !== TxnType.ATTRIB || !isPlainObject(body.data)) return;
  for (const k of ['raw', 'enc'] as const) {
    const h = body.data[k];
    if (typeof h !== 'string') continue;
    const original = await attributes.get(h);
    if (original !== undefined) body.data[k] = original;
  }
}

/** base58 of the last state roots looked up (reads are answered at one signed root per ledger at a time) */
const recentRoots: { bytes: Uint8Array; text: string }[] = [];
const RECENT_ROOTS = 4;

/** base58 of a 32-byte root, remembered for the next reads of the same root. */
export function rootText(root: Uint8Array): string {
  for (const r of recentRoots) if (equalBytes(r.bytes, root)) return r.text;
  const text = b58encode(root);
  recentRoots.unshift({ bytes: root.slice(), text });
  if (recentRoots.length > RECENT_ROOTS) recentRoots.pop();
  return text;
}

/** State proofs written last (signedStateProof); texts longer than SIGNED_PROOF_MAX_CHARS are not kept. */
export const SIGNED_PROOFS = 1024;
export const SIGNED_PROOF_MAX_CHARS = 16 * 1024;
/** the texts of the signed state proofs written last, by their proof_nodes text (the read context's, one per lookup) */
const signedProofs = new LruCache<string, { rootHash: string; ms: MultiSignature; text: JsonText }>(SIGNED_PROOFS);

/**
 * `{...proof, multi_signature: ms}`, as a JsonText when `proof` is a `{root_hash, proof_nodes}` (in that order) of the read context: every
 * read of a key at a root is answered with the same proof text (stateProofOf) and the same stored multi-signature (the
 * BLS store's object for the root), so the state proof's JSON is written once and spliced into each reply. An entry
 * answers only the exact root text, proof text and multi-signature object it was written from; at most SIGNED_PROOFS
 * entries of up to SIGNED_PROOF_MAX_CHARS (least recently used first out). Any other proof gets the object as before.
 */
export function signedStateProof(proof: Record<string, unknown>, ms: MultiSignature): Record<string, unknown> | JsonText {
  const rootHash = proof.root_hash;
  const nodes = proof.proof_nodes;
  const signed = { ...proof, multi_signature: ms };
  if (typeof rootHash !== 'string' || typeof nodes !== 'string') return signed;
  const keys = receivedKeys(proof);
  if (keys.length !== 2 || keys[0] !== 'root_hash' || keys[1] !== 'proof_nodes') return signed;
  const hit = signedProofs.get(nodes);
  if (hit !== undefined && hit.rootHash === rootHash && hit.ms === ms) return hit.text;
  const text = JsonText.of(signed);
  if (text.text.length <= SIGNED_PROOF_MAX_CHARS) signedProofs.set(nodes, { rootHash, ms, text });
  return text;
}

/**
 * formats.md §5.3, §9.4: the multi-signature stored for the state root that was read, as
 * `state_proof.multi_signature`; for GET_REVOC_REG_DELTA with `from` (formats.md §7.7) also the one
 * stored for the `from` root, as `data.stateProofFrom.multi_signature`; for GET_TXN the one of the
 * ledger's current state root. A root without a stored multi-signature gets none. `signProof` makes the signed
 * `state_proof` (default `{...proof, multi_signature}`; encodeReadReply passes signedStateProof).
 */
export function attachMultiSignatures(
  stores: ReplyStores,
  result: Record<string, unknown>,
  reply: UnsignedReadReply,
  type: string,
  operation: Readonly<Record<string, unknown>>,
  signProof: (proof: Record<string, unknown>, ms: MultiSignature) => unknown = (proof, ms) => ({ ...proof, multi_signature: ms }),
): void {
  const bls = stores.bls;
  const { stateRoot, stateRootFrom } = reply;
  if (stateRootFrom !== undefined && isPlainObject(result.data) && isPlainObject(result.data.stateProofFrom)) {
    const ms = bls.getSync(rootText(stateRootFrom.root));
    if (ms !== undefined) result.data = { ...result.data, stateProofFrom: { ...result.data.stateProofFrom, multi_signature: ms } };
  }
  if (stateRoot !== undefined) {
    const ms = bls.getSync(rootText(stateRoot.root));
    const proof = result.state_proof;
    if (ms !== undefined && isPlainObject(proof)) result.state_proof = signProof(proof, ms);
    return;
  }
  if (type === TxnType.GET_TXN && result.data !== null && result.data !== undefined) {
    const lid = typeof operation.ledgerId === 'number' ? operation.ledgerId : LedgerId.DOMAIN;
    // a ledger with a state: 0-2 or a plugin ledger of the node (the audit ledger has no multi-signature)
    if (lid === LedgerId.AUDIT || !Object.hasOwn(stores.states, lid)) return;
    const ms = bls.getSync(rootText(stores.states[lid].committedRoot));
    if (ms !== undefined) result.state_proof = { multi_signature: ms };
  }
}

/**
 * The JSON bytes of a read's REPLY: its result with the multi-signatures attached (attachMultiSignatures), the state
 * proof written once per proof, root and multi-signature (signedStateProof). The same bytes as
 * `encodeReply({op: 'REPLY', result})` after attachMultiSignatures on a copy of the result.
 */
export function encodeReadReply(stores: ReplyStores, reply: UnsignedReadReply, type: string, operation: Readonly<Record<string, unknown>>): Uint8Array {
  const result: Record<string, unknown> = { ...reply.result };
  attachMultiSignatures(stores, result, reply, type, operation, signedStateProof);
  const sp = result.state_proof;
  if (!(sp instanceof JsonText)) return encodeReply({ op: 'REPLY', result });
  // the state proof last (as answerRead puts it): the rest written, the proof's UTF-8 bytes (made once per JsonText)
  // appended, so that its few KB are neither copied into the reply's text nor encoded again
  const keys = Object.keys(result);
  if (keys[keys.length - 1] !== 'state_proof') return encodeReply({ op: 'REPLY', result });
  result.state_proof = undefined; // left out by the writer
  const rest = stringifyJson({ op: 'REPLY', result });
  if (!rest.endsWith('}}') || rest.endsWith('{}}')) {
    result.state_proof = sp;
    return encodeReply({ op: 'REPLY', result });
  }
  let tail = proofBytes.get(sp);
  if (tail === undefined) {
    tail = textEncoder.encode(`,"state_proof":${sp.text}}}`);
    proofBytes.set(sp, tail);
  }
  const head = rest.slice(0, -2);
  const out = new Uint8Array(Buffer.byteLength(head, 'utf8') + tail.length);
  const { written } = textEncoder.encodeInto(head, out);
  out.set(tail, written);
  return out;
}

/** the UTF-8 bytes of `,"state_proof":<text>}}` of the signed state proofs written last (encodeReadReply) */
const proofBytes = new WeakMap<JsonText, Uint8Array>();
