// The data-directory ledger check against real LevelDB ledgers written with @quire/storage, as nodes write them.
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canonicalJson, sha256Hex, type Txn } from '@quire/common';
import { Ledger, nodeDatabasePath, openLevelKvStore } from '@quire/storage';
import { checkDataDirs, devnetNodeDirs } from '../lib/ledger-check.js';
import { formatRejectedCommitted } from '../lib/report.js';
import { ackOf } from '../lib/target.js';

function nym(i: number, from = 'V4SGRU86Z58d6TV7PBUe6f'): Txn {
  return {
    ver: '1',
    txn: {
      type: '1',
      protocolVersion: 2,
      data: { dest: `Dest${String(i).padStart(18, 'x')}` },
      metadata: { from, reqId: 1000 + i, digest: sha256Hex(String(i)) },
    },
    txnMetadata: { seqNo: i, txnTime: 1_700_000_000 },
    reqSignature: {},
  };
}

function attrib(i: number, raw: string, ledgerForm: boolean): Txn {
  const value = ledgerForm ? sha256Hex(canonicalJson(JSON.parse(raw))) : raw;
  return {
    ver: '1',
    txn: {
      type: '100',
      protocolVersion: 2,
      data: { dest: 'V4SGRU86Z58d6TV7PBUe6f', raw: value },
      metadata: { from: 'V4SGRU86Z58d6TV7PBUe6f', reqId: 1000 + i },
    },
    txnMetadata: { seqNo: i, txnTime: 1_700_000_000 },
    reqSignature: {},
  };
}

async function writeLedger(dataDir: string, txns: Txn[]): Promise<void> {
  const kv = await openLevelKvStore(nodeDatabasePath(dataDir));
  const ledger = await Ledger.open({ ledgerId: 1 }, { kv });
  ledger.append(txns);
  await ledger.commit();
  await kv.close();
}

describe('ledger check on data directories', function () {
  this.timeout(20_000);
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'quire-load-check-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('finds every acknowledged txn on every node (ATTRIB compared in its ledger form), and unacknowledged ones committed', async () => {
    const raw = '{"endpoint":{"ha":"127.0.0.1:5555"}}';
    const full = [nym(1), nym(2), attrib(3, raw, true), nym(4)];
    await writeLedger(join(dir, 'Node1'), full);
    await writeLedger(join(dir, 'Node2'), full);
    await writeLedger(join(dir, 'Node3'), full.slice(0, 3)); // behind by one
    await writeLedger(join(dir, 'Node4'), [nym(1), nym(2, 'Th7MpTaRZVRYnPiabds81Y'), attrib(3, raw, true), nym(4)]); // another txn at 2
    const acks = [ackOf(nym(1) as never)!, ackOf(nym(2) as never)!, ackOf(attrib(3, raw, false) as never)!];
    const unacked = [
      { key: 'V4SGRU86Z58d6TV7PBUe6f|1004', outcome: 'timeout' as const },
      { key: 'V4SGRU86Z58d6TV7PBUe6f|9999', outcome: 'rejected' as const },
    ];
    const c = await checkDataDirs(devnetNodeDirs(dir, ['Node1', 'Node2', 'Node3', 'Node4']), acks, 1, unacked);
    expect(c.nodes.map((n) => [n.node, n.size, n.missing, n.mismatched])).to.deep.equal([
      ['Node1', 4, 0, 0],
      ['Node2', 4, 0, 0],
      ['Node3', 3, 0, 0],
      ['Node4', 4, 0, 1],
    ]);
    expect(c.lost).to.equal(1);
    expect(c.underReplicated).to.equal(0);
    expect(c.examples).to.deep.equal([{ node: 'Node4', seqNo: 2, key: 'V4SGRU86Z58d6TV7PBUe6f|1002', problem: 'mismatched' }]);
    expect(c.rootsEqual).to.equal(false); // Node3 is shorter, Node4 differs
    expect(c.nodes[0]!.root).to.equal(c.nodes[1]!.root);
    expect(c.unackedCommitted).to.deep.equal({ rejected: 0, timeout: 1, error: 0 });
    expect(c.rejectedCommitted).to.deep.equal({ byReason: {}, byNodes: {}, examples: [] });
    // the same write refused by f+1 (REQNACK): counted as rejected, with its reason and refusing nodes
    const refused = {
      key: 'V4SGRU86Z58d6TV7PBUe6f|1004',
      outcome: 'rejected' as const,
      code: 'REQUEST_NACKED',
      reason: 'pool overloaded',
      nodes: ['Node3', 'Node2'],
    };
    const r = await checkDataDirs(devnetNodeDirs(dir, ['Node1', 'Node2', 'Node3', 'Node4']), acks, 1, [refused]);
    expect(r.unackedCommitted).to.deep.equal({ rejected: 1, timeout: 0, error: 0 });
    expect(r.rejectedCommitted).to.deep.equal({
      byReason: { 'REQUEST_NACKED: pool overloaded': 1 },
      byNodes: { 'Node2,Node3': 1 },
      examples: [{ key: refused.key, seqNo: 4, code: 'REQUEST_NACKED', reason: 'pool overloaded', nodes: ['Node3', 'Node2'] }],
    });
    expect(formatRejectedCommitted(r.rejectedCommitted).join('\n')).to.contain('1  Node2,Node3').and.contain('REQUEST_NACKED: pool overloaded');

    // an acknowledged txn beyond every ledger is missing everywhere; a node without a database loses everything
    const gone = await checkDataDirs(devnetNodeDirs(dir, ['Node1', 'Node2', 'Node3', 'Node5']), [...acks, { ...acks[0]!, seqNo: 9 }]);
    expect(gone.nodes[3]!.error).to.contain('no ledger database');
    expect(gone.lost).to.equal(4);
    expect(gone.underReplicated).to.equal(1);
  });

  it('the ATTRIB raw in the clear (REPLY) and hashed (ledger) give the same identity; a different value does not', () => {
    const raw = '{"a":1,"b":2}';
    expect(ackOf(attrib(3, raw, false) as never)).to.deep.equal(ackOf(attrib(3, '{"b":2,"a":1}', true) as never, 'ledger'));
    expect(ackOf(attrib(3, raw, false) as never)!.txnHash).to.not.equal(ackOf(attrib(3, '{"a":2}', true) as never, 'ledger')!.txnHash);
    expect(ackOf({ txn: {}, txnMetadata: {} })).to.equal(undefined);
  });
});
