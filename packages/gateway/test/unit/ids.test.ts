import { expect } from 'chai';
import fc from 'fast-check';
import { parseJson, stringifyJson } from '@quire/common';
import { DidKey } from '@quire/client';
import { expectCode } from '@quire/testing';
import {
  GatewayError,
  GatewayErrorCode,
  expandVerkey,
  indyDidDocument,
  parseCredDefId,
  parseDid,
  parseLedger,
  parseRevRegDefId,
  parseSchemaId,
  prettyJson,
} from '../../src/index.js';

const DID = 'V4SGRU86Z58d6TV7PBUe6f';

describe('identifiers', () => {
  it('DIDs: unqualified, did:sov, did:indy; others refused naming the field', () => {
    expect(parseDid(DID)).to.deep.equal({ id: DID, method: 'unqualified' });
    expect(parseDid(`did:sov:${DID}`)).to.deep.equal({ id: DID, method: 'sov' });
    expect(parseDid(`did:indy:quire:devnet:${DID}`)).to.deep.equal({ id: DID, method: 'indy', namespace: 'quire:devnet' });
    for (const bad of ['', 'x', `did:web:${DID}`, `did:indy:${DID}`, `did:indy:Bad:${DID}`, 'did:sov:0OIl', `did:indy:a::${DID}`])
      expectCode(() => parseDid(bad, 'did'), GatewayError, GatewayErrorCode.INVALID_PARAMETER, { field: 'did' });
  });

  it('schema, cred def and revocation registry ids, legacy and did:indy, map to the same ledger keys', () => {
    expect(parseSchemaId(`${DID}:2:gvt:1.0`)).to.deep.equal({ dest: DID, name: 'gvt', version: '1.0' });
    expect(parseSchemaId(`did:indy:sovrin:${DID}/anoncreds/v0/SCHEMA/gvt/1.0`)).to.deep.include({
      dest: DID,
      name: 'gvt',
      version: '1.0',
      namespace: 'sovrin',
    });
    expect(parseCredDefId(`${DID}:3:CL:12:tag`)).to.deep.equal({ origin: DID, ref: 12, signatureType: 'CL', tag: 'tag' });
    expect(parseCredDefId(`did:indy:sovrin:${DID}/anoncreds/v0/CLAIM_DEF/12/tag`)).to.deep.include({ origin: DID, ref: 12, tag: 'tag' });
    const legacy = `${DID}:4:${DID}:3:CL:12:tag:CL_ACCUM:r1`;
    expect(parseRevRegDefId(legacy).id).to.equal(legacy);
    expect(parseRevRegDefId(`did:indy:sovrin:${DID}/anoncreds/v0/REV_REG_DEF/12/tag/r1`).id).to.equal(legacy);
    expect(parseLedger('DOMAIN')).to.equal(1);
    for (const [f, bad] of [
      [parseSchemaId, `${DID}:2:gvt`],
      [parseSchemaId, `${DID}:3:gvt:1.0`],
      [parseSchemaId, `did:indy:sovrin:${DID}/anoncreds/v0/CLAIM_DEF/gvt/1.0`],
      [parseCredDefId, `${DID}:3:CL:x:tag`],
      [parseCredDefId, `${DID}:3:CL:0:tag`],
      [parseRevRegDefId, `${DID}:4:${DID}:3:CL:12:tag:CL_ACCUM`],
      [parseRevRegDefId, `${DID}:4:${DID}:3:CL:12:tag:OTHER:r1`],
      [parseLedger, 'ledger9'],
    ] as [(s: string, field?: string) => unknown, string][]) {
      expectCode(() => f(bad, 'id'), GatewayError, GatewayErrorCode.INVALID_PARAMETER, { field: 'id' });
    }
  });

  it('a did:indy object id whose segment is not valid percent-encoding is refused with INVALID_PARAMETER', () => {
    for (const [f, id] of [
      [parseSchemaId, `did:indy:sovrin:${DID}/anoncreds/v0/SCHEMA/%E0%A4%A/1.0`],
      [parseCredDefId, `did:indy:sovrin:${DID}/anoncreds/v0/CLAIM_DEF/12/%`],
      [parseRevRegDefId, `did:indy:sovrin:${DID}/anoncreds/v0/REV_REG_DEF/12/tag/%zz`],
    ] as const)
      expectCode(() => f(id, 'id'), GatewayError, GatewayErrorCode.INVALID_PARAMETER, { field: 'id' });
  });

  it('property: any string either parses or is refused with INVALID_PARAMETER (never another error)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 120 }), (s) => {
        for (const f of [parseDid, parseSchemaId, parseCredDefId, parseRevRegDefId, parseLedger]) {
          try {
            f(s, 'x');
          } catch (e) {
            expect(e).to.be.instanceOf(GatewayError);
            expect((e as GatewayError).code).to.equal('INVALID_PARAMETER');
          }
        }
      }),
    );
  });
});

describe('prettyJson', () => {
  it('re-indents without changing the value, big integers exact', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const text = stringifyJson(v);
        expect(stringifyJson(parseJson(prettyJson(text)))).to.equal(text);
      }),
    );
    expect(prettyJson('{"reqId":1700000000123456789,"a":[],"b":{}}')).to.equal('{\n  "reqId": 1700000000123456789,\n  "a": [],\n  "b": {}\n}');
  });
});

describe('did:indy documents', () => {
  const key = DidKey.fromSeed('000000000000000000000000Trustee1');
  const did = `did:indy:sovrin:${key.did}`;

  it('an abbreviated verkey is expanded (as indy-vdr does)', () => {
    expect(expandVerkey(key.did, key.verkey)).to.equal(key.fullVerkey);
  });

  it('the base document of the did:indy specification', () => {
    expect(indyDidDocument({ did, id: key.did, verkey: key.verkey })).to.deep.equal({
      '@context': ['https://www.w3.org/ns/did/v1', 'https://w3id.org/security/suites/ed25519-2018/v1'],
      id: did,
      verificationMethod: [{ id: `${did}#verkey`, type: 'Ed25519VerificationKey2018', controller: did, publicKeyBase58: key.fullVerkey }],
      authentication: [`${did}#verkey`],
    });
  });

  it('diddocContent is merged (verificationMethod and authentication appended); the endpoint is then ignored', () => {
    const extra = { id: `${did}#x25519`, type: 'X25519KeyAgreementKey2019', controller: did, publicKeyBase58: 'abc' };
    const doc = indyDidDocument({
      did,
      id: key.did,
      verkey: key.fullVerkey,
      diddocContent: { verificationMethod: [extra], keyAgreement: [`${did}#x25519`] },
      endpoint: { endpoint: 'https://x' },
    });
    expect(doc.verificationMethod).to.have.length(2);
    expect(doc.keyAgreement).to.deep.equal([`${did}#x25519`]);
    expect(doc).to.not.have.key('service');
  });

  it('a legacy endpoint becomes the did-communication service with the verkey as recipient', () => {
    const doc = indyDidDocument({
      did,
      id: key.did,
      verkey: key.fullVerkey,
      endpoint: { endpoint: 'https://agent.example', routingKeys: ['rk'], types: ['endpoint', 'did-communication', 'DIDComm'] },
    });
    expect(doc.service).to.deep.equal([
      { id: `${did}#endpoint`, type: 'endpoint', serviceEndpoint: 'https://agent.example' },
      {
        id: `${did}#did-communication`,
        type: 'did-communication',
        priority: 0,
        recipientKeys: [`${did}#verkey`],
        routingKeys: ['rk'],
        accept: ['didcomm/aip2;env=rfc19'],
        serviceEndpoint: 'https://agent.example',
      },
      { id: `${did}#didcomm-1`, type: 'DIDCommMessaging', serviceEndpoint: { uri: 'https://agent.example', routingKeys: ['rk'], accept: ['didcomm/v2'] } },
    ]);
  });
});
