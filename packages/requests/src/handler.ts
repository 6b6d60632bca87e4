/**
 * The per-type handler contract. One module per transaction type (src/types/<type>.ts) exports one
 * handler object holding everything about that type: its static validation (schema + type rules),
 * the auth action(s) it asks for, its dynamic validation against state, its state update, and, for
 * reads, its read handler. The pipeline (receipt), the executor (ordering) and the read framework
 * call handlers only through these interfaces. See HANDLERS.md for how to write one.
 *
 * Determinism: `validateStatic`, `validateDynamic` and `updateState` run on every node and must
 * give the same answer everywhere: no clock (use ctx.ppTime), no randomness, no iteration over
 * unsorted keys of untrusted objects when the order changes a result. Node-local checks (the
 * node's clock, installed software) go in `validateAtReceipt`, which ordering never runs.
 */
import type { Request, TaaAcceptance, Txn } from '@quire/common';
import type { StateKey } from '@quire/storage';
import type { RequestError } from './errors.js';

/**
 * The shapes of @quire/common, re-exported so handler modules and users of this package name one
 * `Txn` (a stored transaction, formats.md 4.1), one `Request` (the kept fields of a client request,
 * formats.md 3.1, parsed losslessly) and one `TaaAcceptance` (formats.md 3.5).
 */
export type { Request, TaaAcceptance, Txn };

/**
 * Ledger ids (formats.md): pool 0, domain 1, config 2, audit 3, and the ledgers of the node's plugins
 * (ids from PLUGIN_LEDGER_ID_MIN, plugin.ts).
 */
export type LedgerIdValue = number;
/** Ledgers that have a state trie: pool 0, domain 1, config 2 and every plugin ledger. */
export type StateLedgerId = number;
/** A state key: UTF-8 text or raw bytes (the NYM key is raw bytes); storage's type. */
export type { StateKey };

// ------------------------------------------------------------------------------------------------
// The request as handlers see it
// ------------------------------------------------------------------------------------------------

/**
 * A request after envelope validation (requests.md §1.1): only the kept fields, parsed losslessly.
 * Digests are computed on first use. Handlers never mutate it.
 */
export interface ParsedRequest {
  /** The kept fields (identifier, reqId, operation, protocolVersion, signature(s), endorser, taaAcceptance). */
  readonly request: Request;
  /** operation.type. */
  readonly type: string;
  readonly operation: Readonly<Record<string, unknown>>;
  /** `identifier` as sent, or null when absent (multi-signed requests may omit it). */
  readonly identifier: string | null;
  /** The author: `identifier`, else the signer DIDs sorted and joined by `,` (formats.md 3.3). */
  readonly author: string;
  readonly reqId: number | bigint;
  readonly endorser: string | null;
  readonly taaAcceptance: TaaAcceptance | null;
  /** Every signer with its base58 signature, sorted by DID (code-point order); `signature` counts as the identifier's. */
  readonly signers: readonly (readonly [did: string, signature: string])[];
  /** True when the request carries `signatures` (multi-signature form), false for `signature` or none. */
  readonly multiSigned: boolean;
  /** Full request digest (hex; formats.md 3.3). */
  readonly digest: string;
  /** Payload digest (hex; formats.md 3.3). */
  readonly payloadDigest: string;
}

// ------------------------------------------------------------------------------------------------
// What handlers are given
// ------------------------------------------------------------------------------------------------

/** One state trie seen by a handler. Reads default to the uncommitted head (latest applied). */
export interface StateAccess {
  /** Value at the uncommitted head (dynamic validation and state updates read this). */
  get(key: StateKey): Uint8Array | undefined;
  /** Value at the committed root (reads; "committed" checks such as POOL_UPGRADE status). */
  getCommitted(key: StateKey): Uint8Array | undefined;
  /**
   * The text keys at the uncommitted head that start with `prefix`, in ascending key order. It walks
   * the whole trie: only for small tries and rare requests (TXN_AUTHOR_AGREEMENT_DISABLE in the config
   * state, as indy-node does).
   */
  keysWithPrefix(prefix: string): string[];
  /** Writes on the uncommitted head. Only `updateState` may call these. */
  set(key: StateKey, value: Uint8Array): void;
  remove(key: StateKey): void;
  /** Current head root (32 bytes). */
  readonly headRoot: Uint8Array;
  readonly committedRoot: Uint8Array;
}

/** Read access to one ledger's transactions, uncommitted tail included. */
export interface LedgerReader {
  readonly ledgerId: LedgerIdValue;
  /** Committed size. */
  readonly size: number;
  /** Size including the uncommitted tail. */
  readonly uncommittedSize: number;
  /** Txn at seqNo, committed or uncommitted; undefined when out of range. One synchronous read. */
  getTxn(seqNo: number): Txn | undefined;
}

/** The NYM facts authorization and signature checks need (formats.md 8.2 NYM record). */
export interface NymInfo {
  /** The DID's creator (`identifier` of the record), null in some genesis NYMs. */
  readonly creator: string | null;
  readonly role: string | null;
  readonly verkey: string | null;
  readonly seqNo: number;
  readonly txnTime: number | null;
}

/**
 * The DID index: DID -> (role, verkey, creator) from the domain state, uncommitted by default so a
 * NYM written earlier in the same batch is visible at once. Backed by a cache invalidated by every
 * write to a NYM key and by reverts.
 */
export interface IdrCache {
  getNym(did: string, opts?: { committed?: boolean }): NymInfo | undefined;
  /** Role of a DID on the ledger (null = identity owner); undefined when the DID is not on the ledger. */
  roleOf(did: string): string | null | undefined;
  /** Owner of a NYM: the DID itself when its verkey is set, else its creator (guardianship). */
  ownerOf(did: string): string | null | undefined;
}

/**
 * One authorization request (auth-rules.md §1): (type, kind, field, old, new) plus the owner flag.
 * Values are rendered as rule keys render them (null -> "", lists -> `['A', 'B']`, booleans ->
 * True/False), so pass the raw JSON values.
 */
export interface AuthAction {
  /** Type code; defaults to the request's type. */
  type?: string;
  kind: 'ADD' | 'EDIT';
  field: string;
  /** EDIT only; ignored (rendered `*`) for ADD. */
  oldValue?: unknown;
  newValue: unknown;
  isOwner: boolean;
}

/** The auth engine: finds the rule (default map + config-state override) and evaluates it. */
export interface AuthEngine {
  /** Throws RequestError (UnauthorizedClientRequest) when the action is not allowed. */
  authorize(request: ParsedRequest, action: AuthAction): void;
}

/** The off-ledger attribute store seen by ATTRIB handlers (hash -> canonical raw JSON or enc text). */
export interface AttributeAccess {
  /** Buffered with the batch; written with it on commit, dropped on revert. */
  put(hash: string, value: string): void;
  /** Uncommitted puts first, then the store (a synchronous read). */
  get(hash: string): string | undefined;
}

/** What a node record (pool state, formats.md 8.1) can be looked up by. */
export type NodeIndexField = 'alias' | 'nodeAddress' | 'clientAddress' | 'steward';

/**
 * The node records of the pool state, indexed: the uncommitted head, like `state(0).get`, kept
 * current by every write to the pool state and rebuilt from the pool trie after a revert. Each
 * lookup is a map access, so NODE and POOL_UPGRADE validation never scan the pool ledger.
 */
export interface PoolNodeIndex {
  /**
   * Dests of the node records whose `field` is `value`, sorted (code-point order): `alias`, the
   * node or client address `ip:port` (numeric port), or `steward` (the record's `identifier`).
   */
  find(field: NodeIndexField, value: string): readonly string[];
  /** Dests of the records whose `services` holds VALIDATOR, sorted (code-point order). */
  validators(): readonly string[];
}

/**
 * The POOL_UPGRADE history of the committed config ledger, indexed by (name, version): the action
 * (`start` / `cancel`) of the last committed POOL_UPGRADE txn for them.
 */
export interface UpgradeIndex {
  lastAction(name: string, version: string): string | undefined;
}

/** Facts about the installed node software, for POOL_UPGRADE (node-local; requests.md §5.2 step 5). */
export interface SoftwareInfo {
  /** Name of the node software package (what `package` defaults to). */
  readonly nodePackage: string;
  /** Installed version of a package, or undefined when not installed. */
  installedVersion(pkg: string): string | undefined;
  /** Whether a package is the node package or depends on it. */
  belongsToPool(pkg: string): boolean;
}

/** The transaction being written: its seqNo in its ledger and its txnTime (= ppTime). */
export interface TxnPosition {
  readonly seqNo: number;
  readonly txnTime: number | null;
}

/**
 * What dynamic validation and state updates receive. One context per request; `state()` tries are
 * shared by the batch, so a request sees the effects of earlier requests of the same batch.
 */
export interface HandlerContext {
  /** Ledger of the batch being applied. */
  readonly ledgerId: LedgerIdValue;
  /** PrePrepare time of the batch (seconds); null only for genesis txns. */
  readonly ppTime: number | null;
  /** Position the txn gets if the request is valid (dynamic validation) / has (state update). */
  readonly txn: TxnPosition;
  state(ledgerId: StateLedgerId): StateAccess;
  ledger(ledgerId: LedgerIdValue): LedgerReader;
  readonly idr: IdrCache;
  /** The node records of the uncommitted pool state (NODE uniqueness, POOL_UPGRADE node list). */
  readonly nodes: PoolNodeIndex;
  /** Last committed POOL_UPGRADE action per (name, version). */
  readonly upgrades: UpgradeIndex;
  readonly auth: AuthEngine;
  readonly attributes: AttributeAccess;
  /** Present on nodes (POOL_UPGRADE version checks); absent in pure replays. */
  readonly software?: SoftwareInfo;
  /**
   * A ledger of the node with its uncommitted size and roots, or undefined when the node has no such
   * ledger (LEDGERS_FREEZE: a ledger that never existed). The audit ledger is not included.
   */
  ledgerSnapshot(ledgerId: number): LedgerSnapshot | undefined;
}

/** A ledger as LEDGERS_FREEZE records it: its size, its root and its state root after the txns applied so far. */
export interface LedgerSnapshot {
  readonly size: number;
  readonly root: Uint8Array;
  /** The state root (every ledger with a state has one). */
  readonly stateRoot: Uint8Array;
}

/** Node-local facts for `validateAtReceipt` (never used while ordering). */
export interface ReceiptContext extends HandlerContext {
  /** The node's clock, seconds since the epoch. */
  readonly now: number;
}

// ------------------------------------------------------------------------------------------------
// Reads
// ------------------------------------------------------------------------------------------------

/** A state lookup with its proof, made by the read framework for a read handler. */
export interface StateLookup {
  readonly value: Uint8Array | undefined;
  /** The state root the value was read at. */
  readonly root: Uint8Array;
  /** RLP proof nodes for the key at that root (proves absence when value is undefined). */
  readonly proof: Uint8Array;
}

export interface ReadContext {
  /** Committed value + proof of `key` in a ledger's state, at the read root (committedRoot()) or at `root`. */
  lookup(ledgerId: StateLedgerId, key: StateKey, root?: Uint8Array): StateLookup;
  /** Committed value without a proof (secondary lookups whose proof is not returned), at the read root or at `root`. */
  get(ledgerId: StateLedgerId, key: StateKey, root?: Uint8Array): Uint8Array | undefined;
  /** The state root recorded for the greatest batch time <= timestamp, or undefined (requests.md §9.1). */
  rootAt(ledgerId: StateLedgerId, timestamp: number): Promise<Uint8Array | undefined>;
  /**
   * The committed root reads of a ledger's state are answered at: the newest committed root, or the
   * one the node chose (a node picks the newest committed root with a multi-signature).
   */
  committedRoot(ledgerId: StateLedgerId): Uint8Array;
  /** Committed ledger access (reads never see uncommitted txns). */
  ledger(ledgerId: LedgerIdValue): CommittedLedgerReader;
  /** Attribute store (committed). */
  attribute(hash: string): Promise<string | undefined>;
}

export interface CommittedLedgerReader {
  readonly ledgerId: LedgerIdValue;
  readonly size: number;
  getTxn(seqNo: number): Promise<Txn | undefined>;
  /** Current committed root (32 bytes). */
  readonly root: Uint8Array;
  inclusionProof(seqNo: number, size?: number): Promise<Uint8Array[]>;
}

/**
 * What a read handler answers. The framework builds the REPLY result from it:
 * `{...operation, identifier, reqId, data, seqNo, txnTime, [state_proof]}` (formats.md 5.3).
 */
export interface ReadAnswer {
  data: unknown;
  seqNo: number | null;
  txnTime: number | null;
  /** The lookup whose proof goes into `state_proof` (omit for reads without a proof). */
  proof?: { ledgerId: StateLedgerId; lookup: StateLookup };
  /**
   * A second proved lookup at another root, already rendered into `data.stateProofFrom`
   * (GET_REVOC_REG_DELTA, formats.md 7.7): the node attaches the multi-signature of its root there.
   */
  proofFrom?: { ledgerId: StateLedgerId; lookup: StateLookup };
  /** Members added to `data`-level result besides the standard ones (rare; e.g. none for most reads). */
  extra?: Record<string, unknown>;
  /** Replace the whole result (GET_TXN has its own result shape). */
  result?: Record<string, unknown>;
}

// ------------------------------------------------------------------------------------------------
// Handlers
// ------------------------------------------------------------------------------------------------

interface HandlerBase {
  /** Type code, e.g. '1'. */
  readonly type: string;
  /** Type name used in reasons (TYPE_NAME, e.g. 'NYM'; auth-rules.md §4.1). */
  readonly name: string;
  /** Schema validator name in schema error reasons (e.g. 'ClientNYMOperation'). */
  readonly validator: string;
  /**
   * Static validation of `request.operation` (schema, then the type's static rules). Pure and
   * deterministic; throws RequestError. Run at receipt (REQNACK) and again at ordering.
   */
  validateStatic(request: ParsedRequest): void;
}

/** A transaction type written to a ledger. */
export interface WriteHandler extends HandlerBase {
  readonly kind: 'write';
  /** 0, 1 or 2, or the ledger of the plugin that registers the type. */
  readonly ledgerId: StateLedgerId;
  /**
   * Node-local checks at receipt only (clock, pool membership, installed software), e.g. a
   * POOL_UPGRADE schedule in the past. Throws RequestError (REQNACK). Never run while ordering.
   */
  validateAtReceipt?(request: ParsedRequest, ctx: ReceiptContext): void | Promise<void>;
  /**
   * Dynamic validation against the uncommitted state, including authorization through
   * `ctx.auth.authorize(...)` in the order the spec gives. Throws RequestError (REJECT). Must not
   * change state. Synchronous: consensus applies batches synchronously, so every read goes
   * through the synchronous accessors of the context (tries, `getTxn`, indexes, attributes).
   */
  validateDynamic(request: ParsedRequest, ctx: HandlerContext): void;
  /**
   * Optional ledger transform of the stored txn (after `requestToTxn`), e.g. ATTRIB raw/enc ->
   * hash, putting the original into `ctx.attributes`. Returns the txnId, if the type has one.
   */
  prepareTxn?(txn: Txn, request: ParsedRequest, ctx: HandlerContext): string | undefined;
  /**
   * Applies a stored txn to the state (runtime, genesis and rebuild-from-ledger). `request` is
   * present at runtime only. Must be deterministic and depend only on txn, state and ctx.
   * Synchronous, like `validateDynamic`.
   */
  updateState(txn: Txn, ctx: HandlerContext, request?: ParsedRequest): void;
  /**
   * When true, requests of this type that carry `force: true` are validated and applied by each
   * node at receipt as well (requests.md §5.5: POOL_UPGRADE, POOL_CONFIG).
   */
  readonly forceable?: boolean;
}

/** A command that is not ordered nor written (POOL_RESTART, VALIDATOR_INFO). */
export interface ActionHandler extends HandlerBase {
  readonly kind: 'action';
  /** Authorization and action-specific checks; throws RequestError (REJECT). Synchronous. */
  validateDynamic(request: ParsedRequest, ctx: HandlerContext): void;
}

/** A read (GET_*). Reads are never signature-checked and use committed state only. */
export interface ReadHandler extends HandlerBase {
  readonly kind: 'read';
  /** Ledger read, or 'any' (GET_TXN picks it from the request). */
  readonly ledgerId: StateLedgerId | 'any';
  read(request: ParsedRequest, ctx: ReadContext): Promise<ReadAnswer>;
}

export type RequestHandler = WriteHandler | ActionHandler | ReadHandler;

/** Outcome of one request inside a batch. */
export type RequestOutcome = { valid: true; seqNo: number; txn: Txn } | { valid: false; error: RequestError };
