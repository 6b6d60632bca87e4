// ClientError's table of each code's data (ClientErrorData): a `new ClientError` is checked to carry its code's data
// (the @ts-expect-error lines fail the tests' typecheck once the table is dropped), and the CLI's refused action
// carries the data of REQUEST_NACKED / REQUEST_REJECTED as the pool's writes do.
import { expect } from 'chai';
import { ClientError, ClientErrorCode, ClientRequestError, VerificationError } from '../../src/errors.js';
import { Context } from '../../src/cli/context.js';
import { errorLines } from '../../src/cli/diagnostics.js';
import type { NodeAnswer } from '../../src/pool/exchange.js';
import { expectCode } from '@quire/testing';

describe('ClientError: data typed per code', () => {
  it('holds the data of its code', () => {
    const e = new ClientError(ClientErrorCode.NODE_REFUSED, { node: 'Node1', refusal: 'RATE_LIMITED', reason: 'slow down' });
    expect([e.code, e.data]).to.deep.equal(['NODE_REFUSED', { node: 'Node1', refusal: 'RATE_LIMITED', reason: 'slow down' }]);
    expect(new ClientError(ClientErrorCode.CLOSED).data).to.deep.equal({});
    const v = new VerificationError(ClientErrorCode.MULTISIG_STALE, { timestamp: 1, asOf: 400, freshnessSeconds: 300 });
    expect(v).to.be.instanceOf(ClientError);
    expect(v.data).to.deep.equal({ timestamp: 1, asOf: 400, freshnessSeconds: 300 });
  });

  it('refuses, at compile time, a code without its data, with a datum of the wrong type or with another code data', () => {
    const made: unknown[] = [
      // @ts-expect-error NODE_UNREACHABLE requires { node, reason }
      () => new ClientError(ClientErrorCode.NODE_UNREACHABLE),
      // @ts-expect-error REQUEST_NACKED carries the nodes that refused, not only the reason
      () => new ClientError(ClientErrorCode.REQUEST_NACKED, { reason: 'r' }),
      // @ts-expect-error INVALID_SEED's length is a number
      () => new ClientError(ClientErrorCode.INVALID_SEED, { length: '31' }),
      // @ts-expect-error CLOSED's reason is one of the reasons a session stream is aborted with
      () => new ClientError(ClientErrorCode.CLOSED, { reason: 'anything' }),
      // @ts-expect-error MULTISIG_STALE takes now or asOf
      () => new VerificationError(ClientErrorCode.MULTISIG_STALE, { timestamp: 1, freshnessSeconds: 300 }),
      // @ts-expect-error the data of PROOF_INVALID given to NO_PROOF
      () => new VerificationError(ClientErrorCode.NO_PROOF, { proofCode: 'PROOF_MALFORMED', key: 'k' }),
      // @ts-expect-error a node's refusal relayed names the request id
      () => new ClientRequestError('RATE_LIMITED', { reason: 'slow down' }),
    ];
    expect(made).to.have.length(7);
  });

  it("the CLI's action refused by every node fails with REQUEST_NACKED carrying the node's code and the refusing nodes", () => {
    const ctx = new Context({}, { out: () => undefined, err: () => undefined });
    const nack = (node: string): NodeAnswer => ({ node, kind: 'nack', reason: 'not allowed', code: 4, message: { op: 'REQNACK', reason: 'not allowed' } });
    const answers = new Map<string, NodeAnswer>([
      ['Node1', nack('Node1')],
      ['Node2', nack('Node2')],
      ['Node3', { node: 'Node3', kind: 'nack', reason: 'other', code: null, message: { op: 'REQNACK', reason: 'other' } }],
    ]);
    const e = expectCode(() => ctx.printAction(answers), ClientError, ClientErrorCode.REQUEST_NACKED, {
      reason: 'not allowed',
      code: 4,
      nodes: ['Node1', 'Node2'],
    });
    expect(errorLines(e)[0]).to.equal('error: request refused by the pool (REQNACK [code 4]): not allowed');
  });
});
