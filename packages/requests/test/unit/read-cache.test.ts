// The read context's lookup cache (a key at a root is looked up once) and GET_NYM's decoded answers: what a node
// answers through them is what a fresh context answers, across writes that change the key and reads of past roots.
import { b58decode, b64decode, canonicalJsonBytes, parseJson } from '@quire/common';
import { verifyTrieProofAt } from '@quire/storage';
import { expect } from 'chai';
import { parseRequest } from '../../src/pipeline/parse.js';
import { LOOKUP_CACHE_MAX_ENTRY_BYTES, LookupCache, StoresReadContext, answerRead, stateProofOf } from '../../src/reads/read-context.js';
import { nymKey } from '../../src/state-keys.js';
import { type Harness, TRUSTEE, accept, createHarness, newSigner, nymOp, signed } from './domain-helpers.js';

const T0 = 1_800_000_000;

async function readWith(h: Harness, ctx: StoresReadContext, operation: Record<string, unknown>): Promise<Record<string, unknown>> {
  const parsed = parseRequest({ identifier: TRUSTEE.did, reqId: 1, protocolVersion: 2, operation });
  const handler = h.executor.registry.read(parsed.type)!;
  handler.validateStatic(parsed);
  return (await answerRead(handler, parsed, ctx)).result;
}

/** The value the result's proof proves for `dest` (null: absent), checked against its root. */
function proven(result: Record<string, unknown>, dest: string): string | null {
  const sp = result.state_proof as { root_hash: string; proof_nodes: string };
  const v = verifyTrieProofAt(b58decode(sp.root_hash), nymKey(dest), b64decode(sp.proof_nodes));
  return v === null ? null : Buffer.from(v).toString();
}

describe('read context: the lookup cache', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await createHarness();
  });
  afterEach(() => h.close());

  it('answers GET_NYM as a fresh context does, before and after a write changes the NYM, and at a past root', async () => {
    const ctx = new StoresReadContext(h.stores);
    const user = newSigner();
    await accept(h, signed(TRUSTEE, nymOp(user, '101')), T0 + 100);
    const first = await readWith(h, ctx, { type: '105', dest: user.did });
    const again = await readWith(h, ctx, { type: '105', dest: user.did });
    expect(again).to.deep.equal(first);
    expect(again.state_proof).to.not.equal(first.state_proof); // a fresh object: the node adds the multi-signature to it
    expect(parseJson(first.data as string)).to.include({ role: '101' });

    await accept(h, signed(TRUSTEE, { type: '1', dest: user.did, role: null }), T0 + 200);
    const now = await readWith(h, ctx, { type: '105', dest: user.did });
    expect(now).to.deep.equal(await readWith(h, new StoresReadContext(h.stores), { type: '105', dest: user.did }));
    expect(parseJson(now.data as string)).to.include({ role: null });
    expect((now.state_proof as { root_hash: string }).root_hash).to.not.equal((first.state_proof as { root_hash: string }).root_hash);
    const rec = parseJson(now.data as string) as Record<string, unknown>;
    delete rec.dest;
    expect(proven(now, user.did)).to.equal(Buffer.from(canonicalJsonBytes(rec)).toString());

    // the first root again, through the timestamp: the cached lookup of that root, not the newest
    const past = await readWith(h, ctx, { type: '105', dest: user.did, timestamp: T0 + 150 });
    expect(past.data).to.equal(first.data);
    expect(past.state_proof).to.deep.equal(first.state_proof);

    // a key absent at the read root and present later
    const later = newSigner();
    const none = await readWith(h, ctx, { type: '105', dest: later.did });
    expect(none.data).to.equal(null);
    expect(proven(none, later.did)).to.equal(null);
    await accept(h, signed(TRUSTEE, nymOp(later, null)), T0 + 300);
    const some = await readWith(h, ctx, { type: '105', dest: later.did });
    expect(parseJson(some.data as string)).to.include({ dest: later.did });
    expect(proven(some, later.did)).to.not.equal(null);
  });

  it('keys entries by ledger, root and key, computes a hit once, keeps a copy of the root and stays bounded', () => {
    const cache = new LookupCache(2);
    let computed = 0;
    const root = new Uint8Array(32).fill(1);
    const at = (ledgerId: number, r: Uint8Array, key: string | Uint8Array) =>
      cache.get(ledgerId, r, key, () => {
        computed++;
        return { value: Uint8Array.of(computed), root: r, proof: Uint8Array.of(0xc0) };
      });
    const a = at(1, root, 'k');
    expect(at(1, root, 'k')).to.equal(a);
    expect(computed).to.equal(1);
    root.fill(2); // the caller's buffer reused for another root
    expect(a.root).to.deep.equal(new Uint8Array(32).fill(1));
    expect(at(1, root, 'k')).to.not.equal(a); // another root
    expect(at(0, new Uint8Array(32).fill(1), 'k')).to.not.equal(a); // another ledger
    expect(computed).to.equal(3);
    expect(cache.size).to.equal(2);
    expect(at(1, new Uint8Array(32).fill(1), 'k')).to.not.equal(a); // evicted: computed again
    expect(computed).to.equal(4);
    // a string key and its UTF-8 bytes (the same trie key) are cached apart: looked up twice at most
    at(1, root, Uint8Array.from(Buffer.from('k')));
    expect(computed).to.equal(5);
  });

  it('does not keep a lookup larger than its entry bound: the cache holds at most its entries of that size', () => {
    const cache = new LookupCache(4);
    let computed = 0;
    const root = new Uint8Array(32).fill(3);
    const big = (key: string, valueBytes: number) =>
      cache.get(1, root, key, () => {
        computed++;
        return { value: new Uint8Array(valueBytes), root, proof: Uint8Array.of(0xc0) };
      });
    const a = big('large', LOOKUP_CACHE_MAX_ENTRY_BYTES);
    expect(a.value?.byteLength).to.equal(LOOKUP_CACHE_MAX_ENTRY_BYTES);
    big('large', LOOKUP_CACHE_MAX_ENTRY_BYTES); // computed again: never kept
    expect(computed).to.equal(2);
    expect(cache.size).to.equal(0);
    const s = big('small', 1024);
    expect(big('small', 1024)).to.equal(s); // kept
    expect(computed).to.equal(3);
    expect(cache.size).to.equal(1);
  });

  it('writes the proof text of a lookup once and returns a fresh object each time', () => {
    const l = { value: undefined, root: new Uint8Array(32).fill(7), proof: Uint8Array.of(0xc1, 0x80) };
    const a = stateProofOf(l);
    const b = stateProofOf(l);
    expect(b).to.deep.equal(a);
    expect(b).to.not.equal(a);
    expect(b64decode(a.proof_nodes)).to.deep.equal(l.proof);
    expect(b58decode(a.root_hash)).to.deep.equal(l.root);
  });
});
