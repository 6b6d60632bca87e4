// A 4-node pool of real `quire-node start` processes on 127.0.0.1 (random free ports, temp dirs):
// a NYM signed by Trustee1 is ordered (f+1 matching REPLYs), read back from every node with a
// verified BLS multi-signature and trie proof, and every node's ledgers agree after shutdown.
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { b58decode, b58encode, b64decode, multiSignatureMessage, parseJson } from '@quire/common';
import { blsVerifyAggregate } from '@quire/crypto';
import { NodeConnection } from '@quire/client';
import { nymKey } from '@quire/requests';
import { Ledger, openLevelKvStore, verifyTrieProofAt } from '@quire/storage';
import { main, nodeSeed, poolGenesis, standardPoolNodes, writeGenesisFiles } from '../../src/index.js';
import { nymRequest, trustee, user } from '../unit/helpers.js';
import { freePort, spawnNodeStart, waitFor } from './support.js';

const N = 4;

describe('e2e: 4-node pool of quire-node processes', function () {
  this.timeout(120_000);
  let root: string;
  const procs: ChildProcess[] = [];
  const logs: string[][] = [];
  const clients: NodeConnection[] = [];
  let nodes: ReturnType<typeof standardPoolNodes>;

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'quire-pool-'));
    const ports: { nodePort: number; clientPort: number }[] = [];
    for (let i = 0; i < N; i++) ports.push({ nodePort: await freePort(), clientPort: await freePort() });
    nodes = standardPoolNodes(ports);
    const genesis = await writeGenesisFiles(join(root, 'genesis'), poolGenesis(nodes));
    for (let i = 0; i < N; i++) {
      const alias = nodes[i]!.alias;
      const dir = join(root, alias);
      const out: string[] = [];
      expect(
        await main(['init', '--data-dir', dir, '--name', alias, '--seed', nodeSeed(alias), '--json'], { out: (l) => out.push(l), err: (l) => out.push(l) }),
      ).to.equal(0);
      expect(JSON.parse(out[0]!).dest).to.equal(nodes[i]!.keys.dest);
      const cfg = join(dir, 'config.json');
      // a short freshness interval: a node that got the batch by catch-up holds no multi-signature for
      // its roots until the next batch of that ledger (consensus.md §3.8 step 4)
      const config = {
        poolGenesisFile: genesis.pool,
        domainGenesisFile: genesis.domain,
        logLevel: process.env.LOG_LEVEL ?? 'info',
        consensus: { stateFreshnessUpdateIntervalSec: 3 },
      };
      await writeFile(cfg, JSON.stringify(config));
      const p = spawnNodeStart(dir, cfg);
      const log: string[] = [];
      logs.push(log);
      p.stdout!.on('data', (d: Buffer) => log.push(d.toString()));
      p.stderr!.on('data', (d: Buffer) => log.push(d.toString()));
      procs.push(p);
    }
    for (let i = 0; i < N; i++) {
      const n = nodes[i]!;
      clients.push(
        await waitFor(
          `client port of ${n.alias}`,
          () => NodeConnection.connect({ host: '127.0.0.1', port: n.clientPort, dest: n.keys.dest, timeoutMs: 20_000 }),
          60_000,
        ),
      );
    }
  });

  after(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    for (const p of procs) if (p.exitCode === null) p.kill('SIGKILL');
    await rm(root, { recursive: true, force: true });
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed') for (const [i, l] of logs.entries()) console.error(`--- Node${i + 1} ---\n${l.join('').slice(-4000)}`);
  });

  it('orders a NYM, answers reads with verified multi-signatures, and all ledgers agree', async () => {
    const target = user(1);
    const req = nymRequest(trustee, target, {}, 1700000000123456);
    const body = new TextEncoder().encode(JSON.stringify(req));

    const replies: Record<string, unknown>[] = [];
    const done = clients.map(
      (c) =>
        new Promise<void>((res) => {
          c.on('push', (bytes) => {
            const m = parseJson(new TextDecoder().decode(bytes)) as Record<string, unknown>;
            if (m.op === 'REPLY') replies.push(m.result as Record<string, unknown>);
            res();
          });
        }),
    );
    const acks = await Promise.all(clients.map(async (c) => parseJson(new TextDecoder().decode(await c.request(body))) as Record<string, unknown>));
    for (const a of acks) {
      if (a.op === 'REPLY') replies.push(a.result as Record<string, unknown>);
      else expect(a, JSON.stringify(a)).to.include({ op: 'REQACK', identifier: trustee.did, reqId: 1700000000123456 });
    }
    await waitFor('f+1 REPLYs', async () => (replies.length >= 2 ? true : undefined), 30_000);
    await Promise.race([Promise.all(done), new Promise((r) => setTimeout(r, 5000))]);
    const first = replies[0]!;
    expect((first.txn as { data: Record<string, unknown> }).data).to.include({ dest: target.did, verkey: target.verkey });
    expect((first.txnMetadata as { seqNo: number }).seqNo).to.equal(6);
    for (const r of replies) expect(JSON.stringify(r)).to.equal(JSON.stringify(first));

    // read back from every node: a GET_NYM with a state proof signed by n-f validators
    const pool = new Map(nodes.map((n) => [n.alias, b58decode(n.keys.blskey)]));
    for (const [i, c] of clients.entries()) {
      const get = { identifier: trustee.did, reqId: 2000 + i, protocolVersion: 2, operation: { type: '105', dest: target.did } };
      // a node that has not ordered the batch yet answers "absent"; one that caught it up answers
      // without a multi-signature until its next batch: ask until the signed answer comes
      const result = await waitFor(
        `GET_NYM answered by Node${i + 1}`,
        async () => {
          const reply = parseJson(new TextDecoder().decode(await c.request(new TextEncoder().encode(JSON.stringify(get))))) as Record<string, unknown>;
          expect(reply.op, JSON.stringify(reply)).to.equal('REPLY');
          const r = reply.result as Record<string, unknown>;
          return typeof r.data === 'string' && (r.state_proof as Record<string, unknown> | undefined)?.multi_signature !== undefined ? r : undefined;
        },
        30_000,
      );
      expect(JSON.parse(result.data as string)).to.include({ verkey: target.verkey });
      const proof = result.state_proof as {
        root_hash: string;
        proof_nodes: string;
        multi_signature: { signature: string; participants: string[]; value: Parameters<typeof multiSignatureMessage>[0] };
      };
      expect(proof, `state proof from Node${i + 1}`).to.have.property('multi_signature');
      const ms = proof.multi_signature;
      expect(ms.value.state_root_hash).to.equal(proof.root_hash);
      expect(new Set(ms.participants).size).to.be.at.least(3);
      expect(
        blsVerifyAggregate(
          ms.participants.map((p) => pool.get(p)!),
          multiSignatureMessage(ms.value),
          b58decode(ms.signature),
        ),
      ).to.equal(true);
      expect(verifyTrieProofAt(b58decode(proof.root_hash), nymKey(target.did), b64decode(proof.proof_nodes))).to.not.equal(null);
    }

    // a repeated request is answered from the ledger with the same REPLY
    const again = parseJson(new TextDecoder().decode(await clients[0]!.request(body))) as Record<string, unknown>;
    expect(again.op).to.equal('REPLY');
    expect(JSON.stringify(again.result)).to.equal(JSON.stringify(first));

    // graceful shutdown: SIGTERM -> exit 0
    for (const c of clients) await c.close();
    clients.length = 0;
    const exits = procs.map((p) => new Promise<number | null>((res) => p.once('exit', (code) => res(code))));
    for (const p of procs) p.kill('SIGTERM');
    expect(await Promise.all(exits)).to.deep.equal([0, 0, 0, 0]);

    // nodes stopped a moment apart may hold one more (empty, freshness) batch than others: every
    // ledger must agree on its common prefix, and the NYM is at domain seqNo 6 everywhere
    const ledgers: Ledger[][] = [];
    const kvs = [];
    for (const n of nodes) {
      const kv = await openLevelKvStore(join(root, n.alias, 'db'));
      kvs.push(kv);
      const ls: Ledger[] = [];
      for (const lid of [0, 1, 2, 3]) ls.push(await Ledger.open({ ledgerId: lid }, { kv }));
      ledgers.push(ls);
    }
    try {
      for (const lid of [0, 1, 2, 3]) {
        const sizes = ledgers.map((ls) => ls[lid]!.size);
        const common = Math.min(...sizes);
        const roots = await Promise.all(ledgers.map(async (ls) => b58encode(await ls[lid]!.rootAt(common))));
        expect(new Set(roots).size, `ledger ${lid} at size ${common}: ${roots.join(' ')}`).to.equal(1);
        expect(Math.max(...sizes) - common, `ledger ${lid} sizes ${sizes.join(',')}`).to.be.at.most(1);
      }
      expect(ledgers.map((ls) => ls[0]!.size)).to.deep.equal([4, 4, 4, 4]);
      expect(ledgers.map((ls) => ls[1]!.size)).to.deep.equal([6, 6, 6, 6]);
    } finally {
      for (const kv of kvs) await kv.close();
    }
  });
});
