// Loopback ports and abort signals for the tests of a start under an AbortSignal: whether what an aborted start opened
// was closed (its port free again at once), and an abort that lands between two steps of the start.
import { createServer } from 'node:net';

/** A free loopback port, closed again. */
export async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

/** Whether `port` can be listened on at once on loopback (nothing left holding it). */
export async function portIsFree(port: number): Promise<boolean> {
  const srv = createServer();
  return new Promise<boolean>((resolve) => {
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/**
 * A signal that reads as not aborted until its `at`-th check of `aborted`, and aborts there with `reason`: an abort
 * while something starts, between two of its steps.
 */
export function signalAbortingAtCheck(at: number, reason = 'stopped while starting'): AbortSignal {
  const ac = new AbortController();
  let checks = 0;
  return new Proxy(ac.signal, {
    get(target, key) {
      if (key === 'aborted' && ++checks === at) ac.abort(new Error(reason));
      const v: unknown = Reflect.get(target, key, target);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}
