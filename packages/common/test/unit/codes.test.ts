import { expect } from 'chai';
import {
  LedgerId,
  RejectCode,
  Role,
  TxnType,
  defaultPayloadVersion,
  isReadType,
  isWriteType,
  ledgerOfType,
  reject,
  rejectReason,
  reqAck,
  reqNack,
  txnKind,
  QuireError,
  EncodingError,
  EncodingErrorCode,
} from '@quire/common';

describe('codes (formats appendix A)', () => {
  it('has the wire codes', () => {
    expect(TxnType.NODE).to.equal('0');
    expect(TxnType.NYM).to.equal('1');
    expect(TxnType.AUDIT).to.equal('2');
    expect(TxnType.GET_TXN).to.equal('3');
    expect(TxnType.ATTRIB).to.equal('100');
    expect(TxnType.GET_RICH_SCHEMA_OBJECT_BY_METADATA).to.equal('301');
    expect(new Set(Object.values(TxnType)).size).to.equal(Object.values(TxnType).length);
    expect(Role).to.deep.equal({ TRUSTEE: '0', STEWARD: '2', ENDORSER: '101', NETWORK_MONITOR: '201' });
    expect(LedgerId).to.deep.equal({ POOL: 0, DOMAIN: 1, CONFIG: 2, AUDIT: 3 });
  });

  it('maps every type to its ledger and kind', () => {
    expect(ledgerOfType('0')).to.equal(0);
    expect(ledgerOfType('1')).to.equal(1);
    expect(ledgerOfType('2')).to.equal(3);
    expect(ledgerOfType('4')).to.equal(2);
    for (const t of ['100', '101', '102', '113', '114', '200', '201', '202', '203', '204', '205']) expect(ledgerOfType(t), t).to.equal(1);
    for (const t of ['4', '5', '8', '9', '109', '110', '111', '120', '122', '130']) expect(ledgerOfType(t), t).to.equal(2);
    for (const t of ['3', '118', '119', '999', '']) expect(ledgerOfType(t), t).to.equal(undefined);
    expect(txnKind('118')).to.equal('action');
    expect(txnKind('2')).to.equal('internal');
    expect(isWriteType('1')).to.equal(true);
    expect(isWriteType('105')).to.equal(false);
    expect(isReadType('3')).to.equal(true);
    expect(txnKind('42')).to.equal(undefined);
    expect(defaultPayloadVersion('4')).to.equal('2');
    expect(defaultPayloadVersion('1')).to.equal('1');
  });
});

describe('replies (formats 5.1, 5.4)', () => {
  it('builds the envelopes', () => {
    expect(reqAck('X', 5n)).to.deep.equal({ op: 'REQACK', identifier: 'X', reqId: 5n });
    expect(reqNack('X', 5, 'why')).to.deep.equal({ op: 'REQNACK', identifier: 'X', reqId: 5, reason: 'why' });
    expect(reject('X', 5, 'why')).to.deep.equal({ op: 'REJECT', identifier: 'X', reqId: 5, reason: 'why', code: null });
  });

  it('fills the coded reason texts', () => {
    expect(rejectReason(RejectCode.TAA_MISSING, 1)).to.equal('Txn Author Agreement acceptance is required for ledger with id 1');
    expect(rejectReason(RejectCode.TAA_TIME_INAPPROPRIATE, 'a', 'b', 'c')).to.equal(
      'Txn Author Agreement acceptance time is inappropriate: provided a, expected in [b, c]',
    );
    expect(RejectCode.TAA_TOO_PRECISE).to.equal(204);
  });
});

describe('errors', () => {
  it('carry a stable code and data', () => {
    const e = new EncodingError(EncodingErrorCode.DUPLICATE_KEY, { key: 'a' });
    expect(e).to.be.instanceOf(QuireError);
    expect(e).to.be.instanceOf(Error);
    expect(e.code).to.equal('DUPLICATE_KEY');
    expect(e.data).to.deep.equal({ key: 'a' });
    expect(e.name).to.equal('EncodingError');
    expect(e.message).to.contain('DUPLICATE_KEY');
  });
});
