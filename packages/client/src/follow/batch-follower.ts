/**
 * A follower of the pool's ordered-batch topic (consensus.md 9.2): a gossip-only libp2p host with the observer's own
 * ed25519 key (admitted by validators configured with that key as an observer), dialing the validators of the pool
 * ledger, subscribed to `/quire/<poolId>/ordered/1`. Each announcement is decoded and checked; a batch is accepted
 * when its multi-signature verifies with at least n - f validators, or when f+1 validators announced identical
 * batches; accepted batches are emitted per ledger in ledger order (hence ppSeqNo order). Malformed input is
 * dropped and counted, never thrown.
 */
import type { BatchCommitted, MultiSignature, ObservedBatch } from '@quire/common';
import { BoundedFifo, orderedBatchTopic } from '@quire/common';
import type { AbortOptions } from '@libp2p/interface';
import { ClientError, ClientErrorCode, abortedBy } from '../errors.js';
import { TypedEmitter } from '@quire/common';
import { silentLogger, withBindings, type ClientLogger } from '../logger.js';
import { PoolLedger } from '../pool/pool-ledger.js';
import type { NodeAddress } from '../transport/connection.js';
import { GossipTransport } from '../transport/libp2p.js';
import { MultiSignatureCache, verifyMultiSignature } from '../verify/multi-signature.js';
import {
  AnnouncementError,
  type AnnouncementProblem,
  agreementKey,
  decodeAnnouncement,
  ownMultiSignature,
  verifySender,
  verifyTxnsAgainstRoot,
} from './announcement.js';

/** An accepted batch. */
export interface FollowedBatch {
  ledgerId: number;
  ppSeqNo: number;
  viewNo: number;
  ppTime: number;
  seqNoStart: number;
  seqNoEnd: number;
  /** the committed txns seqNoStart..seqNoEnd (bound to txnRootHash), or undefined when the announcement left them out */
  txns: Record<string, unknown>[] | undefined;
  txnsOmitted: boolean;
  txnRootHash: string;
  stateRootHash: string;
  /** how it was accepted: its multi-signature verified, or f+1 validators announced it identically */
  acceptedBy: 'multi-signature' | 'f+1';
  /** the verified multi-signature (acceptedBy 'multi-signature') */
  multiSignature: MultiSignature | undefined;
  /** validators whose announcements of it were counted */
  senders: string[];
  /** the announced BATCH_COMMITTED as received (from the first counted sender) */
  msg: BatchCommitted;
}

/** A range of a ledger no accepted announcement covered within the reorder window: fetch it another way. */
export interface FollowGap {
  ledgerId: number;
  seqNoStart: number;
  seqNoEnd: number;
}

export interface BatchFollowerEvents {
  batch: (batch: FollowedBatch) => void;
  gap: (gap: FollowGap) => void;
  /** an announcement was dropped (also counted in stats()) */
  dropped: (problem: AnnouncementProblem | 'stale', sender: string | undefined) => void;
}

export interface BatchFollowerOptions {
  /** 32-byte ed25519 seed of the observer key; its verkey is what validators list in their `observers` config. */
  seed: Uint8Array;
  /** The observer's name (log lines only). */
  name: string;
  /** Local listen address of the follower's host (it never needs to be reachable). */
  host: string;
  port: number;
  /** Largest announcement accepted (MSG_LEN_LIMIT). */
  maxMessageLength: number;
  /** How long a batch after a missing one is held before the gap is reported and the batch emitted, ms. */
  reorderTimeoutMs: number;
  /** Announcements of batches not yet accepted that are remembered for the f+1 rule. */
  maxPendingAnnouncements: number;
  /** Reconnect backoff bounds towards validators, ms. */
  reconnectMinMs: number;
  reconnectMaxMs: number;
}

export const defaultBatchFollowerOptions: Omit<BatchFollowerOptions, 'seed'> = {
  name: 'observer',
  host: '127.0.0.1',
  port: 0,
  maxMessageLength: 128 * 1024,
  reorderTimeoutMs: 3_000,
  maxPendingAnnouncements: 4_096,
  reconnectMinMs: 250,
  reconnectMaxMs: 5_000,
};

/** Counters of a follower. */
export interface BatchFollowerStats {
  received: number;
  accepted: number;
  /** later announcements of a batch already accepted */
  duplicates: number;
  dropped: Record<AnnouncementProblem | 'stale', number>;
  gaps: number;
}

interface LedgerQueue {
  /** seqNoStart expected next; undefined until the first batch of the ledger is emitted */
  next: number | undefined;
  pending: FollowedBatch[];
  timer: NodeJS.Timeout | undefined;
}

interface Votes {
  senders: Map<string, ObservedBatch>;
}

export class BatchFollower extends TypedEmitter<BatchFollowerEvents> {
  readonly poolId: string;
  readonly topic: string;
  private readonly validators: Map<string, string>; // alias -> dest
  private readonly votes: BoundedFifo<string, Votes>; // by agreement key, oldest first
  private readonly accepted: BoundedFifo<string, FollowedBatch>; // by batch key, oldest first
  private readonly queues = new Map<number, LedgerQueue>();
  private readonly cache = new MultiSignatureCache();
  private readonly stats_: BatchFollowerStats = {
    received: 0,
    accepted: 0,
    duplicates: 0,
    dropped: { malformed: 0, 'unknown-sender': 0, 'bad-signature': 0, 'txns-mismatch': 0, stale: 0 },
    gaps: 0,
  };
  private closing: Promise<void> | undefined;

  private constructor(
    private readonly opts: BatchFollowerOptions,
    private readonly pool: PoolLedger,
    private readonly transport: GossipTransport,
    private readonly log: ClientLogger,
  ) {
    super((event, err) => log.warn({ event, err }, 'follower listener threw'));
    this.poolId = pool.rootBase58;
    this.topic = orderedBatchTopic(this.poolId);
    this.validators = new Map(pool.validators().map((v) => [v.alias, v.dest]));
    this.votes = new BoundedFifo(opts.maxPendingAnnouncements);
    this.accepted = new BoundedFifo(opts.maxPendingAnnouncements);
  }

  /**
   * Starts following the pool of `genesis` (a pool genesis text or a PoolLedger): dials every validator with a node
   * address and subscribes to the ordered-batch topic. Throws ClientError INVALID_GENESIS / INVALID_SEED. `signal`
   * aborted before or while it starts: its gossip host is closed and the promise rejects with ClientError ABORTED.
   */
  static async start(
    genesis: string | PoolLedger,
    options: Partial<BatchFollowerOptions> & Pick<BatchFollowerOptions, 'seed'>,
    modules: { logger?: ClientLogger } = {},
    abort: AbortOptions = {},
  ): Promise<BatchFollower> {
    if (abort.signal?.aborted === true) throw abortedBy(abort.signal);
    const opts: BatchFollowerOptions = { ...defaultBatchFollowerOptions, ...options };
    if (!(opts.seed instanceof Uint8Array) || opts.seed.length !== 32) throw new ClientError(ClientErrorCode.INVALID_SEED, { length: opts.seed?.length ?? -1 });
    if (!Number.isSafeInteger(opts.maxPendingAnnouncements) || opts.maxPendingAnnouncements < 1) {
      throw new ClientError(ClientErrorCode.INVALID_ARGUMENT, { field: 'maxPendingAnnouncements', reason: 'not a positive integer' });
    }
    const pool = typeof genesis === 'string' ? PoolLedger.fromGenesis(genesis) : genesis;
    const log = withBindings(modules.logger ?? silentLogger, { observer: opts.name });
    const validators: NodeAddress[] = [];
    for (const v of pool.validators()) {
      if (v.nodeIp !== undefined && v.nodePort !== undefined) validators.push({ alias: v.alias, dest: v.dest, host: v.nodeIp, port: v.nodePort });
    }
    // the transport exists before the follower it delivers to; it first dials on a later turn of the event loop,
    // so nothing arrives before ref.self is set
    const ref: { self?: BatchFollower } = {};
    const transport = await GossipTransport.create(
      {
        seed: opts.seed,
        host: opts.host,
        port: opts.port,
        topic: orderedBatchTopic(pool.rootBase58),
        maxMessageLength: opts.maxMessageLength,
        validators,
        reconnectMinMs: opts.reconnectMinMs,
        reconnectMaxMs: opts.reconnectMaxMs,
      },
      { deliver: (data) => ref.self?.handleAnnouncement(data), logger: log },
      abort,
    );
    ref.self = new BatchFollower(opts, pool, transport, log);
    return ref.self;
  }

  /** The follower's PeerId (derived from its seed). */
  get peerId(): string {
    return this.transport.peerId;
  }

  /** Validators with an open connection to this follower. */
  connectedValidators(): string[] {
    return this.transport.connectedPeers();
  }

  /** Validators known to be subscribed to the ordered-batch topic. */
  topicPeers(): string[] {
    return this.transport.topicPeers();
  }

  stats(): BatchFollowerStats {
    return { ...this.stats_, dropped: { ...this.stats_.dropped } };
  }

  /** Stops following; batches held for reordering are discarded. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      for (const q of this.queues.values()) if (q.timer !== undefined) clearTimeout(q.timer);
      this.queues.clear();
      await this.transport.close();
      this.removeAllListeners();
    })();
    return this.closing;
  }

  /** Handles one announcement's bytes (as the topic delivers them); never throws. */
  handleAnnouncement(data: Uint8Array): void {
    if (this.closing !== undefined) return;
    this.stats_.received++;
    let sender: string | undefined;
    try {
      if (data.length > this.opts.maxMessageLength) throw new AnnouncementError('malformed', 'too large');
      const a = decodeAnnouncement(data);
      sender = a.sender;
      const dest = this.validators.get(a.sender);
      if (dest === undefined) throw new AnnouncementError('unknown-sender', a.sender);
      verifySender(this.poolId, a, dest);
      verifyTxnsAgainstRoot(a.msg);
      this.consider(a);
    } catch (e) {
      const problem: AnnouncementProblem = e instanceof AnnouncementError ? e.problem : 'malformed';
      this.drop(problem, sender);
      if (!(e instanceof AnnouncementError)) this.log.warn({ err: e }, 'announcement check failed');
    }
  }

  private drop(problem: AnnouncementProblem | 'stale', sender: string | undefined): void {
    this.stats_.dropped[problem]++;
    this.log.debug({ problem, sender }, 'announcement dropped');
    this.emit('dropped', problem, sender);
  }

  /** A batch is identified by what its multi-signature proves: ledger, roots and time. */
  private static batchKey(msg: BatchCommitted): string {
    return `${msg.ledgerId}|${msg.txnRootHash}|${msg.stateRootHash}|${msg.ppTime}`;
  }

  private consider(a: ObservedBatch): void {
    const key = BatchFollower.batchKey(a.msg);
    const done = this.accepted.get(key);
    if (done !== undefined) {
      if (!done.senders.includes(a.sender)) done.senders.push(a.sender);
      this.stats_.duplicates++;
      return;
    }
    // 1. the batch's own multi-signature, n - f validators of the pool
    const ms = ownMultiSignature(a.msg);
    if (ms !== undefined) {
      try {
        verifyMultiSignature({ multiSignature: ms, pool: this.pool.blsKeys(), freshness: { kind: 'none' }, cache: this.cache });
        this.accept(key, a, 'multi-signature', ms, [a.sender]);
        return;
      } catch (e) {
        this.log.debug({ sender: a.sender, err: (e as { code?: string }).code ?? String(e) }, 'multi-signature of an announcement does not verify');
      }
    }
    // 2. f+1 identical announcements from different validators
    const agree = agreementKey(a.msg);
    let v = this.votes.get(agree);
    if (v === undefined) {
      v = { senders: new Map() };
      this.votes.set(agree, v);
    }
    v.senders.set(a.sender, a);
    if (v.senders.size >= this.pool.f + 1) {
      this.votes.delete(agree);
      this.accept(key, a, 'f+1', undefined, [...v.senders.keys()]);
    }
  }

  private accept(key: string, a: ObservedBatch, by: FollowedBatch['acceptedBy'], ms: MultiSignature | undefined, senders: string[]): void {
    const m = a.msg;
    const batch: FollowedBatch = {
      ledgerId: m.ledgerId,
      ppSeqNo: m.ppSeqNo,
      viewNo: m.viewNo,
      ppTime: m.ppTime,
      seqNoStart: m.seqNoStart,
      seqNoEnd: m.seqNoEnd,
      txns: m.txns,
      txnsOmitted: m.txns === undefined,
      txnRootHash: m.txnRootHash,
      stateRootHash: m.stateRootHash,
      acceptedBy: by,
      multiSignature: ms,
      senders,
      msg: m,
    };
    this.accepted.set(key, batch);
    this.stats_.accepted++;
    let q = this.queues.get(m.ledgerId);
    if (q === undefined) {
      q = { next: undefined, pending: [], timer: undefined };
      this.queues.set(m.ledgerId, q);
    }
    q.pending.push(batch);
    q.pending.sort((x, y) => x.seqNoStart - y.seqNoStart || x.ppSeqNo - y.ppSeqNo);
    this.flush(m.ledgerId, q);
  }

  /** Emits the batches that continue the ledger; holds the rest until the gap fills or the reorder window ends. */
  private flush(ledgerId: number, q: LedgerQueue): void {
    while (q.pending.length > 0) {
      const b = q.pending[0];
      if (q.next !== undefined && b.seqNoStart < q.next) {
        q.pending.shift();
        this.drop('stale', b.senders[0]);
        continue;
      }
      if (q.next !== undefined && b.seqNoStart > q.next) {
        q.timer ??= setTimeout(() => {
          q.timer = undefined;
          const head = q.pending[0];
          if (head === undefined || q.next === undefined || head.seqNoStart <= q.next) return this.flush(ledgerId, q);
          this.stats_.gaps++;
          this.emit('gap', { ledgerId, seqNoStart: q.next, seqNoEnd: head.seqNoStart - 1 });
          q.next = head.seqNoStart;
          this.flush(ledgerId, q);
        }, this.opts.reorderTimeoutMs);
        return;
      }
      q.pending.shift();
      q.next = b.seqNoEnd + 1;
      if (q.timer !== undefined) {
        clearTimeout(q.timer);
        q.timer = undefined;
      }
      this.emit('batch', b);
    }
  }
}
