// Executor: genesis, batches, commit/revert, rebuild, determinism across independent stores, bad
// input never escaping, and a fuzz of random and mutated requests.
import { expect } from 'chai';
import fc from 'fast-check';
import { toHex } from '@quire/common';
import { RequestExecutor } from '../../src/executor/executor.js';
import type { Txn } from '../../src/handler.js';
import {
  DOMAIN_GENESIS,
  createHarness,
  genesisTxns,
  newSigner,
  nymOp,
  openStores,
  PP_TIME,
  signed,
  STEWARDS,
  testRegistry,
  TRUSTEE,
} from './helpers/harness.js';

const reasonOf = (r: { valid: boolean }): string => (r as { reason?: string }).reason ?? '';
const codeOf = (r: { valid: boolean }): string | undefined => (r as { code?: string }).code;

describe('executor', () => {
  it('applies genesis and a NYM batch, commits, and reports roots', async () => {
    const h = await createHarness();
    const user = newSigner();
    const r = await h.executor.applyBatch(1, [signed(TRUSTEE, nymOp(user, '101'))], PP_TIME);
    expect(r.results[0]!.valid, reasonOf(r.results[0]!)).to.equal(true);
    expect(r.ledgerSize).to.equal(6);
    expect(r.stateRoot).to.have.length(32);
    await h.executor.commit(r.batchId);
    expect(h.stores.ledgers[1].size).to.equal(6);
    expect(h.executor.idr.roleOf(user.did)).to.equal('101');
    expect(h.executor.idr.roleOf(STEWARDS[0]!.did)).to.equal('2');
    await h.close();
  });

  it('a NYM written earlier in a batch is visible to later requests of the batch; revert undoes everything', async () => {
    const h = await createHarness();
    const endorser = newSigner();
    const owner = newSigner();
    const before = h.stores.states[1].headRoot;
    const r = await h.executor.applyBatch(1, [signed(TRUSTEE, nymOp(endorser, '101')), signed(endorser, nymOp(owner))], PP_TIME);
    expect(r.validCount, r.results.map(reasonOf).join('|')).to.equal(2);
    h.executor.revert();
    expect(toHex(h.stores.states[1].headRoot)).to.equal(toHex(before));
    expect(h.stores.ledgers[1].uncommittedSize).to.equal(5);
    expect(h.executor.idr.roleOf(endorser.did)).to.equal(undefined);
    await h.close();
  });

  it('commits batches in order and rejects a payload already ordered or in flight', async () => {
    const h = await createHarness();
    const req = signed(TRUSTEE, nymOp(newSigner()));
    const b1 = await h.executor.applyBatch(1, [req], PP_TIME);
    const b2 = await h.executor.applyBatch(1, [req], PP_TIME + 1);
    expect(codeOf(b2.results[0]!)).to.equal('ALREADY_ORDERED');
    const committed = await h.executor.commit(b2.batchId);
    expect(committed.map((c) => c.batchId)).to.deep.equal([b1.batchId, b2.batchId]);
    const b3 = await h.executor.applyBatch(1, [req], PP_TIME + 2);
    expect(codeOf(b3.results[0]!)).to.equal('ALREADY_ORDERED');
    await h.close();
  });

  it('rebuilds the state from the ledger to the same root', async () => {
    const h = await createHarness();
    await h.order(1, [signed(TRUSTEE, nymOp(newSigner(), '2')), signed(TRUSTEE, nymOp(newSigner()))]);
    await h.order(2, [signed(TRUSTEE, { type: '5', version: '1', aml: { a: 'b' } })]);
    const domainRoot = toHex(h.stores.states[1].committedRoot);
    const configRoot = toHex(h.stores.states[2].committedRoot);
    const fresh = await createHarness();
    // replay the committed txns of h into a fresh store's ledgers and rebuild
    for (const lid of [1, 2] as const) {
      const src = h.stores.ledgers[lid];
      const dst = fresh.stores.ledgers[lid];
      for (let s = dst.size + 1; s <= src.size; s++) dst.append([(await src.get(s))!]);
      await dst.commit();
      fresh.stores.states[lid].revertToCommitted();
    }
    expect(toHex(await fresh.executor.rebuildState(1))).to.equal(domainRoot);
    expect(toHex(await fresh.executor.rebuildState(2))).to.equal(configRoot);
    await Promise.all([h.close(), fresh.close()]);
  });

  it('is deterministic: two independent stores give identical results, roots and txn bytes', async () => {
    const a = await createHarness();
    const b = await createHarness();
    const users = Array.from({ length: 6 }, () => newSigner());
    const batches: [number, unknown[]][] = [
      [1, [signed(TRUSTEE, nymOp(users[0]!, '101')), signed(TRUSTEE, nymOp(users[1]!)), '{"bad json', signed(STEWARDS[0]!, nymOp(users[2]!, '0'))]],
      [2, [signed(TRUSTEE, { type: '5', version: '1', aml: { z: '1', a: '2' } }), signed(TRUSTEE, { type: '4', version: '1', text: 't' })]],
      [1, [signed(users[0]!, nymOp(users[3]!)), signed(TRUSTEE, nymOp(users[4]!))]],
    ];
    let t = PP_TIME;
    for (const [lid, reqs] of batches) {
      const [ra, rb] = [await a.order(lid, reqs, t), await b.order(lid, reqs, t)];
      t++;
      expect(toHex(ra.stateRoot)).to.equal(toHex(rb.stateRoot));
      expect(toHex(ra.txnRoot)).to.equal(toHex(rb.txnRoot));
      expect(ra.results.map((r) => codeOf(r) ?? 'ok')).to.deep.equal(rb.results.map((r) => codeOf(r) ?? 'ok'));
    }
    for (const lid of [0, 1, 2] as const) {
      expect(a.stores.ledgers[lid].size).to.equal(b.stores.ledgers[lid].size);
      for (let s = 1; s <= a.stores.ledgers[lid].size; s++) {
        const [x, y] = [
          await (a.stores.ledgers[lid] as unknown as { getEncoded(n: number): Promise<Uint8Array> }).getEncoded(s),
          await (b.stores.ledgers[lid] as unknown as { getEncoded(n: number): Promise<Uint8Array> }).getEncoded(s),
        ];
        expect(toHex(x)).to.equal(toHex(y));
      }
    }
    await Promise.all([a.close(), b.close()]);
  });

  it('turns every kind of bad input into an invalid result with a code', async () => {
    const h = await createHarness();
    const good = signed(TRUSTEE, nymOp(newSigner()));
    const wrongSig = { ...signed(TRUSTEE, nymOp(newSigner())), signature: (signed(STEWARDS[0]!, nymOp(newSigner())) as { signature: string }).signature };
    const cases: [unknown, string][] = [
      ['{"identifier":', 'MALFORMED_JSON'],
      ['[1,2]', 'MALFORMED_JSON'],
      [42, 'MALFORMED_JSON'],
      [null, 'MALFORMED_JSON'],
      ['x'.repeat(140_000), 'MESSAGE_TOO_LARGE'],
      [{ ...good, reqId: 'abc' }, 'FIELD_TYPE'],
      [{ ...good, reqId: -1 }, 'FIELD_TOO_SMALL'],
      [{ ...good, protocolVersion: 1 }, 'PROTOCOL_VERSION_OLD'],
      [{ ...good, protocolVersion: undefined }, 'PROTOCOL_VERSION_MISSING'],
      [{ ...good, identifier: 'O0Il' }, 'FIELD_BASE58_CHARS'],
      [{ ...good, identifier: '3yZe7d' }, 'FIELD_BASE58_LENGTH'],
      [{ ...good, operation: { type: '999' } }, 'UNKNOWN_TYPE'],
      [{ ...good, operation: { type: 1 } }, 'FIELD_TYPE'],
      [{ ...good, operation: 'nym' }, 'FIELD_TYPE'],
      [{ ...good, signatures: { [TRUSTEE.did]: 'x' } }, 'SIGNATURE_AND_SIGNATURES'],
      [{ ...good, identifier: undefined }, 'MISSING_IDENTIFIER'],
      [wrongSig, 'INSUFFICIENT_SIGNATURES'],
      [{ ...good, signature: '0OIl' }, 'FIELD_BASE58_CHARS'],
      [signed(newSigner(), nymOp(newSigner())), 'UNKNOWN_SIGNER'],
      [signed(TRUSTEE, { type: '111', writes: true }), 'WRONG_LEDGER'],
      [signed(TRUSTEE, { type: '3', data: 1 }), 'NOT_A_WRITE'],
      [good, 'ok'],
      [good, 'ALREADY_ORDERED'],
    ];
    const r = await h.executor.applyBatch(
      1,
      cases.map(([c]) => c),
      PP_TIME,
    );
    expect(r.results.map((x) => codeOf(x) ?? 'ok')).to.deep.equal(cases.map(([, c]) => c));
    await h.close();
  });

  it('a txn the ledger refuses fails only its own request; the batch is applied again without it', async () => {
    // the real ledger, refusing any txn whose alias is "poison" as it refuses an unencodable txn
    const stores = await openStores();
    const real = stores.ledgers[1];
    const refusing = new Proxy(real, {
      get(target, p) {
        if (p === 'append') {
          return (txns: Txn[]) => {
            const index = txns.findIndex((t) => t.txn.data.alias === 'poison');
            if (index >= 0) throw Object.assign(new Error('cannot encode'), { data: { index } });
            return target.append(txns);
          };
        }
        const v = Reflect.get(target, p, target) as unknown;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
    (stores.ledgers as Record<number, unknown>)[1] = refusing;
    const executor = new RequestExecutor({}, { stores, registry: testRegistry() });
    await executor.applyGenesis(1, genesisTxns(DOMAIN_GENESIS));
    const [a, b] = [newSigner(), newSigner()];
    const reqs = [signed(TRUSTEE, nymOp(a)), signed(TRUSTEE, { ...nymOp(newSigner()), alias: 'poison' }), signed(TRUSTEE, nymOp(b))];
    const r = await executor.applyBatch(1, reqs, PP_TIME);
    expect(r.results.map((x) => codeOf(x) ?? 'ok')).to.deep.equal(['ok', 'INTERNAL', 'ok']);
    expect(r.results.filter((x) => x.valid).map((x) => (x as { seqNo: number }).seqNo)).to.deep.equal([6, 7]);
    expect(r.ledgerSize).to.equal(7);
    // the same as a batch that never held the refused request
    const ref = await createHarness();
    const r2 = await ref.executor.applyBatch(1, [reqs[0], reqs[2]], PP_TIME);
    expect(toHex(r.stateRoot)).to.equal(toHex(r2.stateRoot));
    expect(toHex(r.txnRoot)).to.equal(toHex(r2.txnRoot));
    await executor.commit(r.batchId);
    expect(executor.idr.getNym(a.did)).to.not.equal(undefined);
    await Promise.all([stores.kv.close(), ref.close()]);
  });

  it('fuzz: 10,000 random and mutated requests never make the executor throw', async function () {
    this.timeout(120_000);
    const h = await createHarness({ verifySignatures: true });
    const seeds = [
      signed(TRUSTEE, nymOp(newSigner(), '101')),
      signed(TRUSTEE, { type: '111', writes: false }),
      signed(TRUSTEE, {
        type: '120',
        auth_type: '1',
        auth_action: 'ADD',
        field: 'role',
        new_value: '',
        constraint: { constraint_id: 'OR', auth_constraints: [] },
      }),
      signed(STEWARDS[0]!, { type: '0', dest: TRUSTEE.fullVerkey, data: { alias: 'x' } }),
    ];
    const jsonValue = fc.letrec((tie) => ({
      v: fc.oneof(
        { depthSize: 'small' },
        fc.constant(null),
        fc.boolean(),
        fc.integer(),
        fc.bigInt({ min: -(2n ** 63n), max: 2n ** 64n - 1n }),
        fc.string({ maxLength: 20 }),
        fc.constantFrom('1', '0', '101', '111', '120', '4', '5', '109', 'ADD', 'EDIT', '*', TRUSTEE.did),
        fc.array(tie('v'), { maxLength: 4 }),
        fc.dictionary(
          fc.constantFrom(
            'type',
            'dest',
            'role',
            'verkey',
            'data',
            'writes',
            'constraint',
            'constraint_id',
            'auth_constraints',
            'rules',
            'version',
            'text',
            'aml',
            'schedule',
            'alias',
            'sig_count',
          ),
          tie('v'),
          { maxKeys: 5 },
        ),
      ),
    })).v;
    const mutated = fc
      .tuple(
        fc.constantFrom(...seeds),
        fc.constantFrom('identifier', 'reqId', 'operation', 'protocolVersion', 'signature', 'endorser', 'taaAcceptance', 'signatures'),
        jsonValue,
        fc.constantFrom('type', 'dest', 'role', 'verkey', 'writes', 'constraint', 'data'),
        fc.boolean(),
      )
      .map(([seed, top, v, opKey, inOp]) => {
        const r = { ...seed, operation: { ...(seed.operation as object) } } as Record<string, unknown>;
        if (inOp) (r.operation as Record<string, unknown>)[opKey] = v;
        else r[top] = v;
        return r;
      });
    const anyReq = fc.oneof(
      jsonValue,
      mutated,
      fc.string({ maxLength: 50 }),
      mutated.map((m) => JSON.stringify(m, (_k, x: unknown) => (typeof x === 'bigint' ? x.toString() : x))),
    );
    let total = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(anyReq, { minLength: 50, maxLength: 50 }), fc.constantFrom(0, 1, 2), async (reqs, lid) => {
        const r = await h.executor.applyBatch(lid, reqs, PP_TIME + total);
        total += reqs.length;
        expect(r.results).to.have.length(reqs.length);
        // every refusal has a stable code; INTERNAL would mean an unexpected exception inside
        for (const x of r.results) if (!x.valid) expect(x.code, x.reason).to.be.a('string').and.not.equal('INTERNAL');
        if (total % 1000 === 0) await h.executor.commit(r.batchId);
        else h.executor.revert(1);
      }),
      { numRuns: 200, seed: 42 },
    );
    expect(total).to.equal(10_000);
    await h.close();
  });
});
