// The explorer's pure parts: escaping (nothing a caller or the ledger supplies reaches a page unescaped), paging and
// the type filter over a ledger (against a fake pool caller), the bounded cache, the register form's fields, the
// browser detection, and the pages of a Fastify instance over a fake pool for the failure paths.
import { expect } from 'chai';
import fc from 'fast-check';
import Fastify from 'fastify';
import { DidKey } from '@quire/client';
import { b58encode, type Request } from '@quire/common';
import type { ReadOutcome } from '@quire/client';
import { ExplorerData, type VerifiedTxn } from '../../src/explorer/data.js';
import { esc, html } from '../../src/explorer/html.js';
import { parseTypes } from '../../src/explorer/ledger-page.js';
import { MAX_FORM_BYTES, nymOfForm, parseForm } from '../../src/explorer/register.js';
import { prefersHtml, registerExplorer } from '../../src/explorer/index.js';
import { GatewayError, GatewayErrorCode } from '../../src/errors.js';
import { expectCode } from '@quire/testing';
import type { GatewayPool, PoolCaller } from '../../src/pool-call.js';
import type { RouteContext } from '../../src/vdr-routes.js';
import { Gateway } from '../../src/index.js';

/** A ledger of `size` txns, txn i of type types[i % types.length], served as GET_TXN replies. */
function fakeCaller(size: number, types: string[], reads: { n: number } = { n: 0 }): PoolCaller {
  return {
    read: async (req: Request): Promise<ReadOutcome> => {
      reads.n++;
      const op = req.operation as { type: string; data: number; ledgerId?: number };
      if (op.type !== '3') throw new GatewayError(GatewayErrorCode.POOL_UNAVAILABLE, { tried: { errors: [] } });
      const s = op.data;
      const data =
        s >= 1 && s <= size
          ? {
              txn: { type: types[s % types.length], data: { dest: `D${s}` }, metadata: { from: 'V4SGRU86Z58d6TV7PBUe6f' } },
              txnMetadata: { seqNo: s, txnTime: 1_700_000_000 + s },
              ver: '1',
              rootHash: 'root',
              auditPath: ['a'],
              ledgerSize: size,
            }
          : null;
      return {
        result: {
          type: '3',
          data,
          seqNo: data === null ? null : s,
          state_proof: {
            multi_signature: { participants: ['Node1', 'Node2', 'Node3'], signature: 'sig', value: { timestamp: 1_700_000_000 + size, ledger_id: 1 } },
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

const fakePool = {
  status: () => ({
    ledgerSize: 4,
    root: 'r',
    n: 4,
    f: 1,
    validators: ['Node1', 'Node2', 'Node3', 'Node4'].map((alias) => ({ alias, dest: 'd', client: '127.0.0.1:1', bls: true, connected: true })),
    demoted: [],
  }),
  f: 1,
  n: 4,
} as unknown as GatewayPool;

describe('explorer: escaping', () => {
  it('esc leaves no markup characters; html`` escapes every interpolation but Html', () => {
    fc.assert(
      fc.property(fc.string(), (s) => {
        const e = esc(s);
        expect(e).to.not.match(/[<>"']/);
        expect(html`<p title="${s}">${s}</p>`.text).to.equal(`<p title="${e}">${e}</p>`);
        expect(html`${html`<b>`}`.text).to.equal('<b>');
      }),
    );
  });
});

describe('explorer: paging and the type filter', () => {
  it('a page is the newest `count` txns at or below `from` that match, newest first; `next` is where the scan stopped', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 120 }),
        fc.integer({ min: 1, max: 25 }),
        fc.option(fc.integer({ min: 1, max: 150 })),
        fc.boolean(),
        async (size, count, from, filter) => {
          const data = new ExplorerData(fakePool, fakeCaller(size, ['1', '101', '1', '102']), undefined);
          const types = filter ? new Set(['101']) : undefined;
          const p = await data.page(1, { ...(from !== null ? { from } : {}), count, ...(types !== undefined ? { types } : {}), scanLimit: 60 });
          const top = Math.min(from ?? size, size);
          const want: number[] = [];
          let scanned = 0;
          let s = top;
          for (; s >= 1 && want.length < count && scanned < 60; s--) {
            scanned++;
            if (types === undefined || s % 4 === 1) want.push(s);
          }
          expect(p.items.map((t) => t.seqNo)).to.deep.equal(want);
          expect(p.size).to.equal(size);
          expect(p.next).to.equal(s >= 1 ? s : undefined);
          for (const t of p.items) expect(t.verified).to.equal('proof');
        },
      ),
      { numRuns: 60 },
    );
  });

  it('committed txns are read once (cached); the newest multi-signature is kept', async () => {
    const reads = { n: 0 };
    const data = new ExplorerData(fakePool, fakeCaller(30, ['1'], reads), undefined);
    await data.many(1, [5, 6, 7]);
    const before = reads.n;
    const again: VerifiedTxn[] = await data.many(1, [5, 6, 7]);
    expect(reads.n).to.equal(before);
    expect(again.map((t) => t.seqNo)).to.deep.equal([5, 6, 7]);
    expect(data.latestMultiSignature?.timestamp).to.equal(1_700_000_030);
    expect(await data.txn(1, 31)).to.equal(null);
  });

  it('type filters by name or code, only the ledger’s own types; unknown ones reported', () => {
    expect([...parseTypes(1, 'NYM').types!]).to.deep.equal(['1']);
    expect([...parseTypes(1, ['schema', '102']).types!]).to.deep.equal(['101', '102']);
    expect(parseTypes(1, 'NODE')).to.deep.equal({ types: undefined, unknown: ['NODE'] });
    expect(parseTypes(1, undefined).types).to.equal(undefined);
    expect(parseTypes(0, 'NODE,bogus').unknown).to.deep.equal(['bogus']);
  });
});

describe('explorer: register form fields', () => {
  const seed = '000000000000000000000000Explorer';
  it('a seed gives its DID and abbreviated verkey; a full verkey alone gives the DID of its first 16 bytes', () => {
    const key = DidKey.fromSeed(seed);
    expect(nymOfForm({ seed, did: '', verkey: '', alias: '', role: 'ENDORSER' })).to.deep.equal({
      dest: key.did,
      verkey: key.verkey,
      role: '101',
      alias: undefined,
    });
    const other = DidKey.random();
    expect(nymOfForm({ seed: '', did: '', verkey: other.fullVerkey, alias: 'a', role: '' })).to.deep.equal({
      dest: other.did,
      verkey: other.fullVerkey,
      role: null,
      alias: 'a',
    });
    expect(b58encode(new Uint8Array(16))).to.be.a('string');
  });
  it('bad fields are refused naming the field', () => {
    const field = (i: Partial<Parameters<typeof nymOfForm>[0]>): string => {
      try {
        nymOfForm({ seed: '', did: '', verkey: '', alias: '', role: '', ...i });
      } catch (e) {
        expect(e).to.be.instanceOf(GatewayError);
        expect((e as GatewayError).code).to.equal(GatewayErrorCode.INVALID_PARAMETER);
        return String((e as GatewayError).data.field);
      }
      return 'accepted';
    };
    expect(field({})).to.equal('seed');
    expect(field({ seed: 'short' })).to.equal('seed');
    expect(field({ seed, verkey: 'x' })).to.equal('verkey');
    expect(field({ verkey: '0OIl' })).to.equal('verkey');
    expect(field({ verkey: DidKey.random().verkey })).to.equal('verkey'); // abbreviated without a DID
    expect(field({ seed, role: 'KING' })).to.equal('role');
    expect(field({ seed, did: 'not-a-did' })).to.equal('did');
  });
  it('the urlencoded body is bounded', () => {
    expect(parseForm(new TextEncoder().encode('seed=abc&role=ENDORSER'))).to.include({ seed: 'abc', role: 'ENDORSER' });
    expectCode(() => parseForm(new Uint8Array(MAX_FORM_BYTES + 1)), GatewayError, GatewayErrorCode.INVALID_REQUEST, { field: 'form' });
    expectCode(() => parseForm(`alias=${'a'.repeat(300)}`), GatewayError, GatewayErrorCode.INVALID_REQUEST, { field: 'alias' });
    expect(parseForm(undefined)).to.include({ seed: '' });
  });
});

describe('explorer: pages over a fake pool', () => {
  async function app(caller: PoolCaller, opts: Parameters<typeof registerExplorer>[2] = {}): Promise<ReturnType<typeof Fastify>> {
    const a = Fastify();
    a.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
    const ctx: RouteContext = { pool: fakePool, caller, namespace: 'quire:test', now: () => 0, lastRefresh: () => undefined };
    const ex = registerExplorer(a, ctx, opts);
    a.setNotFoundHandler((req, reply) => (ex.wantsPage(req) ? ex.notFound(req, reply) : reply.code(404).send({ code: 'NOT_FOUND' })));
    await a.ready();
    return a;
  }
  const H = { accept: 'text/html' };

  it('a browser is told apart from a program by its Accept header', () => {
    const r = (accept?: string): Parameters<typeof prefersHtml>[0] =>
      ({ headers: accept === undefined ? {} : { accept } }) as Parameters<typeof prefersHtml>[0];
    expect(prefersHtml(r('text/html,application/xhtml+xml,*/*;q=0.8'))).to.equal(true);
    expect(prefersHtml(r('*/*'))).to.equal(false);
    expect(prefersHtml(r())).to.equal(false);
    expect(prefersHtml(r('application/json, text/html'))).to.equal(false);
  });

  it('ledger pages page and link; a pool that does not answer is a 503 page with the stable code, never a crash', async () => {
    const a = await app(fakeCaller(45, ['1', '101']));
    const list = await a.inject({ url: '/ledger/domain', headers: H });
    expect(list.statusCode).to.equal(200);
    expect(list.body).to.include('data-seqno="45"').and.include('data-seqno="26"').and.not.include('data-seqno="25"');
    expect(list.body).to.include('href="/ledger/domain?from=25"');
    expect((await a.inject({ url: '/ledger/domain?from=3' })).body).to.include('data-seqno="1"');
    const down = await a.inject({ url: `/dids/${DidKey.random().did}`, headers: H });
    expect(down.statusCode).to.equal(503);
    expect(down.headers['x-quire-error']).to.equal('POOL_UNAVAILABLE');
    expect(down.headers['content-type']).to.match(/^text\/html/);
    const nf = await a.inject({ url: '/nothing', headers: H });
    expect(nf.statusCode).to.equal(404);
    expect(nf.body).to.include('Not found');
    expect((await a.inject({ url: '/nothing' })).headers['content-type']).to.match(/json/);
    expect((await a.inject({ url: '/register', method: 'POST', payload: 'seed=x' })).statusCode).to.equal(404); // off by default
    const ev = await a.inject({ url: '/ledger/domain/%3Cscript%3E', headers: H });
    expect(ev.statusCode).to.equal(404);
    expect(ev.body).to.not.include('<script>');
    await a.close();
  });

  it('the register form refuses a post from another site and bad fields before anything is written', async () => {
    let writes = 0;
    const caller = {
      ...fakeCaller(5, ['1']),
      write: async () => {
        writes++;
        throw new Error('no writes');
      },
    } as unknown as PoolCaller;
    const a = await app(caller, { registerForm: true, signerSeed: '000000000000000000000000Trustee1' });
    const body = 'seed=000000000000000000000000Explorer&role=TRUSTEE';
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    expect((await a.inject({ url: '/register', method: 'POST', payload: body, headers: { ...form, origin: 'https://evil.example' } })).statusCode).to.equal(
      403,
    );
    expect((await a.inject({ url: '/register', method: 'POST', payload: body, headers: { ...form, origin: 'null' } })).statusCode).to.equal(403);
    expect((await a.inject({ url: '/register', method: 'POST', payload: 'seed=short', headers: form })).statusCode).to.equal(400);
    expect(writes).to.equal(0);
    expect((await a.inject({ url: '/register', headers: H })).body).to.include('<form class="form" method="post" action="/register">');
    expect(() =>
      registerExplorer(Fastify(), { pool: fakePool, caller, namespace: 'n', now: () => 0, lastRefresh: () => undefined }, { registerForm: true }),
    ).to.throw(/signer seed/);
    await a.close();
  });

  it('the DID page walks the NYM back in time: creation, a verkey rotation and a role change, each with its txn', async () => {
    const did = DidKey.random();
    const rotated = DidKey.random();
    // versions of the NYM: [txnTime, seqNo, verkey, role]
    const versions: [number, number, string, string | null][] = [
      [1_700_000_100, 7, did.verkey, null],
      [1_700_000_200, 9, rotated.fullVerkey, null],
      [1_700_000_300, 12, rotated.fullVerkey, '101'],
    ];
    const reads: (number | undefined)[] = [];
    const base = fakeCaller(20, ['1']);
    const caller = {
      ...base,
      read: async (req: Request): Promise<ReadOutcome> => {
        const op = req.operation as Record<string, unknown>;
        if (op.type === '105') {
          const at = op.timestamp as number | undefined;
          reads.push(at);
          const v = op.dest !== did.did ? undefined : [...versions].reverse().find(([t]) => at === undefined || t <= at);
          const data =
            v === undefined
              ? null
              : JSON.stringify({ dest: did.did, identifier: 'V4SGRU86Z58d6TV7PBUe6f', verkey: v[2], role: v[3], seqNo: v[1], txnTime: v[0] });
          return { result: { type: '105', data, seqNo: v?.[1] ?? null, txnTime: v?.[0] ?? null }, verified: true, nodes: ['Node1'], rejected: [] };
        }
        if (op.type === '104') return { result: { type: '104', data: null, seqNo: null, txnTime: null }, verified: true, nodes: ['Node1'], rejected: [] };
        return base.read(req);
      },
    } as unknown as PoolCaller;
    const a = await app(caller);
    const r = await a.inject({ url: `/dids/${did.did}`, headers: H });
    expect(r.statusCode).to.equal(200);
    const rows = r.body.split('<h2>NYM history</h2>')[1]!;
    expect(rows).to.include('href="/ledger/domain/12"').and.include('href="/ledger/domain/9"').and.include('href="/ledger/domain/7"');
    expect(rows).to.include('role identity owner (no role) → ENDORSER');
    expect(rows).to.include('verkey rotated');
    expect(rows).to.include('created');
    expect(r.body).to.include(`did:indy:quire:test:${did.did}`);
    expect(reads).to.include.members([1_700_000_299, 1_700_000_199, 1_700_000_099]);
    const missing = await a.inject({ url: `/dids/${DidKey.random().did}`, headers: H });
    expect(missing.statusCode).to.equal(404);
    expect(missing.body).to.include('is not on the ledger');
    await a.close();
  });

  it('wired into the gateway: / and unknown paths are pages for a browser and unchanged JSON for programs; --no-explorer leaves the gateway as it was', async () => {
    const pool = { ...(fakePool as object), ledger: { size: 0, txn: () => undefined }, submitRead: async () => ({}) } as unknown as GatewayPool;
    const gw = await Gateway.create({ port: 0, metrics: false, rateLimit: { max: 0, windowMs: 1000 } }, { pool });
    try {
      const page = await gw.app.inject({ url: '/', headers: H });
      expect(page.headers['content-type']).to.match(/^text\/html/);
      expect(page.body).to.include('<h1>Pool</h1>');
      expect((await gw.app.inject({ url: '/' })).json()).to.have.property('pool_nodes');
      expect((await gw.app.inject({ url: '/?fmt', headers: H })).headers['content-type']).to.match(/json/);
      const nf = await gw.app.inject({ url: '/nope', headers: H });
      expect(nf.statusCode).to.equal(404);
      expect(nf.headers['content-type']).to.match(/^text\/html/);
      expect((await gw.app.inject({ url: '/nope' })).json()).to.include({ code: 'NOT_FOUND' });
    } finally {
      await gw.close();
    }
    const off = await Gateway.create({ port: 0, metrics: false, explorer: { enabled: false } }, { pool });
    try {
      expect((await off.app.inject({ url: '/', headers: H })).headers['content-type']).to.match(/json/);
      expect((await off.app.inject({ url: '/pool', headers: H })).statusCode).to.equal(404);
      expect((await off.app.inject({ url: '/nope', headers: H })).headers['content-type']).to.match(/json/);
    } finally {
      await off.close();
    }
  });
});
