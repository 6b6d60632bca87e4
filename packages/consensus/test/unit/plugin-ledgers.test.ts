// Plugin ledgers in peer messages (consensus option `pluginLedgers`): a node accepts the ledger ids
// it is configured with besides 0-3 (batches, votes, catch-up, message requests) and still refuses
// every other id; the option itself is checked.
import { expect } from 'chai';
import { b58encode } from '@quire/common';
import { ConsensusError, ConsensusErrorCode, batchDigest, parseNodeMessage, resolveOptions } from '@quire/consensus';

const ROOT = '7siDH8Qanh82UviK4zjBSfLXcoCvLaeGkrByi1ow9Tsm';
const D = '622090e57217add1e70edbe01a022736254690b08b71281b001df064a2511217';
const SIG = b58encode(new Uint8Array(96).fill(7));
const PLUGIN = 1001;

function pp(ledgerId: number): Record<string, unknown> {
  return {
    op: 'PREPREPARE',
    instId: 0,
    viewNo: 0,
    ppSeqNo: 1,
    ppTime: 1700000000,
    reqIdr: [D],
    discarded: '[]',
    digest: batchDigest(0, 1700000000, [D], ledgerId),
    ledgerId,
    stateRootHash: ROOT,
    txnRootHash: ROOT,
    sub_seq_no: 0,
    final: true,
    poolStateRootHash: ROOT,
    auditTxnRootHash: ROOT,
    blsMultiSigs: [[SIG, ['Node1', 'Node2', 'Node3'], [ledgerId, ROOT, ROOT, ROOT, 1700000000]]],
  };
}

/** Every message kind that names a ledger, for ledger `l`. */
function messagesOf(l: number): Record<string, unknown>[] {
  return [
    pp(l),
    { op: 'COMMIT', instId: 0, viewNo: 0, ppSeqNo: 3, blsSigs: { [String(l)]: 'abc' } },
    { op: 'LEDGER_STATUS', ledgerId: l, txnSeqNo: 3, viewNo: 0, ppSeqNo: 0, merkleRoot: ROOT, protocolVersion: 2 },
    { op: 'CONSISTENCY_PROOF', ledgerId: l, seqNoStart: 1, seqNoEnd: 3, viewNo: 0, ppSeqNo: 0, oldMerkleRoot: ROOT, newMerkleRoot: ROOT, hashes: [ROOT] },
    { op: 'CATCHUP_REQ', ledgerId: l, seqNoStart: 1, seqNoEnd: 3, catchupTill: 3 },
    { op: 'CATCHUP_REP', ledgerId: l, txns: { '1': { txn: {} } }, consProof: [] },
    { op: 'MESSAGE_REQUEST', msg_type: 'CONSISTENCY_PROOF', params: { ledgerId: l, seqNoStart: 1, seqNoEnd: 3 } },
    { op: 'MESSAGE_RESPONSE', msg_type: 'PREPREPARE', params: { instId: 0, viewNo: 0, ppSeqNo: 1 }, msg: pp(l) },
    { op: 'OLD_VIEW_PREPREPARE_REP', instId: 0, preprepares: [pp(l)] },
  ];
}

function code(v: unknown, plugins?: readonly number[]): string | undefined {
  try {
    parseNodeMessage(v, plugins);
    return undefined;
  } catch (e) {
    expect(e).to.be.instanceOf(ConsensusError);
    return (e as ConsensusError).code;
  }
}

describe('plugin ledgers in peer messages', () => {
  it('a configured plugin ledger is accepted in every message that names a ledger', () => {
    for (const m of messagesOf(PLUGIN)) expect(code(m, [PLUGIN]), String(m.op)).to.equal(undefined);
    // the base ledgers as before
    for (const m of messagesOf(1)) expect(code(m, [PLUGIN]), String(m.op)).to.equal(undefined);
  });

  it('a ledger id the node is not configured with is refused (INVALID_MESSAGE), as every id above 3 without plugins', () => {
    for (const m of messagesOf(PLUGIN)) {
      expect(code(m), `${String(m.op)} without plugins`).to.equal(ConsensusErrorCode.INVALID_MESSAGE);
      expect(code(m, [1002]), `${String(m.op)} with another plugin`).to.equal(ConsensusErrorCode.INVALID_MESSAGE);
    }
    for (const m of messagesOf(4)) expect(code(m, [PLUGIN]), String(m.op)).to.equal(ConsensusErrorCode.INVALID_MESSAGE);
    // the audit ledger has no batches, with or without plugins
    expect(code(pp(3), [PLUGIN])).to.equal(ConsensusErrorCode.INVALID_MESSAGE);
    // a COMMIT signs at most the base ledgers and the plugin ledgers
    expect(code({ op: 'COMMIT', instId: 0, viewNo: 0, ppSeqNo: 3, blsSigs: { '0': 'a', '1': 'b', '2': 'c', '1001': 'd' } }, [PLUGIN])).to.equal(undefined);
    expect(code({ op: 'COMMIT', instId: 0, viewNo: 0, ppSeqNo: 3, blsSigs: { '0': 'a', '1': 'b', '2': 'c', '1001': 'd' } })).to.equal(
      ConsensusErrorCode.INVALID_MESSAGE,
    );
  });

  it('the pluginLedgers option holds distinct ids above 3', () => {
    const base = { name: 'Node1', validators: ['Node1', 'Node2', 'Node3', 'Node4'] };
    expect(resolveOptions({ ...base, pluginLedgers: [1001, 1002] }).pluginLedgers).to.deep.equal([1001, 1002]);
    expect(resolveOptions(base).pluginLedgers).to.equal(undefined);
    for (const bad of [[3], [1001, 1001], [1.5], [-1]]) {
      expect(() => resolveOptions({ ...base, pluginLedgers: bad }), JSON.stringify(bad))
        .to.throw(ConsensusError)
        .with.property('code', ConsensusErrorCode.INVALID_OPTIONS);
    }
  });
});
