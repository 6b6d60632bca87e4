// Caught-up txns give the same store however they are cut into chunks (#16): a leecher now applies the replies it
// holds together, several MSG_LEN_LIMIT pieces in one write, where it applied each piece alone. Appended as one chunk
// or as any split of it, the ledger (txns, root, hash tiles), the state (root, every pair), the timestamps of every
// batch time, the seqNo / digest indexes and the attribute store hold the same; only state-trie nodes of the roots at
// chunk boundaries inside a batch time, which no record names, are stored beside them.
import { expect } from 'chai';
import fc from 'fast-check';
import { decodeMsgpack, encodeMsgpack } from '@quire/common';
import { type KvStore, ledgerBuckets } from '@quire/storage';
import { createHarness, type Harness, nymOp, newSigner, PP_TIME, signed, TRUSTEE } from './helpers/harness.js';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const overWire = <T>(v: T): T => decodeMsgpack(encodeMsgpack(v)) as T;

/** Every record of `bucket`, as hex key -> hex value. */
async function dump(kv: KvStore, bucket: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for await (const [k, v] of kv.iterate(bucket)) out.set(hex(k), hex(v));
  return out;
}

const DOMAIN = 1;
/** raw ATTRIB originals: travel restored, stored hashed, kept in the attribute store */
const ATTRIB_ORIGINALS = ['{"profile":{"name":"Zoë"}}', '{"endpoint":{"ha":"127.0.0.1:5555"}}'];
/** the buckets that must be equal record for record */
const EQUAL_BUCKETS = [...Object.values(ledgerBuckets(DOMAIN)), 'state-head/domain', `ts-root/${DOMAIN}`, 'seqno-index', 'digest-index', 'attr'];

/** A seeder that ordered NYM and ATTRIB batches, several of them sharing a batch time; the txns it serves. */
async function seederTxns(): Promise<{ seeder: Harness; from: number; sent: unknown[] }> {
  const seeder = await createHarness();
  const from = seeder.stores.ledgers[DOMAIN].size + 1;
  const owners = Array.from({ length: 6 }, () => newSigner());
  let time = PP_TIME;
  for (let b = 0; b < 12; b++) {
    // two batches in a row at the same time, then a new one
    if (b % 2 === 0) time++;
    const requests: Record<string, unknown>[] = [];
    if (b < owners.length) requests.push(signed(TRUSTEE, nymOp(owners[b]!)));
    for (let i = 0; i < 5; i++) requests.push(signed(TRUSTEE, nymOp(newSigner())));
    if (b >= owners.length)
      requests.push(signed(owners[b - owners.length]!, { type: '100', dest: owners[b - owners.length]!.did, raw: ATTRIB_ORIGINALS[b % 2]! }));
    const r = await seeder.order(DOMAIN, requests, time);
    expect(r.validCount).to.equal(requests.length);
  }
  const sent = overWire(seeder.executor.catchupTxns(DOMAIN, from, seeder.stores.ledgers[DOMAIN].size));
  return { seeder, from, sent };
}

/** A fresh leecher with `sent` appended in chunks ending at `cuts` (indexes into `sent`), each chunk written on its own. */
async function leecherOf(sent: readonly unknown[], cuts: readonly number[], target: { size: number; root: string }): Promise<Harness> {
  const h = await createHarness();
  let s = 0;
  for (const e of [...cuts, sent.length]) {
    if (e <= s) continue;
    const wb = h.stores.kv.batch();
    h.executor.appendCaughtUp(DOMAIN, sent.slice(s, e), wb, (root, n) => n < target.size || hex(root) === target.root);
    await wb.write();
    s = e;
  }
  return h;
}

describe('caught-up txns cut into chunks in any way give the same store', () => {
  it('one chunk and every split of it: same ledger, state, timestamps, indexes and attributes', async () => {
    const { seeder, sent } = await seederTxns();
    const target = { size: seeder.stores.ledgers[DOMAIN].size, root: hex(seeder.stores.ledgers[DOMAIN].root) };
    const whole = await leecherOf(sent, [], target);
    const stateRoot = hex(seeder.stores.states[DOMAIN].committedRoot);
    expect(hex(whole.stores.states[DOMAIN].committedRoot)).to.equal(stateRoot);
    const wholeDumps = new Map<string, Map<string, string>>();
    for (const b of EQUAL_BUCKETS) wholeDumps.set(b, await dump(whole.stores.kv, b));
    expect(wholeDumps.get(`ts-root/${DOMAIN}`)!.size, 'a timestamp per batch time').to.equal(6);
    expect(wholeDumps.get('attr')!.size, 'the ATTRIB originals').to.be.greaterThan(0);
    const wholeNodes = await dump(whole.stores.kv, 'state/domain');
    try {
      await fc.assert(
        fc.asyncProperty(fc.uniqueArray(fc.integer({ min: 1, max: sent.length - 1 }), { maxLength: 8 }), async (cuts) => {
          cuts.sort((a, b) => a - b);
          const split = await leecherOf(sent, cuts, target);
          try {
            expect(hex(split.stores.ledgers[DOMAIN].root)).to.equal(target.root);
            expect(hex(split.stores.states[DOMAIN].committedRoot)).to.equal(stateRoot);
            for (const b of EQUAL_BUCKETS) expect(await dump(split.stores.kv, b), `bucket ${b}, cut at ${cuts.join(',')}`).to.deep.equal(wholeDumps.get(b));
            // the trie nodes of the one-chunk store are all there (every root a timestamp names stays readable)
            const nodes = await dump(split.stores.kv, 'state/domain');
            for (const [k, v] of wholeNodes) expect(nodes.get(k), `state node ${k}`).to.equal(v);
            const pairs = (t: Harness): string[] => {
              const out: string[] = [];
              t.stores.states[DOMAIN].forEach((k, v) => out.push(`${hex(k)}=${hex(v)}`));
              return out;
            };
            expect(pairs(split)).to.deep.equal(pairs(whole));
          } finally {
            await split.close();
          }
        }),
        { numRuns: 25 },
      );
    } finally {
      await whole.close();
      await seeder.close();
    }
  });
});
