// A batch's commit never fails half-way (#15 F3): everything that can refuse is checked before the
// executor changes anything, a multi-signature the BLS store would refuse is left out instead of
// failing the batch, and a commit that still fails once begun fails the executor for good and stops
// the node with COMMIT_FAILED (a fatal log line and COMMIT_FAILED_EXIT_CODE), never silently.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { expect } from 'chai';
import { b58encode, type MultiSignature } from '@quire/common';
import { batchDigest } from '@quire/consensus';
import { NodeConnection } from '@quire/client';
import { AuditTrail } from '../../src/audit-trail.js';
import type { NodeConfig } from '../../src/config.js';
import { ConsensusExecutor } from '../../src/consensus-executor.js';
import { type NodeError, NodeErrorCode } from '../../src/errors.js';
import { nodeSeed } from '../../src/genesis-gen.js';
import { deriveNodeKeys } from '../../src/keys.js';
import { createLogger } from '../../src/logger.js';
import { COMMIT_FAILED_EXIT_CODE, QuireNode, WRITE_FAILED_EXIT_CODE } from '../../src/node.js';
import { type Fixture, memoryFixture, nymRequest, soloNodeConfig, trustee, user } from './helpers.js';
import { codeOf, waitUntil } from '@quire/testing';

function input(ledgerId: number, requests: Record<string, unknown>[], ppSeqNo: number, ppTime = 1_700_000_000 + ppSeqNo) {
  const digests = requests.map((_, i) => `${ppSeqNo}${i}`.padStart(64, '0'));
  return { ledgerId, requests, digests, ppTime, ppSeqNo, originalViewNo: 0, primaries: ['Node1'], digest: batchDigest(0, ppTime, digests, ledgerId) };
}

const root = (fill: number, bytes = 32): string => b58encode(new Uint8Array(bytes).fill(fill));

function multiSig(stateRoot: string, signature = b58encode(new Uint8Array(96).fill(8))): MultiSignature {
  return {
    signature,
    participants: ['Node1', 'Node2', 'Node3'],
    value: { ledger_id: 1, pool_state_root_hash: root(2), state_root_hash: stateRoot, timestamp: 1_700_000_001, txn_root_hash: root(3) },
  };
}

async function executorWithFatal(fx: Fixture, fatal: NodeError[]): Promise<ConsensusExecutor> {
  const audit = await AuditTrail.load(fx.stores.ledgers[3]);
  return new ConsensusExecutor(
    { durable: false },
    { stores: fx.stores, executor: fx.reqExecutor, registry: fx.registry, audit, onFatal: (e) => fatal.push(e) },
  );
}

describe('a batch commit is all or nothing (#15 F3)', () => {
  it('commits a batch whose multi-signatures include ones the BLS store refuses, storing only the good ones', async () => {
    const fx = await memoryFixture();
    const fatal: NodeError[] = [];
    const ex = await executorWithFatal(fx, fatal);
    ex.applyBatch(input(1, [nymRequest(trustee, user(20))], 1));
    ex.applyBatch(input(1, [nymRequest(trustee, user(21))], 2));
    const good = multiSig(root(4));
    const bad = [multiSig(root(5), '3'), multiSig(root(6, 31)), { ...multiSig(root(7)), participants: [] }];
    const domainBefore = fx.stores.ledgers[1].size;
    ex.commitBatch([bad[0]!, good, ...bad.slice(1)]);
    // the batch is committed and the applied queue moved on by exactly one
    expect(ex.uncommittedBatches).to.equal(1);
    expect(fx.stores.ledgers[1].size).to.equal(domainBefore + 1);
    expect(fx.stores.ledgers[3].size).to.equal(1);
    ex.commitBatch([]);
    await ex.flush();
    expect(fx.stores.ledgers[3].size).to.equal(2);
    expect((await fx.stores.bls.get(root(4)))?.signature).to.equal(good.signature);
    expect(await fx.stores.bls.get(root(5))).to.equal(undefined);
    expect(await fx.stores.bls.get(root(7))).to.equal(undefined);
    expect(fatal).to.deep.equal([]);
    await fx.stores.kv.close();
  });

  it('never replaces the multi-signature of a state root with an older one (#15 F2)', async () => {
    const fx = await memoryFixture();
    const ex = await executorWithFatal(fx, []);
    const at = (timestamp: number, fill: number): MultiSignature => {
      const ms = multiSig(root(4), b58encode(new Uint8Array(96).fill(fill)));
      return { ...ms, value: { ...ms.value, timestamp } };
    };
    ex.applyBatch(input(1, [nymRequest(trustee, user(24))], 1));
    ex.applyBatch(input(1, [], 2));
    ex.applyBatch(input(1, [], 3));
    // newest of one call wins, whatever the order
    ex.commitBatch([at(1_700_000_100, 10), at(1_700_000_090, 11)]);
    // an older one, valid as it may be, does not replace it (neither on the way nor once written)
    ex.commitBatch([at(1_700_000_050, 12)]);
    await ex.flush();
    expect((await fx.stores.bls.get(root(4)))?.value.timestamp).to.equal(1_700_000_100);
    ex.commitBatch([at(1_700_000_150, 13)]);
    await ex.flush();
    expect((await fx.stores.bls.get(root(4)))?.signature).to.equal(at(1_700_000_150, 13).signature);
    await fx.stores.kv.close();
  });

  it('fails for good, and tells onFatal once, when a commit fails after it began', async () => {
    const fx = await memoryFixture();
    const fatal: NodeError[] = [];
    const ex = await executorWithFatal(fx, fatal);
    ex.applyBatch(input(1, [nymRequest(trustee, user(22))], 1));
    // a store that refuses what its own check accepted: a bug, not bad input
    fx.stores.bls.put = () => {
      throw new Error('disk says no');
    };
    expect(codeOf(() => ex.commitBatch([multiSig(root(4))]))).to.equal(NodeErrorCode.COMMIT_FAILED);
    expect(fatal.map((e) => e.code)).to.deep.equal([NodeErrorCode.COMMIT_FAILED]);
    expect(fatal[0]!.data).to.include({ ppSeqNo: 1 });
    // every later call refuses instead of working on a state that may not match storage
    expect(codeOf(() => ex.applyBatch(input(1, [], 2)))).to.equal(NodeErrorCode.COMMIT_FAILED);
    expect(codeOf(() => ex.commitBatch([]))).to.equal(NodeErrorCode.COMMIT_FAILED);
    expect(codeOf(() => ex.revertLastBatch())).to.equal(NodeErrorCode.COMMIT_FAILED);
    expect(ex.appendCaughtUp(1, [{}], [], 1, root(1))).to.equal(false);
    expect(fatal).to.have.length(1);
    await fx.stores.kv.close();
  });

  it('tells onFatal once, at once, when a batch write fails (WRITE_FAILED)', async () => {
    const fx = await memoryFixture();
    const fatal: NodeError[] = [];
    const ex = await executorWithFatal(fx, fatal);
    const kv = fx.stores.kv;
    const batch = kv.batch.bind(kv);
    kv.batch = () => {
      const b = batch();
      b.write = () => Promise.reject(new Error('EIO: i/o error, write'));
      return b;
    };
    ex.applyBatch(input(1, [nymRequest(trustee, user(25))], 1));
    ex.commitBatch([]);
    ex.applyBatch(input(1, [nymRequest(trustee, user(26))], 2));
    ex.commitBatch([]);
    let code: unknown;
    await ex.flush().catch((e: unknown) => (code = (e as { code?: unknown }).code));
    expect(code).to.equal(NodeErrorCode.WRITE_FAILED);
    expect(fatal.map((e) => e.code)).to.deep.equal([NodeErrorCode.WRITE_FAILED]);
    kv.batch = batch;
    await kv.close();
  });

  it('refuses a commit without an applied batch without failing the executor', async () => {
    const fx = await memoryFixture();
    const fatal: NodeError[] = [];
    const ex = await executorWithFatal(fx, fatal);
    expect(codeOf(() => ex.commitBatch([]))).to.equal(NodeErrorCode.EXECUTOR_STATE);
    ex.applyBatch(input(1, [nymRequest(trustee, user(23))], 1));
    ex.commitBatch([]);
    expect(fatal).to.deep.equal([]);
    await fx.stores.kv.close();
  });
});

describe('QuireNode stops on a commit that failed half-way (#15 F3)', function () {
  this.timeout(30_000);
  let dir: string;
  let config: NodeConfig;
  const keys = deriveNodeKeys('Node1', Buffer.from(nodeSeed('Node1')));

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'quire-commit-'));
    config = await soloNodeConfig(dir);
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('logs COMMIT_FAILED as fatal and reports COMMIT_FAILED_EXIT_CODE instead of going on', async () => {
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _enc, cb) {
        for (const l of chunk.toString('utf8').split('\n')) if (l !== '') lines.push(l);
        cb();
      },
    });
    const fatal: number[] = [];
    const node = await QuireNode.create(
      { dataDir: dir, config, inMemory: true },
      { logger: createLogger({ level: 'info', destination: stream }), keys, onFatal: (c) => fatal.push(c) },
    );
    let client: NodeConnection | undefined;
    try {
      client = await NodeConnection.connect({ host: '127.0.0.1', port: node.clientPort, dest: keys.dest, timeoutMs: 10_000 });
      node.stores.bls.put = () => {
        throw new Error('disk says no');
      };
      const req = nymRequest(trustee, user(31), {}, 31);
      await client.request(new TextEncoder().encode(JSON.stringify(req))).catch(() => undefined);
      await waitUntil('the node to stop itself', () => fatal.length > 0, 10_000, 50);
      expect(fatal).to.deep.equal([COMMIT_FAILED_EXIT_CODE]);
      expect(COMMIT_FAILED_EXIT_CODE).to.not.equal(WRITE_FAILED_EXIT_CODE);
      const records = lines.map((l) => JSON.parse(l) as { level?: number; code?: string; msg?: string });
      expect(
        records.some((r) => r.level === 60 && r.code === NodeErrorCode.COMMIT_FAILED),
        lines.join('\n'),
      ).to.equal(true);
    } finally {
      await client?.close();
      await node.close();
    }
  });
});
