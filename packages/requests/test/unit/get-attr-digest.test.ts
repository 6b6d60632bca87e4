// Request digests of GET_ATTR (formats.md 3.3): indy-node hashes `raw` / `enc` / `hash` inside the digests of
// ATTRIB writes only (indy_common/types.py); a GET_ATTR's digest and payloadDigest cover the attribute
// name, the enc text or the hash as sent. The signature input keeps the rule for both types (indy-vdr).
import { requestDigests, sha256Hex, signatureInputString, signingSerialization, type DigestableRequest } from '@quire/common';
import { Ed25519Signer } from '@quire/crypto';
import { expect } from 'chai';
import fc from 'fast-check';
import { parseRequest } from '../../src/pipeline/parse.js';

const READ = { reqId: 1795703067563113080n, identifier: 'LibindyDid111111111111', protocolVersion: 2 };
const DEST = 'RfoA7oboFMiFuJPEtPdvKP';
const SIGNER = Ed25519Signer.fromSeed('000000000000000000000000Trustee1');
const OTHER = Ed25519Signer.fromSeed('000000000000000000000000Steward1');

/** Indy's digests of a request whose operation is not an ATTRIB: SHA-256 of SER with nothing replaced. */
function indyDigests(req: Record<string, unknown>): { digest: string; payloadDigest: string } {
  const payload: Record<string, unknown> = { identifier: req.identifier, reqId: req.reqId, operation: req.operation, protocolVersion: req.protocolVersion };
  const full: Record<string, unknown> = { ...payload };
  if (req.signatures !== undefined) full.signatures = req.signatures;
  if (req.signature !== undefined) full.signature = req.signature;
  return { digest: sha256Hex(signingSerialization(full)), payloadDigest: sha256Hex(signingSerialization(payload)) };
}

function nodeDigests(req: Record<string, unknown>): { digest: string; payloadDigest: string } {
  const p = parseRequest(req);
  return { digest: p.digest, payloadDigest: p.payloadDigest };
}

describe('GET_ATTR digests (Indy parity)', () => {
  it("the unsigned read of the issue has indy-node's digest and payloadDigest", () => {
    const req = { ...READ, operation: { type: '104', dest: DEST, raw: 'endpoint' } };
    const want = 'a40026efd66f512d570b2a89ea8629cc05fe83dd0e1a056d9db481c60a3262eb';
    expect(nodeDigests(req)).to.deep.equal({ digest: want, payloadDigest: want });
    expect(requestDigests(req)).to.deep.equal({ digest: want, payloadDigest: want });
  });

  it("raw, hash and enc, unsigned, signed and multi-signed: the digests of an independent implementation of Indy's (fixtures/indy_request_digests.py)", () => {
    const hash = sha256Hex('endpoint');
    const sig = '3YVzDtSxxnowVwAXZmxCG2fz1A38j1qLrwKmGEG653GZw7KJRBX57Bp19q1DYmDbYeRjiM8m7LswUW6aS8gHBJfU';
    const multi = { LibindyDid111111111111: 'sigA', V4SGRU86Z58d6TV7PBUe6f: 'sigB' };
    const op = (sel: Record<string, string>): DigestableRequest => ({ ...READ, operation: { type: '104', dest: DEST, ...sel } });
    const cases: [string, DigestableRequest, string, string][] = [
      [
        'raw',
        op({ raw: 'endpoint' }),
        'a40026efd66f512d570b2a89ea8629cc05fe83dd0e1a056d9db481c60a3262eb',
        'a40026efd66f512d570b2a89ea8629cc05fe83dd0e1a056d9db481c60a3262eb',
      ],
      [
        'hash',
        op({ hash }),
        'ebbd3ea3b098f6798d9607fb33c7cfe1b569ede1c9bff47a2237f5972499df16',
        'ebbd3ea3b098f6798d9607fb33c7cfe1b569ede1c9bff47a2237f5972499df16',
      ],
      [
        'enc',
        op({ enc: 'ciphertext' }),
        '2efc102ea2176a9314e53d6ce09eebfd0c66d5bdc4db0e8c91a051cd1b5ac795',
        '2efc102ea2176a9314e53d6ce09eebfd0c66d5bdc4db0e8c91a051cd1b5ac795',
      ],
      [
        'raw signed',
        { ...op({ raw: 'endpoint' }), signature: sig },
        'e37b3b77b2e30a7eb488fb66ebe3d61577fd7fd9315032a432cc7c866004f6d1',
        'a40026efd66f512d570b2a89ea8629cc05fe83dd0e1a056d9db481c60a3262eb',
      ],
      [
        'hash signed',
        { ...op({ hash }), signature: sig },
        'd57e9a7b7a2b61a5a1f081c08f354fa4e21e08896bc2c3885ead9175da0f1621',
        'ebbd3ea3b098f6798d9607fb33c7cfe1b569ede1c9bff47a2237f5972499df16',
      ],
      [
        'enc multi-signed',
        { ...op({ enc: 'ciphertext' }), signatures: multi },
        '2727b671e2878ae2026d1478fd814afb1c1539cc297f1e1616e97136b9bf9390',
        '2efc102ea2176a9314e53d6ce09eebfd0c66d5bdc4db0e8c91a051cd1b5ac795',
      ],
    ];
    for (const [name, req, digest, payloadDigest] of cases) {
      expect(nodeDigests(req as unknown as Record<string, unknown>), name).to.deep.equal({ digest, payloadDigest });
      expect(requestDigests(req), name).to.deep.equal({ digest, payloadDigest });
    }
    // the digest Quire gave before (the ATTRIB rule applied to a GET_ATTR) is not Indy's
    expect(nodeDigests(op({ raw: 'endpoint' }) as unknown as Record<string, unknown>).digest).to.not.equal(
      'c37106507084d3e9aee068ef324b4f23d438becdab5624cdf45c0f83dc48dd2f',
    );
  });

  it('hash and enc selectors are not hashed again in the digests', () => {
    const hash = sha256Hex('endpoint');
    const byHash = { ...READ, operation: { type: '104', dest: DEST, hash } };
    const byEnc = { ...READ, operation: { type: '104', dest: DEST, enc: 'ciphertext' } };
    expect(nodeDigests(byHash)).to.deep.equal(indyDigests(byHash));
    expect(nodeDigests(byEnc)).to.deep.equal(indyDigests(byEnc));
    expect(nodeDigests(byHash).payloadDigest).to.equal(
      sha256Hex(`identifier:LibindyDid111111111111|operation:dest:${DEST}|hash:${hash}|type:104|protocolVersion:2|reqId:1795703067563113080`),
    );
  });

  it('signed and multi-signed reads: digest covers the signatures, payloadDigest does not, raw as sent', () => {
    const base = { identifier: SIGNER.did, reqId: 7, protocolVersion: 2, operation: { type: '104', dest: DEST, raw: 'endpoint', seqNo: 3 } };
    const single = { ...base, signature: SIGNER.signBase58(new TextEncoder().encode(signatureInputString(base))) };
    const multi = { ...base, signatures: { [SIGNER.did]: 'sig1', [OTHER.did]: 'sig2' } };
    for (const req of [single, multi]) {
      const got = nodeDigests(req);
      expect(got).to.deep.equal(indyDigests(req));
      expect(got.digest).to.not.equal(got.payloadDigest);
      expect(got.payloadDigest).to.equal(indyDigests(base).payloadDigest);
    }
    // the signature input still hashes the name (indy-vdr signs GET_ATTR that way)
    expect(signatureInputString(base)).to.contain(`raw:${sha256Hex('endpoint')}`);
  });

  it('ATTRIB writes keep the rule: raw, enc and hash are hashed in both digests', () => {
    for (const [field, value] of [
      ['raw', '{"endpoint":{"ha":"127.0.0.1:5555"}}'],
      ['enc', 'ciphertext'],
      ['hash', sha256Hex('x')],
    ] as const) {
      const req = { identifier: SIGNER.did, reqId: 9, protocolVersion: 2, operation: { type: '100', dest: DEST, [field]: value } };
      const hashed = { ...req, operation: { ...req.operation, [field]: sha256Hex(value) } };
      expect(nodeDigests(req), field).to.deep.equal(indyDigests(hashed));
      expect(nodeDigests(req).payloadDigest, field).to.not.equal(indyDigests(req).payloadDigest);
    }
  });

  it('property: for any selector value, a GET_ATTR digest equals the SER digest of the request as sent', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('raw', 'enc', 'hash'),
        fc.string({ minLength: 1, maxLength: 40 }),
        fc.bigInt({ min: 1n, max: 2n ** 64n - 1n }),
        (field, value, reqId) => {
          const req = { identifier: READ.identifier, reqId, protocolVersion: 2, operation: { type: '104', dest: DEST, [field]: value } };
          expect(requestDigests(req)).to.deep.equal(indyDigests(req));
        },
      ),
    );
  });
});
