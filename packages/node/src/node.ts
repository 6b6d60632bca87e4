// QuireNode: the composition root of one validator. Opens the database and the stores, loads
// genesis into empty ledgers and repairs what startup can repair, builds the request executor and
// pipeline, the consensus core and its modules, the node and client hosts, and runs the core's
// effects. Every core event is handled to completion, one at a time; an ordered batch's atomic
// write is durable before any client hears about it. close() is idempotent and closes in reverse.
import { b58decode, b58encode, decodeMsgpack, encodeMsgpack, parseJson } from '@quire/common';
import { type ConsensusEffect, type ConsensusEvent, ConsensusCore, createBlsConsensusCrypto } from '@quire/consensus';
import { blsVerifyPop } from '@quire/crypto';
import { ClientHost, NodeHost } from '@quire/network';
import { type ExecutorStores, RequestExecutor, RequestPipeline, poolWritesFromTxns, type Txn } from '@quire/requests';
import {
  AttributeStore,
  BlsStore,
  Ledger,
  SeqNoIndex,
  StateTrie,
  TimestampStore,
  openLevelKvStore,
  openMemoryKvStore,
} from '@quire/storage';
import { AuditTrail } from './audit-trail.js';
import { configTxns, genesisSize, loadGenesisFiles, repairState } from './startup.js';
import { ClientPath, type ClientChannel, type ClientPathModules } from './client-path.js';
import { type NodeConfig, resolvePath } from './config.js';
import { ConsensusExecutor, type NodeStores } from './consensus-executor.js';
import { NodeError, NodeErrorCode, reasonOf } from './errors.js';
import { type NodeKeys, readKeyFile } from './keys.js';
import type { NodeLogger } from './logger.js';
import { NodeMetrics } from './metrics.js';
import { PoolRegistry } from './pool-registry.js';
import { ExecutorRequestAnalyzer } from './request-analyzer.js';

export interface QuireNodeOptions {
  dataDir: string;
  config: NodeConfig;
  /** keep everything in memory (tests): no database directory is created */
  inMemory?: boolean;
}

export interface QuireNodeModules {
  logger: NodeLogger;
  /** pre-loaded keys (tests); default: the key file of the config */
  keys?: NodeKeys;
  /** carries out authorized actions (POOL_RESTART, VALIDATOR_INFO); without it they are refused */
  onAction?: ClientPathModules['onAction'];
}

export class QuireNode {
  readonly name: string;
  readonly stores: NodeStores;
  readonly core: ConsensusCore;
  readonly executor: ConsensusExecutor;
  readonly clientPath: ClientPath;
  readonly metrics: NodeMetrics | undefined;
  /** bound ports (useful when the config asks for port 0) */
  nodePort = 0;
  clientPort = 0;
  metricsPort: number | undefined;
  readonly poolId: string;
  private nodeHost: NodeHost | undefined;
  private clientHost: ClientHost | undefined;
  private readonly log: NodeLogger;
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private queue: Promise<void> = Promise.resolve();
  private closing: Promise<void> | undefined;
  private accepting = true;
  private readonly channels = new Map<string, Set<ClientChannel>>();

  private constructor(
    name: string,
    private readonly opts: QuireNodeOptions,
    private readonly keys: NodeKeys,
    parts: { stores: NodeStores; core: ConsensusCore; executor: ConsensusExecutor; clientPath: ClientPath; metrics: NodeMetrics | undefined; poolId: string; logger: NodeLogger },
  ) {
    this.name = name;
    this.stores = parts.stores;
    this.core = parts.core;
    this.executor = parts.executor;
    this.clientPath = parts.clientPath;
    this.metrics = parts.metrics;
    this.poolId = parts.poolId;
    this.log = parts.logger;
  }

  static async create(options: QuireNodeOptions, modules: QuireNodeModules): Promise<QuireNode> {
    const cfg = options.config;
    const dir = options.dataDir;
    const keys = modules.keys ?? (await readKeyFile(resolvePath(dir, cfg.keysFile)));
    const name = cfg.name ?? keys.name;
    const log = modules.logger.child({ module: 'node' });
    const kv = options.inMemory === true ? await openMemoryKvStore() : await openLevelKvStore(resolvePath(dir, cfg.dbDir));
    try {
      const ledgers = {
        0: await Ledger.open(kv, 0),
        1: await Ledger.open(kv, 1),
        2: await Ledger.open(kv, 2),
        3: await Ledger.open(kv, 3),
      };
      const states = { 0: await StateTrie.open(kv, 'pool'), 1: await StateTrie.open(kv, 'domain'), 2: await StateTrie.open(kv, 'config') };
      const stores: NodeStores = {
        kv,
        ledgers,
        states,
        bls: new BlsStore(kv),
        seqNoIndex: new SeqNoIndex(kv),
        timestamps: new TimestampStore(kv),
        attributes: new AttributeStore(kv),
      };
      const requestStores = { kv, ledgers: { 0: ledgers[0], 1: ledgers[1], 2: ledgers[2] }, states, attributes: stores.attributes, timestamps: stores.timestamps, seqNoIndex: stores.seqNoIndex } as unknown as ExecutorStores;
      const reqExecutor = new RequestExecutor({ verifySignatures: true }, { stores: requestStores });
      await loadGenesisFiles(reqExecutor, ledgers, dir, cfg, log);
      await repairState(reqExecutor, stores, log);

      const registry = new PoolRegistry();
      const poolTxns: Txn[] = [];
      for await (const [, t] of ledgers[0].range(1, ledgers[0].size)) {
        registry.apply(t);
        poolTxns.push(t as unknown as Txn);
      }
      const self = registry.node(name);
      if (self === undefined) throw new NodeError(NodeErrorCode.NOT_IN_POOL, { name, reason: 'no NODE txn with this alias in the pool ledger' });
      if (self.dest !== keys.dest) throw new NodeError(NodeErrorCode.NOT_IN_POOL, { name, reason: `the key file's dest ${keys.dest} differs from NODE.dest ${self.dest}` });
      const audit = await AuditTrail.load(ledgers[3]);
      const summary = audit.summary();
      if (summary !== undefined) {
        for (const [l, size] of audit.targets()) {
          if (l <= 2 && ledgers[l as 0 | 1 | 2].size !== size.size) {
            throw new NodeError(NodeErrorCode.STORAGE_INCONSISTENT, { reason: `ledger ${l} has ${ledgers[l as 0 | 1 | 2].size} txns, the last audit txn says ${size.size}` });
          }
        }
      }
      const metrics = cfg.metricsPort !== null ? new NodeMetrics({ node: name }) : undefined;
      const holder: { node?: QuireNode } = {};
      const executor = new ConsensusExecutor(
        { durable: cfg.durable },
        { stores, executor: reqExecutor, registry, audit, onCommitted: (lid, txns) => holder.node?.onCommitted(lid, txns) },
      );
      const execLog = modules.logger.child({ module: 'executor' });
      executor.log = (msg) => execLog.warn({}, msg);
      const blsKeys = new Map<string, Uint8Array | null>();
      const crypto = createBlsConsensusCrypto({
        secretKeyAt: () => keys.bls,
        publicKeyAt: (alias, poolRoot) => {
          const dest = executor.uncommittedRegistry.destOf(alias) ?? executor.registry.destOf(alias);
          if (dest === undefined) return undefined;
          let raw: Uint8Array | undefined;
          try {
            raw = states[0].getAt(b58decode(poolRoot), dest);
          } catch {
            return undefined;
          }
          if (raw === undefined) return undefined;
          const rec = parseJson(new TextDecoder().decode(raw)) as Record<string, unknown>;
          if (typeof rec.blskey !== 'string' || typeof rec.blskey_pop !== 'string') return undefined;
          const cacheKey = `${rec.blskey}|${rec.blskey_pop}`;
          let pk = blsKeys.get(cacheKey);
          if (pk === undefined) {
            try {
              const k = b58decode(rec.blskey);
              pk = blsVerifyPop(k, b58decode(rec.blskey_pop)) ? k : null;
            } catch {
              pk = null;
            }
            blsKeys.set(cacheKey, pk);
          }
          return pk ?? undefined;
        },
      });
      const core = new ConsensusCore(
        { ...cfg.consensus, name, validators: [...registry.validators] },
        {
          executor,
          crypto,
          requests: new ExecutorRequestAnalyzer(reqExecutor),
          clock: { now: () => performance.now(), utcSeconds: () => Math.floor(Date.now() / 1000) },
          logger: modules.logger.child({ module: 'consensus' }),
        },
      );
      const clientPath = new ClientPath({
        pipeline: new RequestPipeline(reqExecutor, requestStores),
        stores,
        submit: (connId, request) => holder.node?.enqueue({ kind: 'clientRequest', connId, request }),
        onForced: (r) => {
          if (r.type === '111' && typeof r.operation.writes === 'boolean') clientPath.setWritable(r.operation.writes);
        },
        now: () => Math.floor(Date.now() / 1000),
        logger: modules.logger.child({ module: 'client' }),
        metrics,
        ...(modules.onAction !== undefined ? { onAction: modules.onAction } : {}),
      });
      clientPath.setWritable(poolWritesFromTxns(await configTxns(ledgers[2])));
      const poolId = b58encode(await ledgers[0].rootAt(Math.min(ledgers[0].size, genesisSize(poolTxns))));
      const node = new QuireNode(name, options, keys, { stores, core, executor, clientPath, metrics, poolId, logger: log });
      holder.node = node;
      try {
        await node.start();
      } catch (e) {
        await node.close();
        throw e;
      }
      return node;
    } catch (e) {
      await kv.close();
      throw e;
    }
  }

  private async start(): Promise<void> {
    const cfg = this.opts.config;
    const self = this.executor.registry.node(this.name)!;
    const nodeHost = cfg.nodeHost ?? String(self.data.node_ip ?? '127.0.0.1');
    const nodePort = cfg.nodePort ?? Number(self.data.node_port);
    const clientHostAddr = cfg.clientHost ?? String(self.data.client_ip ?? '127.0.0.1');
    const clientPort = cfg.clientPort ?? Number(self.data.client_port);
    const orderedTopic = `/quire/${this.poolId}/ordered/1`;
    this.nodeHost = await NodeHost.create(
      { name: this.name, seed: this.keys.seed, host: nodeHost, port: nodePort, maxMessageLength: cfg.limits.maxMessageLength, topics: [orderedTopic] },
      { logger: this.log.child({ module: 'network' }) },
    );
    this.nodePort = this.nodeHost.port;
    this.nodeHost.on('message', (from, data) => {
      let msg: unknown;
      try {
        msg = decodeMsgpack(data);
      } catch {
        this.metrics?.suspicions.inc({ code: 'undecodable' });
        return;
      }
      this.enqueue({ kind: 'nodeMessage', from, msg });
    });
    this.nodeHost.on('peer:connect', (alias) => this.enqueue({ kind: 'peerConnected', alias }));
    this.nodeHost.on('peer:disconnect', (alias) => this.enqueue({ kind: 'peerDisconnected', alias }));
    this.nodeHost.subscribe(orderedTopic, () => undefined);
    this.nodeHost.setValidators(this.executor.registry.validatorInfos());

    this.clientHost = await ClientHost.create(
      {
        seed: this.keys.seed,
        host: clientHostAddr,
        port: clientPort,
        maxMessageLength: cfg.limits.maxMessageLength,
        clientRate: cfg.limits.clientRate,
        clientBurst: cfg.limits.clientBurst,
        maxConnections: cfg.limits.maxConnectedClients,
        maxConnectionsPerIp: cfg.limits.maxConnectionsPerIp,
        idleTimeoutMs: cfg.limits.clientIdleTimeoutMs,
      },
      { logger: this.log.child({ module: 'client-host' }) },
    );
    this.clientPort = this.clientHost.port;
    const ch = this.clientHost;
    ch.on('request', (clientId, data, respond, info) => {
      if (!this.accepting) return;
      const channel: ClientChannel = { respond, push: (bytes) => ch.push(clientId, bytes, info.requestId) };
      let set = this.channels.get(clientId);
      if (set === undefined) this.channels.set(clientId, (set = new Set()));
      set.add(channel);
      void this.clientPath.handle(data, channel);
    });
    ch.on('session:close', (clientId) => {
      const set = this.channels.get(clientId);
      this.channels.delete(clientId);
      if (set !== undefined) for (const c of set) this.clientPath.forgetChannel(c);
    });
    if (cfg.metricsPort !== null && this.metrics !== undefined) this.metricsPort = await this.metrics.listen(cfg.metricsPort);
    const st = this.core.status();
    this.log.info({ nodePort: this.nodePort, clientPort: this.clientPort, validators: st.validators, viewNo: st.viewNo, lastOrdered: st.lastOrdered, poolId: this.poolId }, 'node started');
    this.seenView = st.viewNo;
    this.queue = this.queue.then(() => this.runEffects(this.core.start()));
  }

  /** Serialises one core event behind the previous ones. */
  enqueue(event: ConsensusEvent): void {
    if (this.closing !== undefined) return;
    this.queue = this.queue.then(async () => {
      if (this.closing !== undefined && event.kind !== 'timer') return;
      let effects: ConsensusEffect[];
      try {
        effects = this.core.handle(event);
      } catch (e) {
        this.log.error({ err: e, event: event.kind }, 'consensus core failed on an event');
        return;
      }
      await this.runEffects(effects);
      if (this.metrics !== undefined) this.observe();
    });
  }

  /** The consensus core's view of this node (view, last ordered batch, catch-up). */
  status(): ReturnType<ConsensusCore['status']> {
    return this.core.status();
  }

  private seenView = 0;
  private catchupStartedAt: number | undefined;

  /** View-change and catch-up metrics from the core's status transitions. */
  private observe(): void {
    const m = this.metrics!;
    const st = this.core.status();
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

  private async runEffects(effects: ConsensusEffect[]): Promise<void> {
    for (const eff of effects) {
      try {
        await this.runEffect(eff);
      } catch (e) {
        if (e instanceof NodeError && e.code === NodeErrorCode.WRITE_FAILED) {
          this.log.fatal({ err: e }, 'a committed batch could not be written; stopping');
          void this.close();
          return;
        }
        this.log.error({ err: e, effect: eff.kind }, 'effect failed');
      }
    }
  }

  private async runEffect(eff: ConsensusEffect): Promise<void> {
    switch (eff.kind) {
      case 'broadcast':
        this.nodeHost?.broadcast(encodeMsgpack(stripUndefined(eff.msg)));
        return;
      case 'send':
        this.nodeHost?.send(eff.to, encodeMsgpack(stripUndefined(eff.msg)));
        return;
      case 'setTimer': {
        const old = this.timers.get(eff.id);
        if (old !== undefined) clearTimeout(old);
        this.timers.set(
          eff.id,
          setTimeout(() => {
            this.timers.delete(eff.id);
            this.enqueue({ kind: 'timer', id: eff.id });
          }, Math.max(0, eff.delayMs)),
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
        await this.executor.flush();
        await this.clientPath.replyFromLedger(eff.connId, eff.payloadDigest, eff.digest);
        return;
      case 'ordered': {
        const started = performance.now();
        await this.executor.flush();
        this.metrics?.batchCommit.observe((performance.now() - started) / 1000 + this.executor.lastWriteMs / 1000);
        this.metrics?.batches.inc({ ledger: String(eff.ledgerId) });
        this.metrics?.txns.inc({ ledger: String(eff.ledgerId) }, eff.replies.length);
        this.metrics?.lastOrdered.set(eff.ppSeqNo);
        this.metrics?.viewNo.set(eff.viewNo);
        this.log.debug({ viewNo: eff.viewNo, ppSeqNo: eff.ppSeqNo, ledgerId: eff.ledgerId, txns: eff.replies.length, rejected: eff.rejects.length }, 'batch ordered');
        await this.clientPath.ordered(eff.ledgerId, eff.replies, eff.rejects);
        this.announce(eff);
        return;
      }
      case 'suspicion':
        this.metrics?.suspicions.inc({ code: String(eff.code) });
        this.log.debug({ peer: eff.peer, code: eff.code, vote: eff.vote }, 'suspicion');
        return;
      case 'alarm':
        this.log.warn({ reason: eff.reason, ...eff.data }, 'consensus alarm');
        return;
    }
  }

  /** OBSERVED_DATA{BATCH} on the ordered-batch topic (consensus.md §9.2). */
  private announce(eff: Extract<ConsensusEffect, { kind: 'ordered' }>): void {
    const host = this.nodeHost;
    if (host === undefined) return;
    const msg = {
      op: 'OBSERVED_DATA',
      msg_type: 'BATCH',
      msg: {
        ledgerId: eff.ledgerId,
        instId: 0,
        viewNo: eff.viewNo,
        ppSeqNo: eff.ppSeqNo,
        ppTime: eff.ppTime,
        digest: eff.digest,
        seqNoStart: eff.replies.length > 0 ? eff.replies[0]!.seqNo : 0,
        seqNoEnd: eff.replies.length > 0 ? eff.replies[eff.replies.length - 1]!.seqNo : 0,
        auditTxnRootHash: b58encode(this.stores.ledgers[3].root),
        stateRootHash: b58encode(this.stores.states[eff.ledgerId as 0 | 1 | 2].committedRoot),
        txnRootHash: b58encode(this.stores.ledgers[eff.ledgerId as 0 | 1 | 2].root),
        blsMultiSigs: eff.multiSigs.map((m) => [m.signature, m.participants, [m.value.ledger_id, m.value.state_root_hash, m.value.pool_state_root_hash, m.value.txn_root_hash, m.value.timestamp]]),
      },
    };
    host.publish(`/quire/${this.poolId}/ordered/1`, encodeMsgpack(msg)).catch((e: unknown) => this.log.debug({ err: reasonOf(e) }, 'ordered-batch announcement not published'));
  }

  /** Commit hooks (consensus.md §3.8 step 5): pool membership and the POOL_CONFIG writes flag. */
  private onCommitted(ledgerId: number, txns: readonly Txn[]): void {
    if (ledgerId === 0) {
      this.nodeHost?.setValidators(this.executor.registry.validatorInfos());
      this.log.info({ validators: this.executor.registry.validators }, 'pool ledger changed');
    }
    if (ledgerId === 2) {
      for (const t of txns) {
        const body = (t as { txn?: { type?: string; data?: Record<string, unknown> } }).txn;
        if (body?.type === '111' && typeof body.data?.writes === 'boolean' && body.data.force !== true) this.clientPath.setWritable(body.data.writes);
      }
    }
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
    this.accepting = false;
    this.clientPath.stop();
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    await this.queue.catch(() => undefined);
    await this.executor.flush().catch((e: unknown) => this.log.error({ err: e }, 'last batch write failed'));
    await this.metrics?.close();
    await this.clientHost?.close();
    await this.nodeHost?.close();
    await this.stores.kv.close();
    this.log.info({}, 'node stopped');
  }
}

function stripUndefined<T extends object>(msg: T): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(msg)) if (v !== undefined) out[k] = v;
  return out as T;
}
