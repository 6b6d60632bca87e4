// ConsensusError's table of each code's data (ConsensusErrorData): a `new ConsensusError` is checked at compile time to
// carry its code's data (the @ts-expect-error lines fail the tests' typecheck once such a mistake compiles), and the
// raisers give what the table says.
import { expect } from 'chai';
import { expectCode } from '@quire/testing';
import { ConsensusError, ConsensusErrorCode, parseNodeMessage, resolveOptions } from '@quire/consensus';
import { faultMix } from '@quire/consensus/sim';

describe('ConsensusError: data typed per code', () => {
  it('refuses, at compile time, a code without its data or with the data of another code', () => {
    const made: unknown[] = [
      // @ts-expect-error INVALID_MESSAGE requires { op, field }
      () => new ConsensusError(ConsensusErrorCode.INVALID_MESSAGE, { field: 'viewNo' }),
      // @ts-expect-error INVALID_OPTIONS names an option of ConsensusOptions (or the simulator's faults)
      () => new ConsensusError(ConsensusErrorCode.INVALID_OPTIONS, { field: 'noSuchOption' }),
      // @ts-expect-error SIMULATION carries a reason
      () => new ConsensusError(ConsensusErrorCode.SIMULATION),
    ];
    expect(made).to.have.length(3);
  });

  it('names the op and the refused field of a peer message, null for a message without an op', () => {
    const e = expectCode(() => parseNodeMessage({ op: 'CHECKPOINT', instId: 'x' }), ConsensusError, ConsensusErrorCode.INVALID_MESSAGE);
    expect(e.data).to.have.property('op', 'CHECKPOINT');
    expect(e.data).to.have.property('field').that.is.a('string');
    expectCode(() => parseNodeMessage({ instId: 0 }), ConsensusError, ConsensusErrorCode.INVALID_MESSAGE, { op: null });
    const long = 'X'.repeat(100);
    expectCode(() => parseNodeMessage({ op: long }), ConsensusError, ConsensusErrorCode.INVALID_MESSAGE, { op: long.slice(0, 40) });
  });

  it('names the refused option, and the unknown fault mix by its value', () => {
    expectCode(() => resolveOptions({ name: 'A', validators: ['A'], chkFreq: 10, logSize: 5 }), ConsensusError, ConsensusErrorCode.INVALID_OPTIONS, {
      field: 'logSize',
    });
    expectCode(() => resolveOptions({ name: 'A', validators: [] }), ConsensusError, ConsensusErrorCode.INVALID_OPTIONS, { field: 'validators' });
    expectCode(() => faultMix('no-such-mix'), ConsensusError, ConsensusErrorCode.INVALID_OPTIONS, { field: 'faults', value: 'no-such-mix' });
  });
});
