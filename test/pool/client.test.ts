// Whole-pool acceptance of the client: the SDK of @quire/client and the `quire` CLI (run as a child
// process, as a user runs it) against four real quire-node processes. One pool for the file; the
// scenarios that change the rules for every later write (AUTH_RULE with several signatures, the
// transaction author agreement) come last. On a failure every node's log tail is printed.
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { parseJson, stringifyJson, type Request } from '@quire/common';
import {
  ClientError,
  DidKey,
  appendTaaAcceptance,
  buildAttribRequest,
  buildAuthRuleRequest,
  buildAuthRulesRequest,
  buildCredDefRequest,
  buildGetAcceptanceMechanismsRequest,
  buildGetAttribRequest,
  buildGetAuthRuleRequest,
  buildGetCredDefRequest,
  buildGetNymRequest,
  buildGetRevocRegDefRequest,
  buildGetRevocRegDeltaRequest,
  buildGetRevocRegRequest,
  buildGetRichSchemaObjectByIdRequest,
  buildGetRichSchemaObjectByMetadataRequest,
  buildGetSchemaRequest,
  buildGetTxnAuthorAgreementRequest,
  buildGetTxnRequest,
  buildNymRequest,
  buildPoolConfigRequest,
  buildPoolUpgradeRequest,
  buildRevocRegDefRequest,
  buildRevocRegEntryRequest,
  buildRichSchemaRequest,
  buildSchemaRequest,
  buildTaaAcceptance,
  buildTxnAuthorAgreementAmlRequest,
  buildTxnAuthorAgreementRequest,
  endorseRequest,
  fetchTaa,
  nextReqId,
  multiSignRequest,
  prepareForEndorser,
  revocRegDefId,
  signRequest,
  type Pool,
  type RichSchemaKind,
} from '@quire/client';
import { TRUSTEE_SEED } from '../../devnet/lib/node-api.js';
import { quireOk, rawSignedRequest, runQuire } from '../support/client.js';
import { TestPool } from '../support/test-pool.js';
import { inParallel, secs, waitFor } from '../support/wait.js';

const trustee = DidKey.fromSeed(TRUSTEE_SEED);
const uniq = (): string => `${Date.now().toString(36)}${Math.floor(Math.random() * 1e6).toString(36)}`;
const sha256hex = (s: string): string => createHash('sha256').update(s).digest('hex');

type Json = Record<string, unknown>;

const ENCODING = {
  input: { id: 'DateRFC3339', type: 'string' },
  output: { id: 'UnixTime', type: 'integer' },
  algorithm: { description: 'date to unix time', documentation: 'https://example.org/doc', implementation: 'https://example.org/impl' },
  testVectors: 'https://example.org/tv',
};

/** The six rich schema objects, each referring to the ones before it. */
function richObjects(tag: string): { kind: RichSchemaKind; cli: string; id: string; content: Json }[] {
  const id = (k: string): string => `did:sov:${k}${tag}`;
  return [
    { kind: 'ctx', cli: 'json-ld-context', id: id('ctx'), content: { '@context': { name: 'https://schema.org/name' } } },
    { kind: 'sch', cli: 'rich-schema', id: id('sch'), content: { '@id': id('sch'), '@type': 'rdfs:Class', '@context': { x: 'https://x.org' } } },
    { kind: 'enc', cli: 'rich-schema-encoding', id: id('enc'), content: ENCODING },
    {
      kind: 'map',
      cli: 'rich-schema-mapping',
      id: id('map'),
      content: {
        '@id': id('map'),
        '@type': 'rdfs:Class',
        schema: id('sch'),
        attributes: { issuer: [{ enc: id('enc'), rank: 1 }], issuanceDate: [{ enc: id('enc'), rank: 2 }] },
      },
    },
    {
      kind: 'cdf',
      cli: 'rich-schema-cred-def',
      id: id('cdf'),
      content: { signatureType: 'CL', mapping: id('map'), schema: id('sch'), publicKey: { primary: { n: '1' } } },
    },
    { kind: 'pdf', cli: 'rich-schema-pres-def', id: id('pdf'), content: { '@id': id('pdf'), '@type': 'PresentationDefinition' } },
  ];
}

function seqNoOf(result: Json): number {
  return (result.txnMetadata as { seqNo: number }).seqNo;
}

function txnTimeOf(result: Json): number {
  return (result.txnMetadata as { txnTime: number }).txnTime;
}

/** The value a verified read returned in `data` (JSON text parsed; objects as they are). */
function dataOf(result: Json): unknown {
  const d = result.data;
  return typeof d === 'string' && (d.startsWith('{') || d.startsWith('[')) ? parseJson(d) : d;
}

describe('whole pool: client acceptance (SDK and quire CLI)', function () {
  this.timeout(120_000);
  let pool: TestPool;
  let client: Pool;
  let dir: string;
  let fileStarted = 0;

  /** `quire --genesis <pool> <args>`; exit 0 required. */
  const cli = (args: string[]): Promise<string> => quireOk(['--genesis', pool.genesisFile, ...args]);
  const asTrustee = (args: string[]): Promise<string> => cli(['--seed', TRUSTEE_SEED, ...args]);

  async function write(req: Request, key: DidKey = trustee): Promise<Json> {
    return (await client.submitWrite(signRequest(req, key))).result;
  }

  /**
   * A read of something this test wrote, that must be verified by state proof and multi-signature
   * (or by audit path for GET_TXN). A node that got the last batch by catch-up holds no
   * multi-signature for its new roots until the ledger's next batch (consensus.md 3.8), and the SDK
   * then falls back to f+1 identical answers (verified: false); a write is acknowledged by f+1
   * nodes, so the node asked may not have ordered it yet and prove its absence (data null). Either
   * way the read is asked again until a verified answer with data comes, within two freshness
   * intervals, and each retry is printed.
   */
  async function verifiedRead(req: Request): Promise<Json> {
    const r = await waitFor(
      `a verified answer to a read of type ${String(req.operation.type)}`,
      async () => {
        const out = await client.submitRead({ ...req, reqId: nextReqId() });
        if (!out.verified) console.log(`      [read] type ${String(req.operation.type)} answered without proof by ${out.nodes.join(', ')}; asking again`);
        else if (out.result.data === null)
          console.log(`      [read] type ${String(req.operation.type)}: ${out.nodes.join(', ')} proved it absent (not ordered there yet); asking again`);
        return out.verified && out.result.data !== null ? out : undefined;
      },
      45_000,
      1000,
    );
    return r.result;
  }

  /** GET_TXN of a committed write: verified by its audit path against a signed txn root. */
  async function readTxnBack(ledgerId: number, result: Json): Promise<void> {
    const got = await verifiedRead(buildGetTxnRequest({ ledgerId, seqNo: seqNoOf(result) }));
    expect(stringifyJson((got.data as Json).txn)).to.equal(stringifyJson(result.txn));
  }

  before(async function () {
    this.timeout(150_000);
    fileStarted = Date.now();
    pool = await TestPool.start({ name: 'client-acceptance', orderingTimeoutMs: 120_000, config: { consensus: { stateFreshnessUpdateIntervalSec: 20 } } });
    client = await pool.client();
    dir = pool.dir;
    console.log(`      [timing] pool ordering ${secs(pool.startMs)} after spawn (${TestPool.binDescription()})`);
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed') pool?.dumpLogs(`failed: ${this.currentTest.fullTitle()}`);
  });

  after(async () => {
    await pool?.close();
    console.log(`      [timing] client acceptance file: ${secs(Date.now() - fileStarted)} wall time`);
  });

  describe('SDK', () => {
    it('NYM and ATTRIB (raw, hash, enc) are read back with verified proofs', async () => {
      const owner = DidKey.random();
      const nym = await write(buildNymRequest({ submitter: trustee.did, dest: owner.did, verkey: owner.verkey, alias: 'owner' }));
      const gotNym = await verifiedRead(buildGetNymRequest({ dest: owner.did }));
      expect(dataOf(gotNym)).to.include({ dest: owner.did, verkey: owner.verkey, identifier: trustee.did });
      expect(gotNym.seqNo).to.equal(seqNoOf(nym));
      await readTxnBack(1, nym);

      const raw = await write(buildAttribRequest({ submitter: owner.did, dest: owner.did, raw: { endpoint: { ha: '127.0.0.1:5555' } } }), owner);
      const hash = sha256hex('a secret attribute');
      await write(buildAttribRequest({ submitter: owner.did, dest: owner.did, hash }), owner);
      await write(buildAttribRequest({ submitter: owner.did, dest: owner.did, enc: 'ciphertext-of-an-attribute' }), owner);
      expect(parseJson(String((await verifiedRead(buildGetAttribRequest({ dest: owner.did, raw: 'endpoint' }))).data))).to.deep.equal({
        endpoint: { ha: '127.0.0.1:5555' },
      });
      expect((await verifiedRead(buildGetAttribRequest({ dest: owner.did, hash }))).data).to.equal(hash);
      expect((await verifiedRead(buildGetAttribRequest({ dest: owner.did, enc: 'ciphertext-of-an-attribute' }))).data).to.equal('ciphertext-of-an-attribute');
      await readTxnBack(1, raw);
    });

    it('SCHEMA, CLAIM_DEF, REVOC_REG_DEF and REVOC_REG_ENTRY are read back with verified proofs', async () => {
      const name = `schema-${uniq()}`;
      const schema = await write(buildSchemaRequest({ submitter: trustee.did, name, version: '1.0', attrNames: ['name', 'age'] }));
      const gotSchema = await verifiedRead(buildGetSchemaRequest({ dest: trustee.did, name, version: '1.0' }));
      expect((gotSchema.data as Json).attr_names).to.have.members(['name', 'age']);
      const ref = seqNoOf(schema);

      await write(buildCredDefRequest({ submitter: trustee.did, ref, tag: 'tag1', data: { primary: { n: '1', s: '2' }, revocation: { g: '3' } } }));
      const gotCd = await verifiedRead(buildGetCredDefRequest({ origin: trustee.did, ref, tag: 'tag1' }));
      expect(gotCd.data).to.deep.equal({ primary: { n: '1', s: '2' }, revocation: { g: '3' } });

      const credDefId = `${trustee.did}:3:CL:${ref}:tag1`;
      const defId = revocRegDefId(trustee.did, credDefId, 'r1');
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
      expect(((await verifiedRead(buildGetRevocRegDefRequest({ id: defId }))).data as Json).id).to.equal(defId);
      const entry = await write(buildRevocRegEntryRequest({ submitter: trustee.did, revocRegDefId: defId, value: { accum: 'accum-1', revoked: [3] } }));
      const at = txnTimeOf(entry);
      expect(((await verifiedRead(buildGetRevocRegRequest({ revocRegDefId: defId, timestamp: at }))).data as Json).value).to.deep.include({ accum: 'accum-1' });
      const delta = await verifiedRead(buildGetRevocRegDeltaRequest({ revocRegDefId: defId, to: at }));
      expect(stringifyJson(delta.data)).to.contain('accum-1');
    });

    it('the six rich schema objects are read back by id and by metadata with verified proofs', async () => {
      for (const o of richObjects(uniq())) {
        await write(buildRichSchemaRequest({ submitter: trustee.did, kind: o.kind, id: o.id, content: o.content, rsName: `${o.kind}-name`, rsVersion: '1.0' }));
        const byId = await verifiedRead(buildGetRichSchemaObjectByIdRequest({ id: o.id }));
        expect(parseJson(String((byId.data as Json).content))).to.deep.equal(o.content);
        const byMeta = await verifiedRead(buildGetRichSchemaObjectByMetadataRequest({ rsType: o.kind, rsName: `${o.kind}-name`, rsVersion: '1.0' }));
        expect((byMeta.data as Json).id).to.equal(o.id);
      }
    });

    it('POOL_CONFIG, AUTH_RULE and AUTH_RULES on the config ledger, read back with verified proofs', async () => {
      const cfg = await write(buildPoolConfigRequest({ submitter: trustee.did, writes: true, force: false }));
      await readTxnBack(2, cfg);
      // the default rule for a new SCHEMA, written explicitly (same constraint: 1 TRUSTEE, STEWARD or ENDORSER)
      const anyOf = (roles: string[]): Json => ({
        constraint_id: 'OR',
        auth_constraints: roles.map((role) => ({ constraint_id: 'ROLE', role, sig_count: 1, need_to_be_owner: false, metadata: {} })),
      });
      const rule = await write(
        buildAuthRuleRequest({ submitter: trustee.did, authType: '101', authAction: 'ADD', field: '*', newValue: '*', constraint: anyOf(['0', '2', '101']) }),
      );
      await readTxnBack(2, rule);
      const got = await verifiedRead(buildGetAuthRuleRequest({ authType: '101', authAction: 'ADD', field: '*', newValue: '*' }));
      expect(stringifyJson(got.data)).to.contain('"sig_count":1');
      const rules = await write(
        buildAuthRulesRequest({
          submitter: trustee.did,
          rules: [
            { authType: '101', authAction: 'ADD', field: '*', newValue: '*', constraint: anyOf(['0', '2', '101']) },
            { authType: '102', authAction: 'ADD', field: '*', newValue: '*', constraint: anyOf(['0', '2', '101']) },
          ],
        }),
      );
      await readTxnBack(2, rules);
      await verifiedRead(buildGetAuthRuleRequest({ authType: '102', authAction: 'ADD', field: '*', newValue: '*' }));
    });

    it('POOL_UPGRADE scheduled far ahead, then cancelled', async () => {
      const at = (days: number): string => new Date(Date.now() + days * 86_400_000).toISOString().replace(/\.\d+Z$/, '+00:00');
      const schedule = Object.fromEntries(pool.nodes.map((n, i) => [n.dest, at(30 + i)]));
      const sha256 = sha256hex('quire-node 9.9.9');
      const start = await write(
        buildPoolUpgradeRequest({ submitter: trustee.did, name: 'far-ahead', version: '9.9.9', action: 'start', sha256, schedule, timeout: 10 }),
      );
      await readTxnBack(2, start);
      const cancel = await write(buildPoolUpgradeRequest({ submitter: trustee.did, name: 'far-ahead', version: '9.9.9', action: 'cancel', sha256 }));
      await readTxnBack(2, cancel);
    });
  });

  describe('quire CLI', () => {
    it('every write type but NODE and TAA (written in their own scenarios), each read back verified', async function () {
      this.timeout(240_000);
      // independent writes run as parallel processes, in waves that respect their references
      const owner = DidKey.random();
      const tag = uniq();
      const name = `cli-schema-${tag}`;
      const rich = new Map(richObjects(tag).map((o) => [o.kind, o]));
      const richArgs = (k: RichSchemaKind): string[] => {
        const o = rich.get(k)!;
        return ['--json', o.cli, '--id', o.id, '--content', stringifyJson(o.content), '--name', `${k}-cli`, '--version', '1.0'];
      };
      const constraint = '{"constraint_id":"ROLE","role":"0","sig_count":1,"need_to_be_owner":false,"metadata":{}}';
      const rulesFile = join(dir, `rules-${tag}.json`);
      writeFileSync(rulesFile, stringifyJson([{ auth_type: '113', auth_action: 'ADD', field: '*', new_value: '*', constraint: parseJson(constraint) }]));
      const schedule = stringifyJson(
        Object.fromEntries(pool.nodes.map((n, i) => [n.dest, new Date(Date.now() + (40 + i) * 86_400_000).toISOString().replace(/\.\d+Z$/, '+00:00')])),
      );
      const sha = sha256hex('quire-node 8.8.8');
      const json = (out: string): Json => parseJson(out) as Json;

      const wave1 = (
        await inParallel([
          () => asTrustee(['--json', 'nym', '--dest', owner.did, '--verkey', owner.verkey]),
          () => asTrustee(['--json', 'schema', '--name', name, '--version', '2.0', '--attrs', 'a,b,c']),
          () => asTrustee(richArgs('ctx')),
          () => asTrustee(richArgs('sch')),
          () => asTrustee(richArgs('enc')),
          () => asTrustee(['--json', 'pool-config', '--writes', 'true']),
          () => asTrustee(['--json', 'auth-rule', '--txn-type', '113', '--action', 'ADD', '--field', '*', '--new-value', '*', '--constraint', constraint]),
          () => asTrustee(['--json', 'taa-aml', '--version', `cli-aml-${tag}`, '--aml', '{"cli_click":"clicked in the CLI"}']),
          () =>
            asTrustee([
              '--json',
              'pool-upgrade',
              '--name',
              `cli-${tag}`,
              '--version',
              '8.8.8',
              '--action',
              'start',
              '--sha256',
              sha,
              '--schedule',
              schedule,
              '--upgrade-timeout',
              '10',
            ]),
        ])
      ).map(json);
      const ref = seqNoOf(wave1[1]!);
      const credDefId = `${trustee.did}:3:CL:${ref}:cli`;
      const defId = revocRegDefId(trustee.did, credDefId, 'r');
      const wave2 = (
        await inParallel([
          () => cli(['--json', '--seed', owner.seedHex, 'attrib', '--dest', owner.did, '--raw', '{"url":"https://owner.example"}']),
          () => asTrustee(['--json', 'cred-def', '--ref', String(ref), '--tag', 'cli', '--primary', '{"n":"7"}', '--revocation', '{"g":"8"}']),
          () => asTrustee(richArgs('map')),
          () => asTrustee(['--json', 'auth-rules', '--rules', `@${rulesFile}`]),
          () => asTrustee(['--json', 'pool-upgrade', '--name', `cli-${tag}`, '--version', '8.8.8', '--action', 'cancel', '--sha256', sha]),
        ])
      ).map(json);
      const wave3 = (
        await inParallel([
          () =>
            asTrustee([
              '--json',
              'revoc-reg-def',
              '--cred-def-id',
              credDefId,
              '--tag',
              'r',
              '--max-cred-num',
              '10',
              '--public-keys',
              '{"accumKey":{"z":"2"}}',
              '--tails-hash',
              'th',
              '--tails-location',
              'https://t.example',
            ]),
          () => asTrustee(richArgs('cdf')),
          () => asTrustee(richArgs('pdf')),
        ])
      ).map(json);
      const entry = json(await asTrustee(['--json', 'revoc-reg-entry', '--revoc-reg-def-id', defId, '--accum', 'cli-accum', '--issued', '1,2']));

      // every committed txn read back by GET_TXN, verified by its audit path against a signed root
      const ledgerOf = (r: Json): number => (['111', '109', '120', '122', '5', '110'].includes(String((r.txn as Json).type)) ? 2 : 1);
      for (const r of [...wave1, ...wave2, ...wave3, entry]) await readTxnBack(ledgerOf(r), r);
      // and the state each write made, by the reads of the CLI (in parallel), each verified by state proof
      const reads = await inParallel([
        () => cli(['get-nym', '--dest', owner.did]),
        () => cli(['get-attrib', '--dest', owner.did, '--raw', 'url']),
        () => cli(['get-schema', '--dest', trustee.did, '--name', name, '--version', '2.0']),
        () => cli(['get-cred-def', '--origin', trustee.did, '--ref', String(ref), '--tag', 'cli']),
        () => cli(['get-revoc-reg-def', '--id', defId]),
        () => cli(['get-revoc-reg', '--id', defId, '--timestamp', String(txnTimeOf(entry))]),
        () => cli(['get-revoc-reg-delta', '--id', defId, '--to', String(txnTimeOf(entry))]),
        () => cli(['get-rich-schema', '--rs-type', 'map', '--rs-name', 'map-cli', '--rs-version', '1.0']),
        () => cli(['get-auth-rule', '--txn-type', '113', '--action', 'ADD', '--field', '*', '--new-value', '*']),
        () => cli(['get-taa-aml', '--version', `cli-aml-${tag}`]),
      ]);
      const expected = [
        owner.did,
        'https://owner.example',
        '"c"',
        '"n": "7"',
        defId,
        'cli-accum',
        'cli-accum',
        rich.get('map')!.id,
        '"sig_count": 1',
        'cli_click',
      ];
      reads.forEach((out, i) => {
        expect(out, `CLI read ${i}`).to.contain(expected[i]);
        expect(out, `CLI read ${i}`).to.contain('verified by state proof');
      });
      for (const o of rich.values()) expect(stringifyJson((await verifiedRead(buildGetRichSchemaObjectByIdRequest({ id: o.id }))).data)).to.contain(o.id);
    });

    it('a pre-signed request built outside the SDK is accepted by `quire submit`', async () => {
      const target = DidKey.random();
      const req = rawSignedRequest(TRUSTEE_SEED, { type: '1', dest: target.did, verkey: target.verkey }, Date.now());
      const file = join(dir, `presigned-${uniq()}.json`);
      // written as the other tool would: its own key order and spacing, sent verbatim
      writeFileSync(file, JSON.stringify(req, null, 1));
      const out = parseJson(await cli(['--json', 'submit', '--request-file', file])) as Json;
      expect(((out.txn as Json).data as Json).dest).to.equal(target.did);
      expect(dataOf(await verifiedRead(buildGetNymRequest({ dest: target.did })))).to.include({ verkey: target.verkey });
    });
  });

  describe('changes to the rules of later writes (run last)', () => {
    it('the endorser flow: an author without a role writes a SCHEMA endorsed by an ENDORSER (SDK and CLI)', async () => {
      const endorser = DidKey.random();
      const author = DidKey.random();
      await write(buildNymRequest({ submitter: trustee.did, dest: endorser.did, verkey: endorser.verkey, role: '101' }));
      await write(buildNymRequest({ submitter: trustee.did, dest: author.did, verkey: author.verkey }));
      // alone, the author may not
      let refused: unknown;
      await write(buildSchemaRequest({ submitter: author.did, name: `alone-${uniq()}`, version: '1.0', attrNames: ['x'] }), author).catch(
        (e: unknown) => (refused = e),
      );
      expect(refused, 'a schema by an author without a role').to.be.instanceOf(ClientError);
      // SDK: the author signs with the endorser named, the endorser adds its signature
      const name = `endorsed-${uniq()}`;
      const req = endorseRequest(
        prepareForEndorser(buildSchemaRequest({ submitter: author.did, name, version: '1.0', attrNames: ['x'] }), endorser.did, author),
        endorser,
      );
      const w = await client.submitWrite(req);
      expect((w.result.txn as Json).metadata).to.include({ from: author.did, endorser: endorser.did });
      expect((await verifiedRead(buildGetSchemaRequest({ dest: author.did, name, version: '1.0' }))).data).to.not.equal(null);
      // CLI: author prints the request for the endorser, who signs and submits it
      const cliName = `cli-endorsed-${uniq()}`;
      const forEndorser = await cli(['--seed', author.seedHex, '--endorser', endorser.did, 'schema', '--name', cliName, '--version', '1.0', '--attrs', 'y']);
      const reqFile = join(dir, `endorse-${uniq()}.json`);
      writeFileSync(reqFile, forEndorser);
      const signedByBoth = await cli(['--seed', endorser.seedHex, 'sign', '--request-file', reqFile]);
      const signedFile = join(dir, `endorsed-${uniq()}.json`);
      writeFileSync(signedFile, signedByBoth);
      await cli(['submit', '--request-file', signedFile]);
      expect(await cli(['get-schema', '--dest', author.did, '--name', cliName, '--version', '1.0'])).to.contain('verified by');
    });

    it('an AUTH_RULE change that needs several trustee signatures', async () => {
      const t2 = DidKey.random();
      const t3 = DidKey.random();
      await write(buildNymRequest({ submitter: trustee.did, dest: t2.did, verkey: t2.verkey, role: '0' }));
      await write(buildNymRequest({ submitter: trustee.did, dest: t3.did, verkey: t3.verkey, role: '0' }));
      const trustees = (n: number): Json => ({ constraint_id: 'ROLE', role: '0', sig_count: n, need_to_be_owner: false, metadata: {} });
      // from now on, changing a rule takes two trustees
      await write(
        buildAuthRuleRequest({
          submitter: trustee.did,
          authType: '120',
          authAction: 'EDIT',
          field: '*',
          oldValue: '*',
          newValue: '*',
          constraint: trustees(2),
        }),
      );
      const got = await verifiedRead(buildGetAuthRuleRequest({ authType: '120', authAction: 'EDIT', field: '*', oldValue: '*', newValue: '*' }));
      expect(stringifyJson(got.data)).to.contain('"sig_count":2');
      const change = (): Request =>
        buildAuthRuleRequest({ submitter: trustee.did, authType: '1', authAction: 'ADD', field: 'role', newValue: '101', constraint: trustees(1) });
      let refused: unknown;
      await client.submitWrite(signRequest(change(), trustee)).catch((e: unknown) => (refused = e));
      expect(refused, 'one trustee signature').to.be.instanceOf(ClientError);
      expect(String((refused as ClientError).data.reason)).to.match(/Not enough TRUSTEE signatures/);
      // two trustees (the author and Trustee2) through the SDK
      const both = multiSignRequest(multiSignRequest(change(), trustee), t2);
      await client.submitWrite(both);
      // and through the CLI: Trustee1 signs (--multi), Trustee3 adds a signature, then submit; the rule goes back to one trustee
      const back = buildAuthRuleRequest({
        submitter: trustee.did,
        authType: '120',
        authAction: 'EDIT',
        field: '*',
        oldValue: '*',
        newValue: '*',
        constraint: trustees(1),
      });
      const f0 = join(dir, `rule-${uniq()}.json`);
      writeFileSync(f0, stringifyJson(back));
      const f1 = join(dir, `rule1-${uniq()}.json`);
      writeFileSync(f1, await asTrustee(['sign', '--multi', '--request-file', f0]));
      const f2 = join(dir, `rule2-${uniq()}.json`);
      writeFileSync(f2, await cli(['--seed', t3.seedHex, 'sign', '--multi', '--request-file', f1]));
      await cli(['submit', '--request-file', f2]);
      expect(
        stringifyJson((await verifiedRead(buildGetAuthRuleRequest({ authType: '120', authAction: 'EDIT', field: '*', oldValue: '*', newValue: '*' }))).data),
      ).to.contain('"sig_count":1');
    });

    it('the TAA flow end to end: AML, agreement, writes refused without acceptance and accepted with it (SDK and CLI), then disabled', async () => {
      const version = `taa-${uniq()}`;
      const text = 'Quire test agreement: be excellent to each other.';
      await write(
        buildTxnAuthorAgreementAmlRequest({
          submitter: trustee.did,
          version: `aml-${version}`,
          aml: { click_agreement: 'clicked', on_file: 'on file' },
          amlContext: 'https://example.org/aml',
        }),
      );
      const aml = await verifiedRead(buildGetAcceptanceMechanismsRequest({}));
      expect(stringifyJson(aml.data)).to.contain('click_agreement');
      await write(buildTxnAuthorAgreementRequest({ submitter: trustee.did, version, text, ratificationTs: Math.floor(Date.now() / 1000) - 60 }));
      const taa = await verifiedRead(buildGetTxnAuthorAgreementRequest({}));
      expect(taa.data).to.deep.include({ version, text, digest: sha256hex(version + text) });

      // without acceptance: refused with the ledger's reason
      let refused: unknown;
      await write(buildNymRequest({ submitter: trustee.did, dest: DidKey.random().did })).catch((e: unknown) => (refused = e));
      expect(refused).to.be.instanceOf(ClientError);
      expect(String((refused as ClientError).data.reason)).to.contain('Txn Author Agreement acceptance is required');
      // the CLI says so too, exit code 1
      const denied = await runQuire(['--genesis', pool.genesisFile, '--seed', TRUSTEE_SEED, 'nym', '--dest', DidKey.random().did]);
      expect(denied.code).to.equal(1);
      expect(denied.stderr).to.contain('Txn Author Agreement acceptance is required');

      // SDK: fetch the agreement (verified), accept it, sign
      const fetched = await fetchTaa(client);
      expect(fetched.verified).to.equal(true);
      const acceptance = buildTaaAcceptance({ text: fetched.taa!.text, version: fetched.taa!.version, mechanism: 'click_agreement', aml: fetched.aml! });
      const accepted = await write(appendTaaAcceptance(buildNymRequest({ submitter: trustee.did, dest: DidKey.random().did }), acceptance));
      expect(stringifyJson(accepted.txn)).to.contain(sha256hex(version + text));
      // CLI: --taa-mechanism
      await asTrustee(['--taa-mechanism', 'on_file', 'nym', '--dest', DidKey.random().did]);
      // config-ledger writes never need it
      await write(buildPoolConfigRequest({ submitter: trustee.did, writes: true }));

      // an agreement with an empty text disables acceptance again
      await write(buildTxnAuthorAgreementRequest({ submitter: trustee.did, version: `${version}-off`, text: '' }));
      await write(buildNymRequest({ submitter: trustee.did, dest: DidKey.random().did }));
    });
  });
});
