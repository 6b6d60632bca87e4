// The gateway against four real quire-node processes, over HTTP on loopback: every indy-vdr-proxy route with good and
// bad input, the verification header, DID resolution (did:indy with and without diddocContent, with an endpoint
// ATTRIB; did:sov; older versions), the operations routes, and bad input that must never crash the gateway.
import { expect } from 'chai';
import { waitUntil } from '@quire/testing';
import { parseJson, stringifyJson, type Request } from '@quire/common';
import {
  DidKey,
  buildAttribRequest,
  buildCredDefRequest,
  buildGetNymRequest,
  buildNymRequest,
  buildRevocRegDefRequest,
  buildRevocRegEntryRequest,
  buildSchemaRequest,
  revocRegDefId,
  signRequest,
  type Pool,
} from '@quire/client';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { ClientHost } from '@quire/network';
import { Pool as SdkPool } from '@quire/client';
import { TRUSTEE_SEED, nodeSeed } from '../../../../devnet/lib/node-api.js';
import { connectTo } from '../../../../test/support/client.js';
import { TestPool } from '../../../../test/support/test-pool.js';
import { Gateway } from '../../src/index.js';

type Json = Record<string, unknown>;
const trustee = DidKey.fromSeed(TRUSTEE_SEED);
const uniq = (): string => `${Date.now().toString(36)}${Math.floor(Math.random() * 1e6).toString(36)}`;

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  json: Json;
}

describe('quire-gateway against a 4-node pool (HTTP on loopback)', function () {
  this.timeout(400_000);
  let pool: TestPool;
  let client: Pool;
  let gw: Gateway;
  let url: string;

  const NS = 'quire:test';
  const owner = DidKey.random();
  const withDoc = DidKey.random();
  const bare = DidKey.random();
  const schemaName = `gw-${uniq()}`;
  let schemaSeqNo = 0;
  let credDefId = '';
  let revRegId = '';
  let entry1Time = 0;
  let entry2Time = 0;
  let ownerFirstSeqNo = 0;
  let ownerFirstTime = 0;
  let rotatedVerkey = '';

  async function write(req: Request, key: DidKey = trustee): Promise<Json> {
    return (await client.submitWrite(signRequest(req, key))).result;
  }
  const seqNoOf = (r: Json): number => (r.txnMetadata as Json).seqNo as number;
  const timeOf = (r: Json): number => (r.txnMetadata as Json).txnTime as number;

  async function get(path: string, init: RequestInit = {}): Promise<Answer> {
    const r = await fetch(url + path, init);
    const text = await r.text();
    let json: Json = {};
    try {
      json = parseJson(text) as Json;
    } catch {
      // not JSON (genesis, metrics)
    }
    return { status: r.status, headers: r.headers, text, json };
  }

  before(async function () {
    pool = await TestPool.start({ name: 'gateway', orderingTimeoutMs: 240_000 });
    try {
      client = await pool.client();
      const nymA = await write(buildNymRequest({ submitter: trustee.did, dest: owner.did, verkey: owner.verkey }));
      ownerFirstSeqNo = seqNoOf(nymA);
      ownerFirstTime = timeOf(nymA);
      await write(
        buildAttribRequest({ submitter: owner.did, dest: owner.did, raw: { endpoint: { endpoint: 'https://agent.example:8020', routingKeys: [] } } }),
        owner,
      );
      await write(
        buildNymRequest({
          submitter: trustee.did,
          dest: withDoc.did,
          verkey: withDoc.verkey,
          diddocContent: { service: [{ id: `did:indy:${NS}:${withDoc.did}#agent`, type: 'DIDCommMessaging', serviceEndpoint: 'https://doc.example' }] },
        }),
      );
      await write(buildNymRequest({ submitter: trustee.did, dest: bare.did, verkey: bare.verkey }));
      const schema = await write(buildSchemaRequest({ submitter: trustee.did, name: schemaName, version: '1.0', attrNames: ['name', 'age'] }));
      schemaSeqNo = seqNoOf(schema);
      await write(
        buildCredDefRequest({ submitter: trustee.did, ref: schemaSeqNo, tag: 'tag1', data: { primary: { n: '1', s: '2' }, revocation: { g: '3' } } }),
      );
      credDefId = `${trustee.did}:3:CL:${schemaSeqNo}:tag1`;
      revRegId = revocRegDefId(trustee.did, credDefId, 'r1');
      await write(
        buildRevocRegDefRequest({
          submitter: trustee.did,
          credDefId,
          tag: 'r1',
          value: {
            issuanceType: 'ISSUANCE_BY_DEFAULT',
            maxCredNum: 100,
            publicKeys: { accumKey: { z: '1' } },
            tailsHash: 'tails-hash',
            tailsLocation: 'https://tails.example',
          },
        }),
      );
      entry1Time = timeOf(
        await write(buildRevocRegEntryRequest({ submitter: trustee.did, revocRegDefId: revRegId, value: { accum: 'accum-1', revoked: [3] } })),
      );
      await waitUntil('the next second of the wall clock', () => Math.floor(Date.now() / 1000) > entry1Time, 5_000, 100);
      entry2Time = timeOf(
        await write(
          buildRevocRegEntryRequest({ submitter: trustee.did, revocRegDefId: revRegId, value: { accum: 'accum-2', prevAccum: 'accum-1', revoked: [5] } }),
        ),
      );
      // a key rotation: the owner's NYM has an older version
      const rotated = DidKey.random();
      rotatedVerkey = rotated.fullVerkey;
      // make sure the rotation is ordered in a later second than the first version
      await waitUntil('the next second of the wall clock', () => Math.floor(Date.now() / 1000) > ownerFirstTime, 5_000, 100);
      await write(buildNymRequest({ submitter: owner.did, dest: owner.did, verkey: rotated.fullVerkey }), owner);
      gw = await Gateway.create({ host: '127.0.0.1', port: 0, namespace: NS, cors: ['https://app.example'], bodyLimitBytes: 64 * 1024 }, { pool: client });
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

  describe('indy-vdr-proxy routes', () => {
    it('GET /nym/{did}: the ledger reply, verified by proof; did:sov and did:indy forms; ?seq_no and ?timestamp give the older version', async () => {
      for (const d of [owner.did, `did:sov:${owner.did}`, `did:indy:${NS}:${owner.did}`]) {
        const a = await get(`/nym/${d}`);
        expect(a.status, a.text).to.equal(200);
        expect(a.headers.get('x-quire-verified')).to.equal('proof');
        expect(a.headers.get('content-type')).to.match(/^application\/json/);
        expect(a.json.op).to.equal('REPLY');
        const result = a.json.result as Json;
        expect(result.type).to.equal('105');
        expect(result.state_proof).to.be.an('object');
        expect((parseJson(String(result.data)) as Json).verkey).to.equal(rotatedVerkey);
      }
      const old = await get(`/nym/${owner.did}?seq_no=${ownerFirstSeqNo}`);
      expect(old.status, old.text).to.equal(200);
      expect((parseJson(String((old.json.result as Json).data)) as Json).verkey).to.equal(owner.verkey);
      const atTime = await get(`/nym/${owner.did}?timestamp=${ownerFirstTime}`);
      expect(atTime.status, atTime.text).to.equal(200);
      expect((parseJson(String((atTime.json.result as Json).data)) as Json).verkey).to.equal(owner.verkey);
    });

    it('GET /nym of a DID not on the ledger: 200 with data null, proven absent', async () => {
      const a = await get(`/nym/${DidKey.random().did}`);
      expect(a.status).to.equal(200);
      expect((a.json.result as Json).data).to.equal(null);
      expect(a.headers.get('x-quire-verified')).to.equal('proof');
    });

    it('?fmt: pretty JSON without identifier, reqId and state_proof (as the proxy formats it)', async () => {
      const a = await get(`/nym/${owner.did}?fmt`);
      expect(a.status).to.equal(200);
      expect(a.text).to.contain('\n  "result": {');
      const result = a.json.result as Json;
      expect(result).to.not.have.any.keys('identifier', 'reqId', 'state_proof');
      expect(result.dest).to.equal(owner.did);
    });

    it('GET /attrib/{did}/endpoint, /schema, /cred_def, /rev_reg_def, /rev_reg, /rev_reg_delta: verified replies', async () => {
      const attrib = await get(`/attrib/${owner.did}/endpoint`);
      expect(attrib.status, attrib.text).to.equal(200);
      expect(attrib.headers.get('x-quire-verified')).to.equal('proof');
      expect(parseJson(String((attrib.json.result as Json).data))).to.deep.equal({ endpoint: { endpoint: 'https://agent.example:8020', routingKeys: [] } });

      const schemaId = `${trustee.did}:2:${schemaName}:1.0`;
      for (const id of [schemaId, encodeURIComponent(`did:indy:${NS}:${trustee.did}/anoncreds/v0/SCHEMA/${schemaName}/1.0`)]) {
        const s = await get(`/schema/${id}`);
        expect(s.status, s.text).to.equal(200);
        expect(s.headers.get('x-quire-verified')).to.equal('proof');
        expect(((s.json.result as Json).data as Json).attr_names).to.have.members(['name', 'age']);
        expect((s.json.result as Json).seqNo).to.equal(schemaSeqNo);
      }
      const cd = await get(`/cred_def/${credDefId}`);
      expect(cd.status, cd.text).to.equal(200);
      expect((cd.json.result as Json).data).to.deep.equal({ primary: { n: '1', s: '2' }, revocation: { g: '3' } });
      const rrd = await get(`/rev_reg_def/${revRegId}`);
      expect(rrd.status, rrd.text).to.equal(200);
      expect(stringifyJson((rrd.json.result as Json).data)).to.contain('tails-hash');
      const rr = await get(`/rev_reg/${revRegId}`);
      expect(rr.status, rr.text).to.equal(200);
      expect(stringifyJson((rr.json.result as Json).data)).to.contain('accum-2');
      const delta = await get(`/rev_reg_delta/${revRegId}`);
      expect(delta.status, delta.text).to.equal(200);
      expect(stringifyJson((delta.json.result as Json).data)).to.contain('accum-2');
      for (const r of [cd, rrd, rr, delta]) expect(r.headers.get('x-quire-verified')).to.equal('proof');
    });

    it('GET /txn/{ledger}/{seqNo} (audit path), /taa, /aml, /auth (f+1 consensus) and /auth/{type}/{action}', async () => {
      const txn = await get(`/txn/domain/${schemaSeqNo}`);
      expect(txn.status, txn.text).to.equal(200);
      expect(txn.headers.get('x-quire-verified')).to.equal('proof');
      expect((((txn.json.result as Json).data as Json).txn as Json).type).to.equal('101');
      const pool0 = await get('/txn/pool/1');
      expect(pool0.status).to.equal(200);
      // the audit ledger, as indy-node serves it: the txn and its audit path, no multi-signature, so f+1 matching replies
      const audit = await get('/txn/audit/1');
      expect(audit.status, audit.text).to.equal(200);
      expect(audit.headers.get('x-quire-verified')).to.equal('consensus');
      const auditData = (audit.json.result as Json).data as Json;
      expect((auditData.txn as Json).type).to.equal('2');
      expect(auditData.ledgerSize).to.be.a('number');
      expect(((auditData.txn as Json).data as Json).ledgerSize).to.have.property('0');
      for (const p of ['/taa', '/aml']) {
        const a = await get(p);
        expect(a.status, a.text).to.equal(200);
        expect(a.json.op).to.equal('REPLY');
        expect(['proof', 'consensus']).to.include(a.headers.get('x-quire-verified'));
      }
      const all = await get('/auth');
      expect(all.status, all.text).to.equal(200);
      expect(all.headers.get('x-quire-verified')).to.equal('consensus');
      expect(((all.json.result as Json).data as unknown[]).length).to.be.greaterThan(10);
      const one = await get('/auth/1/ADD?field=role&new_value=101');
      expect(one.status, one.text).to.equal(200);
      expect(one.headers.get('x-quire-verified')).to.equal('proof');
    });

    it('GET /genesis, / and /status: the pool ledger and the pool status', async () => {
      const g = await get('/genesis');
      expect(g.status).to.equal(200);
      const lines = g.text.split('\n');
      expect(lines).to.have.length(4);
      expect((parseJson(lines[0]!) as Json).txn).to.be.an('object');
      const root = await get('/');
      expect(root.json).to.include.keys('status', 'pool_mt_root', 'pool_mt_size', 'pool_nodes', 'last_refresh');
      expect(root.json.pool_nodes).to.have.members(['Node1', 'Node2', 'Node3', 'Node4']);
      const st = await get('/status');
      expect(st.json).to.include({ namespace: NS, n: 4, f: 1 });
    });

    it('POST /submit: a signed write (f+1 consensus), a read, and the pool REJECT passed through with status 400', async () => {
      const nym = DidKey.random();
      const req = signRequest(buildNymRequest({ submitter: trustee.did, dest: nym.did, verkey: nym.verkey }), trustee);
      const w = await get('/submit', { method: 'POST', body: stringifyJson(req), headers: { 'content-type': 'application/json' } });
      expect(w.status, w.text).to.equal(200);
      expect(w.headers.get('x-quire-verified')).to.equal('consensus');
      expect(w.json.op).to.equal('REPLY');
      expect(((w.json.result as Json).txn as Json).type).to.equal('1');
      // the same reqId keeps its exact (big integer) value through the gateway
      expect(w.text).to.contain(`"reqId":${String(req.reqId)}`);
      // a read through /submit is verified too
      const r = await get('/submit', { method: 'POST', body: stringifyJson(buildGetNymRequest({ dest: nym.did })) });
      expect(r.status, r.text).to.equal(200);
      expect(r.headers.get('x-quire-verified')).to.equal('proof');
      // a NYM by a DID with no role: refused by the pool, passed through as its message
      const nobody = DidKey.random();
      const bad = signRequest(buildNymRequest({ submitter: bare.did, dest: nobody.did, verkey: nobody.verkey, role: '0' }), bare);
      const refused = await get('/submit', { method: 'POST', body: stringifyJson(bad) });
      expect(refused.status, refused.text).to.equal(400);
      expect(['REQNACK', 'REJECT']).to.include(refused.json.op);
      expect(String(refused.json.reason)).to.have.length.greaterThan(0);
      expect(refused.text).to.contain(`"reqId":${String(bad.reqId)}`);
      // a bad signature: REQNACK
      const forged = { ...req, reqId: Number(req.reqId) + 1 };
      const nack = await get('/submit', { method: 'POST', body: stringifyJson(forged) });
      expect(nack.status, nack.text).to.equal(400);
      expect(nack.json.op).to.equal('REQNACK');
    });
  });

  describe('bad input', () => {
    it('malformed ids are 400 with a stable code naming the field; unknown routes 404 JSON; GET /submit 405', async () => {
      const cases: [string, string][] = [
        ['/nym/not-a-did', 'did'],
        ['/nym/did:example:123', 'did'],
        [`/nym/did:indy:BAD_NS:${owner.did}`, 'did'],
        ['/attrib/0OIl/endpoint', 'did'],
        ['/schema/abc', 'id'],
        [`/schema/${trustee.did}:3:x:1.0`, 'id'],
        [`/cred_def/${trustee.did}:3:CL:notanumber:tag`, 'id'],
        ['/rev_reg_def/x:4:y', 'id'],
        ['/rev_reg/nope', 'id'],
        ['/rev_reg_delta/nope', 'id'],
        ['/txn/ledgerx/1', 'ledger'],
        ['/txn/domain/0', 'seqNo'],
        ['/txn/domain/-5', 'seqNo'],
        [`/nym/${owner.did}?seq_no=abc`, 'seq_no'],
        [`/nym/${owner.did}?timestamp=-1`, 'timestamp'],
        ['/auth/1/DELETE', 'action'],
      ];
      for (const [path, field] of cases) {
        const a = await get(path);
        expect(a.status, `${path}: ${a.text}`).to.equal(400);
        expect(a.json.code, path).to.equal('INVALID_PARAMETER');
        expect(a.json.field, path).to.equal(field);
        expect(a.headers.get('x-quire-error')).to.equal('INVALID_PARAMETER');
        expect(String(a.json.reason)).to.contain(field);
      }
      const nf = await get('/no/such/route');
      expect(nf.status).to.equal(404);
      expect(nf.json).to.include({ code: 'NOT_FOUND', path: '/no/such/route' });
      const m = await get('/submit');
      expect(m.status).to.equal(405);
      expect(m.json.code).to.equal('METHOD_NOT_ALLOWED');
    });

    it('POST /submit with an empty body, non-JSON, a non-request or a body above the limit: 400/413 naming the field', async () => {
      const post = (body: string): Promise<Answer> => get('/submit', { method: 'POST', body, headers: { 'content-type': 'application/json' } });
      const empty = await get('/submit', { method: 'POST' });
      expect(empty.status).to.equal(400);
      expect(empty.json).to.include({ code: 'INVALID_REQUEST', field: 'body' });
      expect((await post('{not json')).json).to.include({ code: 'INVALID_REQUEST', field: 'body' });
      expect((await post('[1,2]')).json).to.include({ code: 'INVALID_REQUEST', field: 'body' });
      expect((await post('{"reqId":1}')).json).to.include({ code: 'INVALID_REQUEST', field: 'operation' });
      expect((await post('{"reqId":1,"operation":{"type":5}}')).json).to.include({ code: 'INVALID_REQUEST', field: 'operation.type' });
      expect((await post('{"operation":{"type":"1"}}')).json).to.include({ code: 'INVALID_REQUEST', field: 'reqId' });
      expect((await post('{"a":1,"a":2}')).json).to.include({ code: 'INVALID_REQUEST', field: 'body' });
      const big = await post(`{"x":"${'a'.repeat(70 * 1024)}"}`);
      expect(big.status).to.equal(413);
      expect(big.json.code).to.equal('BODY_TOO_LARGE');
      // still serving
      expect((await get('/health')).status).to.equal(200);
    });

    it('garbage paths and queries never crash the gateway', async () => {
      const paths = [
        '/nym/%',
        '/nym/%E0%A4%A',
        `/schema/${'x'.repeat(5000)}`,
        '/1.0/identifiers/%ZZ',
        '/txn/domain/99999999999999999999',
        '/nym/' + encodeURIComponent('did:indy:a:b:c'),
        '/cred_def/a%2Fb',
      ];
      for (const p of paths) {
        const a = await get(p);
        expect(a.status, p).to.be.within(400, 499);
        expect(a.json.code ?? (a.json.didResolutionMetadata as Json | undefined)?.error, `${p}: ${a.text}`).to.be.a('string');
      }
      expect((await get('/health')).status).to.equal(200);
    });
  });

  describe('DID resolution (GET /1.0/identifiers/{did})', () => {
    it('did:indy with an endpoint ATTRIB: the verkey method, authentication and the legacy services', async () => {
      const did = `did:indy:${NS}:${owner.did}`;
      const a = await get(`/1.0/identifiers/${did}`);
      expect(a.status, a.text).to.equal(200);
      expect(a.headers.get('x-quire-verified')).to.equal('proof');
      const doc = a.json.didDocument as Json;
      expect(doc.id).to.equal(did);
      expect(doc.verificationMethod).to.deep.equal([
        { id: `${did}#verkey`, type: 'Ed25519VerificationKey2018', controller: did, publicKeyBase58: rotatedVerkey },
      ]);
      expect(doc.authentication).to.deep.equal([`${did}#verkey`]);
      const services = doc.service as Json[];
      expect(services.find((s) => s.type === 'did-communication')).to.deep.include({
        id: `${did}#did-communication`,
        serviceEndpoint: 'https://agent.example:8020',
        recipientKeys: [`${did}#verkey`],
        routingKeys: [],
        priority: 0,
      });
      expect(a.json.didDocumentMetadata).to.include.keys('versionId', 'updated');
      expect((a.json.didResolutionMetadata as Json).contentType).to.equal('application/did+ld+json');
    });

    it('did:indy with diddocContent: merged into the document, no legacy services', async () => {
      const did = `did:indy:${NS}:${withDoc.did}`;
      const a = await get(`/1.0/identifiers/${did}`);
      expect(a.status, a.text).to.equal(200);
      const doc = a.json.didDocument as Json;
      expect(doc.service).to.deep.equal([{ id: `${did}#agent`, type: 'DIDCommMessaging', serviceEndpoint: 'https://doc.example' }]);
      expect((doc.verificationMethod as Json[])[0]!.publicKeyBase58).to.equal(withDoc.fullVerkey);
    });

    it('did:indy without diddocContent or endpoint: the base document only', async () => {
      const did = `did:indy:${NS}:${bare.did}`;
      const a = await get(`/1.0/identifiers/${did}`);
      const doc = a.json.didDocument as Json;
      expect(doc).to.not.have.key('service');
      expect(doc.authentication).to.deep.equal([`${did}#verkey`]);
    });

    it('versionId and versionTime return the older document', async () => {
      const did = `did:indy:${NS}:${owner.did}`;
      for (const q of [`versionId=${ownerFirstSeqNo}`, `versionTime=${encodeURIComponent(new Date(ownerFirstTime * 1000).toISOString())}`]) {
        const a = await get(`/1.0/identifiers/${did}?${q}`);
        expect(a.status, a.text).to.equal(200);
        expect(((a.json.didDocument as Json).verificationMethod as Json[])[0]!.publicKeyBase58, q).to.equal(owner.fullVerkey);
        expect((a.json.didDocumentMetadata as Json).versionId).to.equal(String(ownerFirstSeqNo));
      }
    });

    it('did:sov resolves; notFound, invalidDid and methodNotSupported as the DID Resolution specification names them', async () => {
      const sov = await get(`/1.0/identifiers/did:sov:${owner.did}`);
      expect(sov.status, sov.text).to.equal(200);
      expect((sov.json.didDocument as Json).id).to.equal(`did:sov:${owner.did}`);
      const cases: [string, number, string][] = [
        [`did:indy:${NS}:${DidKey.random().did}`, 404, 'notFound'],
        [`did:indy:other:${owner.did}`, 404, 'notFound'],
        ['did:indy:quire:test:0OIl', 400, 'invalidDid'],
        ['not-a-did', 400, 'invalidDid'],
        [`did:example:${owner.did}`, 501, 'methodNotSupported'],
        [`did:indy:${NS}:${owner.did}?versionId=abc`, 400, 'invalidDid'],
      ];
      for (const [d, status, error] of cases) {
        const a = await get(`/1.0/identifiers/${d}`);
        expect(a.status, `${d}: ${a.text}`).to.equal(status);
        expect((a.json.didResolutionMetadata as Json).error, d).to.equal(error);
        expect(a.json.didDocument).to.equal(null);
      }
    });
  });

  describe('operations', () => {
    it('GET /health, /ready (a verified read), /metrics, /openapi.json, /docs; CORS for the configured origin only', async () => {
      expect((await get('/health')).json).to.deep.equal({ status: 'ok' });
      const ready = await get('/ready');
      expect(ready.status, ready.text).to.equal(200);
      expect(ready.json.status).to.equal('ready');
      expect(ready.headers.get('x-quire-verified')).to.equal('proof');
      const m = await get('/metrics');
      expect(m.status).to.equal(200);
      expect(m.text).to.contain('quire_gateway_http_requests_total{route="/nym/:did",method="GET",status="200"}');
      expect(m.text).to.contain('quire_gateway_pool_request_duration_seconds_bucket');
      expect(m.text).to.contain('quire_gateway_reads_total{verified="proof"}');
      const api = await get('/openapi.json');
      expect(api.json.openapi).to.equal('3.0.3');
      expect(Object.keys(api.json.paths as Json)).to.include.members(['/nym/{did}', '/submit', '/1.0/identifiers/{*}', '/health']);
      const docs = await get('/docs');
      expect(docs.text).to.contain('/nym/{did}');
      const allowed = await get('/health', { headers: { origin: 'https://app.example' } });
      expect(allowed.headers.get('access-control-allow-origin')).to.equal('https://app.example');
      const other = await get('/health', { headers: { origin: 'https://evil.example' } });
      expect(other.headers.get('access-control-allow-origin')).to.equal(null);
    });
  });

  describe('AnonCreds registry (credo-ts-indy-vdr-proxy-client contract, base URL <gateway>/anoncreds)', () => {
    it('schema, credential definition, revocation registry definition: Credo objects for legacy and did:indy ids', async () => {
      const legacySchemaId = `${trustee.did}:2:${schemaName}:1.0`;
      const s = await get(`/anoncreds/schema/${encodeURIComponent(legacySchemaId)}`);
      expect(s.status, s.text).to.equal(200);
      expect(s.headers.get('x-quire-verified')).to.equal('proof');
      expect(s.json).to.deep.equal({
        schema: { attrNames: ['name', 'age'], name: schemaName, version: '1.0', issuerId: trustee.did },
        schemaId: legacySchemaId,
        resolutionMetadata: {},
        schemaMetadata: { didIndyNamespace: NS, indyLedgerSeqNo: schemaSeqNo },
      });
      const indySchemaId = `did:indy:${NS}:${trustee.did}/anoncreds/v0/SCHEMA/${schemaName}/1.0`;
      const si = await get(`/anoncreds/schema/${encodeURIComponent(indySchemaId)}`);
      expect((si.json.schema as Json).issuerId).to.equal(`did:indy:${NS}:${trustee.did}`);

      const cd = await get(`/anoncreds/credential-definition/${encodeURIComponent(credDefId)}`);
      expect(cd.status, cd.text).to.equal(200);
      expect(cd.json.credentialDefinition).to.deep.equal({
        issuerId: trustee.did,
        schemaId: legacySchemaId,
        tag: 'tag1',
        type: 'CL',
        value: { primary: { n: '1', s: '2' }, revocation: { g: '3' } },
      });
      const indyCd = `did:indy:${NS}:${trustee.did}/anoncreds/v0/CLAIM_DEF/${schemaSeqNo}/tag1`;
      const cdi = await get(`/anoncreds/credential-definition/${encodeURIComponent(indyCd)}`);
      expect((cdi.json.credentialDefinition as Json).schemaId).to.equal(indySchemaId);

      const rd = await get(`/anoncreds/revocation-registry-definition/${encodeURIComponent(revRegId)}`);
      expect(rd.status, rd.text).to.equal(200);
      expect(rd.json.revocationRegistryDefinition).to.deep.equal({
        issuerId: trustee.did,
        revocDefType: 'CL_ACCUM',
        value: { maxCredNum: 100, tailsHash: 'tails-hash', tailsLocation: 'https://tails.example', publicKeys: { accumKey: { z: '1' } } },
        tag: 'r1',
        credDefId,
      });
      expect(rd.json.revocationRegistryDefinitionMetadata).to.deep.equal({ issuanceType: 'ISSUANCE_BY_DEFAULT', didIndyNamespace: NS });
      const indyRd = `did:indy:${NS}:${trustee.did}/anoncreds/v0/REV_REG_DEF/${schemaSeqNo}/tag1/r1`;
      const rdi = await get(`/anoncreds/revocation-registry-definition/${encodeURIComponent(indyRd)}`);
      expect((rdi.json.revocationRegistryDefinition as Json).credDefId).to.equal(indyCd);
    });

    it('the revocation status list at two timestamps: the indices revoked by then', async () => {
      const list = async (t: number): Promise<Json> => {
        const a = await get(`/anoncreds/revocation-status-list/${encodeURIComponent(revRegId)}/${t}`);
        expect(a.status, a.text).to.equal(200);
        expect(a.json.resolutionMetadata).to.deep.equal({});
        return a.json.revocationStatusList as Json;
      };
      const revokedAt = (l: Json): number[] => (l.revocationList as number[]).flatMap((v, i) => (v === 1 ? [i] : []));
      const first = await list(entry1Time);
      expect(first).to.include({ issuerId: trustee.did, currentAccumulator: 'accum-1', revRegDefId: revRegId, timestamp: entry1Time });
      expect(first.revocationList).to.have.length(100);
      expect(revokedAt(first)).to.deep.equal([3]);
      const second = await list(entry2Time);
      expect(second).to.include({ currentAccumulator: 'accum-2', timestamp: entry2Time });
      expect(revokedAt(second)).to.deep.equal([3, 5]);
      // before the registry had an entry: notFound, as Credo's registry says it
      const before = await get(`/anoncreds/revocation-status-list/${encodeURIComponent(revRegId)}/${entry1Time - 100_000}`);
      expect(before.status).to.equal(200);
      expect((before.json.resolutionMetadata as Json).error).to.equal('notFound');
    });

    it('a DID (legacy as did:sov, did:indy), unknown objects notFound, malformed ids 400', async () => {
      const d = await get(`/anoncreds/did/${owner.did}`);
      expect(d.status, d.text).to.equal(200);
      expect((d.json.didDocument as Json).id).to.equal(`did:sov:${owner.did}`);
      const di = await get(`/anoncreds/did/${encodeURIComponent(`did:indy:${NS}:${owner.did}`)}`);
      expect((di.json.didDocument as Json).id).to.equal(`did:indy:${NS}:${owner.did}`);
      const nd = await get(`/anoncreds/did/${DidKey.random().did}`);
      expect((nd.json.didResolutionMetadata as Json).error).to.equal('notFound');
      const ns = await get(`/anoncreds/schema/${encodeURIComponent(`${trustee.did}:2:nothing-${uniq()}:1.0`)}`);
      expect(ns.status).to.equal(200);
      expect((ns.json.resolutionMetadata as Json).error).to.equal('notFound');
      const ncd = await get(`/anoncreds/credential-definition/${encodeURIComponent(`${trustee.did}:3:CL:${schemaSeqNo}:nope`)}`);
      expect((ncd.json.resolutionMetadata as Json).error).to.equal('notFound');
      for (const p of [
        '/anoncreds/schema/bad',
        '/anoncreds/credential-definition/bad',
        '/anoncreds/revocation-registry-definition/bad',
        `/anoncreds/revocation-status-list/${encodeURIComponent(revRegId)}/soon`,
      ]) {
        const a = await get(p);
        expect(a.status, p).to.equal(400);
        expect(a.json.code).to.equal('INVALID_PARAMETER');
      }
    });
  });

  // The published npm package itself (not a copy of its calls): its AnonCreds registry and DID resolver, used
  // unchanged inside a Credo agent context (@credo-ts/core 0.5: AgentConfig with Node's fetch, the in-memory cache,
  // Credo's own AnonCredsRegistryService and DidResolverService). The package cannot be a devDependency of this
  // repository: @credo-ts/core 0.5.15 depends on @animo-id/pex 4.1.1-alpha.0, whose preinstall script
  // (`npx only-allow pnpm`) makes `npm ci` fail. So it is opt-in: install it elsewhere
  // (`npm install --ignore-scripts credo-ts-indy-vdr-proxy-client@0.2.4` in a directory of its own) and point
  // QUIRE_CREDO_CLIENT_DIR at that directory.
  describe('credo-ts-indy-vdr-proxy-client, the published package, against the gateway (opt-in: QUIRE_CREDO_CLIENT_DIR)', () => {
    const dir = process.env.QUIRE_CREDO_CLIENT_DIR;
    // the package is CommonJS with no usable types: what the test uses of it and of Credo is typed here
    type Ctor = new (...args: unknown[]) => Record<string, (...args: unknown[]) => Promise<Json>> & Record<string, unknown>;
    let credo: { core: Record<string, Ctor & Record<string, unknown>>; anoncreds: Record<string, Ctor>; client: Record<string, Ctor> };
    let agentContext: unknown;
    let registries: { getRegistryForIdentifier(ctx: unknown, id: string): Record<string, (ctx: unknown, ...a: unknown[]) => Promise<Json>> };
    let dids: { resolve(ctx: unknown, did: string, o?: Json): Promise<Json> };

    before(function () {
      if (dir === undefined || dir === '') {
        console.log('      skipped: QUIRE_CREDO_CLIENT_DIR is not set (a directory where credo-ts-indy-vdr-proxy-client is installed)');
        this.skip();
      }
      const load = createRequire(join(dir, 'package.json'));
      load('reflect-metadata');
      credo = { core: load('@credo-ts/core'), anoncreds: load('@credo-ts/anoncreds'), client: load('credo-ts-indy-vdr-proxy-client') };
      const { core, anoncreds, client } = credo;
      const logger = new core.ConsoleLogger!((core.LogLevel as unknown as Record<string, number>).off);
      const dm = new core.DependencyManager!();
      (dm.registerInstance as unknown as (t: unknown, v: unknown) => void)(
        core.AgentConfig,
        new core.AgentConfig!({ label: 'quire-gateway-test', logger }, { fetch: globalThis.fetch }),
      );
      (dm.registerInstance as unknown as (t: unknown, v: unknown) => void)(
        core.CacheModuleConfig,
        new core.CacheModuleConfig!({ cache: new core.InMemoryLruCache!({ limit: 100 }) }),
      );
      const base = `${url}/anoncreds`;
      (dm.registerInstance as unknown as (t: unknown, v: unknown) => void)(
        anoncreds.AnonCredsModuleConfig,
        new anoncreds.AnonCredsModuleConfig!({ registries: [new client.IndyVdrProxyAnonCredsRegistry!({ proxyBaseUrl: base })] }),
      );
      agentContext = new core.AgentContext!({ dependencyManager: dm, contextCorrelationId: 'quire-gateway-test' });
      registries = new anoncreds.AnonCredsRegistryService!() as unknown as typeof registries;
      dids = new core.DidResolverService!(
        logger,
        new core.DidsModuleConfig!({ resolvers: [new client.IndyVdrProxyDidResolver!({ proxyBaseUrl: base })] }),
        undefined,
      ) as unknown as typeof dids;
    });

    it('resolves a DID, a schema, a credential definition, a revocation registry definition and the status list at two timestamps', async () => {
      const get = (id: string, method: string, ...args: unknown[]): Promise<Json> =>
        registries.getRegistryForIdentifier(agentContext, id)[method]!(agentContext, id, ...args);
      const legacySchemaId = `${trustee.did}:2:${schemaName}:1.0`;
      const schema = await get(legacySchemaId, 'getSchema');
      expect(schema).to.deep.include({
        schemaId: legacySchemaId,
        schema: { attrNames: ['name', 'age'], name: schemaName, version: '1.0', issuerId: trustee.did },
      });
      expect(schema.resolutionMetadata).to.deep.equal({});
      // the package's own cache keeps what the gateway answered
      expect(((await get(legacySchemaId, 'getSchema')).resolutionMetadata as Json).servedFromCache).to.equal(true);
      const indySchemaId = `did:indy:${NS}:${trustee.did}/anoncreds/v0/SCHEMA/${schemaName}/1.0`;
      expect(((await get(indySchemaId, 'getSchema')).schema as Json).issuerId).to.equal(`did:indy:${NS}:${trustee.did}`);

      const cd = await get(credDefId, 'getCredentialDefinition');
      expect(cd.credentialDefinition).to.deep.equal({
        issuerId: trustee.did,
        schemaId: legacySchemaId,
        tag: 'tag1',
        type: 'CL',
        value: { primary: { n: '1', s: '2' }, revocation: { g: '3' } },
      });
      const rd = await get(revRegId, 'getRevocationRegistryDefinition');
      expect((rd.revocationRegistryDefinition as Json).credDefId).to.equal(credDefId);
      expect(rd.revocationRegistryDefinitionMetadata).to.deep.include({ issuanceType: 'ISSUANCE_BY_DEFAULT' });
      const revokedAt = async (t: number): Promise<number[]> => {
        const r = await get(revRegId, 'getRevocationStatusList', t);
        expect(r.resolutionMetadata, JSON.stringify(r)).to.deep.equal({});
        return ((r.revocationStatusList as Json).revocationList as number[]).flatMap((v, i) => (v === 1 ? [i] : []));
      };
      expect(await revokedAt(entry1Time)).to.deep.equal([3]);
      expect(await revokedAt(entry2Time)).to.deep.equal([3, 5]);

      const missing = await get(`${trustee.did}:2:nothing-${uniq()}:1.0`, 'getSchema');
      expect((missing.resolutionMetadata as Json).error).to.equal('notFound');

      for (const did of [`did:sov:${owner.did}`, `did:indy:${NS}:${owner.did}`]) {
        // Credo's resolver service stores a resolved document with toJSON(); the package hands back the gateway's JSON
        // as it came (a plain object), so the service is asked not to store it
        const r = await dids.resolve(agentContext, did, { persistInCache: false });
        expect(r.didResolutionMetadata, JSON.stringify(r)).to.not.have.property('error');
        expect((r.didDocument as Json).id).to.equal(did);
      }
      const unknown = await dids.resolve(agentContext, `did:sov:${DidKey.random().did}`, { persistInCache: false });
      expect((unknown.didResolutionMetadata as Json).error).to.equal('notFound');
    });
  });

  describe('a lying node', () => {
    it("Node1's tampered replies (value, proof) never reach a caller: the gateway asks another node and counts the failure", async () => {
      const enc = new TextEncoder();
      const dec = new TextDecoder();
      // a man in the middle holding Node1's key (so Noise authenticates it as Node1) that forwards to the real Node1
      // and tampers every GET_NYM value and every GET_SCHEMA proof
      const liar = await ClientHost.create({ seed: enc.encode(nodeSeed('Node1')), host: '127.0.0.1', port: 0 });
      const upstream = await connectTo(pool.node('Node1'));
      let tampered = 0;
      let nymTampered = 0;
      liar.on('request', (_client, bytes, respond) => {
        void upstream
          .request(bytes, { timeoutMs: 10_000 })
          .then((answer) => {
            const m = parseJson(dec.decode(answer)) as Json;
            const r = m.result as Json | undefined;
            if (m.op === 'REPLY' && r?.type === '105' && typeof r.data === 'string') {
              r.data = r.data.replace(/"verkey":"[^"]+"/, `"verkey":"${DidKey.random().fullVerkey}"`);
              tampered++;
              nymTampered++;
            } else if (m.op === 'REPLY' && r?.type === '107' && (r.state_proof as Json | undefined)?.root_hash !== undefined) {
              (r.state_proof as Json).root_hash = '11111111111111111111111111111111';
              tampered++;
            }
            respond(enc.encode(stringifyJson(m)));
          })
          .catch(() => undefined);
      });
      const genesis = readFileSync(pool.genesisFile, 'utf8')
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => {
          const t = parseJson(l) as Json;
          const data = ((t.txn as Json).data as Json).data as Json;
          if (data.alias === 'Node1') data.client_port = liar.port;
          return stringifyJson(t);
        })
        .join('\n');
      const liarPool = await SdkPool.fromGenesisText(genesis, { writeTimeoutMs: 30_000 });
      const gw2 = await Gateway.create({ port: 0, namespace: NS }, { pool: liarPool });
      const url2 = await gw2.listen();
      try {
        const schemaId = `${trustee.did}:2:${schemaName}:1.0`;
        for (let i = 0; i < 200 && (nymTampered < 2 || tampered - nymTampered < 2); i++) {
          const nym = await fetch(`${url2}/nym/${owner.did}`);
          const body = parseJson(await nym.text()) as Json;
          expect(nym.status).to.equal(200);
          expect(nym.headers.get('x-quire-nodes')).to.not.equal('Node1');
          expect((parseJson(String((body.result as Json).data)) as Json).verkey).to.equal(rotatedVerkey);
          const schema = await fetch(`${url2}/schema/${schemaId}`);
          expect(schema.status).to.equal(200);
          expect(schema.headers.get('x-quire-nodes')).to.not.equal('Node1');
          expect((((parseJson(await schema.text()) as Json).result as Json).state_proof as Json).root_hash).to.not.equal('11111111111111111111111111111111');
        }
        expect(nymTampered, 'the liar was asked GET_NYM').to.be.at.least(1);
        expect(tampered - nymTampered, 'the liar was asked GET_SCHEMA').to.be.at.least(1);
        const metrics = await (await fetch(`${url2}/metrics`)).text();
        const failures = metrics.split('\n').filter((l) => l.startsWith('quire_gateway_verification_failures_total{'));
        const total = failures.reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
        // every tampered reply the SDK read was refused and counted (one that came after the SDK's per-node deadline
        // counts as a timeout instead)
        expect(total, failures.join('\n')).to.be.within(1, tampered);
        expect(
          failures.every((l) => /code="(PROOF_VALUE_MISMATCH|PROOF_INVALID|MULTISIG_ROOT_MISMATCH)"/.test(l)),
          failures.join('\n'),
        ).to.equal(true);
      } finally {
        await gw2.close();
        await liarPool.close();
        await upstream.close();
        await liar.close();
      }
    });
  });
});
