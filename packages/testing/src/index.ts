/**
 * @quire/testing: what the packages' test suites share. Every Quire failure is a `QuireError` with a stable `code`
 * (and typed `data`); these helpers assert on that code, so a test never passes on a missing throw or on an error of
 * another kind.
 */
import { expect } from 'chai';
import { QuireError } from '@quire/common';

/** A class of coded errors (StorageError, CryptoError, RequestError...). */
export type CodedErrorClass<E extends QuireError> = new (...args: never) => E;

/**
 * The code of the QuireError `fn` throws, or undefined when it returns. Any other error is thrown again: a test
 * comparing codes never mistakes an unexpected failure (a TypeError, an assertion) for a coded refusal.
 */
export function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    if (e instanceof QuireError) return e.code;
    throw e;
  }
  return undefined;
}

/** {@link codeOf} for a promise or an async function: the code it rejects with, or undefined when it resolves. */
export async function codeOfAsync(p: Promise<unknown> | (() => unknown)): Promise<string | undefined> {
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (e) {
    if (e instanceof QuireError) return e.code;
    throw e;
  }
  return undefined;
}

function checkCaught<E extends QuireError>(
  caught: unknown,
  threw: boolean,
  cls: CodedErrorClass<E>,
  code: string,
  data: Record<string, unknown> | undefined,
): E {
  if (!threw) return expect.fail(`expected ${cls.name} ${code}, but nothing was thrown`);
  expect(caught, String(caught)).to.be.instanceOf(cls);
  expect(caught).to.be.instanceOf(QuireError);
  const e = caught as E;
  expect(e.code, e.message).to.equal(code);
  if (data !== undefined) expect(e.data).to.deep.include(data);
  return e;
}

/**
 * Asserts that `fn` throws an error of class `cls` with `code` (and, when given, `data` among its data); returns the
 * error for further checks.
 */
export function expectCode<E extends QuireError>(fn: () => unknown, cls: CodedErrorClass<E>, code: string, data?: Record<string, unknown>): E {
  let caught: unknown;
  let threw = false;
  try {
    fn();
  } catch (e) {
    caught = e;
    threw = true;
  }
  return checkCaught(caught, threw, cls, code, data);
}

/** {@link expectCode} for a promise or an async function. */
export async function expectCodeAsync<E extends QuireError>(
  p: Promise<unknown> | (() => unknown),
  cls: CodedErrorClass<E>,
  code: string,
  data?: Record<string, unknown>,
): Promise<E> {
  let caught: unknown;
  let threw = false;
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (e) {
    caught = e;
    threw = true;
  }
  return checkCaught(caught, threw, cls, code, data);
}

/**
 * Waits for a condition instead of sleeping: calls `fn` every `everyMs` until it returns a value other than
 * undefined (an error it throws counts as "not yet"), and resolves with that value; after `timeoutMs` it fails with
 * `what` and the last error. The suites' one way to wait for something to happen.
 */
export async function waitFor<T>(what: string, fn: () => Promise<T | undefined> | T | undefined, timeoutMs = 10_000, everyMs = 25): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() >= end) break;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  const why = last instanceof Error ? `: ${last.message}` : last !== undefined ? `: ${String(last)}` : '';
  // a wait that never ends is a failed test: chai's AssertionError, like the assertions of expectCode
  return expect.fail(`timed out after ${timeoutMs} ms waiting for ${what}${why}`);
}

/** {@link waitFor} of a yes/no condition: resolves once `cond` holds. */
export async function waitUntil(what: string, cond: () => boolean | Promise<boolean>, timeoutMs = 10_000, everyMs = 25): Promise<void> {
  await waitFor(what, async () => ((await cond()) ? true : undefined), timeoutMs, everyMs);
}

export { freePort, portIsFree, signalAbortingAtCheck } from './sockets.js';
export { importRefusing, type RefusedImport } from './module-graph.js';
export { seededRandom } from './random.js';

/**
 * The node arguments that run a TypeScript entry of this repository from its sources, as the suites do (the packages'
 * `quire-source` export condition, tsx, and the polyfills of Node 20): `spawn(process.execPath, [...SOURCE_RUN_ARGS,
 * 'path/to/entry.ts', ...args])`.
 */
export const SOURCE_RUN_ARGS: readonly string[] = ['--conditions=quire-source', '--import', 'tsx', '--import', '@quire/common/polyfill'];
