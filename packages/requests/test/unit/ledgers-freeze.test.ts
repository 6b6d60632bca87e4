// LEDGERS_FREEZE (type 9) and GET_FROZEN_LEDGERS (type 10), requests.md §7.3: the base ledgers cannot
// be frozen (static), three trustee signatures by default, ledgers the node does not have are refused,
// each frozen ledger is recorded with its root, state root and size under `4:FROZEN_LEDGERS` (entries
// kept), GET_FROZEN_LEDGERS answers that record with a proof, and a frozen ledger takes no writes.
// Ledgers 909 and 910 of a node are simulated by the executor's `pluginLedgers` module; a real plugin
// ledger (in the executor's stores) is frozen in plugin-ledger.test.ts.
import { b58encode, canonicalJsonBytes } from '@quire/common';
import { expect } from 'chai';
import type { RequestResult } from '../../src/executor/executor.js';
import { FROZEN_LEDGERS_KEY } from '../../src/freeze/frozen-ledgers.js';
import type { LedgerSnapshot } from '../../src/handler.js';
import { encodeWrapped } from '../../src/state-keys.js';
import { TRUSTEE, accept, createHarness, newSigner, nymOp, read, signed, staticCheck, staticRefuses, verifyRead, type Harness } from './domain-helpers.js';
import type { Ed25519Signer } from '@quire/crypto';

const T = 1_800_000_000;
const codeOf = (r: RequestResult): string | undefined => (r.valid ? undefined : r.code);

const PLUGIN: Record<number, LedgerSnapshot> = {
  909: { size: 12, root: new Uint8Array(32).fill(9), stateRoot: new Uint8Array(32).fill(7) },
  910: { size: 0, root: new Uint8Array(32).fill(1), stateRoot: new Uint8Array(32).fill(2) },
};

describe('LEDGERS_FREEZE (9) and GET_FROZEN_LEDGERS (10)', () => {
  let h: Harness;
  let trustees: Ed25519Signer[];
  beforeEach(async () => {
    h = await createHarness({ pluginLedgers: { snapshot: (id) => PLUGIN[id] } });
    trustees = [TRUSTEE];
    for (let i = 0; i < 2; i++) {
      const t = newSigner();
      await accept(h, signed(TRUSTEE, nymOp(t, '0')));
      trustees.push(t);
    }
  });
  afterEach(() => h.close());

  const freeze = async (ids: unknown, by: Ed25519Signer[] = trustees, ppTime = T): Promise<RequestResult> =>
    (await h.order(2, [signed(by, { type: '9', ledgers_ids: ids })], ppTime)).results[0]!;

  it('static: ledgers_ids is a list of integers >= 0 naming no base ledger', () => {
    staticCheck(h, signed(TRUSTEE, { type: '9', ledgers_ids: [909] }));
    staticCheck(h, signed(TRUSTEE, { type: '9', ledgers_ids: [] }));
    staticRefuses(h, { type: '9' }, 'FIELD_MISSING');
    staticRefuses(h, { type: '9', ledgers_ids: 909 }, 'FIELD_TYPE');
    staticRefuses(h, { type: '9', ledgers_ids: ['909'] }, 'FIELD_TYPE');
    staticRefuses(h, { type: '9', ledgers_ids: [1.5] }, 'FIELD_TYPE');
    staticRefuses(h, { type: '9', ledgers_ids: [-1] }, 'FIELD_TOO_SMALL');
    for (const base of [0, 1, 2, 3]) staticRefuses(h, { type: '9', ledgers_ids: [909, base] }, 'FREEZE_BASE_LEDGER');
    staticCheck(h, signed(TRUSTEE, { type: '10' }));
  });

  it("refuses ledgers the node does not have, with Indy's text", async () => {
    const r = await freeze([909, 5]);
    expect(codeOf(r)).to.equal('FREEZE_LEDGER_NEVER_EXISTED');
    expect((r as { reason: string }).reason).to.equal('One or more ledgers from [909, 5] have never existed');
    const bare = await createHarness();
    try {
      // a node without plugin ledgers (every Quire node today): every id "never existed"
      const t2 = newSigner();
      const t3 = newSigner();
      for (const t of [t2, t3]) await accept(bare, signed(TRUSTEE, nymOp(t, '0')));
      const only = (await bare.order(2, [signed([TRUSTEE, t2, t3], { type: '9', ledgers_ids: [909] })], T)).results[0]!;
      expect(codeOf(only)).to.equal('FREEZE_LEDGER_NEVER_EXISTED');
    } finally {
      await bare.close();
    }
    expect(h.stores.states[2].get(FROZEN_LEDGERS_KEY)).to.equal(undefined);
  });

  it('needs three trustee signatures (default rule 9--EDIT--*--*--*)', async () => {
    expect(codeOf(await freeze([909], [TRUSTEE]))).to.equal('AUTH_NOT_ENOUGH_SIGNATURES');
    expect(codeOf(await freeze([909], trustees.slice(0, 2)))).to.equal('AUTH_NOT_ENOUGH_SIGNATURES');
    expect(codeOf(await freeze([909]))).to.equal(undefined);
  });

  it('records root, state root and size of each frozen ledger, keeps earlier entries, and GET_FROZEN_LEDGERS proves it', async () => {
    const none = await read(h, { type: '10' });
    expect(none.result).to.include({ data: null, seqNo: null, txnTime: null });
    verifyRead(none, FROZEN_LEDGERS_KEY, null);

    const first = await freeze([909], trustees, T);
    expect(codeOf(first)).to.equal(undefined);
    const entry909 = { ledger: b58encode(PLUGIN[909]!.root), state: b58encode(PLUGIN[909]!.stateRoot), seq_no: 12 };
    PLUGIN[909] = { ...PLUGIN[909]!, size: 13 }; // a later snapshot must not replace the recorded one
    const second = await freeze([910, 909], trustees, T + 5);
    expect(codeOf(second)).to.equal(undefined);
    const seqNo = (second as { seqNo: number }).seqNo;
    const expected = { '909': entry909, '910': { ledger: b58encode(PLUGIN[910]!.root), state: b58encode(PLUGIN[910]!.stateRoot), seq_no: 0 } };
    expect(Buffer.from(h.stores.states[2].get(FROZEN_LEDGERS_KEY)!).toString()).to.equal(Buffer.from(encodeWrapped(expected, seqNo, T + 5)).toString());

    const out = await read(h, { type: '10' });
    expect(out.result).to.deep.include({ data: expected, seqNo, txnTime: T + 5, type: '10' });
    verifyRead(out, FROZEN_LEDGERS_KEY, canonicalJsonBytes({ lsn: seqNo, lut: T + 5, val: expected }));
  });

  it('refuses every write to a frozen ledger at ordering, after the TAA check and before dynamic validation', async () => {
    // no base ledger can be frozen by a request; the record of one is written directly to show the rule
    const config = h.stores.states[2];
    config.set(FROZEN_LEDGERS_KEY, encodeWrapped({ '1': { ledger: 'x', state: 'y', seq_no: 5 } }, 1, T));
    const r = (await h.order(1, [signed(TRUSTEE, nymOp(newSigner()))], T + 1)).results[0]!;
    expect(codeOf(r)).to.equal('LEDGER_FROZEN');
    expect((r as { reason: string }).reason).to.equal("'1' transaction is forbidden because of '1' ledger is frozen");
    // other ledgers still take writes
    expect(codeOf((await h.order(2, [signed(TRUSTEE, { type: '111', writes: true })], T + 2)).results[0]!)).to.equal(undefined);
    config.remove(FROZEN_LEDGERS_KEY);
    expect(codeOf((await h.order(1, [signed(TRUSTEE, nymOp(newSigner()))], T + 3)).results[0]!)).to.equal(undefined);
  });

  it('an unvalidated genesis LEDGERS_FREEZE naming base or unknown ledgers records none of them (replays stay deterministic)', async () => {
    const fresh = await createHarness();
    try {
      const txn = { reqSignature: {}, txn: { data: { ledgers_ids: [1, 2, 909] }, metadata: {}, type: '9' }, txnMetadata: { seqNo: 1, txnTime: T }, ver: '1' };
      await fresh.executor.applyGenesis(2, [txn as never]);
      const rec = fresh.stores.states[2].get(FROZEN_LEDGERS_KEY);
      expect(Buffer.from(rec!).toString()).to.equal(Buffer.from(encodeWrapped({}, 1, T)).toString());
      expect(codeOf((await fresh.order(1, [signed(TRUSTEE, nymOp(newSigner()))], T + 1)).results[0]!)).to.equal(undefined);
    } finally {
      await fresh.close();
    }
  });

  it("a corrupt frozen-ledgers record refuses the batch's requests with a code instead of throwing", async () => {
    h.stores.states[2].set(FROZEN_LEDGERS_KEY, new TextEncoder().encode('not json'));
    const r = (await h.order(1, [signed(TRUSTEE, nymOp(newSigner()))], T + 1)).results[0]!;
    expect(r.valid).to.equal(false);
    expect(codeOf(r)).to.be.a('string');
  });
});
