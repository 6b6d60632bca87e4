// The ledger explorer against four real quire-node processes, served by a real gateway over HTTP on loopback: every
// page with good and bad input over plain HTTP, then the pages in a real browser (Debian's chromium driven by
// puppeteer-core; skipped with the reason printed when chromium is missing): the pool page with 4 validators and the
// primary, a NYM written through the SDK appearing in the domain ledger page, search by DID, the DID page's document,
// the filter by type, the devnet register form, paging to seqNo 1 and a friendly 404, each page screenshotted into the
// test's temp dir and none with a console error.
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import type { Browser, Page } from 'puppeteer-core';
import { DidKey, buildCredDefRequest, buildNymRequest, buildSchemaRequest, signRequest, type Pool } from '@quire/client';
import type { Request } from '@quire/common';
import { TRUSTEE_SEED } from '../../../../devnet/lib/node-api.js';
import { TestPool } from '../../../../test/support/test-pool.js';
import { Gateway } from '../../src/index.js';
import { waitFor } from '@quire/testing';

type Json = Record<string, unknown>;
const trustee = DidKey.fromSeed(TRUSTEE_SEED);
const uniq = (): string => `${Date.now().toString(36)}${Math.floor(Math.random() * 1e6).toString(36)}`;

/** Debian's chromium, where the CI script installs it. */
export function chromiumPath(): string | undefined {
  for (const p of [process.env.QUIRE_CHROMIUM, '/usr/bin/chromium', '/usr/bin/chromium-browser']) if (p !== undefined && p !== '' && existsSync(p)) return p;
  return undefined;
}

interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

describe('ledger explorer against a 4-node pool (HTTP on loopback)', function () {
  this.timeout(400_000);
  let pool: TestPool;
  let client: Pool;
  let gw: Gateway;
  let url: string;
  const NS = 'quire:test';
  const alice = DidKey.random();
  const alias = `alice-${uniq()}`;
  const schemaName = `explorer-${uniq()}`;
  let aliceSeqNo = 0;
  let schemaId = '';
  let credDefId = '';

  async function write(req: Request, key: DidKey = trustee): Promise<Json> {
    return (await client.submitWrite(signRequest(req, key))).result;
  }
  const seqNoOf = (r: Json): number => (r.txnMetadata as Json).seqNo as number;

  async function get(path: string, accept = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', init: RequestInit = {}): Promise<Answer> {
    const r = await fetch(url + path, { ...init, headers: { accept, ...(init.headers as Record<string, string> | undefined) } });
    return { status: r.status, headers: r.headers, text: await r.text() };
  }

  before(async function () {
    pool = await TestPool.start({ name: 'explorer', orderingTimeoutMs: 240_000 });
    try {
      client = await pool.client();
      aliceSeqNo = seqNoOf(await write(buildNymRequest({ submitter: trustee.did, dest: alice.did, verkey: alice.verkey, alias, role: '101' })));
      const schema = await write(buildSchemaRequest({ submitter: trustee.did, name: schemaName, version: '1.0', attrNames: ['name', 'age'] }));
      schemaId = `${trustee.did}:2:${schemaName}:1.0`;
      await write(
        buildCredDefRequest({ submitter: trustee.did, ref: seqNoOf(schema), tag: 'tag1', data: { primary: { n: '1', s: '2', r: { name: '3', age: '4' } } } }),
      );
      credDefId = `${trustee.did}:3:CL:${seqNoOf(schema)}:tag1`;
      gw = await Gateway.create({ host: '127.0.0.1', port: 0, namespace: NS, explorer: { registerForm: true, signerSeed: TRUSTEE_SEED } }, { pool: client });
      url = await gw.listen();
    } catch (e) {
      pool.dumpLogs(`setup failed: ${(e as Error).message}`);
      throw e;
    }
  });

  after(async () => {
    await gw?.close();
    await pool?.close();
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed') pool.dumpLogs(`failed: ${this.currentTest.title}`, 15);
  });

  describe('pages over HTTP', () => {
    it('/ is the pool page for a browser and stays the JSON status for programs', async () => {
      const page = await get('/');
      expect(page.status).to.equal(200);
      expect(page.headers.get('content-type')).to.match(/^text\/html/);
      expect(page.text).to.include('<h1>Pool</h1>');
      const json = await get('/', '*/*');
      expect(json.headers.get('content-type')).to.match(/^application\/json/);
      expect(JSON.parse(json.text)).to.have.property('pool_nodes');
    });

    it('/pool: 4 validators from their validator info, one primary, f and quorums, a verified multi-signature', async () => {
      const page = await get('/pool');
      expect(page.status).to.equal(200);
      for (const n of ['Node1', 'Node2', 'Node3', 'Node4']) expect(page.text).to.include(`data-alias="${n}"`);
      expect(page.text.match(/data-primary="true"/g) ?? []).to.have.length(1);
      expect(page.text).to.include('f = 1');
      expect(page.text).to.include('participating');
      expect(page.text).to.match(/data-age="\d+"/);
      const live = await get('/pool?part=live');
      expect(live.text).to.not.include('<html');
      expect(live.text).to.include('data-alias="Node1"');
    });

    it('/ledger/domain: newest first, the NYM as a card; a type filter; paging to seqNo 1; a txn page with its audit path verified', async () => {
      const list = await get('/ledger/domain');
      expect(list.status).to.equal(200);
      expect(list.text).to.include(`data-seqno="${aliceSeqNo}"`);
      expect(list.text).to.include(alias);
      const nyms = await get('/ledger/domain?type=NYM&count=5');
      const types = [...nyms.text.matchAll(/data-type="(\d+)"/g)].map((m) => m[1]);
      expect(types.length).to.be.greaterThan(0);
      expect(types.every((t) => t === '1')).to.equal(true);
      const oldest = await get('/ledger/domain?from=3');
      expect(oldest.text).to.include('data-seqno="1"');
      expect(oldest.text).to.not.include('rel="next"');
      const one = await get(`/ledger/domain/${aliceSeqNo}`);
      expect(one.status).to.equal(200);
      expect(one.text).to.include('data-audit-path="verified"');
      expect(one.text).to.include(alice.did);
      const poolTxn = await get('/ledger/pool/1');
      expect(poolTxn.text).to.include('NODE');
      // the audit ledger: one card per ordered batch, agreed by f+1 validators (no multi-signature, as in Indy)
      const audit = await get('/ledger/audit');
      expect(audit.status).to.equal(200);
      expect(audit.text).to.include('data-type="2"');
      expect(audit.text).to.include('verified: f+1 matching replies');
      const auditOne = await get('/ledger/audit/1');
      expect(auditOne.text).to.include('view / batch');
      expect(auditOne.text).to.include('<dt>why</dt>');
    });

    it('/dids, /schemas, /cred-defs, /agreement and /search show verified ledger objects', async () => {
      const did = await get(`/dids/${alice.did}`);
      expect(did.status).to.equal(200);
      expect(did.text).to.include(`did:indy:${NS}:${alice.did}`);
      expect(did.text).to.include('id="did-document"');
      expect(did.text).to.include('ENDORSER');
      const schema = await get(`/schemas/${encodeURIComponent(schemaId)}`);
      expect(schema.status).to.equal(200);
      expect(schema.text).to.include('<li>age</li>');
      const cd = await get(`/cred-defs/${encodeURIComponent(credDefId)}`);
      expect(cd.status).to.equal(200);
      expect(cd.text).to.match(/age, name|name, age/);
      const taa = await get('/agreement');
      expect(taa.status).to.equal(200);
      const byDid = await fetch(`${url}/search?q=${alice.did}`, { redirect: 'manual' });
      expect(byDid.status).to.equal(302);
      expect(byDid.headers.get('location')).to.equal(`/dids/${alice.did}`);
      // the search index a listening gateway builds covers the whole domain ledger
      await waitFor('the search index to complete', () => (gw.explorer?.index?.status().complete === true ? true : undefined), 30_000, 100);
      const byAlias = await get(`/search?q=${alias}`);
      expect(byAlias.text).to.include(`/ledger/domain/${aliceSeqNo}`);
      const searched = /data-searched="(\d+)" data-size="(\d+)"/.exec(byAlias.text);
      expect(searched?.[1]).to.equal(searched?.[2]);
      const bySchemaName = await get(`/search?q=${schemaName}`);
      expect(bySchemaName.text).to.include('schema name');
    });

    it('bad input: friendly 404 pages for a browser, JSON 404 for programs, 400 for malformed ids, and the gateway keeps serving', async () => {
      const cases: [string, number][] = [
        ['/no/such/page', 404],
        ['/ledger/nope', 404],
        ['/ledger/domain/abc', 404],
        ['/ledger/domain/999999999', 404],
        ['/ledger/domain?from=-4', 400],
        ['/ledger/domain?count=100000', 400],
        ['/ledger/domain?type=SCHEMA&type=NODE', 200],
        ['/ledger/config', 200],
        ['/ledger/config/1', 404],
        ['/ledger/audit', 200],
        ['/ledger/audit/1', 200],
        ['/ledger/audit/999999999', 404],
        ['/ledger/pool?type=NODE', 200],
        [`/dids/${DidKey.random().did}`, 404],
        ['/dids/not-a-did', 400],
        ['/schemas/garbage', 400],
        [`/schemas/${encodeURIComponent(`${trustee.did}:2:none-such:1.0`)}`, 404],
        ['/cred-defs/x:3:CL:abc', 400],
        [`/search?q=${'x'.repeat(5000)}`, 200],
        ['/search?q=%3Cscript%3Ealert(1)%3C%2Fscript%3E', 200],
      ];
      for (const [path, status] of cases) {
        const r = await get(path);
        expect(r.status, path).to.equal(status);
        expect(r.headers.get('content-type'), path).to.match(/^text\/html/);
        expect(r.text, path).to.not.include('<script>alert');
      }
      const api = await get('/no/such/page', '*/*');
      expect(api.status).to.equal(404);
      expect(JSON.parse(api.text)).to.include({ code: 'NOT_FOUND' });
      expect((await get('/pool')).status).to.equal(200);
    });

    it('register form: a DID from a seed with a role; bad seeds and roles are refused with the field named', async () => {
      const seed = `explorer-${uniq()}`.padEnd(32, 'x').slice(0, 32);
      const key = DidKey.fromSeed(seed);
      const r = await get('/register', undefined, {
        method: 'POST',
        body: new URLSearchParams({ seed, role: 'ENDORSER', alias: 'reg' }).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      expect(r.status).to.equal(200);
      expect(r.text).to.include(`data-did="${key.did}"`);
      expect(r.text).to.match(/data-seqno="\d+"/);
      const forged = await get('/register', undefined, {
        method: 'POST',
        body: new URLSearchParams({ seed, role: 'TRUSTEE' }).toString(),
        headers: { origin: 'https://evil.example' },
      });
      expect(forged.status).to.equal(403);
      for (const body of [{ seed: 'short' }, { seed, role: 'KING' }, {}, { verkey: 'abc' }] as Record<string, string>[]) {
        const bad = await get('/register', undefined, { method: 'POST', body: new URLSearchParams(body).toString() });
        expect(bad.status, JSON.stringify(body)).to.equal(400);
        expect(bad.text).to.include('data-code="INVALID_PARAMETER"');
      }
    });
  });

  describe('in a real browser (chromium)', function () {
    let browser: Browser | undefined;
    const shotsDir = mkdtempSync(join(tmpdir(), 'quire-explorer-shots-'));
    const consoleErrors: string[] = [];

    before(async function () {
      const exe = chromiumPath();
      if (exe === undefined) {
        console.log('    skipped: chromium is not installed (apt-get install chromium; .ci/run installs it)');
        this.skip();
      }
      const puppeteer = (await import('puppeteer-core')).default;
      browser = await puppeteer.launch({ executablePath: exe, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
      console.log(`    screenshots in ${shotsDir}`);
    });

    after(async () => {
      await browser?.close();
    });

    async function open(path: string, width = 1200): Promise<Page> {
      const page = await browser!.newPage();
      await page.setViewport({ width, height: 900 });
      page.on('console', (m) => {
        if (m.type() === 'error') consoleErrors.push(`${path}: ${m.text()}`);
      });
      page.on('pageerror', (e) => consoleErrors.push(`${path}: ${e instanceof Error ? e.message : String(e)}`));
      await page.goto(url + path, { waitUntil: 'load' });
      return page;
    }
    const shot = async (page: Page, name: string): Promise<void> => {
      await page.screenshot({ path: join(shotsDir, `${name}.png`), fullPage: true });
    };
    // in-page code as text: the tests compile without the DOM library
    const texts = (page: Page, sel: string): Promise<string[]> =>
      page.evaluate(`[...document.querySelectorAll(${JSON.stringify(sel)})].map((e) => e.textContent || '')`) as Promise<string[]>;
    const attrs = (page: Page, sel: string, attr: string): Promise<(string | null)[]> =>
      page.evaluate(`[...document.querySelectorAll(${JSON.stringify(sel)})].map((e) => e.getAttribute(${JSON.stringify(attr)}))`) as Promise<(string | null)[]>;
    const text = async (page: Page, sel: string): Promise<string> => (await texts(page, sel))[0] ?? '';
    const attr = async (page: Page, sel: string, a: string): Promise<string | null> => (await attrs(page, sel, a))[0] ?? null;

    it('the pool page shows 4 validators and the primary (also on a phone-sized screen)', async () => {
      const page = await open('/');
      const rows = await texts(page, 'tbody tr th[scope=row]');
      expect(rows).to.have.length(4);
      expect(rows.filter((r) => r.includes('primary'))).to.have.length(1);
      await shot(page, 'pool');
      await page.close();
      const phone = await open('/pool', 390);
      const overflow = await (phone.evaluate('document.documentElement.scrollWidth - window.innerWidth') as Promise<number>);
      expect(overflow).to.be.at.most(1);
      await shot(phone, 'pool-phone');
      await phone.close();
    });

    it('a NYM written through the SDK appears in the domain ledger page; search by its DID opens its page with its document', async () => {
      const bob = DidKey.random();
      const seqNo = seqNoOf(await write(buildNymRequest({ submitter: trustee.did, dest: bob.did, verkey: bob.verkey })));
      const page = await open('/ledger/domain');
      const deadline = Date.now() + 60_000;
      while ((await page.$(`li[data-seqno="${seqNo}"]`)) === null) {
        if (Date.now() > deadline) throw new Error(`txn ${seqNo} not on the domain ledger page`);
        await page.reload({ waitUntil: 'load' });
      }
      expect(await text(page, `li[data-seqno="${seqNo}"]`)).to.include(bob.did);
      await shot(page, 'ledger-domain');
      // keyboard: the search box is reachable and submits with Enter
      await page.focus('#q');
      await page.keyboard.type(bob.did);
      await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), page.keyboard.press('Enter')]);
      expect(page.url()).to.equal(`${url}/dids/${bob.did}`);
      const doc = await text(page, '#did-document');
      expect(JSON.parse(doc)).to.include({ id: `did:indy:${NS}:${bob.did}` });
      await shot(page, 'did');
      await page.close();
    });

    it('the filter by type shows only that type', async () => {
      const page = await open('/ledger/domain');
      await page.select('#type', 'SCHEMA');
      await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), page.click('.filters button')]);
      const types = await attrs(page, 'li.card', 'data-type');
      expect(types.length).to.be.greaterThan(0);
      expect(new Set(types)).to.deep.equal(new Set(['101']));
      await shot(page, 'ledger-filter-schema');
      await page.close();
    });

    it('paging with Older reaches seqNo 1 (and the Oldest link goes there directly)', async () => {
      const page = await open('/ledger/domain?count=5');
      for (let i = 0; i < 200; i++) {
        const older = await page.$('a[rel=next]');
        if (older === null) break;
        await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), older.click()]);
      }
      expect(await page.$('li[data-seqno="1"]')).to.not.equal(null);
      await shot(page, 'ledger-oldest');
      await page.close();
      const direct = await open('/ledger/domain/1');
      expect(await text(direct, 'main')).to.include('verified');
      await shot(direct, 'txn');
      await direct.close();
    });

    it('the register form creates a DID (devnet) and shows its NYM and seqNo', async () => {
      const page = await open('/register');
      const key = DidKey.random();
      await page.type('#verkey', key.fullVerkey);
      await page.select('#role', 'ENDORSER');
      await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), page.click('form.form button')]);
      const did = await attr(page, '#register-result [data-did]', 'data-did');
      expect(did).to.equal(key.did);
      const seqNo = Number(await attr(page, '#register-result [data-seqno]', 'data-seqno'));
      expect(seqNo).to.be.greaterThan(0);
      await shot(page, 'register');
      await page.close();
      const check = await open(`/dids/${key.did}`);
      expect(await text(check, 'main')).to.include('ENDORSER');
      await check.close();
    });

    it('a bad URL gives a friendly 404 page; schema, cred def, agreement, audit ledger and search pages render', async () => {
      const page = await open('/this/is/not/a/page');
      expect(await text(page, 'h1')).to.equal('Not found');
      expect(await page.$('a[href="/pool"]')).to.not.equal(null);
      await shot(page, 'not-found');
      await page.close();
      for (const [path, name] of [
        [`/schemas/${encodeURIComponent(schemaId)}`, 'schema'],
        [`/cred-defs/${encodeURIComponent(credDefId)}`, 'cred-def'],
        ['/agreement', 'agreement'],
        ['/ledger/audit', 'ledger-audit'],
        ['/ledger/audit/1', 'txn-audit'],
        [`/search?q=${encodeURIComponent(alias)}`, 'search'],
      ] as const) {
        const p = await open(path);
        expect(await text(p, 'h1')).to.not.equal('Not found');
        await shot(p, name);
        await p.close();
      }
    });

    it('no page logged a console error', () => {
      // a 404 document is a resource error the browser logs for the 404 page itself
      expect(consoleErrors.filter((e) => !/404 \(Not Found\)/.test(e))).to.deep.equal([]);
    });
  });
});
