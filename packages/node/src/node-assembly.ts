// The construction of a node's parts, in startup order (architecture.md "node"): the stores over
// one database, the upgrade service (whose installed version POOL_UPGRADE validation needs), the
// request executor, genesis and state repair, the validator registry and audit checks, the
// consensus executor and core, the request pipeline, forced requests and the client path. The
// parts call back into the running node only through `NodeHooks`. On failure everything opened so
// far is closed again.
import type { ConsensusEvent } from '@quire/consensus';
import { ConsensusCore, createBlsConsensusCrypto } from '@quire/consensus';
import { b58encode, LedgerId, type Request } from '@quire/common';
import { RequestExecutor, RequestPipeline, poolWritesFromTxns, type Txn } from '@quire/requests';
import { type KvStore, openLevelKvStore, openMemoryKvStore } from '@quire/storage';
import { AuditTrail } from './audit-trail.js';
import { countedBlsCrypto } from './bls-metrics.js';
import { type ActionOutcome, type ActionRequest, ClientPath } from './client-path.js';
import { type NodeConfig, consensusOptionsOf, resolvePath } from './config.js';
import { ConsensusExecutor, type NodeStores, catchupInterrupted } from './consensus-executor.js';
import type { NodeError } from './errors.js';
import { ForcedRequests } from './forced-requests.js';
import { type NodeKeys, readKeyFile } from './keys.js';
import type { NodeLogger } from './logger.js';
import { NodeMetrics } from './metrics.js';
import { KvVoteStore, blsKeyLookup, checkAgainstAudit, loadPoolRegistry, openNodeStores } from './node-setup.js';
import { NodeUpgrades } from './node-upgrades.js';
import { loadLedgerPlugins } from './plugins.js';
import { ExecutorRequestAnalyzer } from './request-analyzer.js';
import { configTxns, genesisSize, loadGenesisFiles, repairState, repairStateAgainstAudit } from './startup.js';
import type { UpgradeClock, UpgradeActionRunner } from './upgrade/index.js';
import { nodePackageVersion } from './version.js';
import { FileVoteJournalStore } from './vote-journal-store.js';
import { FileRefusalMarkStore } from './refusal-mark-store.js';

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
  /**
   * Ends the process for a restart or an upgrade (POOL_RESTART, POOL_UPGRADE) with `code`
   * (RESTART_EXIT_CODE). Default: graceful close(), then process.exit(code).
   */
  exit?: (code: number) => void | Promise<void>;
  /**
   * Told, once the node has closed itself after a failure it cannot continue from (a committed
   * batch that could not be written, a commit that failed half-way), with the exit code the process
   * should end with (WRITE_FAILED_EXIT_CODE, COMMIT_FAILED_EXIT_CODE). Default: nothing (the node is closed).
   */
  onFatal?: (code: number) => void;
  /** the upgrade schedulers' clock (tests); default the system clock */
  upgradeClock?: UpgradeClock;
  /** runs the upgrade action (tests); default spawns `upgrade.actionCommand` */
  runUpgradeAction?: UpgradeActionRunner;
}

/** How the parts reach the running node (late bound: the node exists only once they do). */
export interface NodeHooks {
  enqueue(event: ConsensusEvent): void;
  onCommitted(ledgerId: number, txns: readonly Txn[]): void;
  action(request: ActionRequest): Promise<ActionOutcome>;
  submitOwn(request: Request): Promise<void>;
  exit(code: number): void | Promise<void>;
  /** the executor failed for good (COMMIT_FAILED): the node must stop */
  fatal(error: NodeError): void;
}

export interface NodeParts {
  name: string;
  keys: NodeKeys;
  stores: NodeStores;
  core: ConsensusCore;
  executor: ConsensusExecutor;
  clientPath: ClientPath;
  forced: ForcedRequests;
  upgrades: NodeUpgrades;
  metrics: NodeMetrics | undefined;
  poolId: string;
  /** the node's logger (`node` bound), parent of every module's logger */
  rootLogger: NodeLogger;
  /** module `node` */
  logger: NodeLogger;
  /** INSTANCE_CHANGE votes kept across restarts (flushed before the database closes) */
  voteStore: KvVoteStore;
  /** the 3PC vote journal's file (closed with the node); none when kept in memory */
  threePcStore: FileVoteJournalStore | undefined;
}

/** Most txns in one CATCHUP_REP to a client (CATCHUP_MAX_TXNS_PER_REQ, consensus.md §10). */
const CATCHUP_MAX_TXNS_PER_REQ = 2000;

export async function assembleNode(options: QuireNodeOptions, modules: QuireNodeModules, hooks: NodeHooks): Promise<NodeParts> {
  const cfg = options.config;
  const dir = options.dataDir;
  const keys = modules.keys ?? (await readKeyFile(resolvePath(dir, cfg.keysFile)));
  const name = cfg.name ?? keys.name;
  // every line names the node, also when the config leaves `name` to the key file
  const root = withNodeName(modules.logger, name);
  const log = root.child({ module: 'node' });
  // ledger plugins first: a plugin that does not load stops the start before the database opens
  const plugins = await loadLedgerPlugins(cfg.plugins, dir);
  for (const p of plugins.plugins) log.info({ plugin: p.name, ledgerId: p.ledgerId, types: p.handlers.map((h) => h.type) }, 'ledger plugin loaded');
  const kv: KvStore = options.inMemory === true ? await openMemoryKvStore() : await openLevelKvStore(resolvePath(dir, cfg.dbDir));
  let upgrades: NodeUpgrades | undefined;
  try {
    const { stores, requestStores } = await openNodeStores(kv, plugins.ledgerIds);
    upgrades = new NodeUpgrades(
      { nodeName: name, nodeDest: keys.dest, dataDir: dir, packageVersion: nodePackageVersion(), upgrade: cfg.upgrade },
      {
        logger: root,
        signer: keys.signer,
        submitOwn: (r) => hooks.submitOwn(r),
        exit: (code) => hooks.exit(code),
        ...(modules.upgradeClock !== undefined ? { clock: modules.upgradeClock } : {}),
        ...(modules.runUpgradeAction !== undefined ? { runAction: modules.runUpgradeAction } : {}),
      },
    );
    const u = upgrades;
    const reqExecutor = new RequestExecutor({ verifySignatures: true }, { stores: requestStores, software: u.software, registry: plugins.registry });
    const analyzer = new ExecutorRequestAnalyzer(reqExecutor);
    await loadGenesisFiles(reqExecutor, stores.ledgers, dir, cfg, log);
    await repairState(reqExecutor, stores, log);
    const { registry, poolTxns } = await loadPoolRegistry(stores.ledgers[LedgerId.POOL], name, keys);
    const audit = await AuditTrail.load(stores.ledgers[LedgerId.AUDIT]);
    const behind = checkAgainstAudit(audit, stores.ledgers, catchupInterrupted(kv));
    if (behind.length > 0) log.warn({ ledgers: behind }, 'ledgers behind the audit ledger (an interrupted catch-up): catch-up completes them');
    await repairStateAgainstAudit(reqExecutor, stores, audit, log);
    const metrics = cfg.metricsPort !== null ? new NodeMetrics({ node: name }) : undefined;
    const executor = new ConsensusExecutor(
      { durable: cfg.durable },
      { stores, executor: reqExecutor, registry, audit, onCommitted: (lid, txns) => hooks.onCommitted(lid, txns), onFatal: (e) => hooks.fatal(e) },
    );
    const execLog = root.child({ module: 'executor' });
    executor.log = (msg) => execLog.warn({}, msg);
    const crypto = countedBlsCrypto(
      createBlsConsensusCrypto({
        secretKeyAt: () => keys.bls,
        publicKeyAt: blsKeyLookup(stores.states[LedgerId.POOL], (alias) => executor.uncommittedRegistry.destOf(alias) ?? executor.registry.destOf(alias)),
      }),
      metrics === undefined ? undefined : { ops: metrics.blsOps, seconds: metrics.blsSeconds },
    );
    const consensusLog = root.child({ module: 'consensus' });
    const voteStore = new KvVoteStore(kv, (reason) => consensusLog.warn({}, reason));
    // the 3PC vote journal (#15 F8): a file beside the database, or nothing when kept in memory
    const threePcStore =
      options.inMemory === true ? undefined : new FileVoteJournalStore(resolvePath(dir, '3pc-votes.json'), {}, (reason) => consensusLog.warn({}, reason));
    const core = new ConsensusCore(
      { ...consensusOptionsOf(cfg), name, validators: [...registry.validators], pluginLedgers: plugins.ledgerIds },
      {
        executor,
        crypto,
        requests: analyzer,
        clock: { now: () => performance.now(), utcSeconds: () => Math.floor((Date.now() + cfg.clockOffsetMs) / 1000) },
        logger: consensusLog,
        voteStore,
        ...(threePcStore !== undefined ? { threePcStore } : {}),
        // admission control's refusals across a restart (consensus intake.ts): a file beside the database
        ...(options.inMemory === true ? {} : { refusalMark: new FileRefusalMarkStore(resolvePath(dir, 'refusal-mark.json')) }),
      },
    );
    // reads are answered at the newest state root with a multi-signature: verifiable by the client
    const pipeline = new RequestPipeline(reqExecutor, requestStores, { readRoot: (ledgerId) => executor.signedReadRoot(ledgerId) });
    const now = (): number => Math.floor((Date.now() + cfg.clockOffsetMs) / 1000);
    const clientLog = root.child({ module: 'client' });
    const forced = new ForcedRequests({
      pipeline,
      setWritable: (w) => clientPath.setWritable(w),
      poolUpgrade: (r) => void u.forcedPoolUpgrade(r),
      now,
      logger: clientLog,
    });
    const clientPath = new ClientPath(
      // a write's reply targets are kept while consensus holds it, and as long after a drop as consensus may still order it
      { droppedWriteMemoryMs: core.droppedRequestMemoryMs, maxMessageLength: cfg.limits.maxMessageLength, maxCatchupTxns: CATCHUP_MAX_TXNS_PER_REQ },
      {
        pipeline,
        stores,
        holds: (digest) => core.holdsRequest(digest),
        submit: (connId, request, info) => {
          analyzer.admit(request, info);
          hooks.enqueue({ kind: 'clientRequest', connId, request });
        },
        admit: (request, inProgress) => core.admitAtDoor(request, inProgress),
        onForced: (r, digest) => forced.apply(r, digest),
        onAction: (r) => hooks.action(r),
        now,
        logger: clientLog,
        metrics,
      },
    );
    clientPath.setWritable(poolWritesFromTxns(await configTxns(stores.ledgers[LedgerId.CONFIG])));
    const poolId = b58encode(await stores.ledgers[LedgerId.POOL].rootAt(Math.min(stores.ledgers[LedgerId.POOL].size, genesisSize(poolTxns))));
    return { name, keys, stores, core, executor, clientPath, forced, upgrades: u, metrics, poolId, rootLogger: root, logger: log, voteStore, threePcStore };
  } catch (e) {
    upgrades?.close();
    await kv.close();
    throw e;
  }
}

/** `logger` with the node's alias bound as `node`, unless it already names one. */
export function withNodeName(logger: NodeLogger, name: string): NodeLogger {
  return (logger.bindings() as { node?: unknown }).node === undefined ? logger.child({ node: name }) : logger;
}
