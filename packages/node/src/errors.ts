// Errors of the node process with stable codes. The message is a one-line reason fit for an
// operator (the CLI prints it as is); programs branch on `code`.
import { QuireError } from '@quire/common';

export const NodeErrorCode = {
  /** The config file cannot be read (data: file, reason). */
  CONFIG_UNREADABLE: 'CONFIG_UNREADABLE',
  /** The config file is not valid JSON or not an object (data: file, reason). */
  CONFIG_INVALID_JSON: 'CONFIG_INVALID_JSON',
  /** A config option is unknown or has a bad value (data: option, reason). */
  CONFIG_INVALID: 'CONFIG_INVALID',
  /** The key file is missing, unreadable or malformed (data: file, reason). */
  KEYS_INVALID: 'KEYS_INVALID',
  /** `init` would overwrite an existing key file (data: file). */
  KEYS_EXIST: 'KEYS_EXIST',
  /** A seed is not 32 bytes / 32 characters / 64 hex digits (data: reason). */
  SEED_INVALID: 'SEED_INVALID',
  /** A genesis file is missing or does not load (data: file, reason). */
  GENESIS_INVALID: 'GENESIS_INVALID',
  /** This node's alias is not in the pool ledger, or its key does not match its NODE entry (data: name, reason). */
  NOT_IN_POOL: 'NOT_IN_POOL',
  /** The stores disagree in a way startup cannot repair (data: reason). */
  STORAGE_INCONSISTENT: 'STORAGE_INCONSISTENT',
  /** A committed batch could not be written (data: reason); the node stops. */
  WRITE_FAILED: 'WRITE_FAILED',
  /** A batch's commit failed after it had begun to change the executor's state (data: ppSeqNo, reason); the node stops. */
  COMMIT_FAILED: 'COMMIT_FAILED',
  /** An executor call arrived in an impossible order, or with inputs that contradict each other (data: reason). */
  EXECUTOR_STATE: 'EXECUTOR_STATE',
  /** A request this node originated (NODE_UPGRADE) was refused (data: type, reason). */
  OWN_REQUEST_REFUSED: 'OWN_REQUEST_REFUSED',
  /** Genesis generation input is invalid (data: field, reason). */
  GENESIS_GEN_INVALID: 'GENESIS_GEN_INVALID',
  /** The caller's AbortSignal ended the node's start; whatever it had opened is closed (data: reason, the signal's reason as text). */
  ABORTED: 'ABORTED',
  /** An authorized action of a type this node does not carry out was handed to it (data: type). */
  ACTION_UNAVAILABLE: 'ACTION_UNAVAILABLE',
  /** The node package's own package.json gives no version (data: reason). */
  VERSION_UNKNOWN: 'VERSION_UNKNOWN',
  /** A configured ledger plugin cannot be imported (data: plugin, reason). */
  PLUGIN_NOT_FOUND: 'PLUGIN_NOT_FOUND',
  /** A configured ledger plugin does not export a valid LedgerPlugin, or clashes with a type or ledger (data: plugin, reason). */
  PLUGIN_INVALID: 'PLUGIN_INVALID',
  /** The audit ledger names a plugin ledger this node does not run (data: ledgerId). */
  PLUGIN_MISSING: 'PLUGIN_MISSING',
} as const;
export type NodeErrorCode = (typeof NodeErrorCode)[keyof typeof NodeErrorCode];

/** The data of each {@link NodeErrorCode}, checked wherever a NodeError is made. */
export type NodeErrorData = {
  CONFIG_UNREADABLE: { file: string; reason: string };
  CONFIG_INVALID_JSON: { file: string; reason: string };
  CONFIG_INVALID: { option: string; reason: string };
  KEYS_INVALID: { file: string; reason: string };
  KEYS_EXIST: { file: string };
  SEED_INVALID: { reason: string };
  GENESIS_INVALID: { file: string; reason: string };
  NOT_IN_POOL: { name: string; reason: string };
  STORAGE_INCONSISTENT: { reason: string };
  WRITE_FAILED: { reason: string };
  COMMIT_FAILED: { ppSeqNo: number; reason: string };
  EXECUTOR_STATE: { reason: string };
  OWN_REQUEST_REFUSED: { type: string; reason: string };
  GENESIS_GEN_INVALID: { field: string; reason: string };
  ABORTED: { reason: string };
  ACTION_UNAVAILABLE: { type: string };
  VERSION_UNKNOWN: { reason: string };
  PLUGIN_NOT_FOUND: { plugin: string; reason: string };
  PLUGIN_INVALID: { plugin: string; reason: string };
  PLUGIN_MISSING: { ledgerId: number };
};

/** The arguments of a NodeError: each code with its own data, and the error that caused it. */
export type NodeErrorArgs = {
  [K in NodeErrorCode]: Record<string, never> extends NodeErrorData[K]
    ? [code: K, data?: NodeErrorData[K], options?: { cause?: unknown }]
    : [code: K, data: NodeErrorData[K], options?: { cause?: unknown }];
}[NodeErrorCode];

const TEXT: { [K in NodeErrorCode]: (d: NodeErrorData[K]) => string } = {
  CONFIG_UNREADABLE: (d) => `cannot read config file ${String(d.file)}: ${String(d.reason)}`,
  CONFIG_INVALID_JSON: (d) => `config file ${String(d.file)} is not a JSON object: ${String(d.reason)}`,
  CONFIG_INVALID: (d) => `config option ${String(d.option)}: ${String(d.reason)}`,
  KEYS_INVALID: (d) => `key file ${String(d.file)}: ${String(d.reason)}`,
  KEYS_EXIST: (d) => `key file ${String(d.file)} already exists (remove it first to create new keys)`,
  SEED_INVALID: (d) => `invalid seed: ${String(d.reason)}`,
  GENESIS_INVALID: (d) => `genesis file ${String(d.file)}: ${String(d.reason)}`,
  NOT_IN_POOL: (d) => `node ${String(d.name)}: ${String(d.reason)}`,
  STORAGE_INCONSISTENT: (d) => `storage is inconsistent: ${String(d.reason)}`,
  WRITE_FAILED: (d) => `committing a batch failed: ${String(d.reason)}`,
  COMMIT_FAILED: (d) => `the commit of batch ${String(d.ppSeqNo)} failed half-way, memory and storage may differ: ${String(d.reason)}`,
  EXECUTOR_STATE: (d) => `executor: ${String(d.reason)}`,
  OWN_REQUEST_REFUSED: (d) => `this node's request of type ${String(d.type)} was refused: ${String(d.reason)}`,
  GENESIS_GEN_INVALID: (d) => `genesis generation: ${String(d.field)}: ${String(d.reason)}`,
  ABORTED: (d) => `node start aborted: ${String(d.reason)}`,
  ACTION_UNAVAILABLE: (d) => `action ${String(d.type)} is not available on this node`,
  VERSION_UNKNOWN: (d) => `the version of @quire/node is unknown: ${String(d.reason)}`,
  PLUGIN_NOT_FOUND: (d) => `ledger plugin ${String(d.plugin)} cannot be loaded: ${String(d.reason)}`,
  PLUGIN_INVALID: (d) => `ledger plugin ${String(d.plugin)}: ${String(d.reason)}`,
  PLUGIN_MISSING: (d) =>
    `the audit ledger records ledger ${String(d.ledgerId)}, which no configured plugin provides (every node of a pool must run the same plugins)`,
};

export class NodeError extends QuireError {
  declare readonly code: NodeErrorCode;
  /** The data of the code (any code's, as read: narrow by `code`). */
  declare readonly data: NodeErrorData[NodeErrorCode] & Record<string, unknown>;
  constructor(...args: NodeErrorArgs) {
    const [code, data, options] = args;
    super(code, data, (TEXT[code] as (d: NodeErrorData[NodeErrorCode]) => string)(data));
    if (options?.cause !== undefined) (this as { cause?: unknown }).cause = options.cause;
  }
}

export function reasonOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
