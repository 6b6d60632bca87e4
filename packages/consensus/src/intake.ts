// Request intake (consensus.md §2): client requests and PROPAGATEs, finalisation at n-f matching
// PROPAGATEs (the spec's f+1 raised: see admission control below), per-ledger queues in finalisation
// order, dedup by payloadDigest, requests for missing PROPAGATEs, re-propagation of stuck requests
// and expiry.
import { POOL_OVERLOADED_REASON, fnv1a32 } from '@quire/common';
import type { CoreContext } from './context.js';
import { Suspicion } from './context.js';
import type { RequestInfo } from './interfaces.js';
import type { ConsensusOptions } from './options.js';
import type { ClientRequestBody, Propagate } from './messages.js';

export const RequestStatus = {
  /** seen, fewer than n-f PROPAGATEs (admission control, below) */
  PENDING: 0,
  /** finalised, waiting in its ledger queue */
  QUEUED: 1,
  /** in an applied, not yet ordered batch */
  IN_BATCH: 2,
  /**
   * finalised, out of its queue: a copy of a payload (another signature or envelope) that is in a batch, or earlier in
   * the batch being cut (consensus.md §3.3). It waits for that batch: once the payload is committed it is dropped and
   * its clients are answered from the ledger (`dropPending`); if the payload is not committed (the batch reverted, or
   * the request discarded) it is queued again (`requeueCopies`).
   */
  COPY_WAITING: 3,
} as const;
export type RequestStatus = (typeof RequestStatus)[keyof typeof RequestStatus];

export interface RequestEntry {
  request: ClientRequestBody;
  info: RequestInfo;
  /** `requestIdentity` of the request, when it has one */
  identity: string | undefined;
  votes: Set<string>;
  sentOwn: boolean;
  finalised: boolean;
  status: RequestStatus;
  connIds: Set<string>;
  receivedAt: number;
  finalisedAt: number;
  lastPropagatedAt: number;
}

/**
 * Identity of a request for recognising PROPAGATEs of a request this node already holds: author,
 * reqId and the signature(s), undefined when those fields are not of the expected types.
 *
 * Every signed field is bound by the signature(s) (formats.md 3.2) and the identity carries all of
 * them, so a body that verifies and shares the identity of a verified request this node holds is
 * that request (short of a SHA-512/ed25519 break). A body that shares the identity but differs is
 * invalid, so its sender is faulty; counting it as that sender's PROPAGATE of the held request
 * gives it nothing it could not do by sending the genuine body it evidently saw. The held body is
 * always the one this node verified itself; a PROPAGATE recognised this way never replaces it.
 */
export function requestIdentity(request: ClientRequestBody): string | undefined {
  const reqId = request.reqId;
  if (typeof reqId !== 'number' && typeof reqId !== 'bigint') return undefined;
  const identifier = request.identifier;
  if (identifier !== undefined && identifier !== null && typeof identifier !== 'string') return undefined;
  const signature = request.signature;
  const signatures = request.signatures;
  let sigs: string;
  if (typeof signature === 'string' && (signatures === undefined || signatures === null)) sigs = `s:${signature}`;
  else if ((signature === undefined || signature === null) && typeof signatures === 'object' && signatures !== null && !Array.isArray(signatures)) {
    const parts: string[] = [];
    for (const [did, sig] of Object.entries(signatures as Record<string, unknown>)) {
      if (typeof sig !== 'string') return undefined;
      parts.push(`${did}=${sig}`);
    }
    sigs = `m:${parts.sort().join(';')}`;
  } else return undefined;
  return `${identifier ?? ''}|${String(reqId)}|${sigs}`;
}

/**
 * The key of a request in the refusal memory: its `requestIdentity`, or its digest for a request without a
 * well-formed identity (the node's request checks refuse such a request; without the digest, its refusal was not
 * remembered and its PROPAGATEs were stored past the admission limit)
 */
function refusalKey(identity: string | undefined, digest: string): string {
  return identity ?? `d:${digest}`;
}

/** nack code when admission control refuses a request */
export const NACK_OVERLOADED = 'POOL_OVERLOADED';

/** most refusals remembered (oldest forgotten first): bounds the memory a flood of refused writes takes */
export const MAX_REMEMBERED_REFUSALS = 200_000;
/**
 * most characters of the refusals' keys remembered (oldest forgotten first): a key is made by the client (identifier,
 * reqId and signatures) and remembered at the door before the signature is checked, 130-odd characters for a signed
 * write; this bounds the memory of refused writes with long signatures (at 200,000 of 100 KB, 20 GB)
 */
const MAX_REMEMBERED_REFUSAL_CHARS = 64 * 1024 * 1024;
/** the saved refusal mark runs this much past the refusals made so far, so that it is written at most this often */
const MARK_STEP_S = 10;
/** window over which the ordering rate behind the admission limit is measured */
const RATE_WINDOW_MS = 10_000;
/** the admission limit never falls below this many pending requests (nor below two full batches: `updateLimit`) */
const MIN_ADMISSION_LIMIT = 1000;
/**
 * Share of the admission limit over which a request's own limit is graded by its place (`admissionPlace`): a request
 * at place 0 is admitted up to the limit, one at place 1 up to the limit less this share of it (see `limitFor`).
 */
export const GRADED_ADMISSION_SHARE = 0.45;

/**
 * A request's place in [0, 1) for graded admission: a hash of its `requestIdentity` (FNV-1a, then murmur3's
 * finaliser), the same on every node. Not a secret: a client that grinds its signature for a low place gets ahead of
 * others in the graded band only, which gives it nothing a flood of writes would not (see `limitFor`).
 */
export function admissionPlace(identity: string): number {
  let h = fnv1a32(identity);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return (h >>> 0) / 2 ** 32;
}

/**
 * How long a node remembers a refusal (and a write it dropped after propagating it, with its clients), ms: twice
 * PROPAGATES_PHASE_REQ_TIMEOUT, in whole seconds (see `RequestIntake.pruneRefusals`).
 */
export function refusalMemoryMs(o: Pick<ConsensusOptions, 'propagatesPhaseReqTimeoutMs'>): number {
  return Math.ceil((2 * o.propagatesPhaseReqTimeoutMs) / 1000) * 1000;
}

/**
 * How long, at most, after a node dropped a write it took in unordered the write may still be ordered there with its
 * clients answered, ms: it is remembered with its clients as long as a refusal is (`refusalMemoryMs`), forgotten at
 * the next expiry check after that, and n-f PROPAGATEs in that time bring it back.
 */
export function droppedRequestMemoryMs(o: Pick<ConsensusOptions, 'propagatesPhaseReqTimeoutMs' | 'outdatedReqsCheckIntervalMs' | 'tickMs'>): number {
  return refusalMemoryMs(o) + o.outdatedReqsCheckIntervalMs + o.tickMs;
}

/** a node that refused or dropped requests reports what it took in, finalised and dropped at most this often */
const ADMISSION_REPORT_MS = 10_000;

/**
 * What a node's intake did with requests since it started (diagnostics): taken in from a client's copy or from a
 * peer's PROPAGATE, finalised (n-f PROPAGATEs), dropped before they were finalised (the stale sweep, the expiry:
 * taken in by fewer than n-f nodes), refused (admission control). A request taken in and never finalised cost this
 * node its signature check, its PROPAGATE and its place in the queue for nothing.
 */
export interface AdmissionCounts {
  takenInFromClients: number;
  takenInFromPeers: number;
  finalised: number;
  droppedUnfinalised: number;
  refused: number;
}

/**
 * Admission control, decided once per node and request (consensus.md §2 step 5 as Quire does it).
 *
 * A node refuses a write with REQNACK "pool overloaded" when it holds its admission limit of pending
 * requests (`updateLimit`), graded by the request's place so that the nodes refuse the same requests first
 * (`limitFor`), and a client takes f+1 such refusals as the pool's answer. For that answer to hold, a
 * refused request must never be ordered: (1) the refusal is remembered (by `requestIdentity`, for
 * twice PROPAGATES_PHASE_REQ_TIMEOUT) and the node neither stores, counts nor propagates the request
 * when its PROPAGATEs arrive, nor accepts it from the client later; a node full when the first
 * PROPAGATE of a request arrives refuses it the same way (the spec skips admission for PROPAGATEs,
 * which let a refused write be ordered through the nodes that took it in); (2) a request is
 * finalised only with n-f PROPAGATEs (the spec's f+1), so that f+1 honest refusals leave at most
 * n-f-1 nodes that took it in, too few to finalise it. The primary proposes finalised requests
 * only; a backup still fetches and orders any request a PRE-PREPARE names (it needs the body, not
 * the vote). Conversely a request that n-f nodes took in is finalised and ordered, and every node
 * that took it in answers its client.
 *
 * The refusals are kept in memory only, so (3) a node restarted while it remembered refusals may have refused a
 * request that the nodes which took it in still hold and propagate again. Before a refusal is answered, the time until
 * which it is remembered is saved (`refusalMark`, a number, written at most once per MARK_STEP_S); a node that starts
 * before that time takes in from PROPAGATEs alone, until then, only what n-f other validators took in (at most f
 * refusals, its own among them) or a PRE-PREPARE names. The client's own copy is admitted as usual (a client told
 * "refused" does not send the same request again). A node that refused nothing then (no overload) starts as before,
 * so a pool whose f+1 nodes restart still orders what the others took in meanwhile. A restarted primary that forgot
 * its refusals had taken in, from the backups' re-propagations, writes that it and another node had refused, and gave
 * them the n-f PROPAGATEs that ordered them.
 */

export class RequestIntake {
  readonly entries = new Map<string, RequestEntry>();
  /** per-ledger queues of finalised digests, finalisation order */
  private readonly queues = new Map<number, string[]>();
  /** digests named by a PRE-PREPARE but never seen: digest -> first time needed, last asked */
  private readonly missing = new Map<string, { since: number; askedAt: number; attempts: number }>();
  /** payload digests of requests in applied, unordered batches */
  readonly payloadsInBatches = new Set<string>();
  /** bodies of ordered requests, kept for lagging peers until the next stable checkpoint */
  private readonly orderedBodies = new Map<string, { request: ClientRequestBody; ppSeqNo: number; identity: string | undefined }>();
  /**
   * bodies of the requests of the PRE-PREPAREs restored from the vote journal after a restart:
   * taken when a PRE-PREPARE naming them is applied, served to peers that ask, dropped at the next
   * stable checkpoint past their batch (bounded by the batches in flight at the crash)
   */
  private readonly restoredBodies = new Map<string, { request: ClientRequestBody; ppSeqNo: number }>();
  /**
   * requestIdentity -> digest of the entries and ordered bodies held here: a PROPAGATE of a request
   * this node holds is recognised without parsing, digesting and validating its body again (each
   * request reaches a node once from the client and n-1 times as a PROPAGATE). Stale pairs are
   * skipped at lookup and pruned when the map outgrows what it indexes.
   */
  private readonly byIdentity = new Map<string, string>();
  private lastExpiryCheck = 0;
  private lastStaleSweep = 0;
  /** re-propagations left in the current MESSAGE_REQUEST_RETRY window (see onTick) */
  private repropagateBudget = 0;
  private repropagateWindowAt = Number.NEGATIVE_INFINITY;
  /** requestIdentity -> time of this node's last refusal (admission control), oldest first */
  private readonly refused = new Map<string, number>();
  /** characters of the keys of `refused` (at most MAX_REMEMBERED_REFUSAL_CHARS once pruned) */
  private refusedChars = 0;
  /**
   * requestIdentity -> validators whose PROPAGATE of a request refused here arrived, and the client
   * connections of one this node took in and dropped (see onTick). Once n-f validators took it in,
   * the pool has decided and this node stores and orders it too (a primary that refused a request
   * the others finalised would otherwise never propose it, and the backups would vote it out for the
   * requests it leaves waiting). Bounded with `refused`, at most n names each.
   */
  private readonly refusedVotes = new Map<string, { voters: Set<string>; connIds?: Set<string> }>();
  /**
   * requestIdentity -> when this node ordered it, oldest first, kept as long as refusals are (and at most as many):
   * the door admits a late client copy of an ordered request after its body is collected at a stable checkpoint, so
   * that it is answered from the ledger instead of refused as overloaded
   */
  private readonly orderedIdentities = new Map<string, number>();
  /** (time, requests ordered so far), one sample a second over the last RATE_WINDOW_MS */
  private readonly orderedSamples: { at: number; total: number }[] = [];
  /** the admission limit now: what the pool orders in `maxQueueWaitMs`, raised for a young backlog (`updateLimit`) */
  private limit: number;
  /**
   * Until when (the core's clock) this node, restarted while it remembered refusals, does not take in requests from
   * PROPAGATEs alone (see (3) above); -Infinity when it did not, or once that time has passed.
   */
  private forgetfulUntil = Number.NEGATIVE_INFINITY;
  /** the refusal mark saved last (UTC seconds): refusals until then are covered */
  private markedUntil: number;
  /**
   * refusalKey of a checked request this node does not hold -> validators whose PROPAGATE of it arrived while it is
   * forgetful (oldest first, at most MAX_REMEMBERED_REFUSALS, all dropped when that time ends): taken in at n-f, or with the
   * client's copy (which joins these votes)
   */
  private readonly unconfirmed = new Map<string, Set<string>>();
  /** since start (see AdmissionCounts) */
  private readonly counts: AdmissionCounts = { takenInFromClients: 0, takenInFromPeers: 0, finalised: 0, droppedUnfinalised: 0, refused: 0 };
  /** the counts at the last report, and when it was made */
  private reported: { at: number; counts: AdmissionCounts } = { at: 0, counts: { ...this.counts } };

  constructor(private readonly ctx: CoreContext) {
    this.limit = ctx.opts.maxRequestQueueSize;
    // refusals made before this start that would still be remembered had the node not stopped: they are lost
    let until: number | undefined;
    try {
      until = ctx.modules.refusalMark?.load();
    } catch (e) {
      ctx.modules.logger?.warn({ err: e }, 'the refusal mark cannot be read: taken as refusals remembered for their whole time');
      until = ctx.modules.clock.utcSeconds() + this.refusalTtlS() + MARK_STEP_S;
    }
    const utc = ctx.modules.clock.utcSeconds();
    // a mark runs at most refusalTtlS() + 1 + MARK_STEP_S past the time it was saved (see markRefusal), which was before
    // now: one further ahead (a wall clock set ahead at a refusal and corrected since, an edited file) is taken as that
    // much from now, which still covers every refusal made before this start
    const furthest = utc + this.refusalTtlS() + 1 + MARK_STEP_S;
    if (until !== undefined && until > furthest) until = furthest;
    this.markedUntil = until ?? 0;
    if (until !== undefined && until > utc) this.forgetfulUntil = ctx.now() + (until - utc) * 1000;
  }

  /** how long a refusal is remembered, in whole seconds (see `pruneRefusals`) */
  private refusalTtlS(): number {
    return refusalMemoryMs(this.ctx.opts) / 1000;
  }

  /**
   * Saves, before a refusal is answered, that refusals may be remembered until its time is over (see (3) above): at
   * most once per MARK_STEP_S, the mark running that much ahead. A mark that cannot be saved is reported; the refusal
   * stands (the node is no less safe than without a store).
   */
  private markRefusal(): void {
    const store = this.ctx.modules.refusalMark;
    if (store === undefined) return;
    const need = this.ctx.modules.clock.utcSeconds() + this.refusalTtlS() + 1;
    if (this.markedUntil >= need) return;
    this.markedUntil = need + MARK_STEP_S;
    try {
      store.save(this.markedUntil);
    } catch (e) {
      this.ctx.modules.logger?.warn({ err: e }, 'the refusal mark cannot be saved');
    }
  }

  /** Whether this node may have refused, before its restart, requests it no longer remembers (see (3) above). */
  isForgetful(): boolean {
    if (this.forgetfulUntil === Number.NEGATIVE_INFINITY) return false;
    if (this.ctx.now() < this.forgetfulUntil) return true;
    this.forgetfulUntil = Number.NEGATIVE_INFINITY;
    this.unconfirmed.clear();
    return false;
  }

  /** whether admission control refuses some new requests now (those whose place is highest first: `limitFor`) */
  get full(): boolean {
    return this.entries.size >= this.limitFor(undefined, 1);
  }

  /**
   * The most requests this node holds when it takes in the request of `identity` (graded admission): the admission
   * limit less up to GRADED_ADMISSION_SHARE of it, by the request's place (`admissionPlace`; `place` when given).
   * Under overload each node fills its free places with the requests it reads first, and the nodes read a client's
   * copies at different times (their event loops run late by hundreds of ms): with one limit for every request, the
   * nodes took in different requests, many by fewer than the n-f that finalise one, which held the places until they
   * were dropped while the requests that could be ordered were refused. With the limit graded by a place every node
   * computes alike, nodes holding about as many requests take in about the same ones: as a node fills, it refuses
   * the requests of the highest places first, and so do the others. A request without an identity has the full limit.
   */
  private limitFor(identity: string | undefined, place = identity === undefined ? 0 : admissionPlace(identity)): number {
    const band = Math.floor(this.limit * GRADED_ADMISSION_SHARE);
    return this.limit - Math.floor(band * place);
  }

  /** whether admission control refuses the request of `identity` now (see `limitFor`) */
  private fullFor(identity: string | undefined): boolean {
    return this.entries.size >= this.limitFor(identity);
  }

  /** the number of pending requests beyond which new writes are refused now */
  get admissionLimit(): number {
    return this.limit;
  }

  /**
   * The admission limit follows the pool's ordering rate: a node holds at most what the pool orders
   * in `maxQueueWaitMs` at the rate of the last 10 s, so that a write taken in under overload is
   * answered within seconds instead of waiting behind a queue sized for a faster machine (and never
   * long enough for the monitors to blame an honest, busy primary). Floor: two full batches, so the
   * primary cuts a full batch while another is ordered, and at least 1,000; ceiling: `maxRequestQueueSize`.
   * Every node sees the same ordered stream, so their limits agree.
   *
   * While the oldest finalised request this node holds has waited less than `maxQueueWaitMs`, the limit is at least the
   * batches the primary may have in flight (max3pcBatchSize x max3pcBatchesInFlight), so that an idle pool, or one
   * whose rate of the last 10 s is still low, takes a burst in whole (the closed loop's 1,024 writes at its start).
   * That was the floor in every case, and it bound under overload, where the nodes' CPU goes partly to refusing and
   * the pool orders less than at its peak: at 1,500 and 2,500 writes/s offered the pool ordered 234 and 209/s, each
   * node held 2,000 writes and an admitted write waited about 2,000 / rate (p50 8.7 s from the send at 1,500/s).
   * Once the oldest finalised write held has waited `maxQueueWaitMs` (the pool does not order what it holds in that
   * time), the limit is the rate's, at least 1,000: the node refuses until what it holds is ordered within about that
   * time. A request taken in by fewer than n-f nodes is not counted (it is not waiting for the pool, and stays until the
   * stale sweep or its expiry). The oldest finalised request is about the same at every node (they finalise and order
   * the same requests), so their limits still agree. Checked once a second, with the rate.
   */
  private updateLimit(now: number): void {
    const o = this.ctx.opts;
    const s = this.orderedSamples;
    const last = s[s.length - 1];
    if (last !== undefined && now - last.at < 1000) return;
    // the oldest finalised request held: one taken in by fewer than n-f nodes is not waiting for the pool
    let oldest = now;
    for (const e of this.entries.values()) if (e.finalised && e.receivedAt < oldest) oldest = e.receivedAt;
    const young = now - oldest < o.maxQueueWaitMs;
    const burst = Math.min(o.maxRequestQueueSize, o.max3pcBatchSize * o.max3pcBatchesInFlight);
    s.push({ at: now, total: this.ctx.orderedRequestsTotal });
    while (s.length > 2 && now - s[1].at >= RATE_WINDOW_MS) s.shift();
    const first = s[0];
    const rate = now > first.at ? ((this.ctx.orderedRequestsTotal - first.total) * 1000) / (now - first.at) : 0;
    const floor = Math.max(MIN_ADMISSION_LIMIT, 2 * o.max3pcBatchSize);
    const rateLimit = Math.min(o.maxRequestQueueSize, Math.max(floor, Math.ceil((rate * o.maxQueueWaitMs) / 1000)));
    this.limit = young ? Math.max(rateLimit, burst) : rateLimit;
  }

  /** how many refusals are remembered */
  get refusedCount(): number {
    return this.pruneRefusals(this.ctx.now());
  }

  /**
   * Admission at the door, before the request is parsed in full and its signature checked: false
   * when this node refuses `request` (it refused it before, or it holds no request of this identity
   * and is full); the refusal is then remembered. A request without a well-formed identity passes
   * (the full check will refuse it as malformed).
   *
   * `inProgress`: the writes the caller admitted at the door that have not reached this intake yet
   * (in verification, or queued behind other events): they count toward the limit, so that a burst
   * of client frames read in one go is not admitted whole before the first of them is stored.
   */
  admitAtDoor(request: ClientRequestBody, inProgress = 0): boolean {
    const identity = requestIdentity(request);
    if (identity === undefined) return true;
    // held or ordered here first: a request refused once and taken in later (n-f PROPAGATEs, a PRE-PREPARE naming
    // it) is still remembered as refused, and its PROPAGATE counts toward the n-f that order it
    const d = this.byIdentity.get(identity);
    if (d !== undefined && (this.entries.get(d)?.identity === identity || this.orderedBodies.get(d)?.identity === identity)) return true;
    if (this.orderedIdentities.has(identity)) return true;
    if (this.refused.has(identity)) return this.propagatedHere(identity) !== undefined;
    if (this.entries.size + Math.max(0, inProgress) < this.limitFor(identity)) return true;
    this.refuse(identity);
    return false;
  }

  /**
   * The votes of a request this node took in, propagated and then dropped (full, not finalised): its PROPAGATE
   * still counts toward the n-f that finalise the request, so the node must not tell a client it refused it (a
   * client told "refused" by f+1 nodes would see it ordered); undefined for a request refused outright.
   */
  private propagatedHere(identity: string): { voters: Set<string>; connIds?: Set<string> } | undefined {
    const held = this.refusedVotes.get(identity);
    return held !== undefined && held.voters.has(this.ctx.name) ? held : undefined;
  }

  private refuse(identity: string): void {
    this.counts.refused++;
    this.markRefusal();
    // a refusal made again moves to the end: the oldest first are the ones refused longest ago
    if (this.refused.delete(identity)) this.refusedChars -= identity.length;
    this.refused.set(identity, this.ctx.now());
    this.refusedChars += identity.length;
    if (this.refused.size > MAX_REMEMBERED_REFUSALS || this.refusedChars > MAX_REMEMBERED_REFUSAL_CHARS) this.pruneRefusals(this.ctx.now());
  }

  /**
   * Forgets refusals older than twice PROPAGATES_PHASE_REQ_TIMEOUT (and the oldest beyond the caps of count and
   * characters); returns how many are left.
   */
  private pruneRefusals(now: number): number {
    const ttl = refusalMemoryMs(this.ctx.opts);
    for (const [identity, at] of this.refused) {
      if (now - at < ttl && this.refused.size <= MAX_REMEMBERED_REFUSALS && this.refusedChars <= MAX_REMEMBERED_REFUSAL_CHARS) break;
      this.refused.delete(identity);
      this.refusedChars -= identity.length;
      this.refusedVotes.delete(identity);
    }
    for (const [identity, at] of this.orderedIdentities) {
      if (now - at < ttl && this.orderedIdentities.size <= MAX_REMEMBERED_REFUSALS) break;
      this.orderedIdentities.delete(identity);
    }
    return this.refused.size;
  }

  /** Notes `from`'s PROPAGATE of a request refused here; true once n-f validators took it in. */
  private takenInByPool(identity: string, from: string): boolean {
    if (!this.refused.has(identity) || !this.ctx.isValidator(from)) return false;
    let held = this.refusedVotes.get(identity);
    if (held === undefined) {
      held = { voters: new Set() };
      this.refusedVotes.set(identity, held);
    }
    held.voters.add(from);
    return this.strongQuorumOf(held.voters);
  }

  /** Whether `voters` hold n-f current validators (a voter removed from the pool since no longer counts). */
  private strongQuorumOf(voters: ReadonlySet<string>): boolean {
    let n = 0;
    for (const v of voters) if (this.ctx.isValidator(v)) n++;
    return n >= this.ctx.quorums.strong;
  }

  /**
   * Notes `from`'s PROPAGATE of a request a forgetful node does not hold (see (3) above); true once n-f other
   * validators took it in (at most f nodes refused it then, this one among them: no client was told "refused").
   */
  private takenInSinceRestart(identity: string, from: string): boolean {
    if (!this.ctx.isValidator(from) || from === this.ctx.name) return false;
    let voters = this.unconfirmed.get(identity);
    if (voters === undefined) {
      voters = new Set();
      this.unconfirmed.set(identity, voters);
      if (this.unconfirmed.size > MAX_REMEMBERED_REFUSALS) {
        const oldest = this.unconfirmed.keys().next().value;
        if (oldest !== undefined) this.unconfirmed.delete(oldest);
      }
    }
    voters.add(from);
    return this.strongQuorumOf(voters);
  }

  /** A request stored here takes the PROPAGATEs noted while this node did not take it in (takenInSinceRestart). */
  private adoptUnconfirmed(entry: RequestEntry): void {
    const key = refusalKey(entry.identity, entry.info.digest);
    const voters = this.unconfirmed.get(key);
    if (voters === undefined) return;
    for (const v of voters) entry.votes.add(v);
    this.unconfirmed.delete(key);
  }

  get pendingCount(): number {
    return this.entries.size;
  }

  queueLength(ledgerId: number): number {
    return this.queues.get(ledgerId)?.length ?? 0;
  }

  /**
   * When the oldest request still queued for `ledgerId` was queued (finalised), undefined for an
   * empty queue. Digests at the front that no longer wait (dropped, batched) are removed on the way.
   */
  oldestQueuedAt(ledgerId: number): number | undefined {
    const q = this.queues.get(ledgerId);
    if (q === undefined) return undefined;
    while (q.length > 0) {
      const e = this.entries.get(q[0]);
      if (e !== undefined && e.status === RequestStatus.QUEUED) return e.finalisedAt;
      q.shift();
    }
    return undefined;
  }

  hasQueued(): boolean {
    for (const q of this.queues.values()) if (q.length > 0) return true;
    return false;
  }

  /** Client write request that passed the node's envelope checks (consensus.md §2 steps 1-7). */
  onClientRequest(connId: string, request: ClientRequestBody): void {
    const check = this.ctx.modules.requests.analyze(request);
    if (!check.ok) {
      const identifier = typeof request.identifier === 'string' ? request.identifier : null;
      const reqId = typeof request.reqId === 'number' || typeof request.reqId === 'bigint' ? request.reqId : 0;
      this.ctx.emit({ kind: 'clientNack', connId, identifier, reqId, code: check.code, reason: check.reason });
      return;
    }
    const info = check.info;
    if (this.ctx.modules.executor.isPayloadCommitted(info.payloadDigest)) {
      this.ctx.emit({ kind: 'replyFromLedger', connId, payloadDigest: info.payloadDigest, digest: info.digest });
      return;
    }
    const known = this.entries.get(info.digest);
    if (known !== undefined) {
      known.connIds.add(connId);
      this.ctx.emit({ kind: 'clientAck', connId, identifier: info.identifier, reqId: info.reqId });
      return;
    }
    const identity = requestIdentity(request);
    const key = refusalKey(identity, info.digest);
    const dropped = this.refused.has(key) ? this.propagatedHere(key) : undefined;
    if (dropped !== undefined) {
      // its PROPAGATE stands: acknowledged, and answered if the pool orders it (the client joins the votes kept)
      (dropped.connIds ??= new Set()).add(connId);
      this.ctx.emit({ kind: 'clientAck', connId, identifier: info.identifier, reqId: info.reqId });
      return;
    }
    if (this.refused.has(key) || this.fullFor(identity)) {
      this.refuse(key);
      this.ctx.emit({ kind: 'clientNack', connId, identifier: info.identifier, reqId: info.reqId, code: NACK_OVERLOADED, reason: POOL_OVERLOADED_REASON });
      return;
    }
    const entry = this.store(request, info, identity);
    this.counts.takenInFromClients++;
    this.adoptUnconfirmed(entry);
    entry.connIds.add(connId);
    this.ctx.emit({ kind: 'clientAck', connId, identifier: info.identifier, reqId: info.reqId });
    this.propagateOwn(entry);
  }

  /** PROPAGATE from validator `from` (or a MESSAGE_RESPONSE carrying one). */
  onPropagate(from: string, msg: Propagate): void {
    const identity = requestIdentity(msg.request);
    let poolTookIn = false;
    if (identity !== undefined) {
      const d = this.byIdentity.get(identity);
      if (d !== undefined) {
        const held = this.entries.get(d);
        if (held !== undefined && held.identity === identity) {
          this.countPropagate(held, from);
          return;
        }
        // a late copy of an ordered request
        if (this.orderedBodies.get(d)?.identity === identity) return;
      }
      // refused here: not stored, counted nor propagated, unless a PRE-PREPARE needs its body or
      // n-f validators took it in
      if (this.refused.has(identity)) {
        poolTookIn = this.takenInByPool(identity, from);
        if (!poolTookIn && this.missing.size === 0) return;
      }
    }
    const check = this.ctx.modules.requests.analyze(msg.request);
    if (!check.ok) {
      this.ctx.suspect(from, Suspicion.INVALID_PROPAGATED_REQUEST);
      return;
    }
    const info = check.info;
    let entry = this.entries.get(info.digest);
    if (entry === undefined) {
      // late copies of ordered requests (committed or rejected) must not queue them again
      if (this.orderedBodies.has(info.digest) || this.ctx.modules.executor.isPayloadCommitted(info.payloadDigest)) return;
      const key = refusalKey(identity, info.digest);
      // a request without an identity is recognised by its digest only now (see refusalKey); a restarted node notes
      // the PROPAGATEs of a request it does not hold (it may have refused it) once the request is checked, so that a
      // peer's forged or malformed PROPAGATEs are counted against it and never fill `unconfirmed`
      if (identity === undefined && this.refused.has(key)) poolTookIn = this.takenInByPool(key, from);
      else if (!this.refused.has(key) && this.isForgetful()) poolTookIn = this.takenInSinceRestart(key, from);
      // admission, as for a client's copy, unless a PRE-PREPARE names the request
      if (!poolTookIn && !this.missing.has(info.digest) && (this.refused.has(key) || this.fullFor(identity))) {
        this.refuse(key);
        this.takenInByPool(key, from);
        return;
      }
      // a restarted node: its vote was noted above (takenInSinceRestart)
      if (!poolTookIn && !this.missing.has(info.digest) && this.unconfirmed.has(key)) return;
      entry = this.store(msg.request, info, identity);
      this.counts.takenInFromPeers++;
      this.adoptUnconfirmed(entry);
      const held = this.refusedVotes.get(key);
      if (held !== undefined) {
        for (const v of held.voters) entry.votes.add(v);
        // the client this node acknowledged before dropping it is answered when it is ordered
        for (const c of held.connIds ?? []) entry.connIds.add(c);
        this.refusedVotes.delete(key);
      }
    }
    this.countPropagate(entry, from);
  }

  private countPropagate(entry: RequestEntry, from: string): void {
    entry.votes.add(from);
    this.missing.delete(entry.info.digest);
    if (!entry.sentOwn) this.propagateOwn(entry);
    else this.checkFinalised(entry);
  }

  private store(request: ClientRequestBody, info: RequestInfo, identity = requestIdentity(request)): RequestEntry {
    const now = this.ctx.now();
    const entry: RequestEntry = {
      request,
      info,
      identity,
      votes: new Set(),
      sentOwn: false,
      finalised: false,
      status: RequestStatus.PENDING,
      connIds: new Set(),
      receivedAt: now,
      finalisedAt: 0,
      lastPropagatedAt: 0,
    };
    this.entries.set(info.digest, entry);
    if (identity !== undefined) {
      if (this.byIdentity.size >= 2 * (this.entries.size + this.orderedBodies.size) + 4096) this.pruneIdentities();
      this.byIdentity.set(identity, info.digest);
    }
    return entry;
  }

  private pruneIdentities(): void {
    for (const [identity, d] of this.byIdentity) {
      if (this.entries.get(d)?.identity !== identity && this.orderedBodies.get(d)?.identity !== identity) this.byIdentity.delete(identity);
    }
  }

  private propagateOwn(entry: RequestEntry): void {
    entry.sentOwn = true;
    entry.lastPropagatedAt = this.ctx.now();
    entry.votes.add(this.ctx.name);
    this.ctx.broadcast({ op: 'PROPAGATE', request: entry.request, senderClient: null });
    this.checkFinalised(entry);
  }

  private checkFinalised(entry: RequestEntry): void {
    // n-f, not the spec's f+1: see admission control above
    if (entry.finalised || !this.strongQuorumOf(entry.votes)) return;
    entry.finalised = true;
    entry.finalisedAt = this.ctx.now();
    this.ctx.finalisedTotal++;
    this.counts.finalised++;
    if (entry.status === RequestStatus.PENDING) {
      entry.status = RequestStatus.QUEUED;
      this.queueFor(entry.info.ledgerId).push(entry.info.digest);
    }
  }

  private queueFor(ledgerId: number): string[] {
    let q = this.queues.get(ledgerId);
    if (q === undefined) {
      q = [];
      this.queues.set(ledgerId, q);
    }
    return q;
  }

  /**
   * Cuts up to `max` requests from the front of a ledger's queue for a new batch, dropping those
   * whose payload is committed, in an applied batch or earlier in this batch (consensus.md §3.3).
   */
  takeForBatch(ledgerId: number, max: number): RequestEntry[] {
    const q = this.queueFor(ledgerId);
    const taken: RequestEntry[] = [];
    const payloads = new Set<string>();
    while (taken.length < max) {
      const d = q.shift();
      if (d === undefined) break;
      const e = this.entries.get(d);
      if (e === undefined || e.status !== RequestStatus.QUEUED) continue;
      const pd = e.info.payloadDigest;
      if (this.ctx.modules.executor.isPayloadCommitted(pd)) {
        this.entries.delete(d);
        this.noteOrdered(e);
        this.answerFromLedger(e);
        continue;
      }
      if (payloads.has(pd) || this.payloadsInBatches.has(pd)) {
        // kept, out of the queue, until that batch's outcome: its clients were acknowledged and are answered then
        e.status = RequestStatus.COPY_WAITING;
        continue;
      }
      payloads.add(pd);
      taken.push(e);
    }
    return taken;
  }

  /**
   * Marks the requests of an applied batch (own or accepted PRE-PREPARE). Only valid ones block
   * their payload: a discarded request may be proposed again (it commits nothing).
   */
  markInBatch(digests: readonly string[], discarded: readonly number[]): void {
    const skip = new Set(discarded);
    digests.forEach((d, i) => {
      const e = this.entries.get(d);
      if (e === undefined) return;
      if (e.status === RequestStatus.QUEUED) this.removeFromQueue(e);
      e.status = RequestStatus.IN_BATCH;
      if (!skip.has(i)) this.payloadsInBatches.add(e.info.payloadDigest);
    });
  }

  private removeFromQueue(e: RequestEntry): void {
    const q = this.queues.get(e.info.ledgerId);
    if (q === undefined) return;
    const i = q.indexOf(e.info.digest);
    if (i >= 0) q.splice(i, 1);
  }

  /** Puts the requests of a reverted batch back at the front of their queue, original order. */
  requeueFront(ledgerId: number, digests: readonly string[]): void {
    const back: string[] = [];
    for (const d of digests) {
      const e = this.entries.get(d);
      if (e === undefined) continue;
      this.payloadsInBatches.delete(e.info.payloadDigest);
      if (e.finalised) {
        e.status = RequestStatus.QUEUED;
        back.push(d);
      } else {
        e.status = RequestStatus.PENDING;
      }
    }
    const q = this.queueFor(ledgerId);
    q.unshift(...back);
    this.requeueCopies();
  }

  /**
   * Queues again the copies waiting for a batch (COPY_WAITING) whose payload is neither in a batch nor committed any
   * more (the batch reverted, or the request discarded): another copy may still be ordered.
   */
  private requeueCopies(): void {
    const ex = this.ctx.modules.executor;
    for (const e of this.entries.values()) {
      if (e.status !== RequestStatus.COPY_WAITING) continue;
      const pd = e.info.payloadDigest;
      if (this.payloadsInBatches.has(pd) || ex.isPayloadCommitted(pd)) continue;
      e.status = RequestStatus.QUEUED;
      this.queueFor(e.info.ledgerId).push(e.info.digest);
    }
  }

  /** Forgets ordered requests (keeping their bodies for peers); returns their client connections. */
  markOrdered(digests: readonly string[], ppSeqNo: number): Map<string, string[]> {
    const conns = new Map<string, string[]>();
    for (const d of digests) {
      const e = this.entries.get(d);
      this.missing.delete(d);
      if (e === undefined) continue;
      this.orderedBodies.set(d, { request: e.request, ppSeqNo, identity: e.identity });
      this.noteOrdered(e);
      conns.set(d, [...e.connIds]);
      this.payloadsInBatches.delete(e.info.payloadDigest);
      if (e.status === RequestStatus.QUEUED) this.removeFromQueue(e);
      this.entries.delete(d);
    }
    return conns;
  }

  /**
   * After a batch is ordered and committed: drops the requests whose payload it committed under another signature or
   * envelope (a client that signed again, two clients sending the same payload), answering their clients from the
   * ledger, and queues again the copies that waited for a payload it did not commit (discarded).
   */
  dropCommittedPayloads(payloads: readonly string[]): void {
    const ex = this.ctx.modules.executor;
    const set = new Set(payloads.filter((pd) => ex.isPayloadCommitted(pd)));
    if (set.size > 0) this.dropPending((e) => set.has(e.info.payloadDigest), true);
    if (set.size < payloads.length) this.requeueCopies();
  }

  /**
   * Drops the requests not in an applied batch that `committed` says were ordered already. Their identities are kept
   * as ordered ones are: the door admits a late client copy, which is answered from the ledger (a node that caught up
   * past a request it had propagated refused the copy as overloaded, or for its earlier refusal, while its PROPAGATE
   * had counted toward the n-f that ordered it).
   *
   * `answer`: the clients of the dropped requests are answered from the ledger (`replyFromLedger`: the node sends it
   * once the committed txns are durable): a REPLY when the request's own digest was ordered, else the REQNACK of a
   * payload ordered with different signatures. Without it (after a catch-up) the node answers them itself.
   */
  private dropPending(committed: (e: RequestEntry) => boolean, answer: boolean): void {
    for (const [d, e] of this.entries) {
      if (e.status !== RequestStatus.IN_BATCH && committed(e)) {
        if (e.status === RequestStatus.QUEUED) this.removeFromQueue(e);
        this.entries.delete(d);
        this.noteOrdered(e);
        if (answer) this.answerFromLedger(e);
      }
    }
  }

  /** The clients of `e`, dropped because its payload is committed, are answered from the ledger. */
  private answerFromLedger(e: RequestEntry): void {
    for (const connId of e.connIds) this.ctx.emit({ kind: 'replyFromLedger', connId, payloadDigest: e.info.payloadDigest, digest: e.info.digest });
  }

  /**
   * Remembers a request dropped unordered as refused, with the votes it had (this node's own PROPAGATE among them): if
   * the PROPAGATEs were only late, n-f of them still bring it back here (the primary must hold every request the
   * others finalise, or nobody proposes it), and the door does not refuse its late client copy (`propagatedHere`).
   */
  private rememberDropped(e: RequestEntry): void {
    const key = refusalKey(e.identity, e.info.digest);
    this.refuse(key);
    this.refusedVotes.set(key, { voters: new Set(e.votes), ...(e.connIds.size > 0 ? { connIds: e.connIds } : {}) });
  }

  /** Remembers that `e`'s request is ordered (committed), for the door (see `orderedIdentities`). */
  private noteOrdered(e: RequestEntry): void {
    if (e.identity === undefined) return;
    this.orderedIdentities.set(e.identity, this.ctx.now());
    if (this.orderedIdentities.size > MAX_REMEMBERED_REFUSALS) this.pruneRefusals(this.ctx.now());
  }

  /**
   * After a catch-up: requests whose payload the ledgers now hold were ordered by the pool while this
   * node caught up. Left here they would wait for good, and the monitor would blame the primary for
   * them (vote 61 every few seconds).
   */
  dropCaughtUp(): void {
    const ex = this.ctx.modules.executor;
    // the node answers every client waiting on a caught-up payload from the ledger once the catch-up is durable
    this.dropPending((e) => ex.isPayloadCommitted(e.info.payloadDigest), false);
  }

  /** Records digests a PRE-PREPARE needs; returns true when all are known. */
  ensureKnown(digests: readonly string[]): boolean {
    let all = true;
    const now = this.ctx.now();
    for (const d of digests) {
      if (this.entries.has(d)) continue;
      // ordered before (e.g. discarded) and proposed again, or restored from the vote journal: the body is still here
      const old = this.orderedBodies.get(d) ?? this.restoredBodies.get(d);
      if (old !== undefined) {
        const check = this.ctx.modules.requests.analyze(old.request);
        if (check.ok) {
          this.orderedBodies.delete(d);
          this.restoredBodies.delete(d);
          this.store(old.request, check.info);
          continue;
        }
      }
      all = false;
      if (!this.missing.has(d)) this.missing.set(d, { since: now, askedAt: 0, attempts: 0 });
    }
    return all;
  }

  /** Periodic work: ask for missing PROPAGATEs, re-propagate stuck requests, expire old ones. */
  onTick(): void {
    const now = this.ctx.now();
    const o = this.ctx.opts;
    this.updateLimit(now);
    // ends the window of a restarted node (and drops the votes it noted meanwhile) once it is over
    this.isForgetful();
    for (const [digest, m] of this.missing) {
      if (now - m.since < o.propagateRequestDelayMs || now - m.askedAt < o.messageRequestRetryMs) continue;
      m.askedAt = now;
      m.attempts++;
      this.ctx.broadcast({ op: 'MESSAGE_REQUEST', msg_type: 'PROPAGATE', params: { digest } });
    }
    // a full node drops the requests it took in that have not been finalised after 2 x
    // MESSAGE_REQUEST_RETRY: refused by too many others (or lost with them), they hold the places of
    // requests that can be ordered. Its PROPAGATE stands: if n-f nodes did take one in, it is still
    // ordered, and this node fetches it when a PRE-PREPARE names it.
    if (this.full && now - this.lastStaleSweep >= o.messageRequestRetryMs) {
      this.lastStaleSweep = now;
      for (const [d, e] of this.entries) {
        if (!e.finalised && e.status === RequestStatus.PENDING && now - e.receivedAt >= 2 * o.messageRequestRetryMs && !this.missing.has(d)) {
          this.entries.delete(d);
          this.counts.droppedUnfinalised++;
          this.rememberDropped(e);
        }
      }
    }
    // a request finalised here but not ordered for a while may not have reached the primary:
    // propagate it again (idempotent at receivers), oldest first, at most one batch's worth per
    // MESSAGE_REQUEST_RETRY: under a backlog every queued request is "not ordered for a while", and
    // re-sending them all every few seconds would flood a loaded pool with copies it already has
    if (now - this.repropagateWindowAt >= o.messageRequestRetryMs) {
      this.repropagateWindowAt = now;
      this.repropagateBudget = o.max3pcBatchSize;
    }
    for (const e of this.entries.values()) {
      if (this.repropagateBudget <= 0) break;
      if (e.status === RequestStatus.IN_BATCH) continue;
      if (now - e.lastPropagatedAt >= o.messageRequestRetryMs * 2) {
        e.lastPropagatedAt = now;
        this.repropagateBudget--;
        this.ctx.broadcast({ op: 'PROPAGATE', request: e.request, senderClient: null });
      }
    }
    if (now - this.lastExpiryCheck >= o.outdatedReqsCheckIntervalMs) {
      this.lastExpiryCheck = now;
      for (const [d, e] of this.entries) {
        if (e.status === RequestStatus.IN_BATCH) continue;
        const expired = e.finalised ? now - e.finalisedAt > o.orderingPhaseReqTimeoutMs : now - e.receivedAt > o.propagatesPhaseReqTimeoutMs;
        if (expired) {
          if (!e.finalised) this.counts.droppedUnfinalised++;
          if (e.status === RequestStatus.QUEUED) this.removeFromQueue(e);
          this.entries.delete(d);
          // its PROPAGATE may still count toward an n-f elsewhere: remembered as the stale sweep above does
          if (e.sentOwn) this.rememberDropped(e);
        }
      }
      for (const [d, m] of this.missing) if (m.attempts >= 3 && now - m.since > o.propagatesPhaseReqTimeoutMs) this.missing.delete(d);
      this.pruneRefusals(now);
    }
    this.reportAdmission(now);
  }

  /** What this intake did with requests since it started (see AdmissionCounts). */
  admissionCounts(): AdmissionCounts {
    return { ...this.counts };
  }

  /**
   * Every ADMISSION_REPORT_MS in which this node refused or dropped requests, logs what it took in, finalised,
   * dropped and refused meanwhile, and what it holds now (pending, queued, in batches) against its admission limit.
   */
  private reportAdmission(now: number): void {
    if (now - this.reported.at < ADMISSION_REPORT_MS) return;
    const c = this.counts;
    const p = this.reported.counts;
    this.reported = { at: now, counts: { ...c } };
    if (c.refused === p.refused && c.droppedUnfinalised === p.droppedUnfinalised) return;
    let pending = 0;
    let queued = 0;
    let inBatch = 0;
    for (const e of this.entries.values()) {
      if (e.status === RequestStatus.PENDING) pending++;
      else if (e.status === RequestStatus.IN_BATCH) inBatch++;
      else queued++;
    }
    this.ctx.modules.logger?.info(
      {
        takenInFromClients: c.takenInFromClients - p.takenInFromClients,
        takenInFromPeers: c.takenInFromPeers - p.takenInFromPeers,
        finalised: c.finalised - p.finalised,
        droppedUnfinalised: c.droppedUnfinalised - p.droppedUnfinalised,
        refused: c.refused - p.refused,
        pending,
        queued,
        inBatch,
        limit: this.limit,
      },
      'admission: refusing writes (counts since the last report)',
    );
  }

  /** The own PROPAGATE for a digest (pending or ordered since the stable checkpoint), for MESSAGE_REQUEST answers. */
  ownPropagate(digest: string): Propagate | null {
    const e = this.entries.get(digest);
    if (e !== undefined && e.sentOwn) return { op: 'PROPAGATE', request: e.request, senderClient: null };
    const o = this.orderedBodies.get(digest) ?? this.restoredBodies.get(digest);
    return o === undefined ? null : { op: 'PROPAGATE', request: o.request, senderClient: null };
  }

  /** Garbage collection at a stable checkpoint. */
  collectOrderedBodies(upTo: number): void {
    for (const [d, o] of this.orderedBodies) if (o.ppSeqNo <= upTo) this.orderedBodies.delete(d);
    for (const [d, o] of this.restoredBodies) if (o.ppSeqNo <= upTo) this.restoredBodies.delete(d);
  }

  /** A body for a digest this node no longer tracks as pending (lagging node applying old batches). */
  knownBody(digest: string): ClientRequestBody | undefined {
    return this.entries.get(digest)?.request ?? this.orderedBodies.get(digest)?.request ?? this.restoredBodies.get(digest)?.request;
  }

  /**
   * The requests of a PRE-PREPARE restored from the vote journal (read from disk: each is analysed as
   * a peer's PROPAGATE is); only those the PRE-PREPARE names are kept. Returns how many were kept.
   */
  restoreBodies(reqIdr: readonly string[], requests: readonly unknown[], ppSeqNo: number): number {
    const wanted = new Set(reqIdr);
    let kept = 0;
    for (const request of requests) {
      if (typeof request !== 'object' || request === null || Array.isArray(request)) continue;
      const check = this.ctx.modules.requests.analyze(request as ClientRequestBody);
      if (!check.ok || !wanted.has(check.info.digest)) continue;
      this.restoredBodies.set(check.info.digest, { request: request as ClientRequestBody, ppSeqNo });
      kept++;
    }
    return kept;
  }

  /** finalisation time of the oldest finalised, unordered request */
  oldestFinalisedAt(): number | undefined {
    let oldest: number | undefined;
    for (const e of this.entries.values()) if (e.finalised && (oldest === undefined || e.finalisedAt < oldest)) oldest = e.finalisedAt;
    return oldest;
  }

  /** Request ages restart when a new view is accepted (monitor, consensus.md §6.6). */
  restartAges(now: number): void {
    for (const e of this.entries.values()) if (e.finalised) e.finalisedAt = now;
  }

  hasFinalisedPending(): boolean {
    for (const e of this.entries.values()) if (e.finalised) return true;
    return false;
  }

  /** A request waits longer than `ms` (it may have been ordered by peers this node did not hear). */
  hasStalePending(now: number, ms: number): boolean {
    for (const e of this.entries.values()) if (e.status !== RequestStatus.IN_BATCH && now - e.receivedAt >= ms) return true;
    return false;
  }
}
