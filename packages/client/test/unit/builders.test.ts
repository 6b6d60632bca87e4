import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { b58decode, b58encode, parseJson, signatureInput, stringifyJson, taaDigest, type Request } from '@quire/common';
import { ed25519Verify } from '@quire/crypto';
import { createDefaultRegistry, parseRequest } from '@quire/requests';
import * as client from '../../src/index.js';
import {
  ClientErrorCode,
  DidKey,
  buildTaaAcceptance,
  appendTaaAcceptance,
  endorseRequest,
  multiSignRequest,
  prepareForEndorser,
  signRequest,
} from '../../src/index.js';
import { blsKeys, codeOf, nodeDests } from './fixtures.js';

const identities = (
  parseJson(readFileSync(new URL('../../../../test/vectors/identities.json', import.meta.url), 'utf8')) as { identities: Record<string, string>[] }
).identities;
const trustee = DidKey.fromSeed('000000000000000000000000Trustee1');
const steward = DidKey.fromSeed('000000000000000000000000Steward1');
const registry = createDefaultRegistry();
const DEST = 'VsKV7grR1BUE29mG2Fm2kX';

/** The node's own parse + static validation (REQNACK on failure). */
function nodeAccepts(req: Request): void {
  const parsed = parseRequest(parseJson(stringifyJson(req)));
  const handler = registry.get(parsed.type);
  expect(handler, `handler for ${parsed.type}`).to.not.equal(undefined);
  handler!.validateStatic(parsed);
}

function verifies(req: Request, _did: string, key: DidKey, sig?: string): boolean {
  return ed25519Verify(key.publicKey, signatureInput(req), b58decode(sig ?? req.signature!));
}

describe('DID keys', () => {
  it('match the identities vectors', () => {
    for (const id of identities) {
      for (const seed of [id.seed_ascii!, id.seed_hex!]) {
        const k = DidKey.fromSeed(seed);
        expect(k.did).to.equal(id.did);
        expect(k.verkey).to.equal(id.abbreviated_verkey);
        expect(k.fullVerkey).to.equal(id.verkey_base58);
        expect(k.didIndyV2).to.equal(id.did_indy_v2_id);
      }
    }
    const r = DidKey.random();
    expect(DidKey.fromSeed(r.seedHex).did).to.equal(r.did);
    expect(codeOf(() => DidKey.fromSeed('short'))).to.equal(ClientErrorCode.INVALID_SEED);
  });
});

describe('request builders', () => {
  const base = { submitter: trustee.did };
  const writes: [string, Request][] = [
    ['nym', client.buildNymRequest({ ...base, dest: DEST, verkey: '~CoRER63DVYnWZtK8uAzNbx', role: '101', alias: 'alice' })],
    ['attrib', client.buildAttribRequest({ ...base, dest: DEST, raw: { endpoint: { ha: '127.0.0.1:5555' } } })],
    ['schema', client.buildSchemaRequest({ ...base, name: 'degree', version: '1.0', attrNames: ['name', 'age'] })],
    ['cred-def', client.buildCredDefRequest({ ...base, ref: 12, tag: 'default', data: { primary: { n: '1', s: '2', r: { age: '3' }, rctxt: '4', z: '5' } } })],
    [
      'revoc-reg-def',
      client.buildRevocRegDefRequest({
        ...base,
        credDefId: `${trustee.did}:3:CL:12:default`,
        tag: 'r1',
        value: { issuanceType: 'ISSUANCE_BY_DEFAULT', maxCredNum: 100, publicKeys: { accumKey: { z: '1 0' } }, tailsHash: 'h', tailsLocation: '/tmp/t' },
      }),
    ],
    [
      'revoc-reg-entry',
      client.buildRevocRegEntryRequest({ ...base, revocRegDefId: `${trustee.did}:4:x:CL_ACCUM:r1`, value: { accum: '1 2', revoked: [1, 2] } }),
    ],
    [
      'ctx',
      client.buildRichSchemaRequest({
        ...base,
        kind: 'ctx',
        id: 'did:sov:ctx1',
        content: { '@context': { a: 'https://x.org/a' } },
        rsName: 'c',
        rsVersion: '1.0',
      }),
    ],
    [
      'sch',
      client.buildRichSchemaRequest({
        ...base,
        kind: 'sch',
        id: 'did:sov:sch1',
        content: { '@id': 'did:sov:sch1', '@type': 'rdfs:Class' },
        rsName: 's',
        rsVersion: '1.0',
      }),
    ],
    [
      'node',
      client.buildNodeRequest({
        submitter: steward.did,
        dest: nodeDests[0]!,
        data: {
          alias: 'Node1',
          client_ip: '10.0.0.1',
          client_port: 9702,
          node_ip: '10.0.0.1',
          node_port: 9701,
          services: ['VALIDATOR'],
          blskey: '',
          blskey_pop: '',
        },
      }),
    ],
    ['pool-upgrade', client.buildPoolUpgradeRequest({ ...base, name: 'up', version: '1.2.3', action: 'cancel', sha256: 'a'.repeat(64) })],
    ['pool-config', client.buildPoolConfigRequest({ ...base, writes: false })],
    ['pool-restart', client.buildPoolRestartRequest({ ...base, action: 'start', datetime: '0' })],
    [
      'auth-rule',
      client.buildAuthRuleRequest({
        ...base,
        authType: '1',
        authAction: 'ADD',
        field: 'role',
        newValue: '101',
        constraint: { constraint_id: 'ROLE', role: '0', sig_count: 1, need_to_be_owner: false, metadata: {} },
      }),
    ],
    [
      'auth-rules',
      client.buildAuthRulesRequest({
        ...base,
        rules: [
          {
            authType: '1',
            authAction: 'EDIT',
            field: 'role',
            oldValue: '0',
            newValue: '',
            constraint: { constraint_id: 'ROLE', role: '0', sig_count: 2, need_to_be_owner: false, metadata: {} },
          },
        ],
      }),
    ],
    ['taa', client.buildTxnAuthorAgreementRequest({ ...base, version: '1.0', text: 'agree', ratificationTs: 1_600_000_000 })],
    ['taa-aml', client.buildTxnAuthorAgreementAmlRequest({ ...base, version: '1', aml: { click: 'clicked agree' } })],
  ];
  // BLS fields: a real key and proof of possession
  const nodeOp = writes.find(([n]) => n === 'node')![1].operation as { data: Record<string, unknown> };
  nodeOp.data.blskey = b58encode(blsKeys[0]!.publicKey);
  nodeOp.data.blskey_pop = b58encode(blsKeys[0]!.proofOfPossession());

  for (const [name, req] of writes) {
    it(`${name}: the node's static validation accepts it, and its signature verifies over signatureInput`, () => {
      const signed = signRequest(req, name === 'node' ? steward : trustee);
      nodeAccepts(signed);
      expect(verifies(signed, signed.identifier!, name === 'node' ? steward : trustee)).to.equal(true);
      expect(typeof signed.reqId).to.equal('bigint');
      expect(signed.protocolVersion).to.equal(2);
    });
  }

  const reads: Request[] = [
    client.buildGetNymRequest({ dest: DEST }),
    client.buildGetNymRequest({ dest: DEST, timestamp: 1_700_000_000 }),
    client.buildGetAttribRequest({ dest: DEST, raw: 'endpoint' }),
    client.buildGetSchemaRequest({ dest: DEST, name: 'degree', version: '1.0' }),
    client.buildGetCredDefRequest({ origin: DEST, ref: 12, tag: 'default' }),
    client.buildGetRevocRegDefRequest({ id: `${DEST}:4:x:CL_ACCUM:r1` }),
    client.buildGetRevocRegRequest({ revocRegDefId: `${DEST}:4:x:CL_ACCUM:r1`, timestamp: 1_700_000_000 }),
    client.buildGetRevocRegDeltaRequest({ revocRegDefId: `${DEST}:4:x:CL_ACCUM:r1`, from: 1, to: 1_700_000_000 }),
    client.buildGetAuthRuleRequest({}),
    client.buildGetAuthRuleRequest({ authType: '1', authAction: 'ADD', field: 'role', newValue: '101' }),
    client.buildGetTxnAuthorAgreementRequest({ version: '1.0' }),
    client.buildGetAcceptanceMechanismsRequest({}),
    client.buildGetTxnRequest({ ledgerId: 0, seqNo: 1 }),
    client.buildGetRichSchemaObjectByIdRequest({ id: 'did:sov:sch1' }),
    client.buildGetRichSchemaObjectByMetadataRequest({ rsType: 'sch', rsName: 's', rsVersion: '1.0' }),
  ];
  it('every read type passes the node static validation, unsigned, with the default identifier', () => {
    for (const r of reads) {
      expect(r.identifier).to.equal(client.DEFAULT_READ_IDENTIFIER);
      nodeAccepts(r);
    }
  });

  it('refuses malformed arguments with INVALID_ARGUMENT', () => {
    expect(codeOf(() => client.buildNymRequest({ dest: 'bad!', submitter: trustee.did }))).to.equal(ClientErrorCode.INVALID_ARGUMENT);
    expect(codeOf(() => client.buildNymRequest({ dest: DEST }))).to.equal(ClientErrorCode.INVALID_ARGUMENT);
    expect(codeOf(() => client.buildAttribRequest({ submitter: trustee.did, dest: DEST, raw: '{}', enc: 'x' }))).to.equal(ClientErrorCode.INVALID_ARGUMENT);
    expect(codeOf(() => client.buildGetNymRequest({ dest: DEST, seqNo: 1, timestamp: 2 }))).to.equal(ClientErrorCode.INVALID_ARGUMENT);
    expect(codeOf(() => client.buildGetTxnRequest({ ledgerId: 7, seqNo: 1 }))).to.equal(ClientErrorCode.INVALID_ARGUMENT);
    expect(codeOf(() => client.buildGetTxnRequest({ ledgerId: 999, seqNo: 1 }))).to.equal(ClientErrorCode.INVALID_ARGUMENT);
    expect(codeOf(() => client.buildGetTxnRequest({ ledgerId: 2 ** 31, seqNo: 1 }))).to.equal(ClientErrorCode.INVALID_ARGUMENT);
    // a plugin ledger (ids from 1000)
    expect(client.buildGetTxnRequest({ ledgerId: 1001, seqNo: 1 }).operation).to.deep.equal({ type: '3', ledgerId: 1001, data: 1 });
  });

  it('reqIds are unique, increasing and above 2^53', () => {
    const a = client.nextReqId();
    const b = client.nextReqId();
    expect(b > a).to.equal(true);
    expect(a > 2n ** 53n).to.equal(true);
  });
});

describe('signing', () => {
  const req = client.buildNymRequest({ submitter: trustee.did, dest: DEST, reqId: 1585221529670242337n });

  it('signs the exact signature input of formats 3.2 (reqId above 2^53 intact)', () => {
    const s = signRequest(req, trustee);
    expect(new TextDecoder().decode(signatureInput(s))).to.equal(
      `identifier:${trustee.did}|operation:dest:${DEST}|type:1|protocolVersion:2|reqId:1585221529670242337`,
    );
    expect(verifies(s, trustee.did, trustee)).to.equal(true);
  });

  it('multi-signing moves the single signature into signatures, and the node accepts both', () => {
    const s = multiSignRequest(signRequest(req, trustee), steward);
    expect(s.signature).to.equal(undefined);
    expect(Object.keys(s.signatures!).sort()).to.deep.equal([steward.did, trustee.did].sort());
    expect(verifies(s, trustee.did, trustee, s.signatures![trustee.did])).to.equal(true);
    expect(verifies(s, steward.did, steward, s.signatures![steward.did])).to.equal(true);
    nodeAccepts(s);
  });

  it('endorser flow: the author prepares and signs, the endorser adds its signature', () => {
    const author = DidKey.fromSeed('00000000000000000000000000Author');
    const r = client.buildSchemaRequest({ submitter: author.did, name: 'n', version: '1.0', attrNames: ['a'] });
    const prepared = prepareForEndorser(r, trustee.did, author);
    expect(prepared.endorser).to.equal(trustee.did);
    const endorsed = endorseRequest(prepared, trustee);
    expect(Object.keys(endorsed.signatures!).sort()).to.deep.equal([author.did, trustee.did].sort());
    for (const k of [author, trustee]) expect(verifies(endorsed, k.did, k, endorsed.signatures![k.did])).to.equal(true);
    nodeAccepts(endorsed);
    expect(codeOf(() => endorseRequest(prepared, steward))).to.equal(ClientErrorCode.SIGNER_MISMATCH);
    expect(codeOf(() => prepareForEndorser(signRequest(r, author), trustee.did, author))).to.equal(ClientErrorCode.INVALID_REQUEST);
  });

  it('TAA acceptance: digest of version+text, time rounded to UTC midnight, signed', () => {
    const acc = buildTaaAcceptance({ text: 'text', version: '1.0', mechanism: 'click', time: 1562367600, aml: { version: '1', aml: { click: 'x' } } });
    expect(acc).to.deep.equal({ mechanism: 'click', taaDigest: '392b1cdb2b0e57c8e78a9e379afad82dcf1f83b8b65ae260496f28ee6976be2b', time: 1562284800 });
    expect(acc.taaDigest).to.equal(taaDigest('1.0', 'text'));
    expect(codeOf(() => buildTaaAcceptance({ text: 't', version: '1', mechanism: 'wave', aml: { version: '1', aml: { click: 'x' } } }))).to.equal(
      ClientErrorCode.INVALID_ARGUMENT,
    );
    const signed = signRequest(appendTaaAcceptance(req, acc), trustee);
    expect(new TextDecoder().decode(signatureInput(signed))).to.contain('taaAcceptance:mechanism:click|taaDigest:392b');
    nodeAccepts(signed);
    expect(codeOf(() => appendTaaAcceptance(signed, acc))).to.equal(ClientErrorCode.INVALID_REQUEST);
  });
});
