// NodeError's table of each code's data (NodeErrorData): a `new NodeError` is checked to carry its code's data (its
// refusals below, marked @ts-expect-error, fail the tests' typecheck once the table is dropped), and its message is the operator's line
// made from that data.
import { expect } from 'chai';
import { QuireError } from '@quire/common';
import { NodeError, NodeErrorCode } from '../../src/errors.js';
import { UpgradeError, UpgradeErrorCode } from '../../src/upgrade/errors.js';

describe('NodeError: data typed per code', () => {
  it('holds the data of its code, its cause, and the one-line reason made from them', () => {
    const cause = new Error('disk full');
    const e = new NodeError(NodeErrorCode.COMMIT_FAILED, { ppSeqNo: 7, reason: 'disk full' }, { cause });
    expect(e).to.be.instanceOf(QuireError);
    expect([e.code, e.data, e.cause]).to.deep.equal(['COMMIT_FAILED', { ppSeqNo: 7, reason: 'disk full' }, cause]);
    expect(e.message).to.equal('the commit of batch 7 failed half-way, memory and storage may differ: disk full');
    expect(new NodeError(NodeErrorCode.PLUGIN_MISSING, { ledgerId: 1001 }).message).to.contain('ledger 1001');
  });

  it('refuses, at compile time, a code without its data, with a datum of the wrong type or with another code data', () => {
    const made: unknown[] = [
      // @ts-expect-error KEYS_EXIST names the file
      () => new NodeError(NodeErrorCode.KEYS_EXIST),
      // @ts-expect-error COMMIT_FAILED's ppSeqNo is a number
      () => new NodeError(NodeErrorCode.COMMIT_FAILED, { ppSeqNo: '7', reason: 'r' }),
      // @ts-expect-error the data of CONFIG_INVALID (option) given to CONFIG_UNREADABLE (file)
      () => new NodeError(NodeErrorCode.CONFIG_UNREADABLE, { option: 'x', reason: 'r' }),
    ];
    expect(made).to.have.length(3);
  });
});

describe('UpgradeError: data typed per code', () => {
  it('holds the data of its code; a code without its data or with another code data does not compile', () => {
    const e = new UpgradeError(UpgradeErrorCode.LOG_IO, { path: '/x/upgrade.log', reason: 'EACCES' });
    expect(e).to.be.instanceOf(QuireError);
    expect([e.code, e.data]).to.deep.equal(['LOG_IO', { path: '/x/upgrade.log', reason: 'EACCES' }]);
    expect(new UpgradeError(UpgradeErrorCode.ACTION_NOT_CONFIGURED).data).to.deep.equal({});
    const made: unknown[] = [
      // @ts-expect-error LOG_IO names the log's path and the reason
      () => new UpgradeError(UpgradeErrorCode.LOG_IO),
      // @ts-expect-error ACTION_TIMEOUT's timeoutMs is a number
      () => new UpgradeError(UpgradeErrorCode.ACTION_TIMEOUT, { timeoutMs: '5s', output: '' }),
      // @ts-expect-error the data of VERSION_INVALID given to POOL_UPGRADE_TXN_INVALID (field, seqNo)
      () => new UpgradeError(UpgradeErrorCode.POOL_UPGRADE_TXN_INVALID, { version: '1.0' }),
    ];
    expect(made).to.have.length(3);
  });
});
