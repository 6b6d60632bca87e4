import { expect } from 'chai';
import fc from 'fast-check';
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

/** JSON values whose text parseJson accepts: fc.jsonValue minus integral doubles of 2^63 and above,
 * which JSON.stringify prints as integer tokens that parseJson rightly refuses. */
export const acceptedJsonValue = (maxDepth: number) =>
  fc.jsonValue({ maxDepth }).filter((v) => !/(^|[^\d.eE+-])-?\d{19,}(?![\d.eE])/.test(JSON.stringify(v)));
