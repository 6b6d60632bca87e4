// The optional membership methods of the node's BatchExecutor (consensus.md §1.3, §8):
// registryAt(poolStateRoot) over the committed history, viewStartRegistries(count) from the audit
// ledger (also after a restart from the stores), and changedNodes of committed NODE batches.
import { expect } from 'chai';
import { b58encode } from '@quire/common';
import { batchDigest } from '@quire/consensus';
import { BlsSecretKey, Ed25519Signer } from '@quire/crypto';
import { AuditTrail } from '../../src/audit-trail.js';
import { ConsensusExecutor } from '../../src/consensus-executor.js';
import { PoolRegistry } from '../../src/pool-registry.js';
import { type Fixture, memoryFixture, nymRequest, signedRequest as signed, trustee } from './helpers.js';

let ppSeqNo = 0;

/** Applies and commits one batch in `view`; returns the committed batch. */
function order(fx: Fixture, ledgerId: number, view: number, requests: Record<string, unknown>[]) {
  ppSeqNo++;
  const ppTime = 1_700_000_000 + ppSeqNo;
  const digests = requests.map((_, i) => `${ppSeqNo}-${i}`.padStart(64, '0'));
  const applied = fx.executor.applyBatch({
    ledgerId,
    requests,
    digests,
    ppTime,
    ppSeqNo,
    originalViewNo: view,
    primaries: ['Node1'],
    digest: batchDigest(view, ppTime, digests, ledgerId),
  });
  expect(applied.discarded, applied.rejectReasons.join('; ')).to.deep.equal([]);
  return fx.executor.commitBatch([]);
}

const steward5 = Ed25519Signer.fromSeed('0000000000000000000000Steward500');
const node5 = Ed25519Signer.fromSeed('000000000000000000000000000Node5');
const bls5 = BlsSecretKey.fromSeed('000000000000000000000000000Node5');
const bls5b = BlsSecretKey.fromSeed('00000000000000000000000Node5-gen1');
const GENESIS = ['Node1', 'Node2', 'Node3', 'Node4'];
const WITH5 = [...GENESIS, 'Node5'];

function node5Txn(data: Record<string, unknown>): Record<string, unknown> {
  return signed(steward5, { type: '0', dest: node5.fullVerkey, data: { alias: 'Node5', ...data } });
}

const addNode5 = {
  node_ip: '10.0.0.5',
  node_port: 9711,
  client_ip: '10.0.0.5',
  client_port: 9712,
  services: ['VALIDATOR'],
  blskey: b58encode(bls5.publicKey),
  blskey_pop: b58encode(bls5.proofOfPossession()),
};

describe('registry history of the consensus executor', () => {
  it('gives R at every committed pool state root, the head R at the uncommitted root, undefined for unknown roots', async () => {
    const fx = await memoryFixture();
    const ex = fx.executor;
    const genesisRoot = ex.uncommittedPoolStateRoot();
    order(fx, 1, 0, [nymRequest(trustee, steward5, { role: '2' })]);
    order(fx, 0, 0, [node5Txn(addNode5)]);
    const addedRoot = ex.uncommittedPoolStateRoot();
    order(fx, 0, 0, [node5Txn({ services: [] })]);
    const demotedRoot = ex.uncommittedPoolStateRoot();
    expect(ex.registryAt(genesisRoot)).to.deep.equal(GENESIS);
    expect(ex.registryAt(addedRoot)).to.deep.equal(WITH5);
    expect(ex.registryAt(demotedRoot)).to.deep.equal(GENESIS);
    expect(ex.registryAt(b58encode(new Uint8Array(32).fill(9)))).to.equal(undefined);
    // an applied, uncommitted promotion: R of the head
    ex.applyBatch({
      ledgerId: 0,
      requests: [node5Txn({ services: ['VALIDATOR'] })],
      digests: ['f'.repeat(64)],
      ppTime: 1_800_000_000,
      ppSeqNo: 99,
      originalViewNo: 0,
      primaries: ['Node1'],
      digest: 'e'.repeat(64),
    });
    expect(ex.registryAt(ex.uncommittedPoolStateRoot())).to.deep.equal(WITH5);
    ex.revertLastBatch();
    await ex.flush();
    await fx.stores.kv.close();
  });

  it('reports the nodes whose keys or addresses a committed batch changed, not new or demoted ones', async () => {
    const fx = await memoryFixture();
    order(fx, 1, 0, [nymRequest(trustee, steward5, { role: '2' })]);
    expect(order(fx, 0, 0, [node5Txn(addNode5)]).changedNodes).to.equal(undefined);
    const rotated = order(fx, 0, 0, [node5Txn({ blskey: b58encode(bls5b.publicKey), blskey_pop: b58encode(bls5b.proofOfPossession()) })]);
    expect(rotated.changedNodes).to.deep.equal(['Node5']);
    expect(order(fx, 0, 0, [node5Txn({ services: [] })]).changedNodes).to.equal(undefined);
    expect(order(fx, 0, 0, [node5Txn({ node_ip: '10.0.0.5', node_port: 9721, client_ip: '10.0.0.5', client_port: 9722 })]).changedNodes).to.deep.equal([
      'Node5',
    ]);
    await fx.executor.flush();
    await fx.stores.kv.close();
  });

  it('reads R_begin of the last views from the audit ledger, also after a restart', async () => {
    const fx = await memoryFixture();
    // view 0: two batches; view 1: Node5 added in its second batch; view 3: one batch
    order(fx, 1, 0, [nymRequest(trustee, steward5, { role: '2' })]);
    order(fx, 1, 0, [nymRequest(trustee, Ed25519Signer.fromSeed('00000000000000000000000000User77'))]);
    order(fx, 1, 1, [nymRequest(trustee, Ed25519Signer.fromSeed('00000000000000000000000000User78'))]);
    order(fx, 0, 1, [node5Txn(addNode5)]);
    order(fx, 1, 3, [nymRequest(trustee, Ed25519Signer.fromSeed('00000000000000000000000000User79'))]);
    const expected = new Map([
      [3, WITH5],
      [1, GENESIS],
      [0, GENESIS],
    ]);
    expect(fx.executor.viewStartRegistries(4)).to.deep.equal(expected);
    expect([...fx.executor.viewStartRegistries(1)]).to.deep.equal([[3, WITH5]]);
    await fx.executor.flush();
    // a new executor over the same stores (a restart): the same answers from the ledgers alone
    const registry = new PoolRegistry();
    for (let s = 1; s <= fx.stores.ledgers[0].size; s++) registry.apply(fx.stores.ledgers[0].getSync(s));
    const restarted = new ConsensusExecutor(
      { durable: false },
      { stores: fx.stores, executor: fx.reqExecutor, registry, audit: await AuditTrail.load(fx.stores.ledgers[3]) },
    );
    expect(restarted.viewStartRegistries(4)).to.deep.equal(expected);
    expect(restarted.registryAt(restarted.uncommittedPoolStateRoot())).to.deep.equal(WITH5);
    await fx.stores.kv.close();
  });
});
