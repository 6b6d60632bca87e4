// Request digests of GET_ATTR (formats.md 3.3): indy-node hashes `raw` / `enc` / `hash` inside the digests of
// ATTRIB writes only (indy_common/types.py); a GET_ATTR's digest and payloadDigest cover the attribute
// name, the enc text or the hash as sent. The signature input keeps the rule for both types (indy-vdr).
import { requestDigests, sha256Hex, signatureInputString, signingSerialization } from '@quire/common';
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

  it('hash and enc selectors are not hashed again in the digests', () => {
    const hash = sha256Hex('endpoint');
    const byHash = { ...READ, operation: { type: '104', dest: DEST, hash } };
    const byEnc = { ...READ, operation: { type: '104', dest: DEST, enc: 'ciphertext' } };
    expect(nodeDigests(byHash)).to.deep.equal(indyDigests(byHash));
    expect(nodeDigests(byEnc)).to.deep.equal(indyDigests(byEnc));
    expect(nodeDigests(byHash).payloadDigest).to.equal(sha256Hex(`identifier:LibindyDid111111111111|operation:dest:${DEST}|hash:${hash}|type:104|protocolVersion:2|reqId:1795703067563113080`));
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
    for (const [field, value] of [['raw', '{"endpoint":{"ha":"127.0.0.1:5555"}}'], ['enc', 'ciphertext'], ['hash', sha256Hex('x')]] as const) {
      const req = { identifier: SIGNER.did, reqId: 9, protocolVersion: 2, operation: { type: '100', dest: DEST, [field]: value } };
      const hashed = { ...req, operation: { ...req.operation, [field]: sha256Hex(value) } };
      expect(nodeDigests(req), field).to.deep.equal(indyDigests(hashed));
      expect(nodeDigests(req).payloadDigest, field).to.not.equal(indyDigests(req).payloadDigest);
    }
  });

  it('property: for any selector value, a GET_ATTR digest equals the SER digest of the request as sent', () => {
    fc.assert(
      fc.property(fc.constantFrom('raw', 'enc', 'hash'), fc.string({ minLength: 1, maxLength: 40 }), fc.bigInt({ min: 1n, max: 2n ** 64n - 1n }), (field, value, reqId) => {
        const req = { identifier: READ.identifier, reqId, protocolVersion: 2, operation: { type: '104', dest: DEST, [field]: value } };
        expect(requestDigests(req)).to.deep.equal(indyDigests(req));
      }),
    );
  });
});
