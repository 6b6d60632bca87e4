// RequestError's data is typed per code (RequestErrorData): a `new RequestError` is checked to carry its code's data
// (the @ts-expect-error lines fail the tests' typecheck once such a mistake compiles, e.g. if the table is dropped),
// and the reason a client sees is built from that data.
import { expectCode } from '@quire/testing';
import { expect } from 'chai';
import { ErrorKind, RequestError, RequestErrorCode, type RequestErrorArgsOf, reasonFor } from '../../src/errors.js';
import { arrayOf, fail, integer, oneOf, str } from '../../src/validation/fields.js';

const AT = { validator: 'ClientV', field: 'f' };

describe('RequestError: data typed per code', () => {
  it('holds the code and its data, and builds the reason from them', () => {
    const e = new RequestError(RequestErrorCode.FIELD_TOO_LONG, { ...AT, value: 'abc', max: 2 });
    expect([e.code, e.data]).to.deep.equal(['FIELD_TOO_LONG', { ...AT, value: 'abc', max: 2 }]);
    expect(e.reason).to.equal('validation error [ClientV]: abc... is longer than 2 symbols (f=abc)');
    expect(reasonFor(RequestErrorCode.TAA_RETIRED, { version: '1.0', seqNo: 3, txnTime: null })).to.equal(
      new RequestError(RequestErrorCode.TAA_RETIRED, { version: '1.0', seqNo: 3, txnTime: null }).reason,
    );
    const none = new RequestError(RequestErrorCode.AML_EMPTY);
    expect([none.data, none.kind]).to.deep.equal([{}, ErrorKind.INVALID]);
    expect(new RequestError(RequestErrorCode.NODE_SAME_HA).kind).to.equal(ErrorKind.UNAUTHORIZED);
  });

  it('relays kept as the arguments of a few codes make the same error', () => {
    const kept: RequestErrorArgsOf<'AUTH_NOT_ENOUGH_SIGNATURES' | 'AUTH_FORBIDDEN'>[] = [
      [RequestErrorCode.AUTH_NOT_ENOUGH_SIGNATURES, { roleName: 'TRUSTEE' }],
      [RequestErrorCode.AUTH_FORBIDDEN],
    ];
    expect(kept.map((args) => new RequestError(...args).reason)).to.deep.equal(['Not enough TRUSTEE signatures', 'The action is forbidden']);
  });

  it('the field checks raise each code with where the value sits, the value and the code’s own data', () => {
    expectCode(() => str({ max: 2 })('abc', AT), RequestError, 'FIELD_TOO_LONG', { ...AT, value: 'abc', max: 2 });
    expectCode(() => integer({ min: 1n })(0, AT), RequestError, 'FIELD_TOO_SMALL', { ...AT, value: 0, min: 1n });
    expectCode(() => oneOf(['a'])('b', AT), RequestError, 'FIELD_ENUM', { ...AT, value: 'b', allowed: ['a'] });
    expectCode(() => str()(1, AT), RequestError, 'FIELD_TYPE', { ...AT, value: 1, expected: 'str', got: 'int' });
    // an empty list is FIELD_EMPTY (where and the value), a list short of a larger minimum FIELD_TOO_SMALL with it
    const empty = expectCode(() => arrayOf(str(), { min: 1 })([], AT), RequestError, 'FIELD_EMPTY');
    expect(empty.data).to.deep.equal({ ...AT, value: [] });
    expectCode(() => arrayOf(str(), { min: 2 })(['a'], AT), RequestError, 'FIELD_TOO_SMALL', { ...AT, value: ['a'], min: 2 });
    expectCode(() => fail(RequestErrorCode.FIELD_PORT, AT, 0), RequestError, 'FIELD_PORT', { ...AT, value: 0 });
  });

  it('refuses, at compile time, a code without its data, with a wrong datum or with another code’s data', () => {
    const made: unknown[] = [
      // @ts-expect-error TAA_MISSING requires { ledgerId }
      () => new RequestError(RequestErrorCode.TAA_MISSING),
      // @ts-expect-error the data of another code (TAA_WRONG_DIGEST's)
      () => new RequestError(RequestErrorCode.TAA_MISSING, { digest: 'd' }),
      // @ts-expect-error FIELD_TYPE's `got` is a Python type name
      () => new RequestError(RequestErrorCode.FIELD_TYPE, { ...AT, value: 1, expected: 'str', got: 'integer' }),
      // @ts-expect-error FIELD_TYPE needs `got`
      () => new RequestError(RequestErrorCode.FIELD_TYPE, { ...AT, value: 1, expected: 'str' }),
      // @ts-expect-error AML_EMPTY carries nothing
      () => new RequestError(RequestErrorCode.AML_EMPTY, { problem: 'p' }),
      // @ts-expect-error NODE_CONFLICT's problem is one of the conflict texts
      () => new RequestError(RequestErrorCode.NODE_CONFLICT, { data: {}, problem: 'another text' }),
      // @ts-expect-error NYM_VERSION_1_MISMATCH names version 1
      () => new RequestError(RequestErrorCode.NYM_VERSION_1_MISMATCH, { dest: 'd', version: 2 }),
      // @ts-expect-error FIELD_TOO_LONG is not a bare field code: it needs its `max`
      () => fail(RequestErrorCode.FIELD_TOO_LONG, AT, 'abc'),
      // @ts-expect-error a relay of AUTH_FORBIDDEN alone cannot hold another code
      (): RequestErrorArgsOf<'AUTH_FORBIDDEN'> => [RequestErrorCode.AUTH_NOT_ENOUGH_SIGNATURES, { roleName: 'TRUSTEE' }],
    ];
    expect(made).to.have.length(9);
  });
});
