/**
 * Plugin ledgers (indy-plenum's ENABLED_PLUGINS: a plugin registers its ledger id, its txn types and
 * their handlers; the token plugin uses ledger 1001). A `LedgerPlugin` names one ledger besides the
 * base ledgers (pool 0, domain 1, config 2, audit 3) and the write and read types that use it. Its
 * handlers implement the same interfaces as the built-in types (handler.ts): static validation,
 * dynamic validation with authorization, state update, and reads answered with a state proof of
 * the plugin ledger's state. A node opens a ledger and a state for each plugin ledger, orders its
 * batches, records it in every audit txn and catches it up like the base ledgers.
 *
 * Every node of a pool must run the same plugins: a plugin's txns change that ledger's roots, which
 * the audit txn and the BLS multi-signatures cover.
 */
import type { ReadHandler, RequestHandler, WriteHandler } from './handler.js';
import { asyncMethodProblem } from './synchronous-handler.js';

/** The smallest plugin ledger id (ids below are Quire's, 0-3 the base ledgers). */
export const PLUGIN_LEDGER_ID_MIN = 1000;
/** The largest plugin ledger id (a ledger id is at most 2^31-1 in storage). */
export const PLUGIN_LEDGER_ID_MAX = 0x7fff_ffff;

export interface LedgerPlugin {
  /** A short name for logs and errors, e.g. `kv-ledger`. */
  readonly name: string;
  /** The plugin's ledger: an integer in [PLUGIN_LEDGER_ID_MIN, PLUGIN_LEDGER_ID_MAX]. */
  readonly ledgerId: number;
  /**
   * The plugin's types. Every write handler writes to `ledgerId`; a read handler reads `ledgerId`.
   * Type codes must not be Quire's own nor another plugin's.
   */
  readonly handlers: readonly RequestHandler[];
  /** Whether writes to the plugin ledger need a TAA acceptance while an agreement is in force (indy-plenum's taa_acceptance_required). Default false. */
  readonly taaAcceptanceRequired?: boolean;
}

/**
 * The problem with a value offered as a LedgerPlugin (the node's loader calls this on each module's
 * export), or undefined when it is one. Checks the shape, the ledger id range and each handler's
 * kind, type code, ledger and synchronous methods (not async functions); type codes clashing with
 * registered types are found by the registry.
 */
export function ledgerPluginProblem(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object') return 'not an object';
  const p = value as Record<string, unknown>;
  if (typeof p.name !== 'string' || p.name.length === 0 || p.name.length > 100) return 'name: expected a string of 1..100 characters';
  const id = p.ledgerId;
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < PLUGIN_LEDGER_ID_MIN || id > PLUGIN_LEDGER_ID_MAX)
    return `ledgerId: expected an integer in [${PLUGIN_LEDGER_ID_MIN}, ${PLUGIN_LEDGER_ID_MAX}], got ${String(id)}`;
  if (p.taaAcceptanceRequired !== undefined && typeof p.taaAcceptanceRequired !== 'boolean') return 'taaAcceptanceRequired: expected a boolean';
  if (!Array.isArray(p.handlers) || p.handlers.length === 0) return 'handlers: expected a non-empty list';
  for (const [i, h] of (p.handlers as unknown[]).entries()) {
    const problem = handlerProblem(h, id);
    if (problem !== undefined) return `handlers[${i}]: ${problem}`;
  }
  return undefined;
}

function handlerProblem(h: unknown, ledgerId: number): string | undefined {
  if (h === null || typeof h !== 'object') return 'not an object';
  const o = h as Record<string, unknown>;
  if (typeof o.type !== 'string' || !/^[0-9]{1,10}$/.test(o.type)) return `type: expected a decimal type code, got ${JSON.stringify(o.type)}`;
  if (typeof o.name !== 'string' || o.name.length === 0) return 'name: expected a type name';
  if (typeof o.validator !== 'string') return 'validator: expected a string';
  if (typeof o.validateStatic !== 'function') return 'validateStatic: expected a function';
  const asyncProblem = asyncMethodProblem(o);
  if (asyncProblem !== undefined) return asyncProblem;
  if (o.kind === 'write') {
    const w = o as unknown as WriteHandler;
    if (w.ledgerId !== ledgerId) return `a write type of the plugin must write to ledger ${ledgerId}, not ${String(w.ledgerId)}`;
    if (typeof w.validateDynamic !== 'function' || typeof w.updateState !== 'function') return 'a write type needs validateDynamic and updateState';
    return undefined;
  }
  if (o.kind === 'read') {
    const r = o as unknown as ReadHandler;
    if (r.ledgerId !== ledgerId) return `a read type of the plugin must read ledger ${ledgerId}, not ${String(r.ledgerId)}`;
    if (typeof r.read !== 'function') return 'a read type needs read';
    return undefined;
  }
  return `kind: expected 'write' or 'read', got ${JSON.stringify(o.kind)}`;
}
