// What the simulator needs from the world around each simulated core (consensus.md §12.2): a pool
// (one per run) that builds each node's replica — its executor, request analyzer and BLS crypto
// over its own storage, with crash and restart — and the client workload that signs the requests
// the run submits. The consensus package ships a fast in-memory stand-in (standin-backend.ts);
// the node package composes the real executor and storage (its src/sim/).
import type { BatchExecutor, ConsensusCrypto, RequestAnalyzer } from '../interfaces.js';
import type { ClientRequestBody, MultiSignature } from '../messages.js';

/** The audit txn fields the checkers read (consensus.md §12.3 #2). */
export interface SimAuditEntry {
  viewNo: number;
  ppSeqNo: number;
  ppTime: number;
}

/** A node's executor plus the read-only view of its committed storage the checkers use. */
export interface SimExecutor extends BatchExecutor {
  /** committed size of a ledger (0-3) */
  committedSize(ledgerId: number): number;
  /** committed txn at `seqNo` as canonical text (equal bytes on every node that agrees) */
  committedTxn(ledgerId: number, seqNo: number): string | undefined;
  /** the audit txn at a committed seqNo */
  auditEntry(seqNo: number): SimAuditEntry;
  /** the `dest` written by a committed txn of the domain ledger, undefined for other txns */
  committedDest(seqNo: number): string | undefined;
  /** true when `txnRoot` (base58) is the root of the committed ledger at some size */
  isCommittedTxnRoot(ledgerId: number, txnRoot: string): boolean;
  /** every multi-signature this node stored (in commit order, across restarts) */
  readonly storedMultiSigs: readonly MultiSignature[];
  /** the validator registry at a pool state root, undefined for a root this node never had */
  registryAt(poolStateRoot: string): string[] | undefined;
  /**
   * Optional: what is wrong with the committed state, if anything — its roots differ from those the
   * last audit txn names, or from a replay of the committed txns from genesis.
   */
  stateProblem?(): string | undefined;
}

/** One node's incarnations over its durable storage. */
export interface SimReplica<E extends SimExecutor = SimExecutor> {
  /** the executor of the running incarnation (a restart may build a new one) */
  readonly executor: E;
  readonly requests: RequestAnalyzer;
  readonly crypto: ConsensusCrypto;
  /** the validator registry the core starts with (R_committed of the storage); default: genesis */
  validators?(): string[];
  /** crash: everything volatile is lost, durable storage keeps its last completed write */
  crash(): void | Promise<void>;
  /** a new process over the same storage (restoration as at startup) */
  restart(): void | Promise<void>;
  /** resolves when the writes started by the last event are durable (undefined: nothing pending) */
  settle?(): Promise<void> | undefined;
  /**
   * Optional (crashes inside writes): after `writes` more batch writes succeed, every later write is
   * lost and `torn()` turns true at the first lost one (with `afterLast`, right after the last
   * write that lands); the simulator then crashes the node. Undefined disarms.
   */
  armTear?(writes: number | undefined, afterLast?: boolean): void;
  torn?(): boolean;
  /**
   * Optional (crash when a flush resolves): from now on writes finish a while after they start, and
   * at the first `settle()` that follows a batch write the node crashes the instant its flush
   * resolves: writes still in flight then are lost, the replies of that event were sent
   * (`tornAtFlush()`). `armTear(undefined)` disarms.
   */
  armCrashAtFlush?(): void;
  tornAtFlush?(): boolean;
  /** Optional: replays the node's committed txns from genesis on fresh storage; what differs from the node's state, if anything */
  replayProblem?(): Promise<string | undefined>;
}

/** How the workload describes a request it built (for the run record). */
export interface SimRequestInfo {
  digest: string;
  payloadDigest: string;
}

/** Signed client requests of a run: writes, replays, payload variants and NODE txns. */
export interface SimWorkload {
  /**
   * The i-th write of the run: a fresh valid one, or (`invalid`) one that passes static checks and
   * signatures but fails dynamic validation (REJECT, never committed).
   */
  write(i: number, invalid: boolean): ClientRequestBody;
  /** the same payload under another full digest (payload dedup must commit at most one) */
  variant(request: ClientRequestBody): ClientRequestBody;
  /** a NODE txn adding `alias` as a validator with its BLS key */
  addValidator(alias: string): ClientRequestBody;
  /** a NODE txn rotating the BLS key of `alias` (the replicas sign with the new key once it is in the pool state) */
  rotateBlsKey(alias: string): ClientRequestBody;
  /** a NODE txn demoting (`false`) or promoting (`true`) `alias` */
  setValidator(alias: string, validator: boolean): ClientRequestBody;
  /** digests of a request this workload built */
  info(request: ClientRequestBody): SimRequestInfo;
}

export interface SimPoolContext {
  seed: number;
  /** genesis validators, Node1..Nn */
  genesis: readonly string[];
  /** the node that joins by a NODE txn (membership mix), absent otherwise */
  joiner?: string;
}

/** The world of one run: replicas and workload. */
export interface SimPool<E extends SimExecutor = SimExecutor> {
  /** builds the replica of a node (twins get one each under one alias) */
  replica(alias: string): SimReplica<E> | Promise<SimReplica<E>>;
  readonly workload: SimWorkload;
  /** releases what the run opened (stores) */
  close?(): Promise<void> | void;
}

export type SimPoolFactory<E extends SimExecutor = SimExecutor> = (ctx: SimPoolContext) => SimPool<E>;
