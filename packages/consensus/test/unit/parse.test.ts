import { expect } from 'chai';
import fc from 'fast-check';
import { ConsensusError, ConsensusErrorCode, batchDigest, parseNodeMessage } from '@quire/consensus';

const ROOT = '7siDH8Qanh82UviK4zjBSfLXcoCvLaeGkrByi1ow9Tsm';
const D = '622090e57217add1e70edbe01a022736254690b08b71281b001df064a2511217';

function pp(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    op: 'PREPREPARE', instId: 0, viewNo: 0, ppSeqNo: 1, ppTime: 1700000000, reqIdr: [D], discarded: '[]',
    digest: batchDigest(0, 1700000000, [D]), ledgerId: 1, stateRootHash: ROOT, txnRootHash: ROOT, sub_seq_no: 0,
    final: true, poolStateRootHash: ROOT, auditTxnRootHash: ROOT, ...over,
  };
}

function code(v: unknown): string | undefined {
  try {
    parseNodeMessage(v);
    return undefined;
  } catch (e) {
    expect(e).to.be.instanceOf(ConsensusError);
    return (e as ConsensusError).code;
  }
}

describe('parseNodeMessage', () => {
  it('accepts well-formed 3PC messages', () => {
    const m = parseNodeMessage(pp({ blsMultiSigs: [['3xyz', ['Node1', 'Node2', 'Node3'], [1, ROOT, ROOT, ROOT, 1700000000]]] }));
    expect(m.op).to.equal('PREPREPARE');
    expect(parseNodeMessage({ op: 'COMMIT', instId: 0, viewNo: 0, ppSeqNo: 3, blsSigs: { '1': 'abc' } }).op).to.equal('COMMIT');
    expect(parseNodeMessage({ op: 'CHECKPOINT', instId: 0, viewNo: 0, seqNoStart: 0, seqNoEnd: 100, digest: ROOT }).op).to.equal('CHECKPOINT');
    expect(parseNodeMessage({ op: 'MESSAGE_REQUEST', msg_type: 'PROPAGATE', params: { digest: D } }).op).to.equal('MESSAGE_REQUEST');
  });

  it('rejects bad fields with INVALID_MESSAGE', () => {
    const bad: unknown[] = [
      null,
      [1, 2],
      { op: 'NOPE' },
      pp({ instId: 1 }),
      pp({ ppSeqNo: 0 }),
      pp({ viewNo: -1 }),
      pp({ reqIdr: ['xyz'] }),
      pp({ discarded: '[1]' }),
      pp({ discarded: '[0,0]' }),
      pp({ ledgerId: 3 }),
      pp({ stateRootHash: 'O0Il' }),
      pp({ plugin_fields: {} }),
      pp({ originalViewNo: 5 }),
      pp({ blsMultiSigs: [['sig', [], [1, ROOT, ROOT, ROOT, 1]]] }),
      { op: 'COMMIT', instId: 0, viewNo: 0, ppSeqNo: 1, blsSigs: {} },
      { op: 'COMMIT', instId: 0, viewNo: 0, ppSeqNo: 1, blsSigs: { '7': 'abc' } },
      { op: 'CHECKPOINT', instId: 0, viewNo: 0, seqNoStart: 1, seqNoEnd: 100, digest: null },
      { op: 'MESSAGE_REQUEST', msg_type: 'VIEW_CHANGE', params: {} },
      { op: 'MESSAGE_REQUEST', msg_type: 'PREPARE', params: { instId: 0, viewNo: 0, ppSeqNo: -5 } },
      JSON.parse('{"op":"PROPAGATE","request":{},"__proto__":{"x":1}}'),
    ];
    for (const b of bad) expect(code(b), JSON.stringify(b)).to.equal(ConsensusErrorCode.INVALID_MESSAGE);
  });

  it('never throws anything but ConsensusError on arbitrary input', () => {
    fc.assert(
      fc.property(fc.oneof(fc.anything(), fc.record({ op: fc.constantFrom('PREPREPARE', 'PREPARE', 'COMMIT', 'CHECKPOINT', 'MESSAGE_RESPONSE', 'PROPAGATE'), x: fc.anything() })), (v) => {
        try {
          parseNodeMessage(v);
        } catch (e) {
          return e instanceof ConsensusError;
        }
        return true;
      }),
      { numRuns: 300 },
    );
  });
});
