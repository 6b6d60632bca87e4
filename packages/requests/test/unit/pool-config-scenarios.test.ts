// Scenarios of the pool and config types: node create/update, pool read-only and back, TAA set /
// enforced / disabled, and the reads of the config ledger.
import { expect } from 'chai';
import { b58encode } from '@quire/common';
import { Ed25519Signer, blsKeyFromSeed, blsProofOfPossession } from '@quire/crypto';
import { RequestPipeline } from '../../src/pipeline/receive.js';
import { poolWritesFromTxns } from '../../src/types/pool-config.js';
import { taaDigest } from '../../src/taa/taa-state.js';
import { createHarness, newSigner, nymOp, PP_TIME, signed, STEWARDS, TRUSTEE, type Harness } from './helpers/harness.js';

const NODE_KEYS = [1, 2, 3].map((i) => Ed25519Signer.fromSeed(`${'0'.repeat(27)}Node${i}`));
const bls = (i: number) => {
  const sk = blsKeyFromSeed(`${'0'.repeat(27)}Node${i}`);
  return { blskey: b58encode(sk.publicKey), blskey_pop: b58encode(blsProofOfPossession(sk)) };
};

function nodeOp(i: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: '0',
    dest: NODE_KEYS[i - 1]!.fullVerkey,
    data: {
      alias: `Node${i}`,
      node_ip: '10.0.0.1',
      node_port: 9700 + 2 * i,
      client_ip: '10.0.0.1',
      client_port: 9701 + 2 * i,
      services: ['VALIDATOR'],
      ...bls(i),
      ...extra,
    },
  };
}

const reasonOf = (r: { valid: boolean }): string => (r as { reason?: string }).reason ?? '';
const codeOf = (r: { valid: boolean }): string | undefined => (r as { code?: string }).code;

describe('pool and config scenarios', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await createHarness();
  });
  afterEach(async () => {
    await h.close();
  });

  it('NODE: create by a steward, one node per steward, uniqueness, update and demotion rules', async () => {
    const r1 = await h.order(0, [signed(STEWARDS[0]!, nodeOp(1))]);
    expect(r1.results[0]!.valid, reasonOf(r1.results[0]!)).to.equal(true);
    const again = await h.order(0, [signed(STEWARDS[0]!, nodeOp(2))]);
    expect(codeOf(again.results[0]!)).to.equal('NODE_STEWARD_HAS_NODE');
    const sameAlias = await h.order(0, [signed(STEWARDS[1]!, nodeOp(2, { alias: 'Node1' }))]);
    expect(codeOf(sameAlias.results[0]!)).to.equal('NODE_CONFLICT');
    const sameHa = await h.order(0, [signed(STEWARDS[1]!, nodeOp(2, { node_port: 9702 }))]);
    expect(codeOf(sameHa.results[0]!)).to.equal('NODE_CONFLICT');
    const trusteeCreate = await h.order(0, [signed(TRUSTEE, nodeOp(2))]);
    expect(codeOf(trusteeCreate.results[0]!)).to.equal('AUTH_NOT_ENOUGH_SIGNATURES');
    const r2 = await h.order(0, [signed(STEWARDS[1]!, nodeOp(2))]);
    expect(r2.results[0]!.valid, reasonOf(r2.results[0]!)).to.equal(true);
    // owner changes its port; another steward may not; nobody may change the alias
    const dest = NODE_KEYS[0]!.fullVerkey;
    const portChange = { type: '0', dest, data: { alias: 'Node1', node_ip: '10.0.0.1', node_port: 9800, client_ip: '10.0.0.1', client_port: 9703 } };
    expect(codeOf((await h.order(0, [signed(STEWARDS[1]!, portChange)])).results[0]!)).to.equal('AUTH_NOT_OWNER');
    expect((await h.order(0, [signed(STEWARDS[0]!, portChange)])).results[0]!.valid).to.equal(true);
    expect(codeOf((await h.order(0, [signed(STEWARDS[0]!, { type: '0', dest, data: { alias: 'Other' } })])).results[0]!)).to.equal('NODE_CONFLICT');
    // demotion: not by another steward, yes by a trustee
    const demote = { type: '0', dest, data: { alias: 'Node1', services: [] } };
    expect(codeOf((await h.order(0, [signed(STEWARDS[1]!, demote)])).results[0]!)).to.equal('AUTH_OR_FAILED');
    expect((await h.order(0, [signed(TRUSTEE, demote)])).results[0]!.valid).to.equal(true);
    const rec = JSON.parse(new TextDecoder().decode(h.stores.states[0].get(dest, { committed: true })!));
    expect(rec).to.include({ alias: 'Node1', identifier: STEWARDS[0]!.did, node_port: 9800 });
    expect(rec.services).to.deep.equal([]);
  });

  it('NODE static rules: dest key, verkey, address completeness, BLS proof of possession', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ ...nodeOp(1), dest: STEWARDS[0]!.did }, 'NODE_DEST_NOT_KEY'],
      [{ ...nodeOp(1), verkey: NODE_KEYS[0]!.fullVerkey }, 'NODE_VERKEY_NOT_ALLOWED'],
      [{ type: '0', dest: NODE_KEYS[0]!.fullVerkey, data: { alias: 'Node1', node_ip: '10.0.0.1' } }, 'FIELD_MISSING'],
      [nodeOp(1, { blskey_pop: undefined }), 'NODE_BLS_POP_MISSING'],
      [nodeOp(1, { blskey: undefined }), 'NODE_BLS_POP_UNNEEDED'],
      [nodeOp(1, { blskey_pop: bls(2).blskey_pop }), 'NODE_BLS_POP_INCORRECT'],
      [nodeOp(1, { node_ip: '0.0.0.0' }), 'FIELD_IP'],
      [nodeOp(1, { node_port: 70000 }), 'FIELD_PORT'],
      [nodeOp(1, { services: ['OBSERVER'] }), 'FIELD_ENUM'],
      [nodeOp(1, { alias: 'x'.repeat(257) }), 'FIELD_TOO_LONG'],
    ];
    for (const [op, code] of cases) {
      const clean = JSON.parse(JSON.stringify(op));
      const r = await h.order(0, [signed(STEWARDS[0]!, clean)]);
      expect(codeOf(r.results[0]!), code).to.equal(code);
    }
  });

  it('POOL_CONFIG: read-only and back; writes refused at receipt while read-only; only trustees', async () => {
    const pipeline = new RequestPipeline(h.executor, h.stores);
    const off = await h.order(2, [signed(TRUSTEE, { type: '111', writes: false, force: false })]);
    expect(off.results[0]!.valid).to.equal(true);
    const cfgTxns = [];
    for (let s = 1; s <= h.stores.ledgers[2].size; s++) cfgTxns.push((await h.stores.ledgers[2].get(s))!);
    const writable = poolWritesFromTxns(cfgTxns);
    expect(writable).to.equal(false);
    const nym = await pipeline.receive(signed(TRUSTEE, nymOp(newSigner())), { now: PP_TIME, writable });
    expect(nym.kind).to.equal('nack');
    expect(nym.kind === 'nack' && nym.error.code).to.equal('POOL_READ_ONLY');
    const back = signed(TRUSTEE, { type: '111', writes: true });
    const accepted = await pipeline.receive(back, { now: PP_TIME, writable });
    expect(accepted.kind).to.equal('write');
    const on = await h.order(2, [back]);
    expect(on.results[0]!.valid).to.equal(true);
    cfgTxns.push((await h.stores.ledgers[2].get(h.stores.ledgers[2].size))!);
    expect(poolWritesFromTxns(cfgTxns)).to.equal(true);
    const bySteward = await h.order(2, [signed(STEWARDS[0]!, { type: '111', writes: false })]);
    expect(codeOf(bySteward.results[0]!)).to.equal('AUTH_NOT_ENOUGH_SIGNATURES');
    const bad = await h.order(2, [signed(TRUSTEE, { type: '111', writes: 'no' })]);
    expect(codeOf(bad.results[0]!)).to.equal('FIELD_TYPE');
  });

  it('TAA: AML first, digest, enforcement on domain writes (codes 201-206), disabled by empty text', async () => {
    const noAml = await h.order(2, [signed(TRUSTEE, { type: '4', version: '1.0', text: 'agree' })]);
    expect(codeOf(noAml.results[0]!)).to.equal('TAA_AML_NOT_SET');
    const aml = await h.order(2, [signed(TRUSTEE, { type: '5', version: '1', aml: { click: 'on click', wallet: 'in wallet' } })]);
    expect(aml.results[0]!.valid, reasonOf(aml.results[0]!)).to.equal(true);
    expect(codeOf((await h.order(2, [signed(TRUSTEE, { type: '5', version: '1', aml: { x: 'y' } })])).results[0]!)).to.equal('AML_VERSION_EXISTS');
    const set = await h.order(2, [signed(TRUSTEE, { type: '4', version: '1.0', text: 'agree', ratification_ts: PP_TIME - 86400 * 10 })], PP_TIME + 100);
    expect(set.results[0]!.valid, reasonOf(set.results[0]!)).to.equal(true);
    const digest = taaDigest('1.0', 'agree');
    const ppTime = PP_TIME + 1000;
    const day = ppTime - (ppTime % 86400);
    const nym = (acc?: Record<string, unknown>) => signed(TRUSTEE, nymOp(newSigner()), acc ? { taaAcceptance: acc } : {});
    const cases: [Record<string, unknown> | undefined, string | undefined][] = [
      [undefined, 'TAA_MISSING'],
      [{ taaDigest: 'a'.repeat(64), mechanism: 'click', time: day }, 'TAA_WRONG_DIGEST'],
      [{ taaDigest: digest, mechanism: 'click', time: day + 5 }, 'TAA_TIME_TOO_PRECISE'],
      [{ taaDigest: digest, mechanism: 'click', time: day + 86400 * 3 }, 'TAA_TIME_INAPPROPRIATE'],
      [{ taaDigest: digest, mechanism: 'click', time: day - 86400 * 30 }, 'TAA_TIME_INAPPROPRIATE'],
      [{ taaDigest: digest, mechanism: 'paper', time: day }, 'TAA_MECHANISM_INAPPROPRIATE'],
      [{ taaDigest: digest, mechanism: 'click', time: day }, undefined],
    ];
    for (const [acc, code] of cases) {
      const r = await h.order(1, [nym(acc)], ppTime);
      expect(codeOf(r.results[0]!), String(code)).to.equal(code);
      if (code) expect((r.results[0] as { replyCode: number }).replyCode).to.be.within(200, 207);
    }
    // config writes must not carry an acceptance (200)
    const withAcc = await h.order(
      2,
      [signed(TRUSTEE, { type: '111', writes: true }, { taaAcceptance: { taaDigest: digest, mechanism: 'click', time: day } })],
      ppTime,
    );
    expect(codeOf(withAcc.results[0]!)).to.equal('TAA_NOT_EXPECTED');
    // changing the text of an existing version is refused; the latest cannot be retired
    expect(codeOf((await h.order(2, [signed(TRUSTEE, { type: '4', version: '1.0', text: 'other' })], ppTime)).results[0]!)).to.equal('TAA_TEXT_CHANGE');
    expect(codeOf((await h.order(2, [signed(TRUSTEE, { type: '4', version: '1.0', retirement_ts: ppTime })], ppTime)).results[0]!)).to.equal(
      'TAA_RETIRE_LATEST',
    );
    // empty text disables acceptance checks
    const disable = await h.order(2, [signed(TRUSTEE, { type: '4', version: '2.0', text: '' })], ppTime);
    expect(disable.results[0]!.valid, reasonOf(disable.results[0]!)).to.equal(true);
    expect((await h.order(1, [nym()], ppTime)).results[0]!.valid).to.equal(true);
    // retiring 1.0 while disabled is refused
    expect(codeOf((await h.order(2, [signed(TRUSTEE, { type: '4', version: '1.0', retirement_ts: ppTime })], ppTime)).results[0]!)).to.equal(
      'TAA_RETIRE_WHILE_DISABLED',
    );
  });

  it('POOL_UPGRADE: schedule spacing unless forced, start/cancel statuses, trustees only', async () => {
    for (let i = 1; i <= 3; i++) expect((await h.order(0, [signed(STEWARDS[i - 1]!, nodeOp(i))])).results[0]!.valid).to.equal(true);
    const ids = NODE_KEYS.map((k) => k.fullVerkey);
    const schedule = (gap: number) => Object.fromEntries(ids.map((id, i) => [id, new Date((PP_TIME + 3600 + i * gap) * 1000).toISOString()]));
    const base = { type: '109', name: 'up', version: '1.2.0', action: 'start', sha256: 'a'.repeat(64), timeout: 10 };
    expect(codeOf((await h.order(2, [signed(TRUSTEE, { ...base, schedule: schedule(60) })])).results[0]!)).to.equal('UPGRADE_SCHEDULE_INVALID');
    expect(codeOf((await h.order(2, [signed(TRUSTEE, { ...base, schedule: { [ids[0]!]: schedule(600)[ids[0]!] } })])).results[0]!)).to.equal(
      'UPGRADE_SCHEDULE_INVALID',
    );
    expect(codeOf((await h.order(2, [signed(TRUSTEE, { ...base, schedule: { a: 'x' } })])).results[0]!)).to.equal('FIELD_BASE58_LENGTH');
    expect(codeOf((await h.order(2, [signed(STEWARDS[0]!, { ...base, schedule: schedule(600) })])).results[0]!)).to.equal('AUTH_NOT_ENOUGH_SIGNATURES');
    expect(codeOf((await h.order(2, [signed(TRUSTEE, { ...base, action: 'cancel' })])).results[0]!)).to.equal('AUTH_NOT_ALLOWED');
    const start = await h.order(2, [signed(TRUSTEE, { ...base, schedule: schedule(600) })]);
    expect(start.results[0]!.valid, reasonOf(start.results[0]!)).to.equal(true);
    expect(codeOf((await h.order(2, [signed(TRUSTEE, { ...base, schedule: schedule(900) })])).results[0]!)).to.equal('UPGRADE_ALREADY_SCHEDULED');
    expect((await h.order(2, [signed(TRUSTEE, { ...base, action: 'cancel' })])).results[0]!.valid).to.equal(true);
    const forced = await h.order(2, [signed(TRUSTEE, { ...base, name: 'f', version: '1.3.0', force: true, schedule: schedule(0) })]);
    expect(forced.results[0]!.valid, reasonOf(forced.results[0]!)).to.equal(true);
  });

  it('POOL_RESTART is authorized at receipt (trustee only) and never ordered', async () => {
    const pipeline = new RequestPipeline(h.executor, h.stores);
    const ok = await pipeline.receive(signed(TRUSTEE, { type: '118', action: 'start', datetime: '2030-01-01T10:00:00+00:00' }), {
      now: PP_TIME,
      writable: false,
    });
    expect(ok.kind === 'action' && ok.error).to.equal(null);
    const denied = await pipeline.receive(signed(STEWARDS[0]!, { type: '118', action: 'start' }), { now: PP_TIME, writable: true });
    expect(denied.kind === 'action' && denied.error?.code).to.equal('AUTH_NOT_ENOUGH_SIGNATURES');
    const bad = await pipeline.receive(signed(TRUSTEE, { type: '118', action: 'start', datetime: 'tomorrow' }), { now: PP_TIME, writable: true });
    expect(bad.kind === 'nack' && bad.error.code).to.equal('RESTART_DATETIME_INVALID');
    const ordered = await h.executor.applyBatch(2, [signed(TRUSTEE, { type: '118', action: 'start' })], PP_TIME);
    expect(codeOf(ordered.results[0]!)).to.equal('NOT_A_WRITE');
    h.executor.revert();
  });

  it('reads: GET_AUTH_RULE (all and one, feedable into AUTH_RULE), GET_TAA_AML, GET_TXN with audit path', async () => {
    const pipeline = new RequestPipeline(h.executor, h.stores);
    const read = async (op: Record<string, unknown>) => {
      const out = await pipeline.receive({ identifier: TRUSTEE.did, reqId: 7, protocolVersion: 2, operation: op }, { now: PP_TIME, writable: true });
      if (out.kind !== 'read') throw new Error(`not a read: ${out.kind === 'nack' ? out.error.reason : out.kind}`);
      return out.reply;
    };
    const all = await read({ type: '121' });
    expect(all.result.data).to.have.length(75);
    const one = await read({ type: '121', auth_type: '1', auth_action: 'ADD', field: 'role', new_value: '' });
    const element = (one.result.data as Record<string, unknown>[])[0]!;
    expect(one.result.state_proof).to.have.property('proof_nodes');
    const fed = await h.order(2, [signed(TRUSTEE, { type: '120', ...element })]);
    expect(fed.results[0]!.valid, reasonOf(fed.results[0]!)).to.equal(true);
    await h.order(2, [signed(TRUSTEE, { type: '5', version: 'v1', aml: { click: 'c' } })]);
    const aml = await read({ type: '7' });
    expect(aml.result.data).to.deep.include({ version: 'v1' });
    const txn = await read({ type: '3', ledgerId: 1, data: 2 });
    expect((txn.result.data as Record<string, unknown>).ledgerSize).to.equal(5);
    expect((txn.result.data as Record<string, unknown>).auditPath).to.have.length.greaterThan(0);
    const none = await read({ type: '3', ledgerId: 1, data: 99 });
    expect(none.result.data).to.equal(null);
    const bad = await pipeline.receive(
      { identifier: TRUSTEE.did, reqId: 7, protocolVersion: 2, operation: { type: '3', ledgerId: 9, data: 1 } },
      { now: PP_TIME, writable: true },
    );
    expect(bad.kind === 'nack' && bad.error.code).to.equal('READ_INVALID_LEDGER');
  });
});
