// TXN_AUTHOR_AGREEMENT_DISABLE (type 8, requests.md §7.2): trustees only, refused while no agreement is
// enabled, retires every agreement at the txn time, removes `2:latest`; afterwards GET_TAA answers null
// (proven absent), domain writes need no acceptance, and a new agreement enables acceptance again.
import { canonicalJsonBytes, taaDigest } from '@quire/common';
import { expect } from 'chai';
import type { RequestResult } from '../../src/executor/executor.js';
import { decodeText, decodeWrapped } from '../../src/state-keys.js';
import { TAA_LATEST_KEY, taaDigestKey } from '../../src/taa/taa-state.js';
import { STEWARDS, TRUSTEE, createHarness, newSigner, nymOp, read, signed, staticCheck, verifyRead, type Harness } from './domain-helpers.js';

const T = 1_800_000_000;
const DAY = 86400;
const dayOf = (t: number): number => t - (t % DAY);

function codeOf(r: RequestResult): string | undefined {
  return r.valid ? undefined : r.code;
}

async function config(h: Harness, req: Record<string, unknown>, ppTime: number): Promise<RequestResult> {
  return (await h.order(2, [req], ppTime)).results[0]!;
}

async function nym(h: Harness, ppTime: number, acceptance?: Record<string, unknown>): Promise<RequestResult> {
  return (await h.order(1, [signed(TRUSTEE, nymOp(newSigner()), acceptance ? { taaAcceptance: acceptance } : {})], ppTime)).results[0]!;
}

function stored(h: Harness, digest: string): Record<string, unknown> & { lsn: number; lut: number } {
  const w = decodeWrapped<Record<string, unknown>>(h.stores.states[2].get(taaDigestKey(digest))!, taaDigestKey(digest));
  return { ...w.val, lsn: w.lsn, lut: w.lut! };
}

describe('TXN_AUTHOR_AGREEMENT_DISABLE (8)', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await createHarness();
  });
  afterEach(() => h.close());

  async function setUp(): Promise<{ d1: string; d2: string }> {
    expect(codeOf(await config(h, signed(TRUSTEE, { type: '5', version: '1', aml: { click: 'on click' } }), T))).to.equal(undefined);
    expect(codeOf(await config(h, signed(TRUSTEE, { type: '4', version: 'v1', text: 'first' }), T + 1))).to.equal(undefined);
    expect(codeOf(await config(h, signed(TRUSTEE, { type: '4', version: 'v2', text: 'second' }), T + 2))).to.equal(undefined);
    // v1 retires in the future, after the disable
    expect(codeOf(await config(h, signed(TRUSTEE, { type: '4', version: 'v1', retirement_ts: T + 10 * DAY }), T + 3))).to.equal(undefined);
    return { d1: taaDigest('v1', 'first'), d2: taaDigest('v2', 'second') };
  }

  it('takes no fields (extra ones are tolerated, as for every type)', () => {
    staticCheck(h, signed(TRUSTEE, { type: '8' }));
    staticCheck(h, signed(TRUSTEE, { type: '8', extra: 1 }));
  });

  it('is refused while no agreement is enabled (none written, or the latest has empty text)', async () => {
    expect(codeOf(await config(h, signed(TRUSTEE, { type: '8' }), T))).to.equal('TAA_ALREADY_DISABLED');
    await config(h, signed(TRUSTEE, { type: '5', version: '1', aml: { click: 'on click' } }), T + 1);
    await config(h, signed(TRUSTEE, { type: '4', version: 'empty', text: '' }), T + 2);
    expect(codeOf(await config(h, signed(TRUSTEE, { type: '8' }), T + 3))).to.equal('TAA_ALREADY_DISABLED');
  });

  it('is for trustees only (default rule 8--ADD--*--*--*: 1 TRUSTEE)', async () => {
    await setUp();
    expect(codeOf(await config(h, signed(STEWARDS[0]!, { type: '8' }), T + 4))).to.equal('AUTH_NOT_ENOUGH_SIGNATURES');
    expect(h.stores.states[2].get(TAA_LATEST_KEY)).to.not.equal(undefined);
  });

  it('retires every agreement at the txn time, clears the latest, and a later agreement enables acceptance again', async () => {
    const { d1, d2 } = await setUp();
    const at = T + 100;
    // enforced before: a domain write without acceptance is refused
    expect(codeOf(await nym(h, at - 1))).to.equal('TAA_MISSING');
    const r = await config(h, signed(TRUSTEE, { type: '8' }), at);
    expect(codeOf(r)).to.equal(undefined);
    const seqNo = (r as { seqNo: number }).seqNo;
    expect(h.stores.states[2].get(TAA_LATEST_KEY)).to.equal(undefined);
    for (const [d, version, text] of [
      [d1, 'v1', 'first'],
      [d2, 'v2', 'second'],
    ] as const) {
      const rec = stored(h, d);
      expect(rec).to.include({ retirement_ts: at, lsn: seqNo, lut: at, version, text, digest: d });
    }
    // the ratification date is kept
    expect(stored(h, d2).ratification_ts).to.equal(T + 2);
    // GET_TAA latest: null, absence proven; by digest: the retired agreement
    const latest = await read(h, { type: '6' });
    expect(latest.result.data).to.equal(null);
    verifyRead(latest, TAA_LATEST_KEY, null);
    const byDigest = await read(h, { type: '6', digest: d2 });
    expect(byDigest.result.data).to.include({ retirement_ts: at, version: 'v2' });
    verifyRead(byDigest, taaDigestKey(d2), canonicalJsonBytes({ lsn: byDigest.result.seqNo, lut: byDigest.result.txnTime, val: byDigest.result.data }));
    // domain writes need no acceptance; one that carries an acceptance is accepted too (ignored)
    expect(codeOf(await nym(h, at + 1))).to.equal(undefined);
    expect(codeOf(await nym(h, at + 2, { taaDigest: d2, mechanism: 'click', time: dayOf(at) }))).to.equal(undefined);
    // a second disable is refused; retiring while disabled is refused
    expect(codeOf(await config(h, signed(TRUSTEE, { type: '8' }), at + 3))).to.equal('TAA_ALREADY_DISABLED');
    expect(codeOf(await config(h, signed(TRUSTEE, { type: '4', version: 'v2', retirement_ts: at + DAY }), at + 3))).to.equal('TAA_RETIRE_WHILE_DISABLED');
    // a new agreement: enforced again, with its own digest
    expect(codeOf(await config(h, signed(TRUSTEE, { type: '4', version: 'v3', text: 'third' }), at + 4))).to.equal(undefined);
    const d3 = taaDigest('v3', 'third');
    expect(decodeText(h.stores.states[2].get(TAA_LATEST_KEY)!, TAA_LATEST_KEY)).to.equal(d3);
    expect(codeOf(await nym(h, at + 5))).to.equal('TAA_MISSING');
    expect(codeOf(await nym(h, at + 6, { taaDigest: d2, mechanism: 'click', time: dayOf(at) }))).to.equal('TAA_WRONG_DIGEST');
    expect(codeOf(await nym(h, at + 7, { taaDigest: d3, mechanism: 'click', time: dayOf(at) }))).to.equal(undefined);
    expect((await read(h, { type: '6' })).result.data).to.include({ version: 'v3', digest: d3 });
    // and it can be disabled again, which retires v3 and leaves the older retirement times as they were
    expect(codeOf(await config(h, signed(TRUSTEE, { type: '8' }), at + 8))).to.equal(undefined);
    expect(stored(h, d3).retirement_ts).to.equal(at + 8);
    expect(stored(h, d2).retirement_ts).to.equal(at);
  });

  it('keeps an earlier retirement time, and rebuilds the same state from the ledger', async () => {
    const { d1, d2 } = await setUp();
    // v1 retired before the disable: its record keeps its time
    await config(h, signed(TRUSTEE, { type: '4', version: 'v1', retirement_ts: T + 50 }), T + 4);
    const r = await config(h, signed(TRUSTEE, { type: '8' }), T + 100);
    expect(codeOf(r)).to.equal(undefined);
    expect(stored(h, d1)).to.include({ retirement_ts: T + 50, lut: T + 4 });
    expect(stored(h, d2)).to.include({ retirement_ts: T + 100, lut: T + 100 });
    const root = Buffer.from(h.stores.states[2].committedRoot).toString('hex');
    const fresh = await createHarness();
    try {
      // replaying the config ledger's txns into a new state gives the same root
      const txns = [];
      for (let i = 1; i <= h.stores.ledgers[2].size; i++) txns.push((await h.stores.ledgers[2].get(i))!);
      await fresh.executor.applyGenesis(2, txns);
      expect(Buffer.from(fresh.stores.states[2].committedRoot).toString('hex')).to.equal(root);
    } finally {
      await fresh.close();
    }
  });
});
