// The explorer's audit ledger pages (audit txns as the validators serve them: agreed by f+1 replies, no
// multi-signature) and its search over the whole domain ledger: the search index (hashes of txnIds and DIDs, the text
// of aliases and schema names), its bounds, its growth with the ledger and its recovery from read failures, and the
// /search page over it, against fake pools.
import { expect } from 'chai';
import fc from 'fast-check';
import Fastify from 'fastify';
import type { ReadOutcome } from '@quire/client';
import { b58encode, type Request } from '@quire/common';
import type { VerifiedTxn } from '../../src/explorer/data.js';
import { registerExplorer, type Explorer } from '../../src/explorer/index.js';
import { matches } from '../../src/explorer/object-pages.js';
import {
  BLOCK,
  SearchIndex,
  type SearchIndexOptions,
  type SearchIndexSource,
  defaultSearchIndexOptions,
  exactForms,
  hash32,
} from '../../src/explorer/search-index.js';
import { GatewayError, GatewayErrorCode } from '../../src/errors.js';
import type { GatewayPool, PoolCaller } from '../../src/pool-call.js';
import type { RouteContext } from '../../src/vdr-routes.js';
import { Gateway } from '../../src/index.js';
import { waitFor } from '@quire/testing';

type Json = Record<string, unknown>;

const TRUSTEE = 'V4SGRU86Z58d6TV7PBUe6f';
/** A well-formed DID (base58 of 16 bytes) for each number. */
const didOf = (s: number): string => {
  const b = new Uint8Array(16).fill(7);
  new DataView(b.buffer).setUint32(12, s);
  return b58encode(b);
};
const txnIdOf = (s: number): string => s.toString(16).padStart(64, '0');

interface Spec {
  alias?: string;
  name?: string;
  dest?: string;
  from?: string;
}

/** A domain ledger entry: a NYM (or a SCHEMA when it has a name). */
function entry(s: number, spec: Spec = {}): Json {
  const data: Json =
    spec.name !== undefined
      ? { data: { name: spec.name, version: '1.0', attr_names: ['a'] } }
      : { dest: spec.dest ?? didOf(s), ...(spec.alias !== undefined ? { alias: spec.alias } : {}) };
  return {
    txn: { type: spec.name !== undefined ? '101' : '1', data, metadata: { from: spec.from ?? TRUSTEE } },
    txnMetadata: { seqNo: s, txnTime: 1_700_000_000 + s, txnId: txnIdOf(s) },
    ver: '1',
  };
}

function verified(s: number, e: Json, size: number): VerifiedTxn {
  return {
    ledgerId: 1,
    seqNo: s,
    entry: e,
    rootHash: 'root',
    ledgerSize: size,
    auditPathLength: 1,
    multiSignature: undefined,
    verified: 'proof',
    nodes: ['Node1'],
  };
}

/** A source over a ledger that can grow and fail on demand. */
class FakeSource implements SearchIndexSource {
  reads = 0;
  failNext = 0;
  constructor(
    public size_: number,
    public specs: Map<number, Spec> = new Map(),
  ) {}
  async size(): Promise<number> {
    return this.size_;
  }
  async read(seqNos: number[]): Promise<VerifiedTxn[]> {
    if (this.failNext > 0) {
      this.failNext--;
      throw new GatewayError(GatewayErrorCode.POOL_UNAVAILABLE, { tried: { errors: [] } });
    }
    this.reads += seqNos.length;
    return seqNos.filter((s) => s >= 1 && s <= this.size_).map((s) => verified(s, entry(s, this.specs.get(s)), this.size_));
  }
}

async function build(index: SearchIndex): Promise<number> {
  let steps = 0;
  while (await index.step()) steps++;
  return steps;
}

const opts = (o: Partial<SearchIndexOptions> = {}): SearchIndexOptions => ({ ...defaultSearchIndexOptions, step: 1000, ...o });

describe('explorer search index', () => {
  it('hashes are never 0 (0 marks no value); a DID query is also looked up by its unqualified form', () => {
    fc.assert(
      fc.property(fc.string(), (s) => {
        expect(hash32(s)).to.be.within(1, 0xffffffff);
      }),
    );
    expect(hash32('abc')).to.equal(hash32('abc'));
    expect(exactForms('did:sov:V4SGRU86Z58d6TV7PBUe6f')).to.include('V4SGRU86Z58d6TV7PBUe6f');
    expect(exactForms('did:indy:quire:devnet:V4SGRU86Z58d6TV7PBUe6f')).to.include('V4SGRU86Z58d6TV7PBUe6f');
    expect(exactForms('ABCDEF')).to.include('abcdef');
    expect(exactForms('did:nonsense')).to.deep.equal(['did:nonsense']);
  });

  it('covers the whole ledger, newest first then downward: an alias at seqNo 3 of 20,000, a txnId, every txn of a DID', async () => {
    const dest = didOf(999_999);
    const specs = new Map<number, Spec>([
      [3, { alias: 'Faber College' }],
      [12_345, { name: 'degree-schema' }],
      [100, { dest }],
      [15_000, { dest, alias: 'faber again' }],
      [19_999, { from: dest }],
    ]);
    const src = new FakeSource(20_000, specs);
    const index = new SearchIndex(src, opts());
    await build(index);
    const st = index.status();
    expect(st).to.include({ from: 1, to: 20_000, count: 20_000, floor: 1, size: 20_000, complete: true });
    expect(src.reads).to.equal(20_000); // every txn read once
    expect(index.search('faber', 10).hits).to.deep.equal([
      { seqNo: 15_000, on: 'alias or name' },
      { seqNo: 3, on: 'alias or name' },
    ]);
    expect(index.search('DEGREE', 10).hits).to.deep.equal([{ seqNo: 12_345, on: 'alias or name' }]);
    expect(index.search(txnIdOf(7), 10).hits).to.deep.equal([{ seqNo: 7, on: 'txnId' }]);
    expect(index.search(txnIdOf(7).toUpperCase(), 10).hits).to.deep.equal([{ seqNo: 7, on: 'txnId' }]);
    expect(index.search(`did:sov:${dest}`, 10).hits).to.deep.equal([
      { seqNo: 19_999, on: 'author' },
      { seqNo: 15_000, on: 'DID' },
      { seqNo: 100, on: 'DID' },
    ]);
    // a part of a txnId or DID is not looked up by hash
    expect(index.search(txnIdOf(7).slice(0, 20), 10).hits).to.deep.equal([]);
    const many = index.search(TRUSTEE, 5);
    expect(many.hits.map((h) => h.seqNo)).to.deep.equal([20_000, 19_998, 19_997, 19_996, 19_995]);
    expect(many.more).to.equal(true);
  });

  it('what the index finds is exactly what a scan of every txn finds (aliases, names, txnIds, DIDs)', async () => {
    const word = fc.constantFrom('faber', 'acme', 'Thrift', 'bank', 'ACME corp', 'uni');
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 300 }),
        fc.array(
          fc.record({
            at: fc.integer({ min: 1, max: 300 }),
            alias: fc.option(word, { nil: undefined }),
            name: fc.option(word, { nil: undefined }),
            dest: fc.option(fc.constantFrom(didOf(1), didOf(2)), { nil: undefined }),
          }),
          { maxLength: 30 },
        ),
        fc.oneof(word, fc.constantFrom(didOf(1), `did:sov:${didOf(2)}`, txnIdOf(5), 'ac', 'zzz')),
        async (size, edits, q) => {
          const specs = new Map<number, Spec>();
          for (const e of edits)
            if (e.at <= size)
              specs.set(e.at, {
                ...(e.alias !== undefined ? { alias: e.alias } : {}),
                ...(e.name !== undefined ? { name: e.name } : {}),
                ...(e.dest !== undefined ? { dest: e.dest } : {}),
              });
          const src = new FakeSource(size, specs);
          const index = new SearchIndex(src, opts({ step: 37 }));
          await build(index);
          const all = await src.read(Array.from({ length: size }, (_, i) => size - i));
          const forms = [q, ...exactForms(q)];
          const want = all.filter((t) => forms.some((f) => matchesExact(t, f))).map((t) => t.seqNo);
          const got = index.search(q, 1000).hits.map((h) => h.seqNo);
          expect(got).to.deep.equal(want);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('keeps the newest maxTxns (whole blocks dropped), follows the ledger as it grows, and never goes back below its floor', async () => {
    const specs = new Map<number, Spec>([
      [3, { alias: 'oldest alias' }],
      [19_000, { alias: 'newest alias' }],
    ]);
    const src = new FakeSource(20_000, specs);
    const index = new SearchIndex(src, opts({ maxTxns: 2 * BLOCK }));
    await build(index);
    let st = index.status();
    expect(st.count).to.be.at.most(2 * BLOCK);
    expect(st.to).to.equal(20_000);
    expect(st.from).to.be.greaterThan(20_000 - 2 * BLOCK);
    expect(st.complete).to.equal(true);
    expect(src.reads).to.be.at.most(2 * BLOCK + 1000); // the old part of the ledger is never read
    expect(index.search('alias', 10).hits.map((h) => h.seqNo)).to.deep.equal([19_000]);
    src.size_ = 25_000;
    specs.set(24_000, { alias: 'later alias' });
    await build(index);
    st = index.status();
    expect(st.to).to.equal(25_000);
    expect(st.count).to.be.at.most(2 * BLOCK);
    expect(index.search('alias', 10).hits.map((h) => h.seqNo)).to.deep.equal([24_000]); // 19,000 fell below the bound
    const floor = st.floor;
    await build(index);
    expect(index.status().floor).to.equal(floor);
  });

  it('the characters of names are bounded too: the oldest blocks go first', async () => {
    const specs = new Map<number, Spec>();
    for (let s = 1; s <= 3 * BLOCK; s++) specs.set(s, { alias: `alias-${s}-${'x'.repeat(40)}` });
    const src = new FakeSource(3 * BLOCK, specs);
    const index = new SearchIndex(src, opts({ maxNameChars: BLOCK * 60 }));
    await build(index);
    const st = index.status();
    expect(st.nameChars).to.be.at.most(BLOCK * 60);
    expect(st.to).to.equal(3 * BLOCK);
    expect(st.from).to.be.greaterThan(BLOCK);
    expect(index.search(`alias-${3 * BLOCK}-`, 10).hits).to.have.length(1);
    expect(index.search('alias-1-', 10).hits).to.have.length(0);
  });

  it('a pool that fails is asked again later (backing off), and the index then completes; stop() ends the loop', async () => {
    const src = new FakeSource(500, new Map([[10, { alias: 'late' }]]));
    src.failNext = 3;
    const errors: unknown[] = [];
    const index = new SearchIndex(src, opts({ pollMs: 2, maxBackoffMs: 10, step: 100 }), (e) => errors.push(e));
    index.start();
    await waitFor('the index to complete', () => (index.status().complete ? true : undefined), 10_000, 5);
    expect(index.status().error).to.equal(undefined);
    expect(errors).to.have.length(3);
    expect(index.search('late', 5).hits).to.deep.equal([{ seqNo: 10, on: 'alias or name' }]);
    index.stop();
    await index.done();
    expect(index.status().running).to.equal(false);
    const before = src.reads;
    src.size_ = 600;
    await new Promise((r) => setTimeout(r, 20));
    expect(src.reads).to.equal(before); // stopped: no more reads
  });

  it('an empty ledger is complete at once; a bound below one block is refused', async () => {
    const index = new SearchIndex(new FakeSource(0), opts());
    index.start();
    await waitFor('the index of an empty ledger to complete', () => (index.status().complete ? true : undefined), 10_000, 5);
    index.stop();
    expect(() => new SearchIndex(new FakeSource(0), opts({ maxTxns: 10 })))
      .to.throw(GatewayError)
      .with.property('code', GatewayErrorCode.INVALID_PARAMETER);
  });
});

/** Exact (hash) forms for txnIds and DIDs, any part for names: what the index promises. */
function matchesExact(t: VerifiedTxn, f: string): boolean {
  const txn = t.entry.txn as Json;
  const data = txn.data as Json;
  const inner = (data.data ?? {}) as Json;
  const meta = t.entry.txnMetadata as Json;
  const lc = f.toLowerCase();
  const names = [data.alias, inner.name].filter((v): v is string => typeof v === 'string');
  return meta.txnId === f || data.dest === f || (txn.metadata as Json).from === f || (lc !== '' && names.some((n) => n.toLowerCase().includes(lc)));
}

// ------------------------------------------------------------------------------------------------------------------

const fakePool = { status: () => ({ ledgerSize: 4, root: 'r', n: 4, f: 1, validators: [], demoted: [] }), f: 1, n: 4 } as unknown as GatewayPool;

/** Audit txns as the validators serve them: no multi-signature, so the SDK settles them by f+1 matching replies. */
function auditEntry(s: number): Json {
  return {
    txn: {
      type: '2',
      protocolVersion: 2,
      metadata: {},
      data: {
        ver: '1',
        viewNo: 0,
        ppSeqNo: s,
        ledgerSize: { '0': 4, '1': 10 + s, '2': 0 },
        ledgerRoot: s === 1 ? { '0': 'PoolRoot', '1': `DomainRoot${s}` } : { '0': s - 1 + 0, '1': `DomainRoot${s}` },
        stateRoot: { '1': `DomainState${s}` },
        primaries: s === 1 ? ['Node1'] : s - 1,
        digest: `digest${s}`,
      },
    },
    txnMetadata: { seqNo: s, txnTime: 1_700_000_000 + s },
    reqSignature: {},
    ver: '1',
  };
}

interface CallerOptions {
  domain: number;
  audit: number;
  aliases?: Map<number, string>;
  /** NO_CONSENSUS for the first read of these audit seqNos. */
  splitOnce?: Set<number>;
}

function fakeCaller(o: CallerOptions, reads: { n: number } = { n: 0 }): PoolCaller {
  return {
    read: async (req: Request): Promise<ReadOutcome> => {
      reads.n++;
      const op = req.operation as { type: string; data: number; ledgerId?: number };
      if (op.type !== '3') return { result: { type: op.type, data: null, seqNo: null }, verified: true, nodes: ['Node1'], rejected: [] };
      const lid = op.ledgerId ?? 1;
      const s = op.data;
      if (lid === 3) {
        if (o.splitOnce?.delete(s) === true) throw new GatewayError(GatewayErrorCode.NO_CONSENSUS, { tried: { replies: [['Node1'], ['Node2']], errors: [] } });
        const data = s >= 1 && s <= o.audit ? { ...auditEntry(s), rootHash: 'AuditRoot', auditPath: ['x'], ledgerSize: o.audit } : null;
        return { result: { type: '3', data, seqNo: data === null ? null : s }, verified: false, nodes: ['Node1', 'Node2'], rejected: [] };
      }
      const alias = o.aliases?.get(s);
      const data =
        s >= 1 && s <= o.domain ? { ...entry(s, alias !== undefined ? { alias } : {}), rootHash: 'root', auditPath: ['a'], ledgerSize: o.domain } : null;
      return {
        result: {
          type: '3',
          data,
          seqNo: data === null ? null : s,
          state_proof: {
            multi_signature: { participants: ['Node1', 'Node2', 'Node3'], signature: 'sig', value: { timestamp: 1_700_000_000, ledger_id: lid } },
          },
        },
        verified: data !== null,
        nodes: ['Node1'],
        rejected: [],
      };
    },
    write: async () => {
      throw new Error('no writes');
    },
    action: async () => ({}),
  } as unknown as PoolCaller;
}

async function app(caller: PoolCaller, opts: Parameters<typeof registerExplorer>[2] = {}): Promise<{ a: ReturnType<typeof Fastify>; ex: Explorer }> {
  const a = Fastify();
  const ctx: RouteContext = { pool: fakePool, caller, namespace: 'quire:test', now: () => 0, lastRefresh: () => undefined };
  const ex = registerExplorer(a, ctx, opts);
  await a.ready();
  return { a, ex };
}
const H = { accept: 'text/html' };

describe('explorer: the audit ledger', () => {
  it('lists audit txns newest first as cards: the batch, the ledger it wrote, every ledger size linked, the primaries or the txn they are unchanged since', async () => {
    const { a } = await app(fakeCaller({ domain: 20, audit: 30 }));
    const list = await a.inject({ url: '/ledger/audit', headers: H });
    expect(list.statusCode).to.equal(200);
    expect(list.body).to.include('30 txns');
    expect(list.body).to.include('data-seqno="30"').and.include('data-seqno="11"').and.not.include('data-seqno="10"');
    expect(list.body).to.include('data-type="2"');
    expect(list.body).to.include('<dt>batch for</dt><dd>domain</dd>');
    expect(list.body).to.include('href="/ledger/domain?from=40"'); // domain size after batch 30
    expect(list.body).to.include('unchanged since <a href="/ledger/audit/1">#1</a>');
    expect(list.body).to.include('verified: f+1 matching replies');
    expect(list.body).to.include('not the audit ledger’s own root');
    const older = await a.inject({ url: '/ledger/audit?from=3', headers: H });
    expect(older.body).to.include('data-seqno="1"').and.include('Node1');
    await a.close();
  });

  it('one audit txn: its verification says agreed by f+1 validators and why, never a verified audit path; a seqNo beyond the ledger is a 404 page', async () => {
    const { a } = await app(fakeCaller({ domain: 20, audit: 30 }));
    const one = await a.inject({ url: '/ledger/audit/2', headers: H });
    expect(one.statusCode).to.equal(200);
    expect(one.body).to.include('audit ledger · txn #2');
    expect(one.body).to.include('not proven (answer agreed by f+1 validators)');
    expect(one.body).to.include('<dt>why</dt>');
    expect(one.body).to.not.include('data-audit-path="verified"');
    expect(one.body).to.include('digest2');
    expect(one.body).to.include('href="/ledger/audit/1"').and.include('href="/ledger/audit/3"');
    const missing = await a.inject({ url: '/ledger/audit/31', headers: H });
    expect(missing.statusCode).to.equal(404);
    expect(missing.body).to.include('has no txn #31 (it has 30)');
    await a.close();
  });

  it('validators one batch apart (no f+1 agreement) are asked once more before the page fails', async () => {
    const { a } = await app(fakeCaller({ domain: 5, audit: 8, splitOnce: new Set([8, 5]) }));
    const list = await a.inject({ url: '/ledger/audit', headers: H });
    expect(list.statusCode).to.equal(200);
    expect(list.body).to.include('data-seqno="8"').and.include('data-seqno="5"');
    await a.close();
  });
});

describe('explorer: /search over the whole domain ledger', () => {
  const aliases = new Map([
    [2, 'Faber College'],
    [2_990, 'faber bank'],
  ]);

  it('without the index built, a search reads the newest searchDepth txns and says so', async () => {
    const { a } = await app(fakeCaller({ domain: 3000, audit: 0, aliases }), { searchDepth: 100 });
    const r = await a.inject({ url: '/search?q=faber', headers: H });
    expect(r.statusCode).to.equal(200);
    expect(r.body).to.include('href="/ledger/domain/2990"').and.not.include('href="/ledger/domain/2"');
    expect(r.body).to.include('data-searched="100" data-size="3000"');
    expect(r.body).to.include('the search index is not running');
    await a.close();
  });

  it('with the index built (as a listening gateway does), the oldest txn is found and the page says all txns were searched; candidates are read verified and matched on their real fields', async () => {
    const reads = { n: 0 };
    const { a, ex } = await app(fakeCaller({ domain: 3000, audit: 0, aliases }, reads), { searchDepth: 100, searchIndex: { pollMs: 5, step: 500 } });
    ex.start();
    await waitFor('the index to complete', () => (ex.index?.status().complete === true ? true : undefined), 10_000, 10);
    const r = await a.inject({ url: '/search?q=FABER', headers: H });
    expect(r.statusCode).to.equal(200);
    expect(r.body).to.include('href="/ledger/domain/2990"').and.include('href="/ledger/domain/2"');
    expect(r.body).to.include('data-searched="3000" data-size="3000"');
    expect(r.body).to.include('all 3000 domain txns');
    const byTxnId = await a.inject({ url: `/search?q=${txnIdOf(17)}`, headers: H });
    expect(byTxnId.body).to.include('href="/ledger/domain/17"');
    expect(byTxnId.body).to.match(/<td>txnId<\/td>/);
    const none = await a.inject({ url: '/search?q=nothing-like-this', headers: H });
    expect(none.body).to.include('0 matches in all 3000 domain txns');
    ex.stop();
    await ex.index?.done();
    await a.close();
  });

  it('the index can be turned off: search is the bounded scan of the newest txns, and says so', async () => {
    const { a, ex } = await app(fakeCaller({ domain: 300, audit: 0, aliases }), { searchDepth: 50, searchIndex: { enabled: false } });
    expect(ex.index).to.equal(undefined);
    ex.start();
    const r = await a.inject({ url: '/search?q=faber', headers: H });
    expect(r.body).to.include('data-searched="50" data-size="300"');
    expect(r.body).to.include('the search index is off');
    await a.close();
  });

  it('a query that matches more txns than a page shows the newest 100 and says there are more', async () => {
    const { a, ex } = await app(fakeCaller({ domain: 600, audit: 0 }), { searchDepth: 50, searchIndex: { pollMs: 5 } });
    ex.start();
    await waitFor('the index to complete', () => (ex.index?.status().complete === true ? true : undefined), 10_000, 10);
    // a part of a DID is matched only in txns read directly (above the index): none here, the index covers all
    const r = await a.inject({ url: `/search?q=${TRUSTEE.slice(0, 10)}`, headers: H });
    expect(r.body).to.include('0 matches in all 600 domain txns');
    const all = await a.inject({ url: `/search?q=did:sov:${TRUSTEE}`, headers: H });
    // the trustee's DID is on no NYM of this fake ledger: not a direct hit, so every txn it wrote matches as its author
    expect(all.body).to.include('100+ matches');
    expect(all.body).to.include('Only the newest 100 matches are shown');
    expect((all.body.match(/<td>author<\/td>/g) ?? []).length).to.equal(100);
    expect((all.body.match(/href="\/ledger\/domain\/\d+"/g) ?? []).length).to.equal(100);
    ex.stop();
    await a.close();
  });
});

describe('explorer: the search index in the gateway', () => {
  it('close() stops it, and /metrics reports its progress', async () => {
    const caller = fakeCaller({ domain: 700, audit: 0 });
    const pool = {
      ...(fakePool as object),
      ledger: { size: 0, txn: () => undefined },
      submitRead: (req: Request) => caller.read(req),
    } as unknown as GatewayPool;
    const gw = await Gateway.create({ port: 0, rateLimit: { max: 0, windowMs: 1000 }, explorer: { searchIndex: { pollMs: 5 } } }, { pool });
    try {
      const gauge = async (name: string): Promise<number> =>
        Number(/^(\S+) (\S+)$/m.exec((await gw.app.inject({ url: '/metrics' })).body.split('\n').find((l) => l.startsWith(`${name} `)) ?? '')?.[2]);
      expect(await gauge('quire_gateway_search_index_txns')).to.equal(0);
      expect(await gauge('quire_gateway_search_index_complete')).to.equal(0);
      gw.explorer!.start(); // what listen() does
      await waitFor('the index to complete', () => (gw.explorer?.index?.status().complete === true ? true : undefined), 10_000, 10);
      expect(await gauge('quire_gateway_search_index_txns')).to.equal(700);
      expect(await gauge('quire_gateway_search_index_ledger_size')).to.equal(700);
      expect(await gauge('quire_gateway_search_index_complete')).to.equal(1);
    } finally {
      await gw.close();
    }
    expect(gw.explorer?.index?.status().running).to.equal(false);
  });
});

// matches() is the confirmation of every index candidate: a txn matched by hash must match on its real fields too
describe('explorer: a hash candidate is confirmed on the txn itself', () => {
  it('matches() finds the fields the index hashes', () => {
    const t = verified(5, entry(5, { alias: 'Acme' }), 10);
    expect(matches(t, txnIdOf(5))).to.equal('txnId');
    expect(matches(t, didOf(5))).to.equal('DID');
    expect(matches(t, TRUSTEE)).to.equal('author');
    expect(matches(t, 'acm')).to.equal('alias');
    expect(matches(t, 'zzz')).to.equal(undefined);
  });
});
