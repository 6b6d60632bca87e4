// QuireNode: the composition root of one validator. Opens the database and the stores, loads
// genesis into empty ledgers and repairs what startup can repair, builds the request executor and
// pipeline, the consensus core and its modules, the upgrade service, the node and client hosts,
// and runs the core's effects. Every core event is handled to completion, one at a time; an
// ordered batch's atomic write is durable before any client hears about it. close() is idempotent
// and closes in reverse.
import { LedgerId, TxnType } from '@quire/common';
import type { ConsensusCore, ConsensusEffect, ConsensusEvent } from '@quire/consensus';
import { ClientHost, type ClientHostEvents, NodeHost, isAborted } from '@quire/network';
import { parseRequest, poolWritesFromTxns, type Txn } from '@quire/requests';
import type { ActionOutcome, ActionRequest, ClientChannel, ClientPath } from './client-path.js';
import type { ConsensusExecutor, NodeStores } from './consensus-executor.js';
import { NodeError, NodeErrorCode } from './errors.js';
import type { ForcedRequests } from './forced-requests.js';
import type { NodeKeys } from './keys.js';
import type { NodeLogger } from './logger.js';
import { type NodeMetrics, observeStages } from './metrics.js';
import type { KvVoteStore } from './node-setup.js';
import { type NodeParts, type QuireNodeModules, type QuireNodeOptions, assembleNode } from './node-assembly.js';
import type { NodeUpgrades } from './node-upgrades.js';
import { type OrderedEffect, OrderedAnnouncer, orderedTopic } from './ordered-announcement.js';
import { PeerMessageQueue, defaultPeerQueueOptions } from './peer-queue.js';
import { configTxns } from './startup.js';
import { validatorInfo } from './validator-info.js';
import type { FileVoteJournalStore } from './vote-journal-store.js';
import { nodePackageVersion } from './version.js';
import { PeerMessageDecoder, encodePeerMessage, isPropagateEncoding } from './peer-wire.js';
import { CatchupPropagateStash } from './catchup-propagates.js';
import { consensusOptionsOf } from './config.js';
import { TurnBudget } from './turn-budget.js';

export type { QuireNodeModules, QuireNodeOptions } from './node-assembly.js';

/** The error of a start that `signal` ended (data: `reason`, the signal's reason as text). */
function abortedStart(signal: AbortSignal): NodeError {
  const r: unknown = signal.reason;
  return new NodeError(NodeErrorCode.ABORTED, { reason: r instanceof Error ? r.message : String(r) });
}

/**
 * Exit code of a node that stopped itself because a committed batch could not be written
 * (EX_IOERR of sysexits.h): check the disk, then start it again (startup repairs a torn tail).
 */
export const WRITE_FAILED_EXIT_CODE = 74;

/**
 * Exit code of a node that stopped itself because a batch's commit failed half-way (COMMIT_FAILED;
 * EX_SOFTWARE of sysexits.h): what it holds in memory may differ from storage, so it does not go
 * on; started again, it reopens everything from its last durable write and catches up.
 */
export const COMMIT_FAILED_EXIT_CODE = 70;

/** Forced requests from peers checked at once; past it a peer's forced PROPAGATE is left to consensus. */
const MAX_FORCED_CHECKS = 64;

/** How often the reply targets no answer can come to any more are released (ClientPath.expire), ms. */
const REPLY_SWEEP_MS = 1000;
/** Longest wait, before a restart or upgrade exit, for the batches in flight to be ordered. */
const EXIT_DRAIN_MS = 5_000;
/** ordered batches whose answers may wait for their write while the event queue goes on */
const MAX_WRITES_AHEAD = 4;

export class QuireNode {
  readonly name: string;
  readonly stores: NodeStores;
  readonly core: ConsensusCore;
  readonly executor: ConsensusExecutor;
  readonly clientPath: ClientPath;
  readonly upgrades: NodeUpgrades;
  readonly metrics: NodeMetrics | undefined;
  /** bound ports (useful when the config asks for port 0) */
  nodePort = 0;
  clientPort = 0;
  metricsPort: number | undefined;
  readonly poolId: string;
  private readonly keys: NodeKeys;
  private readonly forced: ForcedRequests;
  private nodeHost: NodeHost | undefined;
  private clientHost: ClientHost | undefined;
  private announcer: OrderedAnnouncer | undefined;
  private readonly log: NodeLogger;
  private readonly rootLog: NodeLogger;
  private readonly voteStore: KvVoteStore;
  private readonly threePcStore: FileVoteJournalStore | undefined;
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private replySweep: NodeJS.Timeout | undefined;
  private queue: Promise<void> = Promise.resolve();
  /** the event queue is a promise chain: it pauses for a turn of the event loop every 100 ms of events (turn-budget.ts) */
  private readonly queueTurns = new TurnBudget();
  /** the answers of ordered batches, each after its write (onOrdered) */
  private afterWrites: Promise<void> = Promise.resolve();
  private writesAhead = 0;
  /** decoded peer messages waiting for the core: bounded per peer, served round-robin (#15, F9) */
  private readonly peerMessages = new PeerMessageQueue<unknown>();
  /** decodes peer messages, each distinct PROPAGATE encoding once (peer-wire.ts) */
  private readonly peerDecoder = new PeerMessageDecoder();
  /** PROPAGATEs received while catching up, as their bytes, handled after it (catchup-propagates.ts) */
  private readonly catchupPropagates: CatchupPropagateStash;
  /** a peer message is on the event queue: the next one joins it only when that one is handled */
  private peerMessageQueued = false;
  /** forced requests from peers being checked (ForcedRequests.fromPeer) */
  private forcedChecks = 0;
  private closing: Promise<void> | undefined;
  private onClientRequest: ClientHostEvents['request'] | undefined;
  private catchingUp = false;
  private seenView = 0;
  private catchupStartedAt: number | undefined;
  private startedAtMs = Date.now();

  private constructor(
    private readonly opts: QuireNodeOptions,
    private readonly modules: QuireNodeModules,
    parts: NodeParts,
  ) {
    this.name = parts.name;
    this.keys = parts.keys;
    this.stores = parts.stores;
    this.core = parts.core;
    this.executor = parts.executor;
    this.clientPath = parts.clientPath;
    this.forced = parts.forced;
    this.upgrades = parts.upgrades;
    this.metrics = parts.metrics;
    this.poolId = parts.poolId;
    this.log = parts.logger;
    this.rootLog = parts.rootLogger;
    this.voteStore = parts.voteStore;
    this.threePcStore = parts.threePcStore;
    this.catchupPropagates = new CatchupPropagateStash({
      // each other validator's share of the bounds, so one peer cannot push out what the others sent
      peers: () => Math.max(1, this.executor.registry.validators.length - 1),
      // what one peer held fits its queue (peerMessages) at the replay
      maxEntriesPerPeer: defaultPeerQueueOptions.maxMessagesPerPeer,
      // held no longer than the intake's rules assume a refused request's PROPAGATEs take to arrive
      maxAgeMs: consensusOptionsOf(opts.config).propagatesPhaseReqTimeoutMs,
      // the consensus core's clock (node-assembly.ts)
      now: () => performance.now(),
    });
  }

  /**
   * Opens the stores, starts the hosts and the core. `signal` aborted before the node is up: whatever was opened
   * (the database and its lock, the listeners, the metrics server) is closed and the promise rejects with NodeError
   * ABORTED, so the same data dir and ports can be used again at once.
   */
  static async create(options: QuireNodeOptions, modules: QuireNodeModules, abort: { signal?: AbortSignal } = {}): Promise<QuireNode> {
    const { signal } = abort;
    if (isAborted(signal)) throw abortedStart(signal);
    const holder: { node?: QuireNode } = {};
    const notStarted = (type: string): NodeError => new NodeError(NodeErrorCode.OWN_REQUEST_REFUSED, { type, reason: 'the node is not started' });
    const parts = await assembleNode(options, modules, {
      enqueue: (event) => holder.node?.enqueue(event),
      onCommitted: (ledgerId, txns) => holder.node?.onCommitted(ledgerId, txns),
      action: (r) => (holder.node !== undefined ? holder.node.action(r) : Promise.reject(notStarted(r.type))),
      submitOwn: (r) => (holder.node !== undefined ? holder.node.clientPath.submitOwn(r) : Promise.reject(notStarted(String(r.operation.type)))),
      exit: (code) => holder.node?.exit(code),
      fatal: (e) => holder.node?.stopOnFatal(e, e.code === NodeErrorCode.WRITE_FAILED ? WRITE_FAILED_EXIT_CODE : COMMIT_FAILED_EXIT_CODE),
    });
    const node = new QuireNode(options, modules, parts);
    holder.node = node;
    try {
      if (isAborted(signal)) throw abortedStart(signal);
      await node.start(signal);
      if (isAborted(signal)) throw abortedStart(signal);
    } catch (e) {
      await node.close();
      throw isAborted(signal) ? abortedStart(signal) : e;
    }
    return node;
  }

  private async start(signal: AbortSignal | undefined): Promise<void> {
    this.startedAtMs = Date.now();
    const cfg = this.opts.config;
    // loadPoolRegistry refused to assemble a node whose alias has no NODE txn, and a NODE txn never removes an alias
    const self = this.executor.registry.node(this.name);
    if (self === undefined) throw new NodeError(NodeErrorCode.NOT_IN_POOL, { name: this.name, reason: 'no NODE txn with this alias in the pool ledger' });
    const nodeHost = cfg.nodeHost ?? String(self.data.node_ip ?? '127.0.0.1');
    const nodePort = cfg.nodePort ?? Number(self.data.node_port);
    const clientHostAddr = cfg.clientHost ?? String(self.data.client_ip ?? '127.0.0.1');
    const clientPort = cfg.clientPort ?? Number(self.data.client_port);
    const topic = orderedTopic(this.poolId);
    this.nodeHost = await NodeHost.create(
      { name: this.name, seed: this.keys.seed, host: nodeHost, port: nodePort, maxMessageLength: cfg.limits.maxMessageLength, topics: [topic] },
      { logger: this.rootLog.child({ module: 'network' }) },
      { signal },
    );
    this.nodePort = this.nodeHost.port;
    this.nodeHost.on('message', (from, data) => this.onPeerMessage(from, data));
    this.nodeHost.on('peer:connect', (alias) => this.enqueue({ kind: 'peerConnected', alias }));
    this.nodeHost.on('peer:disconnect', (alias) => this.enqueue({ kind: 'peerDisconnected', alias }));
    // validators publish on the ordered-batch topic but do not subscribe to it: each batch's
    // announcements (one per validator, its txns included) then go straight to the observers,
    // instead of every validator receiving and relaying every other validator's copy
    this.nodeHost.setValidators(this.executor.registry.validatorInfos());
    this.nodeHost.setObservers(cfg.observers);
    const host = this.nodeHost;
    this.announcer = new OrderedAnnouncer(
      { poolId: this.poolId, name: this.name, signer: this.keys.signer, maxMessageLength: cfg.limits.maxMessageLength },
      this.stores,
      (t, data) => host.publish(t, data),
      this.log,
      () => host.topicPeers(topic).length,
    );

    this.clientHost = await ClientHost.create(
      {
        seed: this.keys.seed,
        host: clientHostAddr,
        port: clientPort,
        maxMessageLength: cfg.limits.maxMessageLength,
        clientRate: cfg.limits.clientRate,
        clientBurst: cfg.limits.clientBurst,
        maxPendingPerSession: cfg.limits.clientMaxPending,
        maxConnections: cfg.limits.maxConnectedClients,
        maxConnectionsPerIp: cfg.limits.maxConnectionsPerIp,
        idleTimeoutMs: cfg.limits.clientIdleTimeoutMs,
      },
      {
        logger: this.rootLog.child({ module: 'client-host' }),
        // requests the node refuses as their frames are read are answered there, ahead of the queued ones
        door: (payload, clientId) => this.clientPath.doorAtFrame(payload, clientId),
      },
      { signal },
    );
    this.clientPort = this.clientHost.port;
    const ch = this.clientHost;
    // the door answers only refusals as frames are read: the rest of the refusals waited in the client host's inbox
    this.metrics?.setRefusalSource(() => ({ atFrame: ch.doorAnswers, total: this.clientPath.refusedCount }));
    this.onClientRequest = (clientId, data, respond, info) => {
      const channel: ClientChannel = { respond, push: (bytes) => ch.push(clientId, bytes, info.requestId), session: clientId };
      void this.clientPath.handle(data, channel);
    };
    ch.on('request', this.onClientRequest);
    ch.on('session:close', (clientId, reason) => {
      this.metrics?.clientSessionsClosed.inc({ reason });
      this.clientPath.forgetSession(clientId);
    });
    this.replySweep = setInterval(() => this.clientPath.expire(), REPLY_SWEEP_MS);
    this.replySweep.unref();
    if (cfg.metricsPort !== null && this.metrics !== undefined) this.metricsPort = await this.metrics.listen(cfg.metricsPort);
    const st = this.core.status();
    this.log.info(
      {
        nodePort: this.nodePort,
        clientPort: this.clientPort,
        validators: st.validators,
        viewNo: st.viewNo,
        lastOrdered: st.lastOrdered,
        poolId: this.poolId,
        version: this.upgrades.currentVersion,
      },
      'node started',
    );
    this.seenView = st.viewNo;
    this.queue = this.queue.then(async () => {
      await this.runEffects(this.core.start());
      this.catchingUp = this.core.status().catchingUp;
      // a pool of one has nobody to catch up from: its ledgers are as caught up as they get
      if (!this.catchingUp) await this.onCaughtUp();
    });
  }

  /** Serialises one core event behind the previous ones. */
  enqueue(event: ConsensusEvent): void {
    if (this.closing !== undefined) return;
    const queuedAt = event.kind === 'clientRequest' && this.metrics !== undefined ? performance.now() : 0;
    this.queue = this.queue.then(async () => {
      await this.queueTurns.spend();
      if (this.closing !== undefined && event.kind !== 'timer') return;
      if (queuedAt > 0) this.metrics?.writeStages.observe({ stage: 'queue' }, (performance.now() - queuedAt) / 1000);
      let effects: ConsensusEffect[];
      try {
        effects = this.core.handle(event);
      } catch (e) {
        this.log.error({ err: e, event: event.kind }, 'consensus core failed on an event');
        return;
      }
      await this.runEffects(effects);
      await this.afterEvent();
    });
  }

  /**
   * A peer's message: decoded and queued behind that peer's earlier ones, or dropped and counted
   * when that peer already has its bound waiting (PeerQueueOptions), before any decoding work.
   */
  private onPeerMessage(from: string, data: Uint8Array): void {
    if (this.closing !== undefined) return;
    if (this.catchingUp && isPropagateEncoding(data)) {
      const dropped = this.catchupPropagates.add(from, data);
      if (dropped > 0) this.metrics?.peerMessagesDropped.inc({ reason: 'catchup_stash_full' }, dropped);
      return;
    }
    if (this.peerMessages.full(from, data.length)) {
      const dropped = this.peerMessages.drop(from);
      this.metrics?.peerMessagesDropped.inc({ reason: 'queue_full' });
      // 1st, 10th, 100th, ... drop of this peer: a log line per order of magnitude
      if (/^10*$/.test(String(dropped)))
        this.log.warn({ peer: from, dropped, waiting: this.peerMessages.waiting(from) }, 'peer messages dropped: its queue is full');
      return;
    }
    let msg: unknown;
    try {
      msg = this.peerDecoder.decode(data);
    } catch {
      this.metrics?.suspicions.inc({ code: 'undecodable' });
      return;
    }
    this.peerMessages.push(from, msg, data.length);
    this.nextPeerMessage();
  }

  /**
   * Puts the next waiting peer message (peers in turn) on the event queue, unless one is there
   * already: so the event queue holds at most one peer message, and timers, client requests and
   * other peers' messages never wait behind a flood.
   */
  private nextPeerMessage(): void {
    if (this.peerMessageQueued || this.closing !== undefined) return;
    const next = this.peerMessages.shift();
    if (next === undefined) return;
    this.peerMessageQueued = true;
    // a forced POOL_CONFIG / POOL_UPGRADE in a PROPAGATE is checked as it leaves the peer's queue,
    // so a flood of them is bounded like any other message, and at most MAX_FORCED_CHECKS at once
    if (this.forcedChecks < MAX_FORCED_CHECKS) {
      this.forcedChecks++;
      void this.forced.fromPeer(next.item).finally(() => this.forcedChecks--);
    }
    this.enqueue({ kind: 'nodeMessage', from: next.peer, msg: next.item });
    const done = (): void => {
      this.peerMessageQueued = false;
      this.nextPeerMessage();
    };
    this.queue = this.queue.then(done, done);
  }

  /** The consensus core's view of this node (view, last ordered batch, catch-up). */
  status(): ReturnType<ConsensusCore['status']> {
    return this.core.status();
  }

  /** Catch-up transitions, and view-change / catch-up metrics. */
  private async afterEvent(): Promise<void> {
    const st = this.core.status();
    const m = this.metrics;
    if (m !== undefined) {
      if (!st.waitingForNewView && st.viewNo > this.seenView) {
        m.viewChanges.inc(st.viewNo - this.seenView);
        this.seenView = st.viewNo;
      }
      m.viewNo.set(st.viewNo);
      if (st.catchingUp && this.catchupStartedAt === undefined) {
        this.catchupStartedAt = performance.now();
        m.catchups.inc({ phase: 'started' });
      } else if (!st.catchingUp && this.catchupStartedAt !== undefined) {
        m.catchupDuration.observe((performance.now() - this.catchupStartedAt) / 1000);
        m.catchups.inc({ phase: 'finished' });
        this.catchupStartedAt = undefined;
      }
    }
    const wasCatchingUp = this.catchingUp;
    this.catchingUp = st.catchingUp;
    if (wasCatchingUp && !st.catchingUp) await this.onCaughtUp();
  }

  /**
   * After a catch-up (and at start, for a pool of one): the caught-up txns are made durable, the
   * clients waiting on writes that arrived by catch-up get their REPLY from the ledger, the
   * POOL_CONFIG writes flag is recomputed from the config ledger (requests.md §5.4), and the
   * upgrade service hears of the config ledger (startup, then replays; requests.md §6.2).
   */
  private async onCaughtUp(): Promise<void> {
    try {
      await this.executor.flush();
      await this.clientPath.answerCaughtUp();
      await this.replayCatchupPropagates();
      const txns = await configTxns(this.stores.ledgers[LedgerId.CONFIG]);
      this.clientPath.setWritable(poolWritesFromTxns(txns));
      // not awaited: the service may submit a NODE_UPGRADE, which goes through this very queue
      this.upgrades.caughtUp(txns).catch((e: unknown) => this.log.error({ err: e }, 'upgrade service failed after catch-up'));
    } catch (e) {
      this.log.error({ err: e }, 'after catch-up');
    } finally {
      // what a failure before the replay left held (up to maxBytes) does not wait for the next catch-up
      this.catchupPropagates.clear();
    }
  }

  /**
   * The PROPAGATEs held while catching up (catchup-propagates.ts): those held longer than propagatesPhaseReqTimeoutMs
   * are dropped unhandled (counted, reason catchup_held_too_long); of the others, those of a request whose payload the
   * ledgers now hold are dropped (counted, reason caught_up) without their signature checked; the rest join their
   * senders' queues as if they had just arrived (what a sender's queue cannot take is dropped and counted, as a new
   * message would be). Handled under the event queue's turn budget, so the event loop turns between slices. Every count
   * is of messages from one peer.
   */
  private async replayCatchupPropagates(): Promise<void> {
    const { entries, tooOld, dropped } = this.catchupPropagates.take();
    let committed = 0;
    let queueFull = 0;
    for (const h of entries) {
      const turn = this.queueTurns.spend();
      if (turn !== undefined) await turn;
      if (this.closing !== undefined) return;
      let msg: unknown;
      try {
        msg = this.peerDecoder.decode(h.data);
      } catch {
        this.metrics?.suspicions.inc({ code: 'undecodable' });
        continue;
      }
      if (this.isCommittedPropagate(msg)) {
        committed += h.peers.length;
        continue;
      }
      for (const peer of h.peers) if (!this.peerMessages.push(peer, msg, h.data.length)) queueFull++;
    }
    if (tooOld > 0) this.metrics?.peerMessagesDropped.inc({ reason: 'catchup_held_too_long' }, tooOld);
    if (committed > 0) this.metrics?.peerMessagesDropped.inc({ reason: 'caught_up' }, committed);
    if (queueFull > 0) this.metrics?.peerMessagesDropped.inc({ reason: 'queue_full' }, queueFull);
    if (entries.length > 0 || tooOld > 0 || dropped > 0)
      this.log.info(
        { held: entries.reduce((n, h) => n + h.peers.length, 0), tooOld, committed, queueFull, droppedWhileHeld: dropped },
        'PROPAGATEs held during catch-up handled',
      );
    this.nextPeerMessage();
  }

  /** A decoded PROPAGATE whose request's payload is committed here (one that does not parse goes on to the core). */
  private isCommittedPropagate(msg: unknown): boolean {
    if (typeof msg !== 'object' || msg === null || (msg as { op?: unknown }).op !== 'PROPAGATE') return false;
    try {
      return this.executor.isPayloadCommitted(parseRequest((msg as { request?: unknown }).request).payloadDigest);
    } catch {
      return false;
    }
  }

  private async runEffects(effects: ConsensusEffect[]): Promise<void> {
    for (const eff of effects) {
      try {
        await this.runEffect(eff);
      } catch (e) {
        if (e instanceof NodeError && e.code === NodeErrorCode.WRITE_FAILED) {
          this.stopOnFatal(e, WRITE_FAILED_EXIT_CODE);
          return;
        }
        this.log.error({ err: e, effect: eff.kind }, 'effect failed');
      }
    }
  }

  /**
   * A failure the node cannot continue from (WRITE_FAILED, COMMIT_FAILED): one fatal log line with
   * the error's code, a graceful close, then `onFatal(exitCode)`. Once only.
   */
  private stopOnFatal(e: NodeError, exitCode: number): void {
    if (this.closing !== undefined) return;
    this.log.fatal(
      { err: e, code: e.code, exitCode },
      e.code === NodeErrorCode.WRITE_FAILED ? 'a committed batch could not be written; stopping' : 'a commit failed half-way; stopping',
    );
    const stopped = this.modules.onFatal;
    void this.close().finally(() => stopped?.(exitCode));
  }

  private async runEffect(eff: ConsensusEffect): Promise<void> {
    switch (eff.kind) {
      case 'broadcast':
        this.nodeHost?.broadcast(encodePeerMessage(eff.msg));
        return;
      case 'send':
        this.nodeHost?.send(eff.to, encodePeerMessage(eff.msg));
        return;
      case 'setTimer': {
        const old = this.timers.get(eff.id);
        if (old !== undefined) clearTimeout(old);
        this.timers.set(
          eff.id,
          setTimeout(
            () => {
              this.timers.delete(eff.id);
              this.enqueue({ kind: 'timer', id: eff.id });
            },
            Math.max(0, eff.delayMs),
          ),
        );
        return;
      }
      case 'cancelTimer': {
        const t = this.timers.get(eff.id);
        if (t !== undefined) clearTimeout(t);
        this.timers.delete(eff.id);
        return;
      }
      case 'clientAck':
        this.clientPath.ack(eff.connId);
        return;
      case 'clientNack':
        this.clientPath.nackWrite(eff.connId, eff.reason);
        return;
      case 'replyFromLedger':
        this.answerFromLedger(eff.connId, eff.payloadDigest, eff.digest);
        return;
      case 'ordered':
        await this.onOrdered(eff);
        return;
      case 'suspicion':
        this.metrics?.suspicions.inc({ code: String(eff.code) });
        this.log.debug({ peer: eff.peer, code: eff.code, vote: eff.vote }, 'suspicion');
        return;
      case 'alarm':
        this.log.warn({ reason: eff.reason, ...eff.data }, 'consensus alarm');
        return;
    }
  }

  /**
   * An ordered batch: durable first, then REPLY / REJECT, the upgrade hooks and the announcement.
   * Its write was started when the batch was committed; the event queue does not wait for it (the
   * next batch's PRE-PREPARE, PREPAREs and COMMITs are handled while it lands), the answers do:
   * they follow, batch after batch, each once its write is on disk. At most MAX_WRITES_AHEAD
   * ordered batches wait for their write before the event queue waits too.
   */
  private async onOrdered(eff: OrderedEffect): Promise<void> {
    const started = performance.now();
    // the writes started so far, this batch's last: resolves with the write error, if any
    const written = this.executor.flush().then(
      () => undefined,
      (e: unknown) => e,
    );
    this.writesAhead++;
    this.afterWrites = this.afterWrites
      .then(async () => {
        const err = await written;
        if (err !== undefined) throw err;
        await this.answerOrdered(eff, started);
      })
      .catch((e: unknown) => {
        if (e instanceof NodeError && e.code === NodeErrorCode.WRITE_FAILED) this.stopOnFatal(e, WRITE_FAILED_EXIT_CODE);
        else this.log.error({ err: e, ppSeqNo: eff.ppSeqNo }, 'answering an ordered batch failed');
      })
      .finally(() => this.writesAhead--);
    if (this.writesAhead > MAX_WRITES_AHEAD) await this.afterWrites;
  }

  /**
   * A client's copy of an ordered write is answered from the ledger once the writes started so far are durable, in
   * turn with the ordered batches' answers (`afterWrites`); the event queue does not wait for that write: it awaited
   * the executor's flush for each such copy, each holding every later event for a write's time (under overload a
   * client's copy can reach a node after its request was ordered from the peers' PROPAGATEs).
   */
  private answerFromLedger(connId: string, payloadDigest: string, digest: string): void {
    const written = this.executor.flush().then(
      () => undefined,
      (e: unknown) => e,
    );
    this.afterWrites = this.afterWrites
      .then(async () => {
        const err = await written;
        if (err !== undefined) throw err;
        await this.clientPath.replyFromLedger(connId, payloadDigest, digest);
      })
      .catch((e: unknown) => {
        if (e instanceof NodeError && e.code === NodeErrorCode.WRITE_FAILED) this.stopOnFatal(e, WRITE_FAILED_EXIT_CODE);
        else this.log.error({ err: e }, 'answering a write from the ledger failed');
      });
  }

  /** An ordered batch whose write is durable: metrics, REPLY / REJECT, the upgrade hooks and the announcement. */
  private async answerOrdered(eff: OrderedEffect, started: number): Promise<void> {
    const durable = performance.now();
    this.metrics?.batchCommit.observe((durable - started) / 1000 + this.executor.lastWriteMs / 1000);
    this.metrics?.batches.inc({ ledger: String(eff.ledgerId) });
    this.metrics?.txns.inc({ ledger: String(eff.ledgerId) }, eff.replies.length);
    this.metrics?.lastOrdered.set(eff.ppSeqNo);
    this.metrics?.viewNo.set(eff.viewNo);
    this.log.debug(
      { viewNo: eff.viewNo, ppSeqNo: eff.ppSeqNo, ledgerId: eff.ledgerId, txns: eff.replies.length, rejected: eff.rejects.length },
      'batch ordered',
    );
    await this.clientPath.ordered(eff.ledgerId, eff.replies, eff.rejects);
    if (this.metrics !== undefined && eff.stages !== undefined) observeStages(this.metrics, eff.stages, durable, performance.now());
    if (eff.ledgerId === LedgerId.CONFIG) {
      for (const r of eff.replies) {
        const txn = (await this.stores.ledgers[LedgerId.CONFIG].get(r.seqNo)) as unknown as Txn | undefined;
        if (txn !== undefined)
          this.upgrades.configTxnCommitted(txn).catch((e: unknown) => this.log.error({ err: e }, 'upgrade service failed on a config txn'));
      }
    }
    this.announcer?.announce(eff);
  }

  /** Commit hooks (consensus.md §3.8 step 5): pool membership and the POOL_CONFIG writes flag. */
  private onCommitted(ledgerId: number, txns: readonly Txn[]): void {
    if (ledgerId === LedgerId.POOL) {
      this.nodeHost?.setValidators(this.executor.registry.validatorInfos());
      this.log.info({ validators: this.executor.registry.validators }, 'pool ledger changed');
    }
    if (ledgerId === LedgerId.CONFIG) {
      for (const t of txns) {
        const body = (t as { txn?: { type?: string; data?: Record<string, unknown> } }).txn;
        // a forced POOL_CONFIG took effect on receipt and is not applied again (requests.md §5.4)
        if (body?.type === TxnType.POOL_CONFIG && typeof body.data?.writes === 'boolean' && body.data.force !== true)
          this.clientPath.setWritable(body.data.writes);
      }
    }
  }

  /** The node's authorized actions: POOL_RESTART (requests.md §8.1) and VALIDATOR_INFO (§7.5). */
  private action(r: ActionRequest): Promise<ActionOutcome> {
    if (r.type === TxnType.VALIDATOR_INFO) return this.validatorInfo().then((data) => ({ data }));
    if (r.type === TxnType.POOL_RESTART) {
      // acted on once the REPLY is out: an immediate restart may not outrun it (requests.md §8.1)
      return Promise.resolve({
        afterReply: () => {
          try {
            const decision = this.upgrades.poolRestart(r.request);
            this.log.info({ by: r.identifier, decision }, 'POOL_RESTART');
          } catch (e) {
            this.log.error({ err: e }, 'POOL_RESTART could not be carried out');
          }
        },
      });
    }
    return Promise.reject(new NodeError(NodeErrorCode.ACTION_UNAVAILABLE, { type: r.type }));
  }

  /**
   * Before a restart or an upgrade exit: proposes nothing more and waits, up to EXIT_DRAIN_MS, until
   * every batch this node pre-prepared is ordered. A POOL_RESTART reaches every node at once; had
   * they all exited with a batch prepared and not ordered, the next NEW_VIEW would name a batch whose
   * PRE-PREPARE and requests no node holds any more, and the pool would not order again.
   */
  private async drainBeforeExit(): Promise<void> {
    const started = Date.now();
    let inFlight = this.core.quiesce();
    while (inFlight && Date.now() - started < EXIT_DRAIN_MS) {
      await new Promise((r) => setTimeout(r, 50));
      const st = this.core.status();
      inFlight = st.lastPrePrepareSeqNo > st.lastOrdered.ppSeqNo;
    }
    const st = this.core.status();
    this.log.info(
      { waitedMs: Date.now() - started, drained: !inFlight, lastOrdered: st.lastOrdered.ppSeqNo, lastPrePrepared: st.lastPrePrepareSeqNo },
      'batches in flight before the exit',
    );
  }

  /** The VALIDATOR_INFO `data` of this node, from its live state. */
  private validatorInfo(): Promise<Record<string, unknown>> {
    return validatorInfo({
      name: this.name,
      dest: this.keys.dest,
      dataDir: this.opts.dataDir,
      inMemory: this.opts.inMemory === true,
      startedAtMs: this.startedAtMs,
      config: this.opts.config,
      ports: { node: this.nodePort, client: this.clientPort, metrics: this.metricsPort },
      status: this.core.status(),
      registry: this.executor.registry,
      stores: this.stores,
      connectedPeers: this.nodeHost?.connectedPeers() ?? [],
      writable: this.clientPath.isWritable,
      runningVersion: this.upgrades.currentVersion,
      packageName: this.upgrades.software.nodePackage,
      packageVersion: nodePackageVersion(),
      poolId: this.poolId,
      pendingClientWrites: this.clientPath.pendingCount,
    });
  }

  /**
   * Restart / upgrade exit: the batches in flight first (drainBeforeExit), then the configured
   * `exit`, else a graceful close and process.exit(code).
   */
  private async exit(code: number): Promise<void> {
    await this.drainBeforeExit();
    this.log.info({ code }, 'exiting for a restart');
    if (this.modules.exit !== undefined) {
      await this.modules.exit(code);
      return;
    }
    await this.close();
    process.exit(code);
  }

  /**
   * Graceful shutdown: stop taking client requests, let the event in progress (and its atomic
   * write) finish, then close hosts and storage in reverse start order. Idempotent.
   */
  close(): Promise<void> {
    this.closing ??= this.doClose();
    return this.closing;
  }

  private async doClose(): Promise<void> {
    // without a request handler the client host answers every request SHUTTING_DOWN
    if (this.onClientRequest !== undefined) this.clientHost?.off('request', this.onClientRequest);
    this.clientPath.stop();
    this.upgrades.close();
    this.peerMessages.clear();
    if (this.replySweep !== undefined) clearInterval(this.replySweep);
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    await this.queue.catch(() => undefined);
    await this.afterWrites;
    await this.executor.flush().catch((e: unknown) => this.log.error({ err: e }, 'last batch write failed'));
    await this.announcer?.idle();
    await this.metrics?.close();
    await this.clientHost?.close();
    await this.nodeHost?.close();
    await this.voteStore.flush();
    this.threePcStore?.close();
    await this.stores.kv.close();
    this.log.info({}, 'node stopped');
  }
}
