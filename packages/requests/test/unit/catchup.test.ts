// ATTRIB originals in catch-up (formats.md 4.5, 12.1): a seeder sends ordered ATTRIB txns with their
// raw / enc original restored from its attribute store; a leecher hashes them back into the stored
// form (same leaf hashes, same roots as the seeder), keeps the originals in its attribute store in
// the same write, and refuses chunks that do not prove or cannot apply, changing nothing.
import { expect } from 'chai';
import { MsgpackEncoded, b58encode, decodeMsgpack, encodeMsgpack, isSha256Hex, parseJson, sha256Hex } from '@quire/common';
import { type Ledger, verifyConsistency } from '@quire/storage';
import { RequestError } from '../../src/errors.js';
import { catchupFormOf, catchupFormOfStored, storedFormOfCaughtUp } from '../../src/executor/catchup-txns.js';
import type { Txn } from '../../src/handler.js';
import { createHarness, DOMAIN_GENESIS, genesisTxns, type Harness, nymOp, newSigner, PP_TIME, signed, TRUSTEE } from './helpers/harness.js';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
/** What the wire does to a txn: msgpack out and back. */
const overWire = <T>(v: T): T => decodeMsgpack(encodeMsgpack(v)) as T;

/** Ledger txns `from`..size of a harness, as stored. */
async function storedTxns(h: Harness, from: number): Promise<Txn[]> {
  const l = h.stores.ledgers[1];
  const out: Txn[] = [];
  for (let n = from; n <= l.size; n++) out.push((await l.get(n))!);
  return out;
}

const owner = newSigner();
const RAW_TEXT = '{ "profile": {"name": "Zoë", "score": 1.50, "tags": ["a", "b"], "big": 12345678901234567890} }';
const ENC_HEX = 'ab'.repeat(32); // an enc original that looks like a hash

/** Orders on `h`: the owner's NYM, then ATTRIBs of every kind (one batch each, and two in one batch). */
async function orderAttribs(h: Harness): Promise<void> {
  const batches: [Record<string, unknown>[], number][] = [
    [[signed(TRUSTEE, nymOp(owner))], PP_TIME + 1],
    [[signed(owner, { type: '100', dest: owner.did, raw: RAW_TEXT })], PP_TIME + 2],
    [
      [signed(owner, { type: '100', dest: owner.did, enc: 'ciphertext-1' }), signed(owner, { type: '100', dest: owner.did, hash: 'cd'.repeat(32) })],
      PP_TIME + 3,
    ],
    [[signed(owner, { type: '100', dest: owner.did, enc: ENC_HEX })], PP_TIME + 4],
    [[signed(owner, { type: '100', dest: owner.did, raw: '{"profile":{"name":"Zoe"}}' })], PP_TIME + 5],
    [[signed(TRUSTEE, nymOp(newSigner()))], PP_TIME + 6],
  ];
  for (const [requests, time] of batches) {
    const r = await h.order(1, requests, time);
    expect(r.validCount, reasons(r.results)).to.equal(requests.length);
  }
}

const reasons = (results: readonly { valid: boolean }[]): string => results.map((x) => (x as { reason?: string }).reason ?? 'valid').join('; ');

describe('catch-up of ATTRIB txns', () => {
  let seeder: Harness;
  let leecher: Harness;
  beforeEach(async () => {
    seeder = await createHarness();
    leecher = await createHarness();
  });
  afterEach(async () => {
    await seeder.close();
    await leecher.close();
  });

  it('the seeder restores raw / enc originals; the leecher stores the hashed form, same roots, originals kept', async () => {
    await orderAttribs(seeder);
    const stored = await storedTxns(seeder, 6);
    const sent = overWire(seeder.executor.catchupTxns(1, 6, 100));
    expect(sent).to.have.length(stored.length);
    // what is restored: raw as CJ of the attribute, enc as given; hash and NYM txns unchanged
    expect(sent[1]!.txn.data.raw).to.equal('{"profile":{"big":12345678901234567890,"name":"Zoë","score":1.5,"tags":["a","b"]}}');
    expect(sent[2]!.txn.data.enc).to.equal('ciphertext-1');
    expect(sent[3]).to.deep.equal(stored[3]);
    expect(sent[4]!.txn.data.enc).to.equal(ENC_HEX);
    expect(sent[0]).to.deep.equal(stored[0]);
    for (const i of [1, 2, 4, 5]) expect(isSha256Hex(stored[i]!.txn.data.raw ?? stored[i]!.txn.data.enc), `stored ${i}`).to.equal(true);

    // two chunks: the first proves through a consistency proof to the target, the second is the target
    const target = seeder.stores.ledgers[1].root;
    const size = seeder.stores.ledgers[1].size;
    const proof = (seeder.stores.ledgers[1] as Ledger).consistencyProofSync(8, size);
    const wb1 = leecher.stores.kv.batch();
    const first = leecher.executor.appendCaughtUp(1, sent.slice(0, 3), wb1, (root, n) => {
      verifyConsistency(n, size, root, target, proof);
      return true;
    });
    expect(first.size).to.equal(8);
    expect(first.txns).to.deep.equal(stored.slice(0, 3));
    await wb1.write();
    const wb2 = leecher.stores.kv.batch();
    const second = leecher.executor.appendCaughtUp(1, sent.slice(3), wb2, (root, n) => n === size && hex(root) === hex(target));
    await wb2.write();
    expect(second.txns).to.deep.equal(stored.slice(3));
    expect(hex(leecher.stores.ledgers[1].root)).to.equal(hex(target));
    expect(hex(second.stateRoot)).to.equal(hex(seeder.stores.states[1].committedRoot));
    // the leecher's own ledger holds the hashed form, and it serves the originals in turn
    expect(await storedTxns(leecher, 6)).to.deep.equal(stored);
    expect(overWire(leecher.executor.catchupTxns(1, 6, size))).to.deep.equal(sent);
    // every original is in the leecher's attribute store under its hash
    for (const i of [1, 2, 4, 5]) {
      const h = (stored[i]!.txn.data.raw ?? stored[i]!.txn.data.enc) as string;
      expect(leecher.stores.attributes.getSync(h), `attribute ${i}`).to.equal(seeder.stores.attributes.getSync(h));
    }
    for (let t = PP_TIME + 1; t <= PP_TIME + 6; t++) {
      expect(hex((await leecher.stores.timestamps!.getEqualOrPrevious(1, t))!), `ts ${t}`).to.equal(
        hex((await seeder.stores.timestamps!.getEqualOrPrevious(1, t))!),
      );
    }
    // the caught-up state is what the leecher validates against: an EDIT of the raw attribute applies
    const edit = leecher.executor.applyBatch(1, [signed(owner, { type: '100', dest: owner.did, raw: '{"profile":{"name":"Zoey"}}' })], PP_TIME + 7);
    expect(edit.validCount, reasons(edit.results)).to.equal(1);
    leecher.executor.revert();
  });

  it('catchupTxnsEncoded gives the stored bytes of every txn but a restored ATTRIB, and encodes as catchupTxns', async () => {
    await orderAttribs(seeder);
    const size = seeder.stores.ledgers[1].size;
    const txns = seeder.executor.catchupTxns(1, 1, size);
    const encoded = seeder.executor.catchupTxnsEncoded(1, 1, size);
    expect(encoded).to.have.length(size);
    for (let i = 0; i < size; i++) {
      const e = encoded[i];
      expect(encodeMsgpack(e), `txn ${i + 1}`).to.deep.equal(encodeMsgpack(txns[i]));
      if (e instanceof MsgpackEncoded) expect(e.bytes, `txn ${i + 1}`).to.deep.equal(seeder.stores.ledgers[1].getEncodedSync(i + 1));
    }
    // the NYMs (genesis, the owner's, the last) as their bytes; the ATTRIBs (seqNo 7-11) decoded, four of them restored
    expect(encoded.map((t) => t instanceof MsgpackEncoded)).to.deep.equal([true, true, true, true, true, true, false, false, false, false, false, true]);
    const restored = txns.map((t, i) => Buffer.compare(encodeMsgpack(t), seeder.stores.ledgers[1].getEncodedSync(i + 1) ?? new Uint8Array()) !== 0);
    expect(restored.flatMap((r, i) => (r ? [i + 1] : []))).to.deep.equal([7, 8, 10, 11]);
    const reply = (list: readonly unknown[]): Uint8Array =>
      encodeMsgpack({ op: 'CATCHUP_REP', ledgerId: 1, txns: Object.fromEntries(list.map((t, i) => [String(1 + i), t])), consProof: [] });
    expect(reply(encoded)).to.deep.equal(reply(txns));
    expect(seeder.executor.catchupTxnsEncoded(1, size - 1, size + 5)).to.have.length(2);
    expect(() => seeder.executor.catchupTxnsEncoded(3, 1, 1)).to.throw(RequestError);
  });

  it('refuses, changing nothing, an ATTRIB whose original is missing or altered', async () => {
    await orderAttribs(seeder);
    const target = seeder.stores.ledgers[1].root;
    const proves = (root: Uint8Array): boolean => hex(root) === hex(target);
    const before = { size: leecher.stores.ledgers[1].uncommittedSize, state: hex(leecher.stores.states[1].headRoot) };
    const attempt = (txns: unknown[]): void => {
      const wb = leecher.stores.kv.batch();
      expect(() => leecher.executor.appendCaughtUp(1, txns, wb, proves))
        .to.throw(RequestError)
        .with.property('code', 'CATCHUP_TXNS_REFUSED');
      expect(wb.length).to.equal(0);
      expect(leecher.stores.ledgers[1].uncommittedSize).to.equal(before.size);
      expect(hex(leecher.stores.states[1].headRoot)).to.equal(before.state);
    };
    // the stored form (a seeder that lost the original): proves, but cannot apply
    attempt(await storedTxns(seeder, 6));
    // an altered original does not hash to the stored value: does not prove
    const altered = overWire(seeder.executor.catchupTxns(1, 6, 100));
    altered[1]!.txn.data.raw = '{"profile":{"name":"Mallory"}}';
    attempt(altered);
    const enc = overWire(seeder.executor.catchupTxns(1, 6, 100));
    enc[2]!.txn.data.enc = 'ciphertext-2';
    attempt(enc);
    expect(leecher.stores.attributes.getSync(sha256Hex('{"profile":{"name":"Mallory"}}'))).to.equal(undefined);
    // the genuine chunk still applies afterwards
    leecher.executor.appendCaughtUp(1, seeder.executor.catchupTxns(1, 6, 100), leecher.stores.kv.batch(), proves);
    expect(leecher.stores.ledgers[1].size).to.equal(seeder.stores.ledgers[1].size);
  });

  it('a genesis ATTRIB (its original in the ledger, no txnTime) travels and is stored unchanged', async () => {
    await seeder.close();
    const genesisAttrib =
      '{"reqSignature":{},"txn":{"data":{"dest":"Th7MpTaRZVRYnPiabds81Y","raw":"{\\"endpoint\\":{\\"ha\\":\\"10.0.0.2:9702\\"}}"},"metadata":{"from":"Th7MpTaRZVRYnPiabds81Y"},"type":"100"},"txnMetadata":{"seqNo":6},"ver":"1"}';
    seeder = await createHarness({ domainGenesis: genesisTxns(`${DOMAIN_GENESIS}\n${genesisAttrib}`) });
    await seeder.order(1, [signed(TRUSTEE, nymOp(newSigner()))], PP_TIME + 1);
    const sent = overWire(seeder.executor.catchupTxns(1, 6, 7));
    expect(sent[0]).to.deep.equal((await storedTxns(seeder, 6))[0]);
    const target = seeder.stores.ledgers[1].root;
    const done = leecher.executor.appendCaughtUp(1, sent, leecher.stores.kv.batch(), (root) => hex(root) === hex(target));
    expect(done.txns[0]!.txn.data.raw).to.equal('{"endpoint":{"ha":"10.0.0.2:9702"}}');
    expect(hex(done.stateRoot)).to.equal(hex(seeder.stores.states[1].committedRoot));
  });

  it('a restored ATTRIB at the largest size static validation allows fits a CATCHUP_REP frame (128 KiB)', async () => {
    await seeder.order(1, [signed(TRUSTEE, nymOp(owner))], PP_TIME + 1);
    // 5,120 UTF-16 units (Limits.ATTRIB_CONTENT), 3 UTF-8 bytes each: the largest CJ original
    const raw = `{"k":"${'€'.repeat(5120 - 8)}"}`;
    expect(raw.length).to.equal(5120);
    const enc = '€'.repeat(5120);
    const r = await seeder.order(1, [signed(owner, { type: '100', dest: owner.did, raw }), signed(owner, { type: '100', dest: owner.did, enc })], PP_TIME + 2);
    expect(r.validCount, reasons(r.results)).to.equal(2);
    const sent = seeder.executor.catchupTxns(1, 7, 8);
    const consProof = Array.from({ length: 64 }, () => b58encode(new Uint8Array(32).fill(0xff)));
    for (const t of sent) {
      const rep = encodeMsgpack({ op: 'CATCHUP_REP', ledgerId: 1, txns: { [String(Number.MAX_SAFE_INTEGER)]: t }, consProof });
      expect(rep.length)
        .to.be.above(15_000)
        .and.below(128 * 1024);
    }
  });
});

describe('catch-up form of txns', () => {
  const attrib = (data: Record<string, unknown>, txnTime: number | null = PP_TIME): Txn =>
    ({
      ver: '1',
      txn: { type: '100', data: { dest: 'Th7MpTaRZVRYnPiabds81Y', ...data }, metadata: {} },
      txnMetadata: txnTime === null ? { seqNo: 9 } : { seqNo: 9, txnTime },
      reqSignature: {},
    }) as Txn;

  it('hashes ordered ATTRIB originals without touching the given object; keeps everything else', () => {
    const t = attrib({ raw: '{"b": 2, "a": 1}' });
    const copy = structuredClone(t);
    const f = storedFormOfCaughtUp(1, t);
    expect(t).to.deep.equal(copy);
    expect(f.attribute).to.deep.equal({ hash: sha256Hex('{"a":1,"b":2}'), original: '{"a":1,"b":2}' });
    expect(f.txn.txn.data.raw).to.equal(sha256Hex('{"a":1,"b":2}'));
    expect(storedFormOfCaughtUp(1, attrib({ enc: 'x' })).txn.txn.data.enc).to.equal(sha256Hex('x'));
    for (const keep of [
      attrib({ raw: 'ab'.repeat(32) }), // a hash, not an original
      attrib({ raw: '[1,2]' }), // not an object
      attrib({ raw: '{"a":' }), // not JSON
      attrib({ hash: 'ab'.repeat(32) }),
      attrib({ raw: '{"a":1}' }, null), // genesis: stored as given
      { ...attrib({ raw: '{"a":1}' }), txn: { type: '1', data: { raw: '{"a":1}' }, metadata: {} } },
    ]) {
      expect(storedFormOfCaughtUp(1, keep)).to.deep.equal({ txn: keep });
    }
    expect(storedFormOfCaughtUp(0, t)).to.deep.equal({ txn: t });
    for (const junk of [null, 7, 'txn', [], { txn: 'x' }, { txn: { type: '100', data: null }, txnMetadata: { txnTime: 1 } }]) {
      expect(storedFormOfCaughtUp(1, junk)).to.deep.equal({ txn: junk });
    }
  });

  it('gives stored bytes as they are unless they may be an ATTRIB of the domain ledger, which is decoded', () => {
    const h = sha256Hex('{"a":1}');
    const store = (hash: string): string | undefined => (hash === h ? '{"a":1}' : undefined);
    const decoded = (t: Txn) => (): Txn => overWire(t);
    const nym = { ...attrib({}), txn: { type: '1', data: { dest: 'Th7MpTaRZVRYnPiabds81Y' }, metadata: {} } } as Txn;
    const bytes = encodeMsgpack(nym);
    const given = catchupFormOfStored(1, bytes, () => expect.fail('decoded'), store);
    expect(given).to.be.instanceOf(MsgpackEncoded);
    expect((given as MsgpackEncoded).bytes).to.equal(bytes);
    // an ATTRIB, in the domain ledger only
    const t = attrib({ raw: h });
    expect(catchupFormOfStored(1, encodeMsgpack(t), decoded(t), store)).to.deep.equal(catchupFormOf(1, t, store));
    expect(catchupFormOfStored(0, encodeMsgpack(t), () => expect.fail('decoded'), store)).to.be.instanceOf(MsgpackEncoded);
    // a txn that holds the bytes of "type": "100" elsewhere is decoded, and sent as stored (it is no ATTRIB)
    const lookalike = { ...nym, txn: { ...nym.txn, data: { dest: 'Th7MpTaRZVRYnPiabds81Y', extra: { type: '100' } } } } as Txn;
    expect(catchupFormOfStored(1, encodeMsgpack(lookalike), decoded(lookalike), store)).to.deep.equal(lookalike);
  });

  it('restores an original only for an ordered ATTRIB whose hash the store knows', () => {
    const h = sha256Hex('{"a":1}');
    const store = (hash: string): string | undefined => (hash === h ? '{"a":1}' : undefined);
    const t = attrib({ raw: h });
    const restored = catchupFormOf(1, t, store);
    expect(restored.txn.data.raw).to.equal('{"a":1}');
    expect(t.txn.data.raw).to.equal(h);
    expect(storedFormOfCaughtUp(1, restored).txn).to.deep.equal(t);
    expect(catchupFormOf(1, attrib({ raw: 'ef'.repeat(32) }), store).txn.data.raw).to.equal('ef'.repeat(32));
    expect(catchupFormOf(1, attrib({ raw: h }, null), store).txn.data.raw).to.equal(h);
    expect(catchupFormOf(1, attrib({ hash: h }), store).txn.data.hash).to.equal(h);
    expect(parseJson(catchupFormOf(1, attrib({ enc: h }), store).txn.data.enc as string)).to.deep.equal({ a: 1 });
  });
});
