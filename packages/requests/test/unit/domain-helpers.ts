// Shared helpers of the domain type tests: submit requests through the real executor (static and
// dynamic validation, authorization, state update, commit), run reads through the real read
// framework, and verify their state proofs with the storage verifier.
import { b58decode, b64decode, canonicalJsonBytes } from '@quire/common';
import type { Ed25519Signer } from '@quire/crypto';
import { verifyTrieProofAt } from '@quire/storage';
import { expect } from 'chai';
import type { RequestResult } from '../../src/executor/executor.js';
import type { Txn } from '../../src/handler.js';
import { parseRequest } from '../../src/pipeline/parse.js';
import { type UnsignedReadReply, StoresReadContext, answerRead } from '../../src/reads/read-context.js';
import type { StateKey } from '../../src/handler.js';
import { type Harness, TRUSTEE, newSigner, nymOp, signed } from './helpers/harness.js';

export { createHarness, newSigner, nymOp, signed, STEWARDS, TRUSTEE, PP_TIME } from './helpers/harness.js';
export type { Harness } from './helpers/harness.js';

/** Orders one batch holding one request and returns its result. */
export async function submit(h: Harness, req: Record<string, unknown>, ppTime?: number): Promise<RequestResult> {
  const r = await h.order(1, [req], ppTime);
  return r.results[0]!;
}

/** Orders a request that must be valid; returns its stored txn. */
export async function accept(h: Harness, req: Record<string, unknown>, ppTime?: number): Promise<Txn> {
  const r = await submit(h, req, ppTime);
  if (!r.valid) expect.fail(`expected valid, got ${r.code}: ${r.reason}`);
  return r.txn;
}

/** Orders a request that must be refused with `code`; returns the reason. */
export async function refuse(h: Harness, req: Record<string, unknown>, code: string): Promise<string> {
  const r = await submit(h, req);
  if (r.valid) expect.fail(`expected ${code}, got valid`);
  expect(r.code, r.reason).to.equal(code);
  return r.reason;
}

/** Creates a DID on the ledger with `role`, written by the trustee; returns its signer. */
export async function onLedger(h: Harness, role: string | null = null, by: Ed25519Signer = TRUSTEE): Promise<Ed25519Signer> {
  const s = newSigner();
  await accept(h, signed(by, nymOp(s, role)));
  return s;
}

/** The static validation of a request by its handler (what a node runs before REQACK). */
export function staticCheck(h: Harness, req: Record<string, unknown>): void {
  const parsed = parseRequest(req);
  const handler = h.executor.registry.get(parsed.type);
  if (!handler) throw new Error(`no handler for ${parsed.type}`);
  handler.validateStatic(parsed);
}

/** Expects the static validation of `operation` (sent by the trustee) to throw `code`. */
export function staticRefuses(h: Harness, operation: Record<string, unknown>, code: string): void {
  try {
    staticCheck(h, signed(TRUSTEE, operation));
  } catch (e) {
    expect((e as { code?: string }).code, (e as Error).message).to.equal(code);
    return;
  }
  expect.fail(`expected static ${code}, got accepted`);
}

export interface ReadOutcome {
  result: Record<string, unknown>;
  root?: Uint8Array;
  proofNodes?: Uint8Array;
  /** The reply as the node receives it (stateRoot / stateRootFrom name the roots to multi-sign). */
  reply: UnsignedReadReply;
}

/** Runs a read (unsigned, as clients send them) through the read framework. */
export async function read(h: Harness, operation: Record<string, unknown>): Promise<ReadOutcome> {
  const parsed = parseRequest({ identifier: TRUSTEE.did, reqId: 1, protocolVersion: 2, operation });
  const handler = h.executor.registry.read(parsed.type);
  if (!handler) throw new Error(`no read handler for ${parsed.type}`);
  handler.validateStatic(parsed);
  const reply = await answerRead(handler, parsed, new StoresReadContext(h.stores));
  const sp = reply.result.state_proof as { root_hash: string; proof_nodes: string } | undefined;
  return sp ? { result: reply.result, root: b58decode(sp.root_hash), proofNodes: b64decode(sp.proof_nodes), reply } : { result: reply.result, reply };
}

/** `{"lsn", "lut", "val"}` as a client rebuilds it from a read result (formats.md §7.7). */
export function wrappedFromResult(val: unknown, result: Record<string, unknown>): Uint8Array {
  return canonicalJsonBytes({ lsn: result.seqNo, lut: result.txnTime, val });
}

/**
 * Verifies the state proof of a read for `key` with the storage verifier: `expected` bytes prove
 * presence of exactly that value, null proves absence.
 */
export function verifyRead(out: ReadOutcome, key: StateKey, expected: Uint8Array | null): void {
  expect(out.root, 'state proof present').to.not.equal(undefined);
  const proven = verifyTrieProofAt(out.root!, key, out.proofNodes!);
  if (expected === null) expect(proven).to.equal(null);
  else expect(proven === null ? null : Buffer.from(proven).toString()).to.equal(Buffer.from(expected).toString());
}
