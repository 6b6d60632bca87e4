// Helpers of the synchronous executor: running handler steps that may be declared async, and the
// RFC 6962 consistency proof over leaf hashes.
import { inspect } from 'node:util';
import { RequestError, RequestErrorCode } from '@quire/requests';
import { merkleRootOfLeafHashes } from '@quire/storage';
import { NodeError, NodeErrorCode } from './errors.js';

/** State of a promise that settled without yielding (an async function that never awaited). */
function settledState(p: Promise<unknown>): 'fulfilled' | 'rejected' | 'pending' {
  const s = inspect(p, { depth: 0 });
  if (s.includes('<pending>')) return 'pending';
  return s.includes('<rejected>') ? 'rejected' : 'fulfilled';
}

/**
 * Runs a handler step that may be declared async. A step that finished without awaiting I/O is
 * accepted (its effects happened synchronously); one that is still pending needs asynchronous
 * storage access, which a synchronous executor cannot give, and fails the request deterministically.
 */
export function runStep(r: void | Promise<void>, type: string): void {
  if (r === undefined || typeof (r as Promise<void>).then !== 'function') return;
  const p = r as Promise<void>;
  const state = settledState(p);
  let error: unknown;
  p.catch((e: unknown) => {
    error = e;
  });
  if (state === 'fulfilled') return;
  if (state === 'pending') throw new NodeError(NodeErrorCode.ASYNC_HANDLER, { type });
  throw error ?? new RequestError(RequestErrorCode.INTERNAL, { problem: `handler of type ${type} failed` });
}

/** RFC 6962 SUBPROOF(m, D[n], b) over leaf hashes (formats.md §6.4). */
export function consistencySubproof(m: number, leaves: readonly Uint8Array[], b: boolean): Uint8Array[] {
  const n = leaves.length;
  if (m === n) return b ? [] : [merkleRootOfLeafHashes(leaves)];
  let k = 1;
  while (k * 2 < n) k *= 2;
  if (m <= k) return [...consistencySubproof(m, leaves.slice(0, k), b), merkleRootOfLeafHashes(leaves.slice(k))];
  return [...consistencySubproof(m - k, leaves.slice(k), false), merkleRootOfLeafHashes(leaves.slice(0, k))];
}
