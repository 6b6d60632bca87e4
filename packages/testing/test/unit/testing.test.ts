// The shared assertions fail where they must: on no throw, on another class, on another code, on other data, and
// they never take a plain Error for a coded one.
import { AssertionError, expect } from 'chai';
import { CodedError, EncodingError, EncodingErrorCode, IdentifierError } from '@quire/common';
import { codeOf, codeOfAsync, expectCode, expectCodeAsync, waitFor, waitUntil } from '../../src/index.js';

const json = (): never => {
  throw new EncodingError(EncodingErrorCode.INVALID_JSON, { position: 3, reason: 'x' });
};
const fails = (fn: () => unknown): void => {
  expect(fn).to.throw(AssertionError);
};
const failsAsync = async (p: Promise<unknown>): Promise<void> => {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).to.be.instanceOf(AssertionError);
};

describe('@quire/testing', () => {
  it('codeOf: the code, undefined without a throw, any other error thrown again', async () => {
    expect(codeOf(json)).to.equal(EncodingErrorCode.INVALID_JSON);
    expect(codeOf(() => 1)).to.equal(undefined);
    expect(() =>
      codeOf(() => {
        throw new TypeError('bug');
      }),
    ).to.throw(TypeError);
    expect(await codeOfAsync(async () => json())).to.equal(EncodingErrorCode.INVALID_JSON);
    expect(await codeOfAsync(Promise.resolve(1))).to.equal(undefined);
    const rethrown = await codeOfAsync(Promise.reject(new RangeError('bug'))).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(rethrown).to.be.instanceOf(RangeError);
  });

  it('expectCode: returns the error; fails on no throw, another class, another code, other data', async () => {
    const e = expectCode(json, EncodingError, EncodingErrorCode.INVALID_JSON, { position: 3 });
    expect(e.data.reason).to.equal('x');
    fails(() => expectCode(() => 1, EncodingError, EncodingErrorCode.INVALID_JSON));
    fails(() => expectCode(json, IdentifierError, EncodingErrorCode.INVALID_JSON));
    fails(() => expectCode(json, EncodingError, EncodingErrorCode.DUPLICATE_KEY));
    fails(() => expectCode(json, EncodingError, EncodingErrorCode.INVALID_JSON, { position: 4 }));
    fails(() =>
      expectCode(
        () => {
          throw Object.assign(new Error('plain'), { code: 'INVALID_JSON' });
        },
        CodedError,
        'INVALID_JSON',
      ),
    );
    expect(
      (
        await expectCodeAsync(
          Promise.reject(new EncodingError(EncodingErrorCode.INVALID_JSON, { position: 0, reason: 'empty' })),
          EncodingError,
          EncodingErrorCode.INVALID_JSON,
        )
      ).code,
    ).to.equal(EncodingErrorCode.INVALID_JSON);
    await failsAsync(expectCodeAsync(Promise.resolve(1), EncodingError, EncodingErrorCode.INVALID_JSON));
    await failsAsync(expectCodeAsync(async () => json(), EncodingError, EncodingErrorCode.DUPLICATE_KEY));
  });

  it('waitFor: resolves with the first value once the condition holds, errors counting as "not yet"', async () => {
    let calls = 0;
    const v = await waitFor('the third call', () => {
      calls++;
      if (calls === 1) throw new Error('not ready');
      return calls >= 3 ? calls : undefined;
    });
    expect(v).to.equal(3);
    let flag = false;
    setImmediate(() => (flag = true));
    await waitUntil('the flag', () => flag);
    expect(flag).to.equal(true);
  });

  it('waitFor: fails after its deadline, naming what it waited for and the last error', async () => {
    const e = await waitFor(
      'a value that never comes',
      () => {
        throw new Error('still broken');
      },
      50,
      5,
    ).then(
      () => undefined,
      (err: unknown) => err as Error,
    );
    expect(e?.message).to.match(/timed out after 50 ms waiting for a value that never comes: still broken/);
    expect(e?.name, 'a failed test, not an error of the code under test').to.equal('AssertionError');
    const e2 = await waitUntil('never', () => false, 30, 5).then(
      () => undefined,
      (err: unknown) => err as Error,
    );
    expect(e2?.message).to.match(/waiting for never$/);
  });
});
