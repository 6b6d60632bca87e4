import { expect } from 'chai';
import { QuireError } from '@quire/common';

/** Asserts that fn throws a QuireError of class `cls` with `code`; returns the error. */
export function expectCode<E extends QuireError>(fn: () => unknown, cls: new (...a: never[]) => E, code: string): E {
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  expect(caught, 'expected an error').to.be.instanceOf(cls);
  expect((caught as E).code).to.equal(code);
  expect(caught).to.be.instanceOf(QuireError);
  return caught as E;
}
