import { expect } from 'chai';
import { createHash } from 'node:crypto';
import {
  TxnError,
  TxnErrorCode,
  canonicalJson,
  encodeMsgpack,
  decodeMsgpack,
  parseJson,
  payloadDigest,
  requestDigest,
  requestToTxn,
  restoreAuditIntegerKeys,
  stringifyJson,
  EncodingError,
  EncodingErrorCode,
  type Request,
  type Txn,
} from '@quire/common';
import { expectCode } from './helpers.js';

const h = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');
const base = {
  identifier: 'V4SGRU86Z58d6TV7PBUe6f',
  reqId: 1585221529670242337n,
  protocolVersion: 2,
};

describe('requestToTxn (formats 4.2-4.5)', () => {
  it('maps a signed NYM request to the stored layout', () => {
    const req: Request = { ...base, operation: { type: '1', dest: 'VsKV7grR1BUE29mG2Fm2kX', verkey: '~abc', role: null }, signature: 'SIG' };
    const txn = requestToTxn(req);
    expect(txn).to.deep.equal({
      ver: '1',
      txn: {
        type: '1',
        protocolVersion: 2,
        data: { dest: 'VsKV7grR1BUE29mG2Fm2kX', verkey: '~abc', role: null },
        metadata: { from: base.identifier, reqId: base.reqId, digest: requestDigest(req), payloadDigest: payloadDigest(req) },
      },
      txnMetadata: {},
      reqSignature: { type: 'ED25519', values: [{ from: base.identifier, value: 'SIG' }] },
    });
    expect(req.operation.type).to.equal('1');
    (txn.txn.data as Record<string, unknown>).dest = 'changed';
    expect(req.operation.dest).to.equal('VsKV7grR1BUE29mG2Fm2kX');
    expect(stringifyJson(decodeMsgpack(encodeMsgpack(txn)))).to.contain('"reqId":1585221529670242337');
  });

  it('uses ED25519 for one signature, ED25519_MULTI for more, values sorted by DID', () => {
    const one = requestToTxn({ ...base, operation: { type: '1', dest: 'D' }, signatures: { [base.identifier]: 'S1' } });
    expect(one.reqSignature).to.deep.equal({ type: 'ED25519', values: [{ from: base.identifier, value: 'S1' }] });
    const multi = requestToTxn({ ...base, operation: { type: '1', dest: 'D' }, signatures: { b: 'S2', V4SGRU86Z58d6TV7PBUe6f: 'S1', B: 'S3' } });
    expect(multi.reqSignature).to.deep.equal({
      type: 'ED25519_MULTI',
      values: [
        { from: 'B', value: 'S3' },
        { from: 'V4SGRU86Z58d6TV7PBUe6f', value: 'S1' },
        { from: 'b', value: 'S2' },
      ],
    });
    expect(requestToTxn({ ...base, operation: { type: '1', dest: 'D' } }).reqSignature).to.deep.equal({});
  });

  it('omits metadata.from without identifier, keeps endorser and taaAcceptance', () => {
    const req = {
      reqId: 5,
      protocolVersion: 2,
      operation: { type: '101', data: { name: 'n', version: '1.0', attr_names: ['a'] } },
      signatures: { A: 'x', B: 'y' },
    };
    const txn = requestToTxn(req);
    expect(txn.txn.metadata).to.not.have.property('from');
    expect(txn.txn.metadata.reqId).to.equal(5);
    const taa = { mechanism: 'click', taaDigest: 'ab'.repeat(32), time: 1562284800 };
    const t2 = requestToTxn({
      ...base,
      operation: { type: '1', dest: 'D' },
      endorser: 'E',
      taaAcceptance: taa,
      signatures: { E: 'a', [base.identifier]: 'b' },
    });
    expect(t2.txn.metadata.endorser).to.equal('E');
    expect(t2.txn.metadata.taaAcceptance).to.deep.equal(taa);
    expect(t2.txn.metadata.taaAcceptance).to.not.equal(taa);
  });

  it('sets txn.ver from operation.ver (JSON type kept) or the type default', () => {
    expect(requestToTxn({ ...base, operation: { type: '4', version: '1', text: 't' } }).txn.ver).to.equal('2');
    expect(requestToTxn({ ...base, operation: { type: '4', version: '1', text: 't', ver: '3' } }).txn.ver).to.equal('3');
    const rs = requestToTxn({ ...base, operation: { type: '201', id: 'x', content: '{}', rsType: 'sch', rsName: 'n', rsVersion: '1', ver: 1 } });
    expect(rs.txn.ver).to.equal(1);
    expect(rs.txn.data).to.not.have.property('ver');
    expect(rs.txn.data).to.not.have.property('type');
    expect(requestToTxn({ ...base, operation: { type: '1', dest: 'D' } }).txn).to.not.have.property('ver');
  });

  it('writes protocolVersion only when present and non-zero', () => {
    expect(requestToTxn({ ...base, protocolVersion: 0, operation: { type: '1', dest: 'D' } }).txn).to.not.have.property('protocolVersion');
    const { protocolVersion: _p, ...noPv } = base;
    expect(requestToTxn({ ...noPv, operation: { type: '1', dest: 'D' } }).txn).to.not.have.property('protocolVersion');
  });

  it('applies the ATTRIB ledger transform: raw -> sha256(CJ(raw)), enc -> sha256(enc), hash kept', () => {
    const raw = '{"endpoint": {"ha": "127.0.0.1:5555", "agent": "x"}}';
    const t1 = requestToTxn({ ...base, operation: { type: '100', dest: 'D', raw } });
    expect(t1.txn.data.raw).to.equal(h(canonicalJson(parseJson(raw))));
    expect(t1.txn.data.raw).to.equal(h('{"endpoint":{"agent":"x","ha":"127.0.0.1:5555"}}'));
    expect(requestToTxn({ ...base, operation: { type: '100', dest: 'D', enc: 'ciphertext' } }).txn.data.enc).to.equal(h('ciphertext'));
    const hash = 'ab'.repeat(32);
    expect(requestToTxn({ ...base, operation: { type: '100', dest: 'D', hash } }).txn.data.hash).to.equal(hash);
    expectCode(() => requestToTxn({ ...base, operation: { type: '100', dest: 'D', raw: '{bad' } }), EncodingError, EncodingErrorCode.INVALID_JSON);
    // the digests hash the original raw (ATTRIB rule), not the ledger form
    expect(t1.txn.metadata.payloadDigest).to.equal(payloadDigest({ ...base, operation: { type: '100', dest: 'D', raw } }));
  });

  it('uses digests passed in', () => {
    const t = requestToTxn({ ...base, operation: { type: '1', dest: 'D' } }, { digest: 'd1', payloadDigest: 'p1' });
    expect(t.txn.metadata.digest).to.equal('d1');
    expect(t.txn.metadata.payloadDigest).to.equal('p1');
  });

  it('rejects requests that cannot become a txn', () => {
    expectCode(() => requestToTxn({ ...base, operation: { dest: 'D' } }), TxnError, TxnErrorCode.INVALID_OPERATION);
    expectCode(() => requestToTxn({ ...base, operation: null as unknown as Record<string, unknown> }), TxnError, TxnErrorCode.INVALID_OPERATION);
    expectCode(() => requestToTxn({ reqId: 1, operation: { type: '1' }, signature: 'S' }), TxnError, TxnErrorCode.SIGNATURE_WITHOUT_IDENTIFIER);
    expectCode(() => requestToTxn({ ...base, operation: { type: '1' }, signatures: { A: 5 as unknown as string } }), TxnError, TxnErrorCode.INVALID_SIGNATURES);
  });
});

describe('audit txn integer keys (formats 10.1)', () => {
  const built: Txn = {
    ver: '1',
    txn: {
      type: '2',
      protocolVersion: 2,
      metadata: {},
      data: {
        ver: '1',
        viewNo: 0,
        ppSeqNo: 7,
        ledgerSize: new Map([
          [0, 4],
          [1, 12],
          [2, 0],
        ]),
        ledgerRoot: new Map<number, string | number>([
          [0, 2],
          [1, 'GKot5hBsd81kMupNCXHaqbhv3huEbxAFMLnpcX2hniwn'],
        ]),
        stateRoot: new Map([[1, 'DfNLmH4DAHTKv63YPFJzuRdeEtVwF5RtVnvKYHd8iLEA']]),
        primaries: ['Node1'],
        digest: 'ab'.repeat(32),
      },
    },
    txnMetadata: { seqNo: 7, txnTime: 1700000000 },
    reqSignature: {},
  };

  it('JSON form (string keys) re-hashes identically once the keys are restored', () => {
    const bytes = encodeMsgpack(built);
    const json = canonicalJson(decodeMsgpack(bytes));
    expect(json).to.contain('"ledgerSize":{"0":4,"1":12,"2":0}');
    const fromJson = parseJson(json) as Txn;
    expect(Buffer.from(encodeMsgpack(fromJson)).equals(Buffer.from(bytes))).to.equal(false);
    const restored = restoreAuditIntegerKeys(fromJson);
    expect(Buffer.from(encodeMsgpack(restored)).toString('hex')).to.equal(Buffer.from(bytes).toString('hex'));
    expect((fromJson.txn.data as Record<string, unknown>).ledgerSize).to.not.be.instanceOf(Map);
  });

  it('leaves other txns alone and rejects keys that are not ledger ids', () => {
    const nym = { ver: '1', txn: { type: '1', data: { dest: 'D' }, metadata: {} }, txnMetadata: {}, reqSignature: {} } as Txn;
    expect(restoreAuditIntegerKeys(nym)).to.equal(nym);
    const bad = parseJson('{"ver":"1","txn":{"type":"2","data":{"ledgerSize":{"01":1}},"metadata":{}},"txnMetadata":{},"reqSignature":{}}') as Txn;
    expectCode(() => restoreAuditIntegerKeys(bad), EncodingError, EncodingErrorCode.INVALID_MAP_KEY);
    const bad2 = parseJson('{"ver":"1","txn":{"type":"2","data":{"stateRoot":{"x":"r"}},"metadata":{}},"txnMetadata":{},"reqSignature":{}}') as Txn;
    expectCode(() => restoreAuditIntegerKeys(bad2), EncodingError, EncodingErrorCode.INVALID_MAP_KEY);
  });
});
