// The node's BatchExecutor orders every write type synchronously, including those whose dynamic
// validation reads beyond the state trie: NODE (uniqueness and one node per steward, through the
// pool node index), CLAIM_DEF (its SCHEMA txn by seqNo) and POOL_UPGRADE (the validator list and
// the committed upgrade history); and a node catching up appends txns of those types synchronously.
import { expect } from 'chai';
import { b58encode, decodeMsgpack, encodeMsgpack } from '@quire/common';
import { batchDigest } from '@quire/consensus';
import { BlsSecretKey, Ed25519Signer } from '@quire/crypto';
import { type Fixture, memoryFixture, nymRequest, signedRequest as signed, trustee } from './helpers.js';

let ppSeq = 0;
const PP_TIME = 1_700_000_000;

function input(ledgerId: number, requests: Record<string, unknown>[]) {
  const ppSeqNo = ++ppSeq;
  const ppTime = PP_TIME + ppSeqNo;
  const digests = requests.map((_, i) => `${ppSeqNo}-${i}`.padStart(64, '0'));
  return { ledgerId, requests, digests, ppTime, ppSeqNo, originalViewNo: 0, primaries: ['Node1'], digest: batchDigest(0, ppTime, digests, ledgerId) };
}

/** Applies and commits one batch; returns the reject reasons by request index. */
function order(fx: Fixture, ledgerId: number, requests: Record<string, unknown>[]): (string | null)[] {
  const applied = fx.executor.applyBatch(input(ledgerId, requests));
  const committed = fx.executor.commitBatch([]);
  expect(committed.txns.length).to.equal(requests.length - applied.discarded.length);
  return requests.map((_, i) => {
    const at = applied.discarded.indexOf(i);
    return at < 0 ? null : applied.rejectReasons[at]!;
  });
}

const newSteward = Ed25519Signer.fromSeed('0000000000000000000000Steward500');
const node5 = Ed25519Signer.fromSeed('000000000000000000000000000Node5');
const node5Bls = BlsSecretKey.fromSeed('000000000000000000000000000Node5');
const node6 = Ed25519Signer.fromSeed('000000000000000000000000000Node6');

function nodeOp(dest: Ed25519Signer, alias: string, port: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: '0',
    dest: dest.fullVerkey,
    data: { alias, node_ip: '10.0.0.5', node_port: port, client_ip: '10.0.0.5', client_port: port + 1, services: ['VALIDATOR'], ...extra },
  };
}

const node5Op = nodeOp(node5, 'Node5', 9711, { blskey: b58encode(node5Bls.publicKey), blskey_pop: b58encode(node5Bls.proofOfPossession()) });
const schemaOp = { type: '101', data: { name: 'degree', version: '1.0', attr_names: ['name', 'year'] } };
const claimDef = (ref: number, tag = 'tag') => ({ type: '102', ref, signature_type: 'CL', tag, data: { primary: { n: '1', s: '2' } } });
const upgradeOp = (dests: readonly string[], extra: Record<string, unknown> = {}) => ({
  type: '109',
  name: 'quire',
  version: '1.1.0',
  action: 'start',
  sha256: 'a'.repeat(64),
  schedule: Object.fromEntries(dests.map((d, i) => [d, new Date((PP_TIME + 86_400 + i * 600) * 1000).toISOString()])),
  ...extra,
});

/**
 * Orders, on `fx`: a new steward and its node Node5; a SCHEMA and a CLAIM_DEF naming it; a
 * POOL_UPGRADE. Returns the SCHEMA request.
 */
function orderScenario(fx: Fixture): Record<string, unknown> {
  expect(order(fx, 1, [nymRequest(trustee, newSteward, { role: '2' })])).to.deep.equal([null]);
  expect(order(fx, 0, [signed(newSteward, node5Op)])).to.deep.equal([null]);
  // the SCHEMA is seqNo 7 of the domain ledger; the CLAIM_DEF in the same batch finds it uncommitted
  const schema = signed(trustee, schemaOp);
  expect(order(fx, 1, [schema, signed(trustee, claimDef(7))])).to.deep.equal([null, null]);
  const validators = fx.reqExecutor.nodes.validators();
  expect(order(fx, 2, [signed(trustee, upgradeOp(validators))])).to.deep.equal([null]);
  return schema;
}

describe('consensus executor: NODE, CLAIM_DEF and POOL_UPGRADE', () => {
  it('applies and commits a new node of a new steward (BLS key with proof of possession) and updates the registry', async () => {
    const fx = await memoryFixture();
    const ex = fx.executor;
    expect(order(fx, 1, [nymRequest(trustee, newSteward, { role: '2' })])).to.deep.equal([null]);
    const applied = ex.applyBatch(input(0, [signed(newSteward, node5Op)]));
    expect(applied.discarded).to.deep.equal([]);
    expect(applied.nodeReg).to.deep.equal(['Node1', 'Node2', 'Node3', 'Node4', 'Node5']);
    expect(ex.uncommittedRegistry.validators).to.include('Node5');
    expect(ex.registry.validators).to.not.include('Node5');
    const committed = ex.commitBatch([]);
    expect(committed).to.deep.include({ ledgerId: 0, nodeReg: ['Node1', 'Node2', 'Node3', 'Node4', 'Node5'] });
    expect(committed.txns.map((t) => t.seqNo)).to.deep.equal([5]);
    await ex.flush();
    expect(ex.registry.node('Node5')?.dest).to.equal(node5.fullVerkey);
    const record = JSON.parse(new TextDecoder().decode(fx.stores.states[0].get(node5.fullVerkey, { committed: true })));
    expect(record).to.include({ alias: 'Node5', identifier: newSteward.did, blskey: b58encode(node5Bls.publicKey) });
    await fx.stores.kv.close();
  });

  it('refuses a second node of the same steward and a node reusing an alias or an address', async () => {
    const fx = await memoryFixture();
    expect(order(fx, 1, [nymRequest(trustee, newSteward, { role: '2' })])).to.deep.equal([null]);
    const reasons = order(fx, 0, [
      signed(newSteward, node5Op),
      signed(newSteward, nodeOp(node6, 'Node6', 9721)),
      signed(newSteward, nodeOp(node6, 'Node1', 9721)),
    ]);
    expect(reasons[0]).to.equal(null);
    expect(reasons[1]).to.contain(`${newSteward.did} already has a node`);
    expect(reasons[2]).to.contain('already has a node');
    // another steward: alias and node address taken by Node5 in the committed pool state
    const steward7 = Ed25519Signer.fromSeed('0000000000000000000000Steward700');
    expect(order(fx, 1, [nymRequest(trustee, steward7, { role: '2' })])).to.deep.equal([null]);
    const taken = order(fx, 0, [signed(steward7, nodeOp(node6, 'Node5', 9731)), signed(steward7, nodeOp(node6, 'Node6', 9711))]);
    expect(taken[0]).to.contain("Node\\'s alias must be unique");
    expect(taken[1]).to.contain("Node\\'s nodestack addresses must be unique");
    // reverted: Node6 applied then reverted leaves its alias free again
    const applied = fx.executor.applyBatch(input(0, [signed(steward7, nodeOp(node6, 'Node6', 9741))]));
    expect(applied.discarded).to.deep.equal([]);
    fx.executor.revertLastBatch();
    expect(fx.reqExecutor.nodes.find('alias', 'Node6')).to.deep.equal([]);
    expect(order(fx, 0, [signed(steward7, nodeOp(node6, 'Node6', 9741))])).to.deep.equal([null]);
    await fx.stores.kv.close();
  });

  it('applies a CLAIM_DEF naming its SCHEMA by seqNo, committed or in the same batch; refuses other refs', async () => {
    const fx = await memoryFixture();
    expect(order(fx, 1, [signed(trustee, schemaOp), signed(trustee, claimDef(6))])).to.deep.equal([null, null]);
    // a committed schema, and refs to a NYM txn and beyond the ledger
    const reasons = order(fx, 1, [signed(trustee, claimDef(6, 'second')), signed(trustee, claimDef(1, 'nym')), signed(trustee, claimDef(99, 'none'))]);
    expect(reasons[0]).to.equal(null);
    expect(reasons[1]).to.contain("Mentioned seqNo (1) isn't seqNo of the schema.");
    expect(reasons[2]).to.contain("Mentioned seqNo (99) doesn't exist.");
    await fx.executor.flush();
    const txn = (await fx.stores.ledgers[1].get(7)) as unknown as { txn: { type: string; data: { ref: number } } };
    expect(txn.txn).to.deep.include({ type: '102' });
    expect(txn.txn.data.ref).to.equal(6);
    await fx.stores.kv.close();
  });

  it('applies a POOL_UPGRADE scheduling every validator, then refuses the same start and a partial schedule', async () => {
    const fx = await memoryFixture();
    const validators = fx.reqExecutor.nodes.validators();
    expect(validators).to.have.length(4);
    expect(order(fx, 2, [signed(trustee, upgradeOp(validators))])).to.deep.equal([null]);
    const again = order(fx, 2, [signed(trustee, upgradeOp(validators, { timeout: 5 }))]);
    expect(again[0]).to.contain('is already scheduled');
    const partial = order(fx, 2, [signed(trustee, upgradeOp(validators.slice(1), { version: '1.2.0' }))]);
    expect(partial[0]).to.contain('Schedule should contain id of all nodes');
    expect(order(fx, 2, [signed(trustee, { ...upgradeOp(validators), action: 'cancel', schedule: undefined })])).to.deep.equal([null]);
    await fx.stores.kv.close();
  });

  it('a committed payload counts as ordered before its write lands', async () => {
    const fx = await memoryFixture();
    const req = signed(trustee, schemaOp);
    fx.executor.applyBatch(input(1, [req]));
    fx.executor.commitBatch([]);
    const again = fx.executor.applyBatch(input(1, [req]));
    expect(again.discarded).to.deep.equal([0]);
    expect(again.rejectReasons[0]).to.match(/already ordered/);
    fx.executor.revertLastBatch();
    await fx.executor.flush();
    expect(fx.executor.applyBatch(input(1, [req])).discarded).to.deep.equal([0]);
    await fx.stores.kv.close();
  });

  it('appends caught-up NODE, SCHEMA + CLAIM_DEF and POOL_UPGRADE txns synchronously, with the same roots', async () => {
    const seeder = await memoryFixture();
    const leecher = await memoryFixture();
    const schema = orderScenario(seeder);
    await seeder.executor.flush();
    const s = seeder.executor;
    const l = leecher.executor;
    for (const lid of [0, 1, 2, 3]) {
      const target = s.ledgerStatus(lid);
      const from = l.ledgerStatus(lid).size + 1;
      // in two chunks when there are several txns: the first proves through a consistency proof
      const cut = from < target.size ? from : target.size;
      const first = l.appendCaughtUp(lid, s.txnRange(lid, from, cut), s.consistencyProof(lid, cut, target.size), target.size, target.root);
      expect(first, `ledger ${lid} first chunk`).to.equal(true);
      if (cut < target.size) expect(l.appendCaughtUp(lid, s.txnRange(lid, cut + 1, target.size), [], target.size, target.root), `ledger ${lid}`).to.equal(true);
      expect(l.ledgerStatus(lid)).to.deep.equal(target);
    }
    await l.flush();
    for (const lid of [0, 1, 2] as const) {
      expect(b58encode(leecher.stores.states[lid].committedRoot), `state ${lid}`).to.equal(b58encode(seeder.stores.states[lid].committedRoot));
    }
    expect(l.registry.validators).to.deep.equal(['Node1', 'Node2', 'Node3', 'Node4', 'Node5']);
    expect(l.lastAudit()).to.deep.equal(s.lastAudit());
    // the caught-up history is what the leecher validates against from now on
    const validators = leecher.reqExecutor.nodes.validators();
    expect(validators).to.include(node5.fullVerkey);
    const reasons = order(leecher, 2, [signed(trustee, upgradeOp(validators, { timeout: 7 }))]);
    expect(reasons[0]).to.contain('is already scheduled');
    expect(order(leecher, 1, [signed(trustee, claimDef(7, 'later'))])).to.deep.equal([null]);
    // the caught-up requests count as ordered: the seeder's SCHEMA request is a duplicate here
    expect(order(leecher, 1, [schema])[0]).to.match(/already ordered/);
    await seeder.stores.kv.close();
    await leecher.stores.kv.close();
  });

  it('refuses caught-up txns that do not prove, and leaves nothing behind', async () => {
    const seeder = await memoryFixture();
    const leecher = await memoryFixture();
    orderScenario(seeder);
    await seeder.executor.flush();
    const target = seeder.executor.ledgerStatus(0);
    const txns = seeder.executor.txnRange(0, 5, 5);
    // as the wire gives them, to be forged
    const forged = decodeMsgpack(encodeMsgpack(txns)) as { txn: { data: { data: Record<string, unknown> } } }[];
    forged[0]!.txn.data.data.alias = 'Mallory';
    const before = b58encode(leecher.stores.states[0].headRoot);
    expect(leecher.executor.appendCaughtUp(0, forged, [], target.size, target.root)).to.equal(false);
    expect(leecher.executor.ledgerStatus(0).size).to.equal(4);
    expect(b58encode(leecher.stores.states[0].headRoot)).to.equal(before);
    expect(leecher.reqExecutor.nodes.find('alias', 'Mallory')).to.deep.equal([]);
    expect(leecher.executor.appendCaughtUp(0, txns, [], target.size, target.root)).to.equal(true);
    await seeder.stores.kv.close();
    await leecher.stores.kv.close();
  });
});
