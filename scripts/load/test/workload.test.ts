import { expect } from 'chai';
import { b58decode, parseJson, signatureInput, type Request } from '@quire/common';
import { ed25519Verify } from '@quire/crypto';
import { DidKey } from '@quire/client';
import { WorkloadError, freshDids, freshIdentity, kindAt, parseMix, prepareWorkload, setupNeeds, setupRequests, standardSubmitters } from '../lib/workload.js';

const dec = new TextDecoder();

function signedBy(r: Request, key: DidKey): boolean {
  return ed25519Verify(key.publicKey, signatureInput(r), b58decode(r.signature!));
}

describe('workload', () => {
  const submitters = standardSubmitters();

  it('uses the standard local trustee and stewards (formats.md 2.3)', () => {
    expect(submitters.map((s) => s.did)).to.deep.equal([
      'V4SGRU86Z58d6TV7PBUe6f',
      'Th7MpTaRZVRYnPiabds81Y',
      'EbP4aYNeTHL6q385GuVpRV',
      '4cU41vWW82ArfxJxHkzXPG',
      'TWwCRQRZ2ZHMJFn9TzLp7W',
    ]);
  });

  it('mixed: 10 NYM, 4 ATTRIB, 2 SCHEMA, 4 GET_NYM per 20, every write signed by its author, payload = the request', async () => {
    const authors = freshDids(3);
    const w = await prepareWorkload({ mix: 'mixed', count: 40, submitters, authors, readTargets: ['VsKV7grR1BUE29mG2Fm2kX'], runTag: 't1' });
    const count = (k: string): number => w.requests.filter((r) => r.kind === k).length;
    expect([count('nym'), count('attrib'), count('schema'), count('read')]).to.deep.equal([20, 8, 4, 8]);
    expect(w.createdDids).to.have.length(20);
    expect(new Set(w.requests.map((r) => String(r.request.reqId))).size).to.equal(40);
    for (const r of w.requests) {
      expect(parseJson(dec.decode(r.payload))).to.deep.equal(r.request);
      const type = r.request.operation.type;
      if (r.kind === 'nym') {
        expect(type).to.equal('1');
        expect(
          signedBy(
            r.request,
            submitters.find((s) => s.did === r.request.identifier)!,
          ),
        ).to.equal(true);
      } else if (r.kind === 'read') {
        expect(type).to.equal('105');
        expect(r.request.signature).to.equal(undefined);
      } else {
        const author = authors.find((a) => a.did === r.request.identifier)!;
        expect(signedBy(r.request, author)).to.equal(true);
        if (r.kind === 'attrib') expect(r.request.operation.dest).to.equal(author.did); // owners write their own ATTRIBs
      }
    }
    // SCHEMA (name, version) pairs never repeat for an author
    const schemas = w.requests.filter((r) => r.kind === 'schema').map((r) => `${r.request.identifier}|${JSON.stringify(r.request.operation.data)}`);
    expect(new Set(schemas).size).to.equal(schemas.length);
  });

  it('setup NYMs give the authors role ENDORSER, signed by trustee/stewards in turn', () => {
    const authors = freshDids(6);
    const s = setupRequests(submitters, authors);
    expect(s.map((r) => r.request.operation.role)).to.deep.equal(Array(6).fill('101'));
    expect(s.map((r) => r.request.identifier)).to.deep.equal([...submitters.map((x) => x.did), submitters[0]!.did]);
    s.forEach((r, i) => expect(signedBy(r.request, submitters[i % 5]!)).to.equal(true));
  });

  it('fresh identities: DID of 16 bytes, abbreviated verkey of 16 bytes, all distinct', () => {
    const ids = Array.from({ length: 50 }, () => freshIdentity());
    for (const id of ids) {
      expect(b58decode(id.did)).to.have.length(16);
      expect(id.verkey.startsWith('~')).to.equal(true);
      expect(b58decode(id.verkey.slice(1))).to.have.length(16);
    }
    expect(new Set(ids.map((i) => i.did)).size).to.equal(50);
  });

  it('knows what each mix needs and refuses what cannot be built, with stable codes', () => {
    expect(setupNeeds('nym', 60_000)).to.deep.equal({ authors: 0, readTargets: 0 });
    expect(setupNeeds('attrib', 100).authors).to.equal(8);
    expect(setupNeeds('schema', 100_000).authors).to.equal(500);
    expect(setupNeeds('read', 10)).to.deep.equal({ authors: 0, readTargets: 64 });
    expect(kindAt('schema', 7)).to.equal('schema');
    expect(() => parseMix('writes'))
      .to.throw(WorkloadError)
      .with.property('code', 'INVALID_MIX');
    expect(() => prepareWorkload({ mix: 'attrib', count: 1, submitters, authors: [], readTargets: [], runTag: 'x' }))
      .to.throw(WorkloadError)
      .with.property('code', 'NO_AUTHORS');
    expect(() => prepareWorkload({ mix: 'read', count: 1, submitters, authors: [], readTargets: [], runTag: 'x' }))
      .to.throw(WorkloadError)
      .with.property('code', 'NO_READ_TARGETS');
    expect(() => prepareWorkload({ mix: 'nym', count: 1, submitters: [], authors: [], readTargets: [], runTag: 'x' }))
      .to.throw(WorkloadError)
      .with.property('code', 'NO_SUBMITTERS');
    expect(() => prepareWorkload({ mix: 'nym', count: -1, submitters, authors: [], readTargets: [], runTag: 'x' }))
      .to.throw(WorkloadError)
      .with.property('code', 'INVALID_COUNT');
  });
});
