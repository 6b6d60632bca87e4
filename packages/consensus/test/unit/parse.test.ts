import { expect } from 'chai';
import fc from 'fast-check';
import { MsgpackEncoded, b58encode, encodeMsgpack, takeDecodedEncoding } from '@quire/common';
import { ConsensusError, ConsensusErrorCode, batchDigest, parseNodeMessage } from '@quire/consensus';

const ROOT = '7siDH8Qanh82UviK4zjBSfLXcoCvLaeGkrByi1ow9Tsm';
const D = '622090e57217add1e70edbe01a022736254690b08b71281b001df064a2511217';
/** base58 of 96 bytes: the length of a BLS multi-signature */
const SIG = b58encode(new Uint8Array(96).fill(7));

function pp(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    op: 'PREPREPARE',
    instId: 0,
    viewNo: 0,
    ppSeqNo: 1,
    ppTime: 1700000000,
    reqIdr: [D],
    discarded: '[]',
    digest: batchDigest(0, 1700000000, [D], 1),
    ledgerId: 1,
    stateRootHash: ROOT,
    txnRootHash: ROOT,
    sub_seq_no: 0,
    final: true,
    poolStateRootHash: ROOT,
    auditTxnRootHash: ROOT,
    ...over,
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
    const m = parseNodeMessage(pp({ blsMultiSigs: [[SIG, ['Node1', 'Node2', 'Node3'], [1, ROOT, ROOT, ROOT, 1700000000]]] }));
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
      pp({ blsMultiSigs: [[SIG, [], [1, ROOT, ROOT, ROOT, 1]]] }),
      { op: 'COMMIT', instId: 0, viewNo: 0, ppSeqNo: 1, blsSigs: {} },
      { op: 'COMMIT', instId: 0, viewNo: 0, ppSeqNo: 1, blsSigs: { '7': 'abc' } },
      { op: 'CHECKPOINT', instId: 0, viewNo: 0, seqNoStart: 1, seqNoEnd: 100, digest: null },
      { op: 'MESSAGE_REQUEST', msg_type: 'VIEW_CHANGE', params: {} },
      { op: 'MESSAGE_REQUEST', msg_type: 'PREPARE', params: { instId: 0, viewNo: 0, ppSeqNo: -5 } },
      JSON.parse('{"op":"PROPAGATE","request":{},"__proto__":{"x":1}}'),
    ];
    for (const b of bad) expect(code(b), JSON.stringify(b)).to.equal(ConsensusErrorCode.INVALID_MESSAGE);
  });

  it('refuses a multi-signature the BLS store would refuse: signature not 96 bytes, roots not 32 (#15 F3)', () => {
    const parts = ['Node1', 'Node2', 'Node3'];
    const short = b58encode(new Uint8Array(31).fill(5));
    const long = b58encode(new Uint8Array(33).fill(5));
    const bad: unknown[] = [
      ['3', parts, [1, ROOT, ROOT, ROOT, 1]],
      [b58encode(new Uint8Array(95).fill(7)), parts, [1, ROOT, ROOT, ROOT, 1]],
      [b58encode(new Uint8Array(97).fill(7)), parts, [1, ROOT, ROOT, ROOT, 1]],
      [SIG, parts, [1, short, ROOT, ROOT, 1]],
      [SIG, parts, [1, ROOT, long, ROOT, 1]],
      [SIG, parts, [1, ROOT, ROOT, short, 1]],
      [SIG, parts, [1, ROOT, ROOT, ROOT, -1]],
      [SIG, ['Node1', ''], [1, ROOT, ROOT, ROOT, 1]],
    ];
    for (const t of bad) expect(code(pp({ blsMultiSigs: [t] })), JSON.stringify(t)).to.equal(ConsensusErrorCode.INVALID_MESSAGE);
    expect(code(pp({ blsMultiSigs: [[SIG, parts, [1, ROOT, ROOT, ROOT, 1]]] }))).to.equal(undefined);
  });

  it('accepts exactly the multi-signature tuples whose lengths the BLS store accepts (property)', () => {
    const bytes = (n: number) => fc.uint8Array({ minLength: n, maxLength: n });
    const len = fc.integer({ min: 1, max: 120 });
    fc.assert(
      fc.property(
        len.chain((n) => bytes(n)),
        len.chain((n) => bytes(n)),
        (sig, root) => {
          const accepted = code(pp({ blsMultiSigs: [[b58encode(sig), ['Node1', 'Node2', 'Node3'], [1, b58encode(root), ROOT, ROOT, 1]]] })) === undefined;
          return accepted === (sig.length === 96 && root.length === 32);
        },
      ),
    );
  });

  it('never throws anything but ConsensusError on arbitrary input', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.anything(),
          fc.record({ op: fc.constantFrom('PREPREPARE', 'PREPARE', 'COMMIT', 'CHECKPOINT', 'MESSAGE_RESPONSE', 'PROPAGATE'), x: fc.anything() }),
        ),
        (v) => {
          try {
            parseNodeMessage(v);
          } catch (e) {
            return e instanceof ConsensusError;
          }
          return true;
        },
      ),
      { numRuns: 300 },
    );
  });

  it('reads a CATCHUP_REP txn given as its bytes (MsgpackEncoded, in process) as the wire reads it', () => {
    const txn = { txn: { type: '1', data: { dest: 'x' } }, txnMetadata: { seqNo: 3 }, ver: '1' };
    const bytes = encodeMsgpack(txn);
    const rep = parseNodeMessage({ op: 'CATCHUP_REP', ledgerId: 1, txns: { '3': new MsgpackEncoded(bytes) }, consProof: [] });
    const got = (rep as { txns: Record<string, object> }).txns['3'];
    expect(got).to.deep.equal(txn);
    expect(takeDecodedEncoding(got as object)).to.deep.equal(bytes);
    for (const bad of [new Uint8Array([0xc1]), encodeMsgpack([1, 2]), new Uint8Array([0x81])]) {
      try {
        parseNodeMessage({ op: 'CATCHUP_REP', ledgerId: 1, txns: { '3': new MsgpackEncoded(bad) }, consProof: [] });
        expect.fail('parsed');
      } catch (e) {
        expect(e).to.be.instanceOf(ConsensusError);
        expect((e as ConsensusError).code).to.equal(ConsensusErrorCode.INVALID_MESSAGE);
      }
    }
  });
});
