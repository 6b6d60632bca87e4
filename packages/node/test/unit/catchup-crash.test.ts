// A node killed at any instant of a catch-up restarts and completes it (#15 F6). Catch-up writes the
// audit ledger first, then pool, config and domain, each reply in an atomic write of its own
// (consensus.md §7.2); a kill between two of them leaves ledgers behind the audit ledger. Here the
// leecher's key-value store loses every batch write from the k-th on (a kill -9 just before write
// k lands: LevelDB batches are atomic, so that is every state a kill can leave), for every k of a
// whole catch-up; a process started again over what landed must open its stores and catch up to
// exactly the seeders' ledgers and states.
import { expect } from 'chai';
import { b58encode } from '@quire/common';
import { ConsensusCore, type ConsensusEffect, createBlsConsensusCrypto } from '@quire/consensus';
import { Simulation } from '@quire/consensus/sim';
import { RequestExecutor, type Txn } from '@quire/requests';
import { type KvStore, type WriteBatch, openMemoryKvStore, parseGenesis } from '@quire/storage';
import { AuditTrail } from '../../src/audit-trail.js';
import { CATCHUP_MARK_BUCKET, ConsensusExecutor, type NodeStores, catchupInterrupted } from '../../src/consensus-executor.js';
import { NodeErrorCode } from '../../src/errors.js';
import { type LedgerBehindAudit, blsKeyLookup, checkAgainstAudit, openNodeStores } from '../../src/node-setup.js';
import { PoolRegistry } from '../../src/pool-registry.js';
import { PeerMessageDecoder, encodePeerMessage } from '../../src/peer-wire.js';
import { ExecutorRequestAnalyzer } from '../../src/request-analyzer.js';
import { type RealSimPool, type SimConsensusExecutor, realSimPool, simBlsKey, simDomainGenesis, simPoolGenesis } from '../../src/sim/index.js';

/** A message as the leecher's peer wire gives it: encoded as a node sends it, decoded as a node reads it. */
const overPeerWire = (msg: unknown): unknown => new PeerMessageDecoder().decode(encodePeerMessage(msg as object));

const GENESIS = ['Node1', 'Node2', 'Node3', 'Node4'];
const LEDGERS = [0, 1, 2, 3] as const;

/** A store whose batch writes from the `crashAt`-th on are lost (resolve unwritten: the process is dying). */
function crashingKv(inner: KvStore, crashAt: number): { kv: KvStore; writes: () => number } {
  let writes = 0;
  const wrapBatch = (b: WriteBatch): WriteBatch => {
    const proxy: WriteBatch = new Proxy(b, {
      get(target, p) {
        if (p === 'write') {
          return (opts?: { sync?: boolean }) => {
            writes++;
            return writes >= crashAt ? Promise.resolve() : target.write(opts);
          };
        }
        if (p === 'put' || p === 'del' || p === 'afterWrite') {
          return (...args: unknown[]) => {
            (target[p] as (...a: unknown[]) => unknown).apply(target, args);
            return proxy;
          };
        }
        const v: unknown = Reflect.get(target, p, target);
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
    return proxy;
  };
  const kv = new Proxy(inner, {
    get(target, p) {
      if (p === 'batch') return () => wrapBatch(target.batch());
      const v: unknown = Reflect.get(target, p, target);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  return { kv, writes: () => writes };
}

interface Leecher {
  stores: NodeStores;
  executor: ConsensusExecutor;
  core: ConsensusCore;
  behind: LedgerBehindAudit[];
}

/** Node4's startup over `kv`, as a node process does it: genesis into empty ledgers, registry, audit check, executor, core. */
interface Genesis {
  pool: string;
  domain: string;
}

async function openLeecher(kv: KvStore, clock: { now(): number; utcSeconds(): number }, genesis: Genesis): Promise<Leecher> {
  const { stores, requestStores } = await openNodeStores(kv);
  const reqExecutor = new RequestExecutor({ verifySignatures: true }, { stores: requestStores });
  if (stores.ledgers[0].size === 0)
    await reqExecutor.applyGenesis(
      0,
      parseGenesis(genesis.pool, { file: 'pool', ledgerId: 0 }).map((e) => e.txn as unknown as Txn),
    );
  if (stores.ledgers[1].size === 0)
    await reqExecutor.applyGenesis(
      1,
      parseGenesis(genesis.domain, { file: 'domain', ledgerId: 1 }).map((e) => e.txn as unknown as Txn),
    );
  const registry = new PoolRegistry();
  for (let s = 1; s <= stores.ledgers[0].size; s++) registry.apply(stores.ledgers[0].getSync(s));
  const audit = await AuditTrail.load(stores.ledgers[3]);
  const behind = checkAgainstAudit(audit, stores.ledgers, catchupInterrupted(kv));
  const executor = new ConsensusExecutor({ durable: false }, { stores, executor: reqExecutor, registry, audit });
  const crypto = createBlsConsensusCrypto({
    secretKeyAt: () => simBlsKey('Node4', 0).secret,
    publicKeyAt: blsKeyLookup(stores.states[0], (alias) => executor.uncommittedRegistry.destOf(alias) ?? executor.registry.destOf(alias)),
  });
  const core = new ConsensusCore(
    { name: 'Node4', validators: [...registry.validators] },
    { executor, crypto, requests: new ExecutorRequestAnalyzer(reqExecutor), clock },
  );
  return { stores, executor, core, behind };
}

/** Runs the leecher's catch-up against fresh cores over Node1-3's stores; true when it completed. */
async function catchUp(sim: Simulation<SimConsensusExecutor>, leecher: Leecher, clock: { t: number; now(): number; utcSeconds(): number }): Promise<boolean> {
  const seeders = new Map<string, ConsensusCore>();
  for (const n of sim.nodes.filter((x) => x.name !== 'Node4')) {
    seeders.set(
      n.name,
      new ConsensusCore(
        { name: n.name, validators: n.executor.lastAudit()?.nodeReg ?? GENESIS },
        { executor: n.executor, crypto: n.replica.crypto, requests: n.replica.requests, clock },
      ),
    );
  }
  const queue: { from: string; to: string; msg: unknown }[] = [];
  const out = async (effects: ConsensusEffect[]): Promise<void> => {
    await leecher.executor.flush();
    for (const e of effects) {
      if (e.kind === 'broadcast') for (const to of seeders.keys()) queue.push({ from: 'Node4', to, msg: e.msg });
      if (e.kind === 'send' && seeders.has(e.to)) queue.push({ from: 'Node4', to: e.to, msg: e.msg });
      expect(e.kind, 'nothing is ordered during catch-up').to.not.equal('ordered');
    }
  };
  await out(leecher.core.start());
  for (let round = 0; round < 200 && leecher.core.status().catchingUp; round++) {
    while (queue.length > 0) {
      const { from, to, msg } = queue.shift()!;
      if (to === 'Node4') {
        await out(leecher.core.handle({ kind: 'nodeMessage', from, msg: overPeerWire(msg) }));
        continue;
      }
      for (const e of seeders.get(to)!.handle({ kind: 'nodeMessage', from, msg }))
        if (e.kind === 'send' && e.to === 'Node4') queue.push({ from: to, to: 'Node4', msg: e.msg });
    }
    clock.t += 500;
    await out(leecher.core.handle({ kind: 'timer', id: 'tick' }));
  }
  return !leecher.core.status().catchingUp;
}

function expectSameAsSeeder(leecher: Leecher, seeder: SimConsensusExecutor, note: string): void {
  for (const l of LEDGERS) expect(leecher.executor.ledgerStatus(l), `${note}: ledger ${l}`).to.deep.equal(seeder.ledgerStatus(l));
  const roots = (ex: { ledgerTargets(): Map<number, { size: number; root: string }> }) => [...ex.ledgerTargets()].sort(([a], [b]) => a - b);
  expect(roots(leecher.executor), `${note}: audit targets`).to.deep.equal(roots(seeder));
  expect(leecher.executor.lastAudit(), `${note}: last audit txn`).to.deep.equal(seeder.lastAudit());
}

/** A run on the real stack whose seeders stay open, and the genesis its nodes started from. */
async function orderedPool(
  faults: string,
  seed: number,
  requests: number,
  consensus: Record<string, number> = {},
): Promise<{ sim: Simulation<SimConsensusExecutor>; pool: RealSimPool; genesis: Genesis }> {
  let pool!: RealSimPool;
  let genesis!: Genesis;
  const sim = new Simulation<SimConsensusExecutor>(
    { seed, nodes: 4, faults, requests, consensus },
    {
      pool: (ctx) => {
        pool = realSimPool(ctx);
        // as realSimPool builds it: the joiner's steward is on the domain ledger too
        genesis = { pool: simPoolGenesis(ctx.genesis), domain: simDomainGenesis(ctx.genesis.length + (ctx.joiner !== undefined ? 1 : 0)) };
        return { replica: (a) => pool.replica(a), workload: pool.workload };
      },
    },
  );
  expect((await sim.runAsync()).violations).to.deep.equal([]);
  return { sim, pool, genesis };
}

type Clock = { t: number; now(): number; utcSeconds(): number };

/**
 * For every k: a fresh Node4 loses every write of its catch-up from the k-th on, and (`secondCrash`)
 * after its restart also every write from the `secondCrash`-th on; started once more over what
 * landed, it must open and catch up to exactly the seeders' state. Returns the number of writes of
 * a whole catch-up and how many restarts found ledgers behind the audit ledger.
 */
async function crashEverywhere(sim: Simulation<SimConsensusExecutor>, genesis: Genesis, secondCrash?: number): Promise<{ total: number; interrupted: number }> {
  const seeder = sim.nodes[0]!.executor;
  const clock: Clock = { t: 0, now: () => clock.t, utcSeconds: () => 1_800_000_000 + Math.floor(clock.t / 1000) };
  // the writes of one whole catch-up, from genesis
  const whole = await openMemoryKvStore();
  await openLeecher(whole, clock, genesis);
  const counted = crashingKv(whole, Number.POSITIVE_INFINITY);
  const full = await openLeecher(counted.kv, clock, genesis);
  expect(await catchUp(sim, full, clock)).to.equal(true);
  expectSameAsSeeder(full, seeder, 'uninterrupted');
  const total = counted.writes();
  let interrupted = 0;
  for (let k = 1; k <= total; k++) {
    const raw = await openMemoryKvStore();
    await openLeecher(raw, clock, genesis);
    const crashes = secondCrash === undefined ? [k] : [k, secondCrash];
    for (const at of crashes) {
      const node = await openLeecher(crashingKv(raw, at).kv, clock, genesis);
      if (node.behind.length > 0) interrupted++;
      await catchUp(sim, node, clock);
      // kill -9: everything in memory is gone; the next process opens what landed
    }
    let restarted: Leecher;
    try {
      restarted = await openLeecher(raw, clock, genesis);
    } catch (e) {
      expect.fail(
        `crashes before writes ${crashes.join(', ')} of ${total}: the node does not start again: ${(e as Error).message} (${String((e as { code?: unknown }).code)})`,
      );
    }
    if (restarted.behind.length > 0) interrupted++;
    const note = `crashes before writes ${crashes.join(', ')} of ${total}`;
    expect(await catchUp(sim, restarted, clock), `${note}: catch-up completes`).to.equal(true);
    expectSameAsSeeder(restarted, seeder, note);
    for (const l of [0, 1, 2] as const)
      expect(b58encode(restarted.stores.states[l].committedRoot), `${note}: state ${l}`).to.equal(b58encode(full.stores.states[l].committedRoot));
    expect(catchupInterrupted(raw), `${note}: catch-up mark cleared`).to.equal(false);
    expect(checkAgainstAudit(await AuditTrail.load(restarted.stores.ledgers[3]), restarted.stores.ledgers, false), note).to.deep.equal([]);
    await raw.close();
  }
  await whole.close();
  return { total, interrupted };
}

describe('a node killed at any instant of a catch-up restarts and completes it (#15 F6)', function () {
  this.timeout(600_000);
  const pools: RealSimPool[] = [];
  after(async () => {
    for (const p of pools) await p.close();
  });

  it('opens and catches up after losing every write from the k-th on, for every k (audit and domain ledgers, several replies each)', async () => {
    // enough batches and domain txns for several CATCHUP_REPs of each (50 txns each at least)
    const { sim, pool, genesis } = await orderedPool('none', 3, 130, { max3pcBatchSize: 2 });
    pools.push(pool);
    expect(sim.nodes[0]!.executor.ledgerStatus(1).size).to.be.greaterThan(100);
    expect(sim.nodes[0]!.executor.ledgerStatus(3).size).to.be.greaterThan(55);
    const { total, interrupted } = await crashEverywhere(sim, genesis);
    expect(total, 'several audit replies, then several domain replies').to.be.at.least(4);
    // the crashes did hit between the audit ledger and the ledgers it names
    expect(interrupted).to.be.greaterThan(0);
  });

  it('the same with the pool ledger caught up too (membership changes), killed twice in one catch-up', async () => {
    const { sim, pool, genesis } = await orderedPool('membership', 1105, 40);
    pools.push(pool);
    expect(sim.nodes[0]!.executor.committedSize(0)).to.be.greaterThan(GENESIS.length);
    const { interrupted } = await crashEverywhere(sim, genesis, 2);
    expect(interrupted).to.be.greaterThan(0);
  });

  it('refuses ledgers behind the audit ledger without the catch-up mark (a torn or lost write, not a catch-up)', async () => {
    const { sim, pool, genesis } = await orderedPool('none', 5, 20);
    pools.push(pool);
    const clock: Clock = { t: 0, now: () => clock.t, utcSeconds: () => 1_800_000_000 };
    const raw = await openMemoryKvStore();
    await openLeecher(raw, clock, genesis);
    // the audit ledger lands, the domain ledger's write does not
    const node = await openLeecher(crashingKv(raw, 2).kv, clock, genesis);
    await catchUp(sim, node, clock);
    expect(catchupInterrupted(raw)).to.equal(true);
    expect((await openLeecher(raw, clock, genesis)).behind.map((b) => b.ledgerId)).to.deep.equal([1]);
    // the same storage without the mark: what a commit split in two writes would leave
    await raw.batch().del(CATCHUP_MARK_BUCKET, new TextEncoder().encode('ledgers-behind-audit')).write();
    let code: unknown;
    try {
      await openLeecher(raw, clock, genesis);
    } catch (e) {
      code = (e as { code?: unknown }).code;
    }
    expect(code).to.equal(NodeErrorCode.STORAGE_INCONSISTENT);
    await raw.close();
  });

  it('still refuses to start when a ledger is ahead of the audit ledger (no write makes that)', async () => {
    const { sim, pool, genesis } = await orderedPool('none', 4, 20);
    pools.push(pool);
    const clock: Clock = { t: 0, now: () => clock.t, utcSeconds: () => 1_800_000_000 };
    const raw = await openMemoryKvStore();
    const l = await openLeecher(raw, clock, genesis);
    expect(await catchUp(sim, l, clock)).to.equal(true);
    const trail = await AuditTrail.load(l.stores.ledgers[3]);
    expect(checkAgainstAudit(trail, l.stores.ledgers, false)).to.deep.equal([]);
    // the domain ledger one txn beyond what the last audit txn says
    const ahead = { ...l.stores.ledgers, 1: { size: trail.targets().get(1)!.size + 1 } } as unknown as NodeStores['ledgers'];
    let code: unknown;
    try {
      checkAgainstAudit(trail, ahead, true);
    } catch (e) {
      code = (e as { code?: unknown }).code;
    }
    expect(code).to.equal(NodeErrorCode.STORAGE_INCONSISTENT);
    await raw.close();
  });
});
