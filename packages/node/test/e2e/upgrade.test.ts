// Restart and upgrade on a pool of 4 real `quire-node start` processes, each under a small
// supervisor that starts it again when it exits with the restart code (75):
// - a POOL_RESTART from Trustee1 restarts every node; the pool orders again and every txn ordered
//   before is still on every node's ledgers;
// - a POOL_UPGRADE whose times are less than 5 minutes apart is refused unless forced; a forced one
//   upgrades the nodes one after the other (the devnet's upgrade action records the version), each
//   writing NODE_UPGRADE in_progress then complete, in schedule order.
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { b58encode, parseJson, signatureInput } from '@quire/common';
import { Ed25519Signer } from '@quire/crypto';
import { NodeConnection } from '@quire/client';
import { Ledger, openLevelKvStore } from '@quire/storage';
import { RESTART_EXIT_CODE, TRUSTEE_SEED, main, nodeSeed, poolGenesis, standardPoolNodes, writeGenesisFiles } from '../../src/index.js';
import { REPO, freePort, spawnNodeStart, waitFor } from './support.js';

const N = 4;
const trustee = Ed25519Signer.fromSeed(TRUSTEE_SEED);
const te = new TextEncoder();
const td = new TextDecoder();
let nextReqId = Date.now() * 1000;

function signed(operation: Record<string, unknown>): Record<string, unknown> {
  const req: Record<string, unknown> = { identifier: trustee.did, reqId: nextReqId++, protocolVersion: 2, operation };
  req.signature = trustee.signBase58(signatureInput(req));
  return req;
}

const iso = (ms: number): string => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', '+00:00');

/** One node process under a supervisor loop: exit 75 -> start again. */
class Supervised {
  proc: ChildProcess | undefined;
  readonly log: string[] = [];
  readonly exits: (number | null)[] = [];
  starts = 0;
  stopping = false;

  constructor(
    readonly alias: string,
    private readonly dir: string,
    private readonly cfg: string,
  ) {}

  start(): void {
    this.starts++;
    const p = spawnNodeStart(this.dir, this.cfg);
    this.proc = p;
    p.stdout!.on('data', (d: Buffer) => this.log.push(d.toString()));
    p.stderr!.on('data', (d: Buffer) => this.log.push(d.toString()));
    p.once('exit', (code) => {
      this.exits.push(code);
      if (code === RESTART_EXIT_CODE && !this.stopping) this.start();
    });
  }

  get running(): boolean {
    return this.proc !== undefined && this.proc.exitCode === null && this.proc.signalCode === null;
  }

  async stop(): Promise<number | null> {
    this.stopping = true;
    const p = this.proc;
    if (p === undefined || p.exitCode !== null || p.signalCode !== null) return p?.exitCode ?? null;
    const exited = new Promise<number | null>((res) => p.once('exit', (code) => res(code)));
    p.kill('SIGTERM');
    return exited;
  }
}

describe('e2e: POOL_RESTART and POOL_UPGRADE on a supervised 4-process pool', function () {
  this.timeout(300_000);
  let root: string;
  let nodes: ReturnType<typeof standardPoolNodes>;
  const procs: Supervised[] = [];
  const clients: (NodeConnection | undefined)[] = [];
  let beforeRestart: string[][] = [];
  const pushHandlers = new Set<(node: number, m: Record<string, unknown>) => void>();

  async function client(i: number): Promise<NodeConnection> {
    const n = nodes[i]!;
    const c = clients[i];
    if (c !== undefined) return c;
    const fresh = await NodeConnection.connect({ host: '127.0.0.1', port: n.clientPort, dest: n.keys.dest, timeoutMs: 10_000 });
    fresh.on('push', (bytes: Uint8Array) => {
      const m = parseJson(td.decode(bytes)) as Record<string, unknown>;
      for (const h of pushHandlers) h(i, m);
    });
    clients[i] = fresh;
    return fresh;
  }

  async function ask(i: number, req: Record<string, unknown>): Promise<Record<string, unknown>> {
    try {
      return parseJson(td.decode(await (await client(i)).request(te.encode(JSON.stringify(req))))) as Record<string, unknown>;
    } catch (e) {
      await clients[i]?.close().catch(() => undefined);
      clients[i] = undefined;
      throw e;
    }
  }

  /** Sends a write to every node; resolves with the txn once f+1 nodes REPLY it. */
  async function write(req: Record<string, unknown>, timeoutMs = 60_000): Promise<Record<string, unknown>> {
    const replies = new Map<number, Record<string, unknown>>();
    const acked = new Map<number, NodeConnection>();
    const onPush = (i: number, m: Record<string, unknown>): void => {
      const r = m.result as { txn?: { metadata?: { reqId?: unknown } } } | undefined;
      if (m.op === 'REPLY' && r?.txn?.metadata?.reqId === req.reqId) replies.set(i, m.result as Record<string, unknown>);
    };
    pushHandlers.add(onPush);
    const send = async (i: number): Promise<void> => {
      const c = await client(i);
      if (acked.get(i) === c) return;
      const a = await ask(i, req);
      if (a.op === 'REPLY') replies.set(i, a.result as Record<string, unknown>);
      else if (a.op === 'REQACK') acked.set(i, c);
      else throw new Error(`Node${i + 1}: ${JSON.stringify(a)}`);
    };
    try {
      return await waitFor(
        `f+1 REPLYs to ${String(req.reqId)}`,
        async () => {
          // (re)send to the nodes that have not acknowledged it on their current session
          await Promise.allSettled([...Array(N).keys()].filter((i) => !replies.has(i)).map((i) => send(i)));
          await new Promise((r) => setTimeout(r, 300));
          return replies.size >= 2 ? [...replies.values()][0] : undefined;
        },
        timeoutMs,
      );
    } finally {
      pushHandlers.delete(onPush);
    }
  }

  /** Every txn of ledgers 0-2 on node i, by GET_TXN (the read_ledger view over the client protocol). */
  async function ledgers(i: number): Promise<string[][]> {
    const out: string[][] = [];
    for (const ledgerId of [0, 1, 2]) {
      const txns: string[] = [];
      for (let seqNo = 1; ; seqNo++) {
        const r = await ask(i, { identifier: trustee.did, reqId: nextReqId++, protocolVersion: 2, operation: { type: '3', ledgerId, data: seqNo } });
        const data = (r.result as { data: Record<string, unknown> | null }).data;
        if (data === null) break;
        const { rootHash: _r, auditPath: _a, ledgerSize: _s, ...txn } = data;
        txns.push(JSON.stringify(txn));
      }
      out.push(txns);
    }
    return out;
  }

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'quire-upgrade-'));
    const ports: { nodePort: number; clientPort: number }[] = [];
    for (let i = 0; i < N; i++) ports.push({ nodePort: await freePort(), clientPort: await freePort() });
    nodes = standardPoolNodes(ports);
    const genesis = await writeGenesisFiles(join(root, 'genesis'), poolGenesis(nodes));
    for (let i = 0; i < N; i++) {
      const alias = nodes[i]!.alias;
      const dir = join(root, alias);
      expect(
        await main(['init', '--data-dir', dir, '--name', alias, '--seed', nodeSeed(alias), '--json'], { out: () => undefined, err: () => undefined }),
      ).to.equal(0);
      const cfg = join(dir, 'config.json');
      const config = {
        poolGenesisFile: genesis.pool,
        domainGenesisFile: genesis.domain,
        logLevel: process.env.LOG_LEVEL ?? 'info',
        consensus: { stateFreshnessUpdateIntervalSec: 3 },
        upgrade: { actionCommand: `"${process.execPath}" "${join(REPO, 'devnet/upgrade-action.mjs')}"`, timeoutSec: 60 },
      };
      await writeFile(cfg, JSON.stringify(config));
      const s = new Supervised(alias, dir, cfg);
      procs.push(s);
      s.start();
      clients.push(undefined);
    }
    try {
      for (let i = 0; i < N; i++) await waitFor(`client port of Node${i + 1}`, () => client(i), 120_000);
    } catch (e) {
      dumpLogs();
      throw e;
    }
  });

  function dumpLogs(): void {
    for (const p of procs) console.error(`--- ${p.alias} (exits ${p.exits.join(',')}) ---\n${p.log.join('').slice(-6000)}`);
  }

  after(async () => {
    for (const c of clients) await c?.close().catch(() => undefined);
    for (const p of procs) {
      p.stopping = true;
      if (p.running) p.proc!.kill('SIGKILL');
    }
    await rm(root, { recursive: true, force: true });
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed') dumpLogs();
  });

  it('POOL_RESTART restarts every node; the pool orders again and no ordered txn is lost', async () => {
    await write(
      signed({
        type: '1',
        dest: Ed25519Signer.fromSeed('00000000000000000000000RestartA1').did,
        verkey: Ed25519Signer.fromSeed('00000000000000000000000RestartA1').verkey,
      }),
    );
    const before = await ledgers(0);
    beforeRestart = before;
    expect(before[1]).to.have.length(6);

    const restart = signed({ type: '118', action: 'start' });
    const acks = await Promise.all([...Array(N).keys()].map((i) => ask(i, restart)));
    for (const a of acks) expect(a, JSON.stringify(a)).to.include({ op: 'REQACK', reqId: restart.reqId });
    await waitFor(
      'every node restarted',
      async () => (procs.every((p) => p.exits.includes(RESTART_EXIT_CODE) && p.starts === 2 && p.running) ? true : undefined),
      30_000,
    );
    for (let i = 0; i < N; i++) {
      await clients[i]?.close().catch(() => undefined);
      clients[i] = undefined;
    }

    const b = Ed25519Signer.fromSeed('00000000000000000000000RestartB1');
    const txn = await write(signed({ type: '1', dest: b.did, verkey: b.verkey }), 90_000);
    expect((txn.txnMetadata as { seqNo: number }).seqNo).to.equal(7);
    for (let i = 0; i < N; i++) {
      const after = await waitFor(
        `Node${i + 1} holds the new NYM`,
        async () => {
          const l = await ledgers(i);
          return l[1]!.length >= 7 ? l : undefined;
        },
        30_000,
      );
      for (const lid of [0, 1, 2]) expect(after[lid]!.slice(0, before[lid]!.length), `Node${i + 1} ledger ${lid}`).to.deep.equal(before[lid]);
    }
  });

  it('POOL_UPGRADE: times under 5 minutes apart are refused unless forced; a forced schedule upgrades every node in order', async () => {
    const dests = nodes.map((n) => n.keys.dest);
    const t0 = Date.now() + 12_000;
    const close = Object.fromEntries(dests.map((d, i) => [d, iso(Date.now() + 600_000 + i * 5000)]));
    const op = { type: '109', name: 'upgrade-0.2.0', version: '0.2.0', action: 'start', sha256: 'a'.repeat(64), timeout: 5 };
    const refused = await ask(0, signed({ ...op, schedule: close }));
    expect(refused.op, JSON.stringify(refused)).to.equal('REQNACK');
    expect(refused.reason).to.contain('time span between upgrades is 5 seconds which is less than specified in the config');

    // forced: nodes 6 s apart. Each node runs its action only once its own in_progress is ordered,
    // so the in_progress txns land in schedule order even when a restart outlasts the spacing (a
    // node whose turn comes while the pool lacks a quorum waits for it; production schedules are
    // >= 5 minutes apart)
    const schedule = Object.fromEntries(dests.map((d, i) => [d, iso(t0 + i * 6_000)]));
    await write(signed({ ...op, schedule, force: true }), 60_000);

    const upgrades = await waitFor(
      'NODE_UPGRADE complete from every node',
      async () => {
        const config = (await ledgers(0))[2]!.map(
          (t) => JSON.parse(t) as { txn: { type: string; data: { data: { action: string; version: string } }; metadata: { from: string } } },
        );
        const nu = config.filter((t) => t.txn.type === '110').map((t) => ({ from: t.txn.metadata.from, ...t.txn.data.data }));
        return nu.filter((u) => u.action === 'complete').length === N ? nu : undefined;
      },
      180_000,
    );
    for (const d of dests) {
      const mine = upgrades.filter((u) => u.from === d).map((u) => `${u.action}:${u.version}`);
      expect(mine, `NODE_UPGRADEs of ${d}`).to.deep.equal(['in_progress:0.2.0', 'complete:0.2.0']);
    }
    const starts = upgrades.filter((u) => u.action === 'in_progress').map((u) => u.from);
    expect(starts).to.deep.equal(dests);
    for (const [i, p] of procs.entries()) {
      expect(
        p.exits.filter((c) => c === RESTART_EXIT_CODE),
        p.alias,
      ).to.have.length(2);
      expect((await readFile(join(root, nodes[i]!.alias, 'installed_version'), 'utf8')).trim()).to.equal('0.2.0');
      const log = (await readFile(join(root, nodes[i]!.alias, 'upgrade_log'), 'utf8'))
        .trim()
        .split('\n')
        .map((l) => l.split('\t')[1]);
      expect(log.slice(-3), `${p.alias} upgrade_log`).to.deep.equal(['scheduled', 'started', 'succeeded']);
    }

    // graceful stop
    for (const c of clients) await c?.close().catch(() => undefined);
    clients.fill(undefined);
    expect(await Promise.all(procs.map((p) => p.stop()))).to.deep.equal([0, 0, 0, 0]);

    // on disk (read_ledger's view): every ledger, the audit ledger included, agrees on its common
    // prefix on all nodes, and holds everything ordered before the restart
    const kvs = await Promise.all(nodes.map((n) => openLevelKvStore(join(root, n.alias, 'db'))));
    try {
      for (const lid of [0, 1, 2, 3]) {
        const ls = await Promise.all(kvs.map((kv) => Ledger.open({ ledgerId: lid }, { kv })));
        const common = Math.min(...ls.map((l) => l.size));
        const roots = await Promise.all(ls.map(async (l) => b58encode(await l.rootAt(common))));
        expect(new Set(roots).size, `ledger ${lid} at size ${common}`).to.equal(1);
        if (lid < 3) {
          expect(common).to.be.at.least(beforeRestart[lid]!.length);
          for (let seqNo = 1; seqNo <= beforeRestart[lid]!.length; seqNo++) {
            const { rootHash: _r, auditPath: _a, ledgerSize: _s, ...txn } = (await ls[0]!.get(seqNo)) as unknown as Record<string, unknown>;
            expect(JSON.stringify(txn)).to.equal(beforeRestart[lid]![seqNo - 1]);
          }
        }
      }
    } finally {
      for (const kv of kvs) await kv.close();
    }
  });
});
