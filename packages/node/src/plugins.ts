// Ledger plugins (indy-plenum's ENABLED_PLUGINS): the config's `plugins` are loaded at start with a
// dynamic import. A module exports one LedgerPlugin (@quire/requests plugin.ts), or a list of them,
// as its default export or as `plugin`. Each is checked (shape, ledger id, handlers, none of whose
// synchronous checks is an async function) and registered with the built-in types; any problem stops
// the start with a stable code: PLUGIN_NOT_FOUND when the module does not import, PLUGIN_INVALID when
// it exports no valid plugin or clashes with a type or ledger already taken. Every node of a pool must run the same plugins.
import { isAbsolute } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type HandlerRegistry, type LedgerPlugin, createDefaultRegistry, ledgerPluginProblem } from '@quire/requests';
import { resolvePath } from './config.js';
import { NodeError, NodeErrorCode, reasonOf } from './errors.js';

/** What the node runs with: the plugins in config order and the registry of every type. */
export interface LoadedPlugins {
  plugins: LedgerPlugin[];
  registry: HandlerRegistry;
  /** the plugin ledgers, ascending */
  ledgerIds: number[];
}

/** A path (starts with `.` or `/`, or is absolute) resolved against the data directory as a file URL; else a module specifier as is. */
export function pluginImportSpecifier(spec: string, dataDir: string): string {
  if (spec.startsWith('.') || isAbsolute(spec)) return pathToFileURL(resolvePath(dataDir, spec)).href;
  return spec;
}

/** Imports, checks and registers the configured plugins; throws NodeError PLUGIN_NOT_FOUND / PLUGIN_INVALID. */
export async function loadLedgerPlugins(specs: readonly string[], dataDir: string): Promise<LoadedPlugins> {
  const plugins: LedgerPlugin[] = [];
  for (const spec of specs) {
    let mod: Record<string, unknown>;
    try {
      mod = (await import(pluginImportSpecifier(spec, dataDir))) as Record<string, unknown>;
    } catch (e) {
      throw new NodeError(NodeErrorCode.PLUGIN_NOT_FOUND, { plugin: spec, reason: reasonOf(e) }, { cause: e });
    }
    const exported = mod.default ?? mod.plugin;
    if (exported === undefined) throw new NodeError(NodeErrorCode.PLUGIN_INVALID, { plugin: spec, reason: 'the module exports neither default nor plugin' });
    const list = Array.isArray(exported) ? (exported as unknown[]) : [exported];
    if (list.length === 0) throw new NodeError(NodeErrorCode.PLUGIN_INVALID, { plugin: spec, reason: 'the module exports an empty list' });
    for (const p of list) {
      const problem = ledgerPluginProblem(p);
      if (problem !== undefined) throw new NodeError(NodeErrorCode.PLUGIN_INVALID, { plugin: spec, reason: problem });
      plugins.push(p as LedgerPlugin);
    }
  }
  let registry: HandlerRegistry;
  try {
    registry = createDefaultRegistry(plugins);
  } catch (e) {
    throw new NodeError(NodeErrorCode.PLUGIN_INVALID, { plugin: specs.join(', '), reason: reasonOf(e) }, { cause: e });
  }
  return { plugins, registry, ledgerIds: plugins.map((p) => p.ledgerId).sort((a, b) => a - b) };
}
