// The generator end to end against 4 real client hosts answering canned replies (no ordering): pre-signed
// writes over the client protocol, f+1 agreement, verified GET_NYM reads with real proofs and BLS
// multi-signatures, the outcome counts, and the ledger check over GET_TXN, which must catch a node that
// lacks an acknowledged txn.
import { expect } from 'chai';
import { checkNetwork, type NetworkNode } from '../lib/ledger-check.js';
import { formatLedgerCheck, formatLoadReport } from '../lib/report.js';
import { runLoad } from '../lib/run.js';
import { LoadTarget } from '../lib/target.js';
import { PoolLedger } from '@quire/client';
import { CannedPool } from './canned-pool.js';

describe('load generator against 4 canned client hosts (dry run)', function () {
  this.timeout(60_000);
  let canned: CannedPool;
  let target: LoadTarget;
  let nodes: NetworkNode[];

  before(async () => {
    canned = await CannedPool.start();
    target = await LoadTarget.open(canned.genesis, 2, { writeTimeoutMs: 5000, readTimeoutMs: 5000 });
    nodes = PoolLedger.fromGenesis(canned.genesis)
      .validators()
      .map((v) => ({ alias: v.alias, dest: v.dest, host: v.clientIp!, port: v.clientPort! }));
  });

  after(async () => {
    await target?.close();
    await canned?.close();
  });

  it('open loop, mixed: setup NYMs, every kind acknowledged or verified, latencies and acks recorded', async () => {
    const r = await runLoad(target, { mix: 'mixed', rate: 100, durationMs: 1500, requestTimeoutMs: 5000 });
    const byKind = Object.fromEntries(r.kinds.map((k) => [k.kind, k]));
    expect(r.schedule.sent).to.equal(150);
    expect(byKind.nym!.outcomes.counts.ok).to.equal(75);
    expect(byKind.attrib!.outcomes.counts.ok).to.equal(30);
    expect(byKind.schema!.outcomes.counts.ok).to.equal(15);
    expect(byKind.read!.outcomes.counts.ok).to.equal(30);
    expect(byKind.read!.verified).to.equal(30); // every read verified by trie proof + BLS multi-signature
    expect(r.setup.nyms).to.be.greaterThan(0);
    expect(r.acks).to.have.length(r.setup.nyms + 120);
    expect(new Set(r.acks.map((a) => a.seqNo)).size).to.equal(r.acks.length);
    expect(r.writeLatency!.count).to.equal(120);
    expect(r.writeLatency!.p50).to.be.greaterThan(0);
    expect(formatLoadReport(r).join('\n')).to.contain('nym').and.contain('p99 ms');

    const check = await checkNetwork(nodes, r.acks);
    expect(check.lost).to.equal(0);
    expect(check.underReplicated).to.equal(0);
    expect(check.rootsEqual).to.equal(true);
    expect(check.nodes.map((n) => n.size)).to.deep.equal([canned.txns.length, canned.txns.length, canned.txns.length, canned.txns.length]);

    // a node that lacks one acknowledged txn is caught, and its root differs
    canned.hidden[2]!.add(r.acks[5]!.seqNo);
    const bad = await checkNetwork(nodes, r.acks);
    expect(bad.lost).to.equal(1);
    expect(bad.underReplicated).to.equal(0); // one node of four lacks it: still on n-f nodes
    canned.hidden[1]!.add(r.acks[5]!.seqNo);
    expect((await checkNetwork(nodes, r.acks)).underReplicated).to.equal(1);
    canned.hidden[1]!.clear();
    expect(bad.rootsEqual).to.equal(false);
    expect(bad.nodes[2]).to.include({ missing: 1 });
    expect(bad.examples[0]).to.include({ node: 'Node3', seqNo: r.acks[5]!.seqNo, problem: 'missing' });
    expect(formatLedgerCheck(bad).join('\n')).to.contain('DIFFER');
    canned.hidden[2]!.clear();
  });

  it('closed loop: K in flight, REQNACKs from 3 of 4 nodes counted as rejections with their reason', async () => {
    const ok = await runLoad(target, { mix: 'nym', concurrency: 16, durationMs: 800, presign: 200, requestTimeoutMs: 5000 });
    const nym = ok.kinds.find((k) => k.kind === 'nym')!;
    expect(nym.outcomes.counts.ok).to.be.greaterThan(0);
    expect(nym.outcomes.counts.ok + nym.outcomes.counts.error + nym.outcomes.counts.timeout).to.equal(ok.schedule.sent);
    expect(ok.writesPerSecond).to.be.greaterThan(0);

    canned.nack[0] = canned.nack[1] = canned.nack[2] = 'client request invalid: insufficient number of valid signatures';
    try {
      const r = await runLoad(target, { mix: 'nym', concurrency: 4, durationMs: 300, presign: 20, requestTimeoutMs: 5000 });
      const k = r.kinds.find((x) => x.kind === 'nym')!;
      expect(k.outcomes.counts.ok).to.equal(0);
      expect(k.outcomes.counts.rejected).to.equal(r.schedule.sent);
      expect(k.outcomes.reasons.get('rejected:REQUEST_NACKED')!.example).to.contain('insufficient number of valid signatures');
      expect(r.acks).to.have.length(0);
    } finally {
      canned.nack[0] = canned.nack[1] = canned.nack[2] = undefined;
    }
  });

  it('open loop with onStart and a signal (the catch-up phase): onStart once before any request is sent, the schedule ends at the abort', async () => {
    const stop = new AbortController();
    const starts: number[] = [];
    let firstSubmit: number | undefined;
    const submit = target.submit.bind(target);
    target.submit = (req, timeoutMs) => {
      firstSubmit ??= performance.now();
      return submit(req, timeoutMs);
    };
    try {
      const r = await runLoad(target, {
        mix: 'nym',
        rate: 200,
        concurrency: 64,
        durationMs: 20_000,
        requestTimeoutMs: 5000,
        signal: stop.signal,
        onStart: () => {
          starts.push(performance.now());
          setTimeout(() => stop.abort(), 500);
        },
      });
      expect(starts).to.have.length(1);
      expect(firstSubmit).to.be.at.least(starts[0]!);
      expect(r.schedule.sent).to.be.greaterThan(0);
      expect(r.schedule.sent, 'stopped by the signal, long before 20 s at 200/s').to.be.lessThan(1000);
    } finally {
      target.submit = submit;
    }
  });
});
