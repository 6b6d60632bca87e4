/**
 * The handler registry: type code -> handler. `createDefaultRegistry()` registers every type Quire
 * implements; each type module adds one line to HANDLERS below. A type not registered is unknown
 * (`invalid type: {type}`).
 */
import { TxnType } from '@quire/common';
import type { ActionHandler, ReadHandler, RequestHandler, WriteHandler } from './handler.js';
import { attribHandler } from './types/attrib.js';
import { claimDefHandler } from './types/claim-def.js';
import { getAttrHandler } from './types/get-attr.js';
import { getClaimDefHandler } from './types/get-claim-def.js';
import { getNymHandler } from './types/get-nym.js';
import { getRevocRegDefHandler } from './types/get-revoc-reg-def.js';
import { getRevocRegDeltaHandler } from './types/get-revoc-reg-delta.js';
import { getRevocRegHandler } from './types/get-revoc-reg.js';
import { getRichSchemaObjectByIdHandler, getRichSchemaObjectByMetadataHandler } from './types/get-rich-schema-object.js';
import { getSchemaHandler } from './types/get-schema.js';
import { jsonLdContextHandler } from './types/json-ld-context.js';
import { nymHandler } from './types/nym.js';
import { revocRegDefHandler } from './types/revoc-reg-def.js';
import { revocRegEntryHandler } from './types/revoc-reg-entry.js';
import { richSchemaCredDefHandler } from './types/rich-schema-cred-def.js';
import { richSchemaEncodingHandler } from './types/rich-schema-encoding.js';
import { richSchemaMappingHandler } from './types/rich-schema-mapping.js';
import { richSchemaPresDefHandler } from './types/rich-schema-pres-def.js';
import { richSchemaSchemaHandler } from './types/rich-schema.js';
import { schemaHandler } from './types/schema.js';
import { authRuleHandler } from './types/auth-rule.js';
import { authRulesHandler } from './types/auth-rules.js';
import { getAuthRuleHandler } from './types/get-auth-rule.js';
import { getTaaAmlHandler } from './types/get-taa-aml.js';
import { getTaaHandler } from './types/get-taa.js';
import { getTxnHandler } from './types/get-txn.js';
import { nodeUpgradeHandler } from './types/node-upgrade.js';
import { nodeHandler } from './types/node.js';
import { poolConfigHandler } from './types/pool-config.js';
import { poolRestartHandler } from './types/pool-restart.js';
import { poolUpgradeHandler } from './types/pool-upgrade.js';
import { validatorInfoHandler } from './types/validator-info.js';
import { txnAuthorAgreementAmlHandler } from './types/txn-author-agreement-aml.js';
import { txnAuthorAgreementHandler } from './types/txn-author-agreement.js';
import { txnAuthorAgreementDisableHandler } from './types/txn-author-agreement-disable.js';
import { ledgersFreezeHandler } from './types/ledgers-freeze.js';
import { getFrozenLedgersHandler } from './types/get-frozen-ledgers.js';
import { type LedgerPlugin, ledgerPluginProblem } from './plugin.js';
import { RequestError, RequestErrorCode } from './errors.js';
import { asyncMethodProblem, guardedPluginWrite } from './synchronous-handler.js';

/**
 * Every handler Quire implements. A new type module adds its import above and one line here.
 */
const DEFAULT_HANDLERS: readonly RequestHandler[] = [
  // pool / config / actions
  nodeHandler,
  poolUpgradeHandler,
  nodeUpgradeHandler,
  poolConfigHandler,
  poolRestartHandler,
  validatorInfoHandler,
  authRuleHandler,
  authRulesHandler,
  txnAuthorAgreementHandler,
  txnAuthorAgreementAmlHandler,
  txnAuthorAgreementDisableHandler,
  ledgersFreezeHandler,
  // reads
  getTxnHandler,
  getAuthRuleHandler,
  getTaaHandler,
  getTaaAmlHandler,
  getFrozenLedgersHandler,
  // domain identity types
  nymHandler,
  attribHandler,
  schemaHandler,
  claimDefHandler,
  revocRegDefHandler,
  revocRegEntryHandler,
  jsonLdContextHandler,
  richSchemaSchemaHandler,
  richSchemaEncodingHandler,
  richSchemaMappingHandler,
  richSchemaCredDefHandler,
  richSchemaPresDefHandler,
  // domain reads
  getNymHandler,
  getAttrHandler,
  getSchemaHandler,
  getClaimDefHandler,
  getRevocRegDefHandler,
  getRevocRegHandler,
  getRevocRegDeltaHandler,
  getRichSchemaObjectByIdHandler,
  getRichSchemaObjectByMetadataHandler,
];

export class HandlerRegistry {
  private readonly byType = new Map<string, RequestHandler>();
  private readonly pluginsById = new Map<number, LedgerPlugin>();

  constructor(handlers: Iterable<RequestHandler> = []) {
    for (const h of handlers) this.register(h);
  }

  /**
   * Adds a handler; a second handler for the same type code, or a synchronous method given as an async function
   * (synchronous-handler.ts), is a programming error.
   */
  register(handler: RequestHandler): this {
    if (this.byType.has(handler.type)) throw new RequestError(RequestErrorCode.REGISTRY_INVALID, { problem: `duplicate handler for type ${handler.type}` });
    const asyncProblem = asyncMethodProblem(handler);
    if (asyncProblem !== undefined) throw new RequestError(RequestErrorCode.REGISTRY_INVALID, { problem: `type ${handler.type}: ${asyncProblem}` });
    this.byType.set(handler.type, handler);
    return this;
  }

  get(type: unknown): RequestHandler | undefined {
    return typeof type === 'string' ? this.byType.get(type) : undefined;
  }

  /**
   * The handler of a request of `type` a node takes in (from a client or a peer), or the refusal: EXTERNAL_AUDIT for an
   * AUDIT txn (the nodes append one to every batch, formats.md §10.1: no handler takes one sent), UNKNOWN_TYPE for a
   * type no handler takes.
   */
  handlerOf(type: string): RequestHandler {
    if (type === TxnType.AUDIT) throw new RequestError(RequestErrorCode.EXTERNAL_AUDIT);
    const h = this.byType.get(type);
    if (h === undefined) throw new RequestError(RequestErrorCode.UNKNOWN_TYPE, { type });
    return h;
  }

  /** The handler of a write of `type` (`handlerOf`), or NOT_A_WRITE for a read or an action. */
  writeHandlerOf(type: string): WriteHandler {
    const h = this.handlerOf(type);
    if (h.kind !== 'write') throw new RequestError(RequestErrorCode.NOT_A_WRITE, { type });
    return h;
  }

  write(type: unknown): WriteHandler | undefined {
    const h = this.get(type);
    return h?.kind === 'write' ? h : undefined;
  }

  read(type: unknown): ReadHandler | undefined {
    const h = this.get(type);
    return h?.kind === 'read' ? h : undefined;
  }

  action(type: unknown): ActionHandler | undefined {
    const h = this.get(type);
    return h?.kind === 'action' ? h : undefined;
  }

  /**
   * Adds a plugin ledger and its types. Throws (a programming or configuration error, the node's
   * loader reports it) when the plugin is malformed, its ledger is taken, or a type code is. Its
   * write handlers are registered as `guardedPluginWrite` gives them (the registry's handler of such a
   * type is not the plugin's object but calls it).
   */
  registerPlugin(plugin: LedgerPlugin): this {
    const problem = ledgerPluginProblem(plugin);
    if (problem !== undefined)
      throw new RequestError(RequestErrorCode.REGISTRY_INVALID, { problem: `plugin ${String((plugin as { name?: unknown } | null)?.name)}: ${problem}` });
    if (this.pluginsById.has(plugin.ledgerId))
      throw new RequestError(RequestErrorCode.REGISTRY_INVALID, {
        problem: `plugin ${plugin.name}: ledger ${plugin.ledgerId} is already the ledger of ${this.pluginsById.get(plugin.ledgerId)?.name}`,
      });
    for (const h of plugin.handlers)
      if (this.byType.has(h.type))
        throw new RequestError(RequestErrorCode.REGISTRY_INVALID, {
          problem: `plugin ${plugin.name}: type ${h.type} is already registered (${this.nameOf(h.type)})`,
        });
    // a plugin's writes are registered guarded: a validateDynamic returning a promise refuses the request
    for (const h of plugin.handlers) this.register(h.kind === 'write' ? guardedPluginWrite(h) : h);
    this.pluginsById.set(plugin.ledgerId, plugin);
    return this;
  }

  /** The plugins registered, by ascending ledger id. */
  plugins(): LedgerPlugin[] {
    return [...this.pluginsById.values()].sort((a, b) => a.ledgerId - b.ledgerId);
  }

  /** The plugin whose ledger is `ledgerId`, if any. */
  plugin(ledgerId: number): LedgerPlugin | undefined {
    return this.pluginsById.get(ledgerId);
  }

  /** Registered type codes in ascending numeric order. */
  types(): string[] {
    return [...this.byType.keys()].sort((a, b) => Number(a) - Number(b));
  }

  /** Name of a type (TYPE_NAME), or `Unknown_transaction_type`. */
  nameOf(type: string): string {
    return this.byType.get(type)?.name ?? 'Unknown_transaction_type';
  }
}

/** A registry holding every handler Quire implements, and the types of `plugins` (plugin.ts). */
export function createDefaultRegistry(plugins: readonly LedgerPlugin[] = []): HandlerRegistry {
  const registry = new HandlerRegistry(DEFAULT_HANDLERS);
  for (const p of plugins) registry.registerPlugin(p);
  return registry;
}
