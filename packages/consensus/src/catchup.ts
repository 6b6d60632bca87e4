// Catch-up (consensus.md §7): the leecher (status round on the audit ledger, f+1 identical
// consistency proofs as the target, transfer split across peers, proof-checked application; then
// ledgers 0-2 and the plugin ledgers with targets from the caught-up audit ledger) and the seeder answers. Audit-ledger
// replies carry the seeder's multi-signatures of the roots their txns name (catchup-multisigs.ts).
// Crash safety: every applied reply is one atomic write of the executor (its txns, state, indexes
// and the checked multi-signatures), and nothing else is written; a node killed between two of them
// has its audit ledger ahead of ledgers 0-2, which its startup accepts as a catch-up to finish
// (node: checkAgainstAudit), and the catch-up every start runs resumes from the ledgers' sizes.
import { CaughtUpMultiSigs, multiSigsForAuditTxns } from './catchup-multisigs.js';
import type { CoreContext } from './context.js';
import { Suspicion } from './context.js';
import { encodedMsgpackSize } from '@quire/common';
import { encodedSize, type CatchupRep, type CatchupReq, type ConsistencyProof, type LedgerStatus, type MultiSigTuple } from './messages.js';

const AUDIT = 3;
/** after the audit ledger: pool, config, domain (consensus.md §7.2) */
const LEDGER_ORDER = [0, 2, 1] as const;
const CATCHUP_BATCH_SIZE = 50;
const CATCHUP_MAX_TXNS_PER_REQ = 2000;
/**
 * Txns of ledgers 0-2 (and plugin ledgers) applied in one write at most: the contiguous replies waiting when one is
 * applied go together (one proof check with the last one's proof, one write), up to this many. A reply cut to
 * MSG_LEN_LIMIT holds about 200 NYM txns; applied one by one, every reply rewrote the upper state-trie nodes of the
 * batch times it shares with its neighbours, the ledger's hash tiles and the catch-up mark, and paid for a write.
 */
const CATCHUP_APPLY_MAX_TXNS = 2000;
/**
 * The missing ranges are asked again, rotated over the seeders, after this long without a reply to them. It was
 * timed from the request alone: every range not received 5 s after it was asked was asked again every 5 s, and a
 * transfer that takes longer (tens of seconds for 50,000 txns on a loaded pool, every range asked at once) was served
 * and received several times over, the copies cut at other seqNos and kept until the ledger was caught up.
 */
const CATCHUP_SILENCE_MS = 5000;
/** ... and this long after they were asked, replies or not: a seeder trickling its replies holds up a round at most this long */
const CATCHUP_REASK_MS = 30_000;
/** minimum gap between two status answers to one peer for one ledger (below the 2 s status retry) */
const STATUS_ANSWER_INTERVAL_MS = 1000;

export interface CatchupHooks {
  /** catch-up started: revert unordered batches, stash 3PC */
  onStart(): void;
  /** catch-up finished: restore ordering state from the audit ledger */
  onDone(): void;
}

/** A CATCHUP_REP received and not yet applied: txns seqNo `last - txns.length + 1`..`last`. */
interface Reply {
  from: string;
  txns: unknown[];
  consProof: string[];
  last: number;
  multiSigs: unknown[] | undefined;
}

interface Phase {
  ledgerId: number;
  targetSize: number;
  targetRoot: string;
  /** peers known to hold the target */
  seeders: string[];
  /** replies not yet applied, by first seqNo */
  replies: Map<number, Reply>;
  excluded: Set<string>;
  /** when the missing ranges were last asked for */
  requestedAt: number;
  /**
   * When they were last asked for or a reply to them last arrived: they are asked again (onTick) after
   * CATCHUP_SILENCE_MS without either, or CATCHUP_REASK_MS after they were asked (a seeder trickling its replies).
   */
  progressAt: number;
  /** ranges asked of each peer: replies are accepted only from the peer a range was asked of */
  asked: Map<string, [number, number][]>;
}

export class Catchup {
  active = false;
  rounds = 0;
  private statuses = new Map<string, LedgerStatus>();
  /** `peer|ledgerId` -> when this node last answered that peer's status (answerStatus) */
  private readonly statusAnsweredAt = new Map<string, number>();
  private proofs = new Map<string, ConsistencyProof>();
  private phase: Phase | undefined;
  private pendingLedgers: number[] = [];
  private roundStartedAt = 0;
  /** multi-signatures received with audit txns, until stored or dropped */
  readonly multiSigs: CaughtUpMultiSigs;
  /** ledgers 0-2 caught up to their target in this catch-up (their multi-signatures can be stored) */
  private readonly doneLedgers = new Set<number>();

  constructor(
    private readonly ctx: CoreContext,
    private readonly hooks: CatchupHooks,
  ) {
    this.multiSigs = new CaughtUpMultiSigs(ctx);
  }

  /**
   * Whether this node is fetching a ledger it is behind on: a catch-up past its status round (which ends without a
   * transfer when the peers are not ahead, as at a whole pool's start).
   */
  get transferring(): boolean {
    return this.active && this.phase !== undefined;
  }

  start(): void {
    if (this.active) return;
    this.active = true;
    this.rounds++;
    this.multiSigs.reset();
    this.doneLedgers.clear();
    this.hooks.onStart();
    this.beginStatusRound();
  }

  private beginStatusRound(): void {
    const ctx = this.ctx;
    this.statuses.clear();
    this.proofs.clear();
    this.phase = undefined;
    this.roundStartedAt = ctx.now();
    const own = ctx.modules.executor.ledgerStatus(AUDIT);
    ctx.broadcast({ op: 'LEDGER_STATUS', ledgerId: AUDIT, txnSeqNo: own.size, viewNo: 0, ppSeqNo: 0, merkleRoot: own.root, protocolVersion: 2 });
    this.checkStatusRound();
  }

  /**
   * A peer (re)connected: during a status round it gets this node's audit status at once. The round's
   * first broadcast goes out as the node starts, before its connections are up, and was only sent
   * again by the 2 s retry: every catch-up at a start waited for it.
   */
  onPeerConnected(alias: string): void {
    const ctx = this.ctx;
    if (!this.active || this.phase !== undefined || alias === ctx.name || !ctx.isValidator(alias)) return;
    const own = ctx.modules.executor.ledgerStatus(AUDIT);
    ctx.send(alias, { op: 'LEDGER_STATUS', ledgerId: AUDIT, txnSeqNo: own.size, viewNo: 0, ppSeqNo: 0, merkleRoot: own.root, protocolVersion: 2 });
  }

  // ---- seeder ------------------------------------------------------------------------------------

  onLedgerStatus(from: string, st: LedgerStatus): void {
    const ctx = this.ctx;
    const ex = ctx.modules.executor;
    const own = ex.ledgerStatus(st.ledgerId);
    if (this.active && st.ledgerId === AUDIT && st.txnSeqNo <= own.size) {
      // an answer to this node's status round: the peer is not ahead
      this.statuses.set(from, st);
      this.checkStatusRound();
      if (st.txnSeqNo === own.size && st.merkleRoot === own.root) return;
    }
    if (st.txnSeqNo >= own.size) {
      if (!this.active || st.ledgerId !== AUDIT) this.answerStatus(from, st.ledgerId, own);
      return;
    }
    // peer is behind: prove how this node's ledger extends the peer's
    if (ex.rootAt(st.ledgerId, st.txnSeqNo) !== st.merkleRoot) return;
    ctx.send(from, this.proofFor(st.ledgerId, st.txnSeqNo, own.size));
  }

  /**
   * This node's status to a peer that is not behind it, at most once per STATUS_ANSWER_INTERVAL_MS
   * per peer and ledger. A LEDGER_STATUS does not say whether it asks or answers: two nodes at the
   * same size that are both done catching up would otherwise answer each other's answers forever
   * (a late or duplicated reply starts it, and every duplicate on the way starts another exchange).
   * A leecher whose status went unanswered asks again after the status round's 2 s retry.
   */
  private answerStatus(to: string, ledgerId: number, own: { size: number; root: string }): void {
    const key = `${to}|${ledgerId}`;
    const now = this.ctx.now();
    if (now - (this.statusAnsweredAt.get(key) ?? Number.NEGATIVE_INFINITY) < STATUS_ANSWER_INTERVAL_MS) return;
    this.statusAnsweredAt.set(key, now);
    this.ctx.send(to, { op: 'LEDGER_STATUS', ledgerId, txnSeqNo: own.size, viewNo: 0, ppSeqNo: 0, merkleRoot: own.root, protocolVersion: 2 });
  }

  private proofFor(ledgerId: number, oldSize: number, newSize: number): ConsistencyProof {
    const ex = this.ctx.modules.executor;
    return {
      op: 'CONSISTENCY_PROOF',
      ledgerId,
      seqNoStart: oldSize,
      seqNoEnd: newSize,
      viewNo: 0,
      ppSeqNo: 0,
      oldMerkleRoot: ex.rootAt(ledgerId, oldSize),
      newMerkleRoot: ex.rootAt(ledgerId, newSize),
      hashes: ex.consistencyProof(ledgerId, oldSize, newSize),
    };
  }

  /** MESSAGE_REQUEST{CONSISTENCY_PROOF}: a proof for a given range if this node has it. */
  proofForRequest(ledgerId: number, seqNoStart: number, seqNoEnd: number): ConsistencyProof | null {
    const own = this.ctx.modules.executor.ledgerStatus(ledgerId);
    if (seqNoEnd > own.size || seqNoStart >= seqNoEnd) return null;
    return this.proofFor(ledgerId, seqNoStart, seqNoEnd);
  }

  onCatchupReq(from: string, req: CatchupReq): void {
    const ex = this.ctx.modules.executor;
    const own = ex.ledgerStatus(req.ledgerId);
    // consensus.md §7.4: 1 <= seqNoStart <= seqNoEnd <= catchupTill <= own size
    if (req.seqNoStart < 1 || req.seqNoStart > req.seqNoEnd || req.seqNoEnd > req.catchupTill || req.catchupTill > own.size) return;
    const txns = ex.txnRange(req.ledgerId, req.seqNoStart, req.seqNoEnd);
    this.sendCatchupRep(from, req, req.seqNoStart, txns, req.ledgerId === AUDIT ? new Map() : undefined);
  }

  /**
   * Sends txns seqNo `start`.. as CATCHUP_REPs below MSG_LEN_LIMIT, each with its own consistency
   * proof to catchupTill (consensus.md §7.4) and, for the audit ledger, the multi-signatures of the
   * roots its own txns name (`multiSigCache`: by state root, shared by the pieces). Each txn's encoded
   * size is counted (`encodedMsgpackSize`, without encoding it) and the pieces are cut greedily from those sizes
   * (`catchupRepSize`), instead of encoding the whole reply and then each half again: a 2,000-txn
   * reply cut to 128 KiB by halving was encoded five times over before the transport encoded it.
   */
  private sendCatchupRep(to: string, req: CatchupReq, start: number, txns: readonly unknown[], multiSigCache?: Map<string, MultiSigTuple | null>): void {
    const ex = this.ctx.modules.executor;
    const limit = this.ctx.opts.msgLenLimit;
    // bytes of each txn under its key; for the audit ledger the multi-signatures it names are counted with it
    // (an upper bound: a piece carries each root's multi-signature once)
    const sizes = txns.map((t, i) => {
      let n = catchupEntrySize(start + i, t);
      if (multiSigCache !== undefined) for (const ms of multiSigsForAuditTxns(ex, [t], multiSigCache)) n += msgpackSize(ms);
      return n;
    });
    // room for the rest of a piece: its envelope with the proof from `start` (a piece's own proof is at most a
    // few hashes longer) and the map header; each piece's exact size is checked before it is sent
    const proof = start + txns.length - 1 === req.catchupTill ? [] : ex.consistencyProof(req.ledgerId, start, req.catchupTill);
    const envelope = encodedSize({ op: 'CATCHUP_REP', ledgerId: req.ledgerId, txns: {}, consProof: proof }) + CATCHUP_REP_SLACK_BYTES;
    let s = 0;
    for (const e of cutPieces(sizes, limit - envelope)) {
      this.sendCatchupPiece(to, req, start + s, txns.slice(s, e), sizes.slice(s, e), multiSigCache);
      s = e;
    }
  }

  /** One CATCHUP_REP of txns seqNo `start`..; split in halves while its exact size is above MSG_LEN_LIMIT. */
  private sendCatchupPiece(
    to: string,
    req: CatchupReq,
    start: number,
    txns: readonly unknown[],
    sizes: readonly number[],
    multiSigCache?: Map<string, MultiSigTuple | null>,
  ): void {
    const ex = this.ctx.modules.executor;
    const last = start + txns.length - 1;
    const map: Record<string, unknown> = {};
    txns.forEach((t, i) => (map[String(start + i)] = t));
    const consProof = last === req.catchupTill ? [] : ex.consistencyProof(req.ledgerId, last, req.catchupTill);
    const rep: CatchupRep = { op: 'CATCHUP_REP', ledgerId: req.ledgerId, txns: map, consProof };
    if (multiSigCache !== undefined) {
      const multiSigs = multiSigsForAuditTxns(ex, txns, multiSigCache);
      if (multiSigs.length > 0) rep.multiSigs = multiSigs;
    }
    // the audit ledger's few txns are measured whole (their sizes count the multi-signatures they name, an upper bound)
    const size = multiSigCache !== undefined ? encodedSize(rep) : catchupRepSize(rep, sizes);
    if (txns.length > 1 && size > this.ctx.opts.msgLenLimit) {
      const half = Math.ceil(txns.length / 2);
      this.sendCatchupPiece(to, req, start, txns.slice(0, half), sizes.slice(0, half), multiSigCache);
      this.sendCatchupPiece(to, req, start + half, txns.slice(half), sizes.slice(half), multiSigCache);
      return;
    }
    this.ctx.send(to, rep);
  }

  // ---- leecher -----------------------------------------------------------------------------------

  onConsistencyProof(from: string, p: ConsistencyProof): void {
    const ctx = this.ctx;
    if (!this.active || this.phase !== undefined || p.ledgerId !== AUDIT) return;
    const own = ctx.modules.executor.ledgerStatus(AUDIT);
    if (p.seqNoStart !== own.size || p.oldMerkleRoot !== own.root) return;
    if (!ctx.modules.executor.verifyConsistency(p.seqNoStart, p.oldMerkleRoot, p.seqNoEnd, p.newMerkleRoot, p.hashes)) {
      ctx.suspect(from, Suspicion.INVALID_CATCHUP_DATA);
      return;
    }
    this.proofs.set(from, p);
    this.checkStatusRound();
  }

  private checkStatusRound(): void {
    const ctx = this.ctx;
    if (!this.active || this.phase !== undefined) return;
    const q = ctx.quorums;
    const notAhead = [...this.statuses.keys()].filter((a) => ctx.isValidator(a) && !this.proofs.has(a)).length;
    // a reliable target: f+1 identical proofs, the largest
    const groups = new Map<string, { p: ConsistencyProof; from: string[] }>();
    for (const [from, p] of this.proofs) {
      if (!ctx.isValidator(from)) continue;
      const key = `${p.seqNoEnd}|${p.newMerkleRoot}|${p.hashes.join(',')}`;
      const g = groups.get(key) ?? { p, from: [] };
      g.from.push(from);
      groups.set(key, g);
    }
    let best: { p: ConsistencyProof; from: string[] } | undefined;
    for (const g of groups.values()) if (g.from.length >= q.weak && (best === undefined || g.p.seqNoEnd > best.p.seqNoEnd)) best = g;
    if (best !== undefined) {
      // seeders: every peer whose proof reached at least the target
      const seeders = [...this.proofs].filter(([a, p]) => ctx.isValidator(a) && p.seqNoEnd >= best.p.seqNoEnd).map(([a]) => a);
      this.startPhase(AUDIT, best.p.seqNoEnd, best.p.newMerkleRoot, seeders);
      return;
    }
    if (notAhead >= q.prepare && this.proofs.size < q.weak) {
      this.auditDone();
      return;
    }
    if (notAhead + this.proofs.size >= q.prepare && this.proofs.size >= q.weak) {
      // seeders at different sizes: ask all for a proof to the (f+1)-th largest size
      const sizes = [...this.proofs.values()].map((p) => p.seqNoEnd).sort((a, b) => b - a);
      const e = sizes[q.weak - 1];
      const own = ctx.modules.executor.ledgerStatus(AUDIT);
      if ([...this.proofs.values()].some((p) => p.seqNoEnd !== e)) {
        for (const [a, p] of this.proofs) if (p.seqNoEnd !== e) this.proofs.delete(a);
        ctx.broadcast({ op: 'MESSAGE_REQUEST', msg_type: 'CONSISTENCY_PROOF', params: { ledgerId: AUDIT, seqNoStart: own.size, seqNoEnd: e } });
      }
    }
  }

  private startPhase(ledgerId: number, targetSize: number, targetRoot: string, seeders: string[]): void {
    const ctx = this.ctx;
    const ph: Phase = {
      ledgerId,
      targetSize,
      targetRoot,
      seeders: seeders.length > 0 ? seeders : ctx.validators.filter((v) => v !== ctx.name),
      replies: new Map(),
      excluded: new Set(),
      requestedAt: 0,
      progressAt: 0,
      asked: new Map(),
    };
    this.phase = ph;
    // progress of a long operation: the status round's end (the audit ledger's target), then each ledger's transfer
    ctx.modules.logger?.info(
      { ledgerId, size: ctx.modules.executor.ledgerStatus(ledgerId).size, targetSize, seeders: ph.seeders },
      'catch-up: asking a ledger',
    );
    this.requestMissing(ph);
  }

  /** Splits the missing range over the seeders (shuffled with the injected RNG when there is one). */
  private requestMissing(ph: Phase): void {
    const ctx = this.ctx;
    const ex = ctx.modules.executor;
    let from = ex.ledgerStatus(ph.ledgerId).size + 1;
    // skip what is already received and waiting to be applied
    for (let r = ph.replies.get(from); r !== undefined; r = ph.replies.get(from)) from = r.last + 1;
    if (from > ph.targetSize) return;
    const peers = ph.seeders.filter((s) => !ph.excluded.has(s));
    const pool = peers.length > 0 ? peers : ph.seeders;
    const total = ph.targetSize - from + 1;
    const share = Math.min(CATCHUP_MAX_TXNS_PER_REQ, Math.max(CATCHUP_BATCH_SIZE, Math.ceil(total / pool.length)));
    let i = 0;
    for (let s = from; s <= ph.targetSize; s += share) {
      const to = Math.min(ph.targetSize, s + share - 1);
      const peer = pool[(i + this.rounds) % pool.length];
      i++;
      ctx.send(peer, { op: 'CATCHUP_REQ', ledgerId: ph.ledgerId, seqNoStart: s, seqNoEnd: to, catchupTill: ph.targetSize });
      const ranges = ph.asked.get(peer) ?? [];
      ranges.push([s, to]);
      ph.asked.set(peer, ranges);
    }
    ph.requestedAt = ctx.now();
    ph.progressAt = ph.requestedAt;
  }

  onCatchupRep(from: string, rep: CatchupRep): void {
    const ctx = this.ctx;
    const ph = this.phase;
    if (!this.active || ph === undefined || rep.ledgerId !== ph.ledgerId) return;
    const seqNos = Object.keys(rep.txns)
      .map(Number)
      .sort((a, b) => a - b);
    if (seqNos.length === 0 || seqNos.some((n) => !Number.isSafeInteger(n))) {
      ph.excluded.add(from);
      return;
    }
    const first = seqNos[0];
    const last = seqNos[seqNos.length - 1];
    // only what was asked of this peer (a split reply arrives as several contiguous pieces)
    if (!(ph.asked.get(from) ?? []).some(([a, b]) => first >= a && last <= b)) return;
    if (last - first + 1 !== seqNos.length || last > ph.targetSize) {
      ph.excluded.add(from);
      ctx.suspect(from, Suspicion.INVALID_CATCHUP_DATA);
      return;
    }
    // an earlier reply from another peer for the same start is kept until it fails to apply
    if (ph.replies.has(first)) return;
    ph.progressAt = ctx.now();
    ph.replies.set(first, { from, txns: seqNos.map((s) => rep.txns[String(s)]), consProof: rep.consProof, last, multiSigs: rep.multiSigs });
    this.applyReplies(ph);
  }

  /**
   * Applies the replies waiting from the ledger's size on. A run of contiguous replies of ledgers 0-2 is applied
   * once it is whole (`runWhole`) or when `force` (the retry of a phase, onTick): the pieces of one CATCHUP_REQ arrive
   * one after the other, and applying each as it came made one write of about 200 txns per piece (the
   * 128 KiB frames) where one write per asked range will do.
   */
  private applyReplies(ph: Phase, force = false): void {
    const ctx = this.ctx;
    const ex = ctx.modules.executor;
    /** after a run of replies that did not apply together: the last seqNo of that run, applied reply by reply */
    let singlyUntil = 0;
    for (;;) {
      const size = ex.ledgerStatus(ph.ledgerId).size;
      if (size >= ph.targetSize) break;
      const r = ph.replies.get(size + 1);
      if (r === undefined) return;
      if (size + 1 > singlyUntil) {
        const run = this.waitingRun(ph, r);
        if (!force && ph.ledgerId !== AUDIT && !this.runWhole(ph, run)) return;
        if (run.length > 1) {
          if (this.applyRun(ph, run)) continue;
          // one of them is bad: apply them one by one to find the peer that sent it
          singlyUntil = (run.at(-1) ?? r).last;
        }
      }
      ph.replies.delete(size + 1);
      // checked multi-signatures of the ledgers caught up so far, this reply's ledger included when
      // it completes it, go into the write of these txns
      const incoming = ph.ledgerId === AUDIT ? this.multiSigs.candidates(r.from, r.txns, r.multiSigs) : [];
      const completes = r.last >= ph.targetSize;
      const sigs = this.multiSigs.check(incoming, false, (lid) => this.doneLedgers.has(lid) || (completes && lid === ph.ledgerId));
      const applied = ex.appendCaughtUp(ph.ledgerId, r.txns, r.consProof, ph.targetSize, ph.targetRoot, sigs.valid);
      sigs.settle(applied);
      if (!applied) {
        ph.excluded.add(r.from);
        ctx.suspect(r.from, Suspicion.INVALID_CATCHUP_DATA);
        this.requestMissing(ph);
        return;
      }
    }
    this.phaseDone(ph);
  }

  /**
   * The contiguous replies waiting from `first` on, up to CATCHUP_APPLY_MAX_TXNS txns; only `first` for the audit
   * ledger, whose replies carry multi-signatures checked reply by reply.
   */
  private waitingRun(ph: Phase, first: Reply): [Reply, ...Reply[]] {
    const run: [Reply, ...Reply[]] = [first];
    if (ph.ledgerId === AUDIT) return run;
    let n = first.txns.length;
    for (let r = ph.replies.get(first.last + 1); r !== undefined && n + r.txns.length <= CATCHUP_APPLY_MAX_TXNS; r = ph.replies.get(r.last + 1)) {
      run.push(r);
      n += r.txns.length;
    }
    return run;
  }

  /**
   * Whether a run (waitingRun) is to be applied now: it reaches the target, it ends where a range asked of a seeder
   * ends (the last piece of that CATCHUP_REQ came), or the reply after it is waiting and does not fit in it.
   */
  private runWhole(ph: Phase, run: readonly [Reply, ...Reply[]]): boolean {
    const last = (run.at(-1) ?? run[0]).last;
    if (last >= ph.targetSize || ph.replies.has(last + 1)) return true;
    for (const ranges of ph.asked.values()) for (const [, end] of ranges) if (end === last) return true;
    return false;
  }

  /**
   * Applies contiguous replies as one chunk: their txns in order, checked against the target with the last one's
   * consistency proof (the root after the last txn is the root of all of them), in one atomic write. False, with
   * nothing applied and the replies kept, when the chunk does not verify or apply.
   */
  private applyRun(ph: Phase, run: readonly [Reply, ...Reply[]]): boolean {
    const ex = this.ctx.modules.executor;
    const last = run.at(-1) ?? run[0];
    const completes = last.last >= ph.targetSize;
    const sigs = this.multiSigs.check([], false, (lid) => this.doneLedgers.has(lid) || (completes && lid === ph.ledgerId));
    const txns: unknown[] = [];
    for (const r of run) for (const t of r.txns) txns.push(t);
    const applied = ex.appendCaughtUp(ph.ledgerId, txns, last.consProof, ph.targetSize, ph.targetRoot, sigs.valid);
    sigs.settle(applied);
    if (applied) for (const r of run) ph.replies.delete(r.last - r.txns.length + 1);
    return applied;
  }

  private phaseDone(ph: Phase): void {
    this.ctx.modules.logger?.info({ ledgerId: ph.ledgerId, size: ph.targetSize }, 'catch-up: ledger caught up');
    this.phase = undefined;
    this.doneLedgers.add(ph.ledgerId);
    if (ph.ledgerId === AUDIT) this.auditDone(ph.seeders);
    else this.nextLedger(ph.seeders);
  }

  private auditDone(seeders: string[] = []): void {
    // then the plugin ledgers, in the order the node lists them
    this.pendingLedgers = [...LEDGER_ORDER, ...(this.ctx.opts.pluginLedgers ?? [])];
    this.nextLedger(seeders);
  }

  private nextLedger(seeders: string[]): void {
    const ex = this.ctx.modules.executor;
    const targets = ex.ledgerTargets();
    for (let lid = this.pendingLedgers.shift(); lid !== undefined; lid = this.pendingLedgers.shift()) {
      const t = targets.get(lid);
      if (t === undefined || t.size <= ex.ledgerStatus(lid).size) {
        this.doneLedgers.add(lid);
        continue;
      }
      this.startPhase(lid, t.size, t.root, seeders);
      return;
    }
    this.finish();
  }

  /** The multi-signatures still waiting when every ledger is caught up: checked, stored in one write. */
  private storeWaitingMultiSigs(): void {
    const ctx = this.ctx;
    const ex = ctx.modules.executor;
    const sigs = this.multiSigs.check([], true, () => true);
    const store = sigs.valid.length > 0;
    if (store) ex.storeMultiSignatures(sigs.valid);
    sigs.settle(store);
    this.multiSigs.reset();
    const dropped = Object.fromEntries(this.multiSigs.dropped);
    if (this.multiSigs.stored > 0 || this.multiSigs.dropped.size > 0)
      ctx.modules.logger?.info({ stored: this.multiSigs.stored, dropped }, 'catch-up multi-signatures');
  }

  private finish(): void {
    this.storeWaitingMultiSigs();
    this.active = false;
    this.phase = undefined;
    this.statuses.clear();
    this.proofs.clear();
    this.hooks.onDone();
  }

  /** Periodic: re-ask statuses or missing ranges after their timeouts. */
  onTick(): void {
    if (!this.active) return;
    const ctx = this.ctx;
    const now = ctx.now();
    const ph = this.phase;
    if (ph === undefined) {
      if (now - this.roundStartedAt >= 2000) this.beginStatusRound();
      return;
    }
    if (now - ph.progressAt >= CATCHUP_SILENCE_MS || now - ph.requestedAt >= CATCHUP_REASK_MS) {
      // what is waiting goes in first, whole or not (a piece lost on the way holds back the rest of its range); a
      // reply that does not apply has the missing ranges asked again already
      const asked = ph.requestedAt;
      this.applyReplies(ph, true);
      if (this.phase !== ph || ph.requestedAt !== asked) return;
      // rotate the ranges over the seeders so that a silent peer is not asked again for the same range
      this.rounds++;
      this.requestMissing(ph);
    }
  }
}

/**
 * Room kept in a CATCHUP_REP beyond its envelope with the proof from the reply's first txn when pieces
 * are cut: a piece's own proof may hold a few more hashes (8 of at most 46 bytes), and the map header.
 */
const CATCHUP_REP_SLACK_BYTES = 8 * 47 + 4;

/**
 * Greedy cut of entries of `sizes` bytes into pieces of at most `room` bytes: the end index of each
 * piece, in order; a piece is closed only when its next entry does not fit, and an entry larger than
 * `room` goes alone.
 */
export function cutPieces(sizes: readonly number[], room: number): number[] {
  const ends: number[] = [];
  let s = 0;
  while (s < sizes.length) {
    let e = s + 1;
    let bytes = sizes[s];
    while (e < sizes.length && bytes + sizes[e] <= room) bytes += sizes[e++];
    ends.push(e);
    s = e;
  }
  return ends;
}

/**
 * msgpack bytes of a value, counted without encoding it (the transport encodes the reply once); 0 when it cannot be
 * encoded: the transport reports that.
 */
function msgpackSize(v: unknown): number {
  try {
    return encodedMsgpackSize(v);
  } catch {
    return 0;
  }
}

/** msgpack bytes of one entry `"<seqNo>": txn` of a CATCHUP_REP's txns map. */
export function catchupEntrySize(seqNo: number, txn: unknown): number {
  return 1 + String(seqNo).length + msgpackSize(txn);
}

function mapHeaderSize(n: number): number {
  return n < 16 ? 1 : n < 65536 ? 3 : 5;
}

/**
 * The encoded size of `rep` from the sizes of its entries (`catchupEntrySize`, in any order): the
 * reply without its txns is encoded, and the entries' bytes and the map header added (a map's bytes
 * are its header and its keys' and values' bytes, whatever order they are sorted in).
 */
export function catchupRepSize(rep: CatchupRep, entrySizes: readonly number[]): number {
  let entries = 0;
  for (const n of entrySizes) entries += n;
  return encodedSize({ ...rep, txns: {} }) - mapHeaderSize(0) + mapHeaderSize(entrySizes.length) + entries;
}
