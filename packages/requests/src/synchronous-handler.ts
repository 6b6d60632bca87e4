/**
 * A handler's `validateStatic`, `validateDynamic`, `prepareTxn` and `updateState` are synchronous
 * (handler.ts): the pipeline and the executor call them and go on at once, so a promise one of them
 * returns is never awaited. An async `validateDynamic` that rejects would let the request pass its
 * dynamic checks, and its rejection would be unhandled. This module refuses such a handler at
 * registration when it can be told (an async function, `asyncMethodProblem`), and guards a plugin's
 * write handler at call time (`guardedPluginWrite`): a `validateDynamic` that returns a thenable
 * fails the request with HANDLER_NOT_SYNCHRONOUS, and the thenable's own outcome is dropped.
 */
import { RequestError, RequestErrorCode } from './errors.js';
import type { HandlerContext, ParsedRequest, ReceiptContext, Txn, WriteHandler } from './handler.js';

/** The handler methods that must be synchronous. */
const SYNCHRONOUS_METHODS = ['validateStatic', 'validateDynamic', 'prepareTxn', 'updateState'] as const;

/** Whether `f` is an `async function` or an `async function*` (its call always returns a promise or an async iterator). */
export function isAsyncFunction(f: unknown): boolean {
  if (typeof f !== 'function') return false;
  const tag = Object.prototype.toString.call(f);
  return tag === '[object AsyncFunction]' || tag === '[object AsyncGeneratorFunction]';
}

/** The problem with a handler whose synchronous method is an async function, or undefined. */
export function asyncMethodProblem(handler: object): string | undefined {
  for (const method of SYNCHRONOUS_METHODS) {
    if (isAsyncFunction((handler as Record<string, unknown>)[method]))
      return `${method}: expected a synchronous function (an async one's promise is not awaited, so its refusal would be lost)`;
  }
  return undefined;
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

/** Marks a thenable's rejection handled, so that dropping it cannot end the process (unhandled rejection). */
function dropOutcome(value: PromiseLike<unknown>): void {
  try {
    value.then(undefined, () => undefined);
  } catch {
    // a thenable whose `then` throws has no outcome to drop
  }
}

/**
 * A plugin's write handler as registered: the same handler, its methods called on the plugin's own
 * object, with `validateDynamic` checked at each call. One that returns a thenable (a function that
 * is not `async` yet returns a promise, which registration cannot tell) throws RequestError
 * HANDLER_NOT_SYNCHRONOUS, so the request is refused (REJECT at ordering, REQNACK at receipt) the same
 * way on every node running the plugin.
 */
export function guardedPluginWrite(handler: WriteHandler): WriteHandler {
  const { validateAtReceipt, prepareTxn } = handler;
  return {
    kind: 'write',
    type: handler.type,
    name: handler.name,
    validator: handler.validator,
    ledgerId: handler.ledgerId,
    ...(handler.forceable === undefined ? {} : { forceable: handler.forceable }),
    validateStatic: (request) => handler.validateStatic(request),
    ...(validateAtReceipt === undefined
      ? {}
      : { validateAtReceipt: (request: ParsedRequest, ctx: ReceiptContext) => validateAtReceipt.call(handler, request, ctx) }),
    validateDynamic(request: ParsedRequest, ctx: HandlerContext): void {
      const out: unknown = handler.validateDynamic(request, ctx);
      if (isThenable(out)) {
        dropOutcome(out);
        throw new RequestError(RequestErrorCode.HANDLER_NOT_SYNCHRONOUS, { type: handler.type, method: 'validateDynamic' });
      }
    },
    ...(prepareTxn === undefined ? {} : { prepareTxn: (txn: Txn, request: ParsedRequest, ctx: HandlerContext) => prepareTxn.call(handler, txn, request, ctx) }),
    updateState: (txn, ctx, request) => handler.updateState(txn, ctx, request),
  };
}
