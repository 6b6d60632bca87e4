import { expect } from 'chai';
import { createHash } from 'node:crypto';
import {
  batchDigest,
  parseJson,
  payloadDigest,
  payloadDigestInput,
  requestAuthor,
  requestDigest,
  requestDigestInput,
  requestDigests,
  taaAcceptanceDay,
  taaDigest,
  type Request,
} from '@quire/common';

const h = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');
const unsigned = parseJson(
  '{"identifier":"V4SGRU86Z58d6TV7PBUe6f","operation":{"dest":"VsKV7grR1BUE29mG2Fm2kX","type":"1"},"protocolVersion":2,"reqId":1585221529670242337}',
) as Request;

describe('request digests (formats 3.3)', () => {
  it('payloadDigest of the unsigned request of formats.md 3.1', () => {
    expect(payloadDigest(unsigned)).to.equal('da848d36f50d4fd29438b4b978b626b3e2c2fa112ccc7d2f3722c97a44c9398e');
    expect(requestDigest(unsigned)).to.equal('da848d36f50d4fd29438b4b978b626b3e2c2fa112ccc7d2f3722c97a44c9398e');
  });

  it('digest covers signature / signatures, payloadDigest does not', () => {
    const signed = { ...unsigned, signature: 'SIG' };
    expect(payloadDigest(signed)).to.equal(payloadDigest(unsigned));
    expect(requestDigestInput(signed)).to.equal(payloadDigestInput(unsigned).replace('|reqId:1585221529670242337', '|reqId:1585221529670242337|signature:SIG'));
    expect(requestDigest(signed)).to.equal(h(requestDigestInput(signed)));
    const multi = { ...unsigned, signatures: { V4SGRU86Z58d6TV7PBUe6f: 'S1', Th7MpTaRZVRYnPiabds81Y: 'S2' } };
    expect(requestDigestInput(multi)).to.contain('|reqId:1585221529670242337|signatures:Th7MpTaRZVRYnPiabds81Y:S2|V4SGRU86Z58d6TV7PBUe6f:S1');
    expect(requestDigests(multi)).to.deep.equal({ digest: requestDigest(multi), payloadDigest: payloadDigest(multi) });
  });

  it('puts signature after reqId and before taaAcceptance; adds endorser and taaAcceptance to the payload', () => {
    const r = { ...unsigned, signature: 'S', endorser: 'E', taaAcceptance: { mechanism: 'm', taaDigest: 'd', time: 1 }, fees: 5, extra: 1 };
    expect(requestDigestInput(r)).to.equal(
      'endorser:E|identifier:V4SGRU86Z58d6TV7PBUe6f|operation:dest:VsKV7grR1BUE29mG2Fm2kX|type:1|protocolVersion:2|reqId:1585221529670242337|signature:S|taaAcceptance:mechanism:m|taaDigest:d|time:1',
    );
  });

  it('derives the author from the sorted signers when identifier is absent', () => {
    const r = { reqId: 1, protocolVersion: 2, operation: { type: '1', dest: 'D' }, signatures: { b: 'x', B: 'y', a: 'z' } };
    expect(requestAuthor(r)).to.equal('B,a,b');
    expect(payloadDigestInput(r)).to.equal('identifier:B,a,b|operation:dest:D|type:1|protocolVersion:2|reqId:1');
    expect(requestAuthor({})).to.equal(undefined);
  });

  it('applies the ATTRIB rule to both digests', () => {
    const r = { identifier: 'X', reqId: 1, protocolVersion: 2, operation: { type: '100', dest: 'D', raw: '{"a":1}' } };
    expect(payloadDigestInput(r)).to.equal(`identifier:X|operation:dest:D|raw:${h('{"a":1}')}|type:100|protocolVersion:2|reqId:1`);
  });

  it('TAA digest and acceptance day (formats 3.5)', () => {
    expect(taaDigest('1.0', 'text')).to.equal('392b1cdb2b0e57c8e78a9e379afad82dcf1f83b8b65ae260496f28ee6976be2b');
    expect(taaAcceptanceDay(1562367600)).to.equal(1562284800);
    expect(taaAcceptanceDay(1562319963)).to.equal(1562284800);
    expect(taaAcceptanceDay(20)).to.equal(0);
  });

  it('batch digest (formats 10.2): the requests fix a non-empty batch, an empty one hashes its ledger', () => {
    expect(batchDigest(0, 1700000000, ['aa', 'bb'], 1)).to.equal(h('0,1700000000,aa,bb'));
    expect(batchDigest(0, 1700000000, ['aa', 'bb'], 2)).to.equal(h('0,1700000000,aa,bb'));
    expect(batchDigest(3, 5, [], 0)).to.equal(h('3,5,ledger=0'));
    // two empty batches of one view and second on different ledgers are two batches
    expect(batchDigest(3, 5, [], 1)).to.not.equal(batchDigest(3, 5, [], 2));
  });
});
