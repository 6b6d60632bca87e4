// The catalogue of planted bugs of the mutation gate (issue #15): each one is a textual change to
// one source file of consensus or the node's executor, with the fault mixes whose bounded sweep is
// expected to catch it. `find` must occur exactly once in the file (the gate reports a mutation
// whose site moved instead of guessing). docs/mutation.md lists the catalogue and its kill table.

export interface Mutation {
  id: string;
  /** what the planted bug does, in the protocol's words */
  what: string;
  /** path from the repository root */
  file: string;
  find: string;
  replace: string;
  /** the mixes of its sweep (cycled; n alternates 4 / 7) */
  mixes: string[];
  /** seeds of its sweep (default 8) */
  seeds?: number;
  /**
   * scenario tests run with the mutant before the sweep (mocha files, paths from the repository
   * root under packages/<pkg>/): deterministic simulator runs or scripted cores built for this
   * mutation; one that fails with the mutant and passes without it catches it. With `mixes` empty,
   * only the tests are run.
   */
  tests?: string[];
  /** why the mutation cannot change behaviour, when it cannot (listed, not run) */
  equivalent?: string;
}

const OPTIONS = 'packages/consensus/src/options.ts';
const ORDERING = 'packages/consensus/src/ordering.ts';
const NEW_VIEW = 'packages/consensus/src/new-view-calc.ts';
const VIEW_CHANGE = 'packages/consensus/src/view-change.ts';
const CATCHUP = 'packages/consensus/src/catchup.ts';
const MULTISIG = 'packages/consensus/src/multisig-check.ts';
const CHECKPOINTS = 'packages/consensus/src/checkpoints.ts';
const EXECUTOR = 'packages/node/src/consensus-executor.ts';

export const MUTATIONS: Mutation[] = [
  // ---- quorums ----
  {
    id: 'q-prepare',
    what: 'prepare quorum one lower (n-f-2 PREPAREs)',
    file: OPTIONS,
    find: 'prepare: n - f - 1,',
    replace: 'prepare: n - f - 2,',
    mixes: ['equivocation', 'primary', 'viewChange'],
  },
  {
    id: 'q-commit',
    what: 'commit quorum one lower (n-f-1 COMMITs)',
    file: OPTIONS,
    find: 'commit: n - f,',
    replace: 'commit: n - f - 1,',
    mixes: ['equivocation', 'none', 'net'],
  },
  {
    id: 'q-checkpoint',
    what: 'checkpoint quorum one lower',
    file: OPTIONS,
    find: 'checkpoint: n - f - 1,',
    replace: 'checkpoint: n - f - 2,',
    mixes: ['withheldCheckpoints', 'badNewView', 'flood', 'crashStop', 'seeders'],
    tests: ['packages/consensus/test/unit/checkpoint-quorum.test.ts'],
  },
  {
    id: 'q-bls',
    what: 'multi-signature quorum one lower (n-f-1 participants)',
    file: OPTIONS,
    find: 'blsSignatures: n - f,',
    replace: 'blsSignatures: n - f - 1,',
    mixes: ['forgery', 'byzantine', 'none'],
  },
  {
    id: 'q-ordered-commits',
    what: 'a batch ordered with n-f-1 matching COMMITs',
    file: ORDERING,
    find: 'if (candidates.length < ctx.quorums.commit) return undefined;',
    replace: 'if (candidates.length < ctx.quorums.commit - 1) return undefined;',
    mixes: ['none', 'net', 'equivocation'],
  },
  {
    id: 'q-propagate',
    what: 'a request finalised by f+1 PROPAGATEs (n-f expected since #16)',
    file: 'packages/consensus/src/intake.ts',
    find: 'if (votes < this.ctx.quorums.strong) return;',
    replace: 'if (votes < this.ctx.quorums.weak) return;',
    mixes: ['overload'],
  },
  // ---- digest and root comparisons of a PRE-PREPARE ----
  {
    id: 'pp-digest',
    what: 'PRE-PREPARE digest not recomputed',
    file: ORDERING,
    find: 'if (batchDigest(pp.originalViewNo ?? pp.viewNo, pp.ppTime, pp.reqIdr, pp.ledgerId) !== pp.digest) {',
    replace: 'if (false) {',
    mixes: ['wrongDigest', 'badNewView', 'primary'],
  },
  {
    id: 'pp-state-root',
    what: 'PRE-PREPARE state root not compared',
    file: ORDERING,
    find: 'else if (applied.stateRoot !== pp.stateRootHash) code',
    replace: 'else if (false) code',
    mixes: ['wrongRoots'],
  },
  {
    id: 'pp-audit-root',
    what: 'PRE-PREPARE audit root not compared',
    file: ORDERING,
    find: 'else if (applied.auditRoot !== pp.auditTxnRootHash) code',
    replace: 'else if (false) code',
    mixes: ['wrongRoots'],
  },
  {
    id: 'pp-txn-root',
    what: 'PRE-PREPARE txn root not compared',
    file: ORDERING,
    find: 'else if (applied.txnRoot !== pp.txnRootHash) code',
    replace: 'else if (false) code',
    mixes: ['wrongRoots'],
  },
  // ---- primary checks ----
  {
    id: 'pp-non-primary',
    what: 'PRE-PREPARE accepted from a non-primary',
    file: ORDERING,
    find: 'if (from !== ctx.primaryName(pp.viewNo)) {',
    replace: 'if (false) {',
    mixes: ['forgery'],
  },
  // ---- NEW_VIEW selection ----
  {
    id: 'nv-lowest-prepared',
    what: 'NEW_VIEW may pick a lower-view prepared certificate over a higher one',
    file: NEW_VIEW,
    find: 'e.view_no < b.view_no ||',
    replace: 'e.view_no > b.view_no ||',
    mixes: ['secondViewChange', 'vcForge', 'equivocation', 'viewChange', 'badNewView'],
    tests: ['packages/consensus/test/unit/new-view-highest-prepared.test.ts'],
  },
  {
    id: 'nv-smallest-checkpoint',
    what: 'NEW_VIEW picks the smallest eligible checkpoint',
    file: NEW_VIEW,
    find: 'cp.seqNoEnd > best.seqNoEnd',
    replace: 'cp.seqNoEnd < best.seqNoEnd',
    mixes: ['secondViewChange', 'vcForge', 'crashStop', 'badNewView'],
    seeds: 16,
  },
  {
    id: 'nv-checkpoint-holders',
    what: 'NEW_VIEW checkpoint held by one VIEW_CHANGE (f+1 expected)',
    file: NEW_VIEW,
    find: 'holding >= weak',
    replace: 'holding >= 1',
    mixes: ['vcForge', 'badNewView'],
  },
  {
    id: 'nv-pp-witness',
    what: 'NEW_VIEW batch with one pre-prepared witness (f+1 expected)',
    file: NEW_VIEW,
    find: 'if (ppWitness < weak) continue;',
    replace: 'if (ppWitness < 1) continue;',
    mixes: ['vcForge', 'badNewView'],
  },
  {
    id: 'nv-null-quorum',
    what: 'NEW_VIEW ends its batches when f+1 (not n-f) VIEW_CHANGEs show nothing prepared',
    file: NEW_VIEW,
    find: 'if (nothing >= strong) return out;',
    replace: 'if (nothing >= weak) return out;',
    mixes: ['vcForge', 'equivocation', 'viewChange', 'crashStop'],
  },
  {
    id: 'nv-accept-weak',
    what: 'NEW_VIEW accepted with f+1 VIEW_CHANGEs (n-f expected)',
    file: VIEW_CHANGE,
    find: 'if (authors.size < ctx.quorums.strong || authors.size !== nv.viewChanges.length) {',
    replace: 'if (authors.size < ctx.quorums.weak || authors.size !== nv.viewChanges.length) {',
    mixes: ['badNewView'],
    equivalent:
      'the NEW_VIEW is refused one step later all the same: calcCheckpoint needs n-f of the named VIEW_CHANGEs not above the checkpoint, so fewer than n-f give no checkpoint (vote 47 instead of 48, after fetching the missing VIEW_CHANGEs)',
  },
  {
    id: 'nv-vc-digest',
    what: 'NEW_VIEW accepted with VIEW_CHANGEs whose digest differs from the named one',
    file: VIEW_CHANGE,
    find: 'if (held === undefined || held.digest !== digest) {',
    replace: 'if (held === undefined) {',
    mixes: ['viewChange', 'badNewView'],
    tests: ['packages/consensus/test/unit/new-view-vc-digest.test.ts'],
  },
  // ---- BLS shares and multi-signatures ----
  {
    id: 'bls-share',
    what: 'COMMIT BLS shares not verified',
    file: ORDERING,
    find: 'if (values.every((v) => crypto.blsVerifyShare(c, v, commit.blsSigs[String(v.ledger_id)]!))) {',
    replace: 'if (true) {',
    mixes: ['byzantine', 'mixed'],
  },
  {
    id: 'ms-verify',
    what: 'PRE-PREPARE multi-signature aggregate not verified',
    file: MULTISIG,
    find: 'return verifies ? MultiSigVerdict.VALID : MultiSigVerdict.SIGNATURE;',
    replace: 'return MultiSigVerdict.VALID;',
    mixes: ['forgery'],
    seeds: 24,
  },
  {
    id: 'ms-unknown-root',
    what: 'multi-signature over an unknown pool state root taken as valid (F2)',
    file: MULTISIG,
    find: 'if (registry === undefined) return MultiSigVerdict.UNKNOWN_POOL_ROOT;',
    replace: 'if (registry === undefined) return MultiSigVerdict.VALID;',
    mixes: ['forgery'],
    seeds: 24,
  },
  {
    id: 'ms-participants',
    what: 'multi-signature participants not checked against the validators at its root (F10)',
    file: MULTISIG,
    find: 'for (const p of parts) if (!members.has(p)) return MultiSigVerdict.PARTICIPANTS;',
    replace: '',
    mixes: [],
    tests: ['packages/consensus/test/unit/preprepare-multisig.test.ts'],
  },
  // ---- checkpoints ----
  {
    id: 'cp-own-quorum',
    what: 'a checkpoint stable with one matching CHECKPOINT',
    file: CHECKPOINTS,
    find: 'if (this.matching(seqNoEnd, own) < this.ctx.quorums.checkpoint) return;',
    replace: 'if (this.matching(seqNoEnd, own) < 1) return;',
    mixes: ['withheldCheckpoints', 'badNewView', 'flood', 'seeders'],
    tests: ['packages/consensus/test/unit/checkpoint-quorum.test.ts'],
  },
  // ---- catch-up ----
  {
    id: 'cu-proof',
    what: 'catch-up consistency proofs not verified',
    file: CATCHUP,
    find: 'if (!ctx.modules.executor.verifyConsistency(p.seqNoStart, p.oldMerkleRoot, p.seqNoEnd, p.newMerkleRoot, p.hashes)) {',
    replace: 'if (false) {',
    mixes: ['seeders', 'badNewView', 'torn'],
    equivalent:
      'within the fault model: a proof that does not verify, once kept, does what a verifying proof of a ledger the liar made up does (a Byzantine seeder can always build one); the target still needs f+1 identical proofs, one of them honest, and every CATCHUP_REP is checked against that target, so only which peers are asked changes',
  },
  {
    id: 'cu-one-proof',
    what: 'catch-up target taken from one consistency proof (f+1 expected)',
    file: CATCHUP,
    find: 'if (g.from.length >= q.weak &&',
    replace: 'if (g.from.length >= 1 &&',
    mixes: ['seeders', 'badNewView'],
    tests: ['packages/consensus/test/unit/catchup-one-proof.test.ts'],
  },
  // ---- the executor: commit atomicity, persistence before reply ----
  {
    id: 'ex-commit-split',
    what: 'batch commit split in two writes (audit txn first)',
    file: EXECUTOR,
    find: 'void s.ledgers[AUDIT_LEDGER].commit(1, wb);',
    replace: '{ const aw = s.kv.batch(); void s.ledgers[AUDIT_LEDGER].commit(1, aw); this.startWrite(aw); }',
    mixes: ['torn'],
    seeds: 10,
  },
  {
    id: 'ex-reply-before-write',
    what: 'flush() does not wait for the batch writes (replies before persistence)',
    file: EXECUTOR,
    find: 'async flush(): Promise<void> {\n    await this.writes;',
    replace: 'async flush(): Promise<void> {\n    void this.writes;',
    mixes: ['flushCrash'],
    seeds: 10,
  },
];
