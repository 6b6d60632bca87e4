// The executor's in-memory indexes (pool node records, POOL_UPGRADE history) answer what a scan of
// the state / committed ledger would, through applies, failing requests, reverts and rebuilds; and
// appendCaughtUp applies txns ordered elsewhere synchronously, all or nothing.
import { expect } from 'chai';
import fc from 'fast-check';
import { b58encode, codePointCompare } from '@quire/common';
import { Ed25519Signer } from '@quire/crypto';
import { RequestError } from '../../src/errors.js';
import { parseRequest } from '../../src/pipeline/parse.js';
import { StatePoolNodeIndex } from '../../src/executor/indexes.js';
import { isValidatorRecord, nodeIndexKeys } from '../../src/types/node.js';
import type { NodeIndexField } from '../../src/handler.js';
import { decodeJsonObject } from '../../src/state-keys.js';
import { createHarness, PP_TIME, signed, STEWARDS, TRUSTEE, type Harness } from './helpers/harness.js';

const NODES = [1, 2, 3, 4].map((i) => Ed25519Signer.fromSeed(`${'0'.repeat(27)}Node${i}`));

function nodeOp(i: number, data: Record<string, unknown>): Record<string, unknown> {
  return { type: '0', dest: NODES[i]!.fullVerkey, data };
}

const createOp = (i: number, alias: string, port: number, services = ['VALIDATOR']) =>
  nodeOp(i, { alias, node_ip: '10.0.0.1', node_port: port, client_ip: '10.0.0.2', client_port: port, services });

/** What a scan of the pool trie head says, in the index's terms. */
function scan(h: Harness): { by: Map<string, string[]>; validators: string[] } {
  const by = new Map<string, string[]>();
  const validators: string[] = [];
  h.stores.states[0].forEach((k, v) => {
    const dest = new TextDecoder().decode(k);
    const rec = decodeJsonObject(v, dest);
    for (const [f, value] of nodeIndexKeys(rec)) by.set(`${f}=${value}`, [...(by.get(`${f}=${value}`) ?? []), dest].sort(codePointCompare));
    if (isValidatorRecord(rec)) validators.push(dest);
  });
  return { by, validators: validators.sort(codePointCompare) };
}

function expectIndexMatchesScan(h: Harness): void {
  const want = scan(h);
  expect(h.executor.nodes.validators()).to.deep.equal(want.validators);
  for (const [slot, dests] of want.by) {
    const [field, value] = slot.split(/=(.*)/s) as [NodeIndexField, string];
    expect(h.executor.nodes.find(field, value), slot).to.deep.equal(dests);
  }
}

describe('executor indexes', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await createHarness();
  });
  afterEach(() => h.close());

  it('pool node index: follows applied, refused and reverted NODE requests like a scan of the head', () => {
    expect(h.executor.nodes.validators()).to.deep.equal([]);
    const r1 = h.executor.applyBatch(0, [signed(STEWARDS[0]!, createOp(0, 'A', 9701)), signed(STEWARDS[1]!, createOp(1, 'B', 9703))], PP_TIME);
    expect(r1.validCount).to.equal(2);
    expectIndexMatchesScan(h);
    expect(h.executor.nodes.find('alias', 'A')).to.deep.equal([NODES[0]!.fullVerkey]);
    expect(h.executor.nodes.find('steward', STEWARDS[1]!.did)).to.deep.equal([NODES[1]!.fullVerkey]);
    expect(h.executor.nodes.find('nodeAddress', '10.0.0.1:9703')).to.deep.equal([NODES[1]!.fullVerkey]);
    // a demotion (state write) and a refused request (rolled back) in the next batch
    const r2 = h.executor.applyBatch(
      0,
      [signed(STEWARDS[0]!, nodeOp(0, { alias: 'A', services: [] })), signed(STEWARDS[2]!, createOp(2, 'B', 9705))],
      PP_TIME + 1,
    );
    expect(r2.results.map((r) => r.valid)).to.deep.equal([true, false]);
    expect(h.executor.nodes.validators()).to.deep.equal([NODES[1]!.fullVerkey]);
    expectIndexMatchesScan(h);
    h.executor.revert(1);
    expectIndexMatchesScan(h);
    expect(h.executor.nodes.validators()).to.have.length(2);
    h.executor.revert();
    expect(h.executor.nodes.validators()).to.deep.equal([]);
    expect(h.executor.nodes.find('alias', 'A')).to.deep.equal([]);
  });

  it('pool node index: random sequences of NODE batches, commits and reverts agree with a scan', () => {
    const ops = fc.array(
      fc.record({
        steward: fc.integer({ min: 0, max: 3 }),
        node: fc.integer({ min: 0, max: 3 }),
        alias: fc.constantFrom('A', 'B', 'C'),
        port: fc.integer({ min: 9700, max: 9703 }),
        demote: fc.boolean(),
        then: fc.constantFrom('commit', 'revert', 'keep'),
      }),
      { maxLength: 8 },
    );
    fc.assert(
      fc.property(ops, (steps) => {
        let t = PP_TIME;
        for (const s of steps) {
          const op = createOp(s.node, s.alias, s.port, s.demote ? [] : ['VALIDATOR']);
          h.executor.applyBatch(0, [signed(STEWARDS[s.steward]!, op)], t++);
          if (s.then === 'revert') h.executor.revert(1);
          if (s.then === 'commit') h.executor.commitInto(h.stores.kv.batch(), Number.MAX_SAFE_INTEGER);
          expectIndexMatchesScan(h);
        }
        h.executor.revert();
        expectIndexMatchesScan(h);
      }),
      { numRuns: 15 },
    );
  });

  it('pool node index: a record that does not decode is reported at lookup, not at write', () => {
    const trie = new Map<string, Uint8Array>([['D1', new TextEncoder().encode('{"alias":"X"}')]]);
    const reader = {
      get: (k: string | Uint8Array) => trie.get(String(k)),
      forEach: (fn: (k: Uint8Array, v: Uint8Array) => void) => trie.forEach((v, k) => fn(new TextEncoder().encode(k), v)),
    };
    const index = new StatePoolNodeIndex(reader);
    expect(index.find('alias', 'X')).to.deep.equal(['D1']);
    trie.set('D2', new TextEncoder().encode('not json'));
    index.invalidateKey('D2');
    expect(() => index.find('alias', 'X'))
      .to.throw(RequestError)
      .with.property('code', 'STATE_CORRUPT');
    trie.delete('D2');
    expect(index.find('alias', 'X')).to.deep.equal(['D1']);
  });

  it('upgrade index: the last committed action per (name, version); uncommitted ones do not count', async () => {
    expect(h.executor.upgrades.lastAction('up', '1.0')).to.equal(undefined);
    const base = { type: '109', name: 'up', version: '1.0', sha256: 'a'.repeat(64), force: true };
    const schedule = { [NODES[0]!.fullVerkey]: '2030-01-01T00:00:00+00:00' };
    await h.order(2, [signed(TRUSTEE, { ...base, action: 'start', schedule })]);
    expect(h.executor.upgrades.lastAction('up', '1.0')).to.equal('start');
    h.executor.applyBatch(2, [signed(TRUSTEE, { ...base, action: 'cancel' })], PP_TIME + 50);
    expect(h.executor.upgrades.lastAction('up', '1.0')).to.equal('start');
    await h.executor.commit();
    expect(h.executor.upgrades.lastAction('up', '1.0')).to.equal('cancel');
    expect(h.executor.upgrades.lastAction('up', '1.1')).to.equal(undefined);
  });
});

describe('executor catch-up', () => {
  it('payload lookups: a digest found absent reads as committed once its request is ordered or caught up', async () => {
    const seeder = await createHarness();
    const leecher = await createHarness();
    const a = signed(TRUSTEE, { type: '101', data: { name: 'pa', version: '1.0', attr_names: ['a'] } });
    const b = signed(TRUSTEE, { type: '101', data: { name: 'pb', version: '1.0', attr_names: ['a'] } });
    const pa = parseRequest(a).payloadDigest;
    const pb = parseRequest(b).payloadDigest;
    for (const pd of [pa, pb, pa, pb]) {
      expect(seeder.executor.isPayloadCommitted(pd)).to.equal(false);
      expect(leecher.executor.isPayloadCommitted(pd)).to.equal(false);
    }
    await seeder.order(1, [a], PP_TIME + 1);
    await seeder.order(1, [b], PP_TIME + 2);
    expect(seeder.executor.isPayloadCommitted(pa)).to.equal(true);
    expect(seeder.executor.isPayloadCommitted(pb)).to.equal(true);
    const caughtUp = [];
    for (let n = leecher.stores.ledgers[1].size + 1; n <= seeder.stores.ledgers[1].size; n++) caughtUp.push((await seeder.stores.ledgers[1].get(n))!);
    const wb = leecher.stores.kv.batch();
    leecher.executor.appendCaughtUp(1, caughtUp, wb, () => true);
    await wb.write();
    expect(leecher.executor.isPayloadCommitted(pa)).to.equal(true);
    expect(leecher.executor.isPayloadCommitted(pb)).to.equal(true);
    await seeder.close();
    await leecher.close();
  });

  it('applies caught-up txns synchronously: same roots, ts-root per batch time, seqNo index; all or nothing', async () => {
    const seeder = await createHarness();
    const leecher = await createHarness();
    await seeder.order(0, [signed(STEWARDS[0]!, createOp(0, 'A', 9701))], PP_TIME + 1);
    await seeder.order(1, [signed(TRUSTEE, { type: '101', data: { name: 's', version: '1.0', attr_names: ['a'] } })], PP_TIME + 2);
    await seeder.order(1, [signed(TRUSTEE, { type: '102', ref: 6, signature_type: 'CL', data: { primary: { n: '1' } } })], PP_TIME + 3);
    const txns = async (lid: 0 | 1, from: number) => {
      const out = [];
      for (let n = from; n <= seeder.stores.ledgers[lid].size; n++) out.push((await seeder.stores.ledgers[lid].get(n))!);
      return out;
    };
    const domain = await txns(1, 6);
    const target = seeder.stores.ledgers[1].root;
    // refused by the proof check: nothing changes
    const wb0 = leecher.stores.kv.batch();
    expect(() => leecher.executor.appendCaughtUp(1, domain, wb0, () => false))
      .to.throw(RequestError)
      .with.property('code', 'CATCHUP_TXNS_REFUSED');
    expect(leecher.stores.ledgers[1].uncommittedSize).to.equal(5);
    expect(wb0.length).to.equal(0);
    const rootBefore = b58encode(leecher.stores.states[1].headRoot);
    const wb = leecher.stores.kv.batch();
    let asked: number | undefined;
    const done = leecher.executor.appendCaughtUp(1, domain, wb, (root, size) => {
      asked = size;
      return b58encode(root) === b58encode(target);
    });
    expect(asked).to.equal(7);
    expect(done.size).to.equal(7);
    expect(b58encode(done.stateRoot)).to.equal(b58encode(seeder.stores.states[1].committedRoot));
    expect(b58encode(done.stateRoot)).to.not.equal(rootBefore);
    expect(done.payloadDigests).to.have.length(2);
    expect(leecher.executor.isPayloadCommitted(done.payloadDigests[0]!)).to.equal(true);
    await wb.write();
    expect(leecher.executor.isPayloadCommitted(done.payloadDigests[1]!)).to.equal(true);
    for (const t of [PP_TIME + 2, PP_TIME + 3]) {
      expect(b58encode((await leecher.stores.timestamps!.getEqualOrPrevious(1, t))!), `ts ${t}`).to.equal(
        b58encode((await seeder.stores.timestamps!.getEqualOrPrevious(1, t))!),
      );
    }
    // an ATTRIB as stored (its raw hashed) does not apply where the attribute store lacks the
    // original: the whole chunk (a NYM before it included) is refused and nothing changes
    const owner = Ed25519Signer.fromSeed('0000000000000000000000000Owner01');
    await seeder.order(1, [signed(TRUSTEE, { type: '1', dest: owner.did, verkey: owner.verkey })], PP_TIME + 4);
    await seeder.order(1, [signed(TRUSTEE, { type: '100', dest: TRUSTEE.did, raw: '{"k":1}' })], PP_TIME + 5);
    const more = await txns(1, 8);
    const rootNow = b58encode(leecher.stores.states[1].committedRoot);
    const wb1 = leecher.stores.kv.batch();
    expect(() => leecher.executor.appendCaughtUp(1, more, wb1, () => true))
      .to.throw(RequestError)
      .with.property('code', 'CATCHUP_TXNS_REFUSED');
    expect(leecher.stores.ledgers[1].uncommittedSize).to.equal(7);
    expect(b58encode(leecher.stores.states[1].headRoot)).to.equal(rootNow);
    expect(wb1.length).to.equal(0);
    // in catch-up form (the original restored by the seeder) it applies, with the same roots
    const target9 = seeder.stores.ledgers[1].root;
    const caught = leecher.executor.appendCaughtUp(
      1,
      seeder.executor.catchupTxns(1, 8, 9),
      leecher.stores.kv.batch(),
      (root) => b58encode(root) === b58encode(target9),
    );
    expect(caught.size).to.equal(9);
    expect(b58encode(caught.stateRoot)).to.equal(b58encode(seeder.stores.states[1].committedRoot));
    expect(caught.txns.map((t) => t.txn.data.raw)).to.deep.equal([undefined, more[1]!.txn.data.raw]);
    // pool txns: the node index of the leecher sees the caught-up node
    const pool = await txns(0, 1);
    leecher.executor.appendCaughtUp(0, pool, leecher.stores.kv.batch(), () => true);
    expect(leecher.executor.nodes.find('alias', 'A')).to.deep.equal([NODES[0]!.fullVerkey]);
    await Promise.all([seeder.close(), leecher.close()]);
  });
});
