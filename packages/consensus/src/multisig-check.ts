// The one check of a BLS multi-signature received from a peer, shared by PRE-PREPARE check 12
// (ordering.ts, `blsMultiSigs`) and catch-up (catchup-multisigs.ts, CATCHUP_REP `multiSigs`), so
// that every multi-signature a node stores or serves passed the same rules:
// - well formed as the BLS store takes it (`multiSignatureProblem`: 96-byte signature, 32-byte roots);
// - its pool state root is one this node knows, so that the registry and keys in force there are
//   known (otherwise it is UNKNOWN_POOL_ROOT: never stored, whatever its signature);
// - at least n−f distinct participants, every one a validator of the registry at that root;
// - an aggregate that verifies under the participants' keys at that root.
import { multiSignatureProblem } from '@quire/storage/proofs';
import type { CoreContext } from './context.js';
import type { MultiSignature } from './messages.js';
import { quorumsFor } from './options.js';

/** The outcome of checking one multi-signature. */
export const MultiSigVerdict = {
  VALID: 'valid',
  /** not what the BLS store accepts (lengths, encodings, missing fields) */
  MALFORMED: 'malformed',
  /** its pool state root is not known here: no registry or keys to check it with */
  UNKNOWN_POOL_ROOT: 'unknownPoolRoot',
  /** duplicate participants, participants that are not validators at the root, or fewer than n−f */
  PARTICIPANTS: 'participants',
  /** the aggregate does not verify under the participants' keys at the root */
  SIGNATURE: 'signature',
} as const;
export type MultiSigVerdict = (typeof MultiSigVerdict)[keyof typeof MultiSigVerdict];

/**
 * The validator registry in force at a pool state root, undefined when this node does not know the
 * root: one missing from its pool state (`hasPoolStateRoot` false: older than its pool genesis), or
 * one the executor's `registryAt` does not resolve.
 */
export function registryAtPoolRoot(ctx: CoreContext, poolStateRoot: string): readonly string[] | undefined {
  const ex = ctx.modules.executor;
  if (!ex.hasPoolStateRoot(poolStateRoot)) return undefined;
  return ex.registryAt(poolStateRoot);
}

/**
 * Checks a multi-signature against `registry`, the validators at its pool state root (undefined:
 * the root is unknown here). Pure but for the BLS verification; never throws.
 */
export function checkMultiSignature(ctx: CoreContext, ms: MultiSignature, registry: readonly string[] | undefined): MultiSigVerdict {
  const before = checkBeforeSignature(ms, registry);
  if (before !== MultiSigVerdict.VALID) return before;
  let verifies: boolean;
  try {
    verifies = ctx.modules.crypto.blsVerifyMulti(ms.participants, ms.value, ms.signature);
  } catch {
    verifies = false;
  }
  return verifies ? MultiSigVerdict.VALID : MultiSigVerdict.SIGNATURE;
}

/**
 * Every check of {@link checkMultiSignature} but the BLS verification: VALID when only the signature is left to
 * verify (catch-up verifies the signatures of several at once, `ConsensusCrypto.blsVerifyMultiBatch`).
 */
export function checkBeforeSignature(ms: MultiSignature, registry: readonly string[] | undefined): MultiSigVerdict {
  if (multiSignatureProblem(ms) !== undefined) return MultiSigVerdict.MALFORMED;
  if (registry === undefined) return MultiSigVerdict.UNKNOWN_POOL_ROOT;
  const parts = new Set(ms.participants);
  if (parts.size !== ms.participants.length || parts.size < quorumsFor(registry.length).blsSignatures) return MultiSigVerdict.PARTICIPANTS;
  const members = new Set(registry);
  for (const p of parts) if (!members.has(p)) return MultiSigVerdict.PARTICIPANTS;
  return MultiSigVerdict.VALID;
}
