/**
 * NODE ("0", pool ledger; requests.md §5.1): adds a node or updates one. The node id (`dest`) is
 * the node's Ed25519 verkey; BLS keys come with a proof of possession. Dynamic failures are
 * UnauthorizedClientRequest. State (formats.md 8.1): key `dest` -> CJ({identifier: steward} merged
 * with every NODE's `data`), not wrapped.
 */
import { b58decodeOrUndefined, canonicalJson, canonicalJsonBytes, LedgerId, TxnType } from '@quire/common';
import { blsVerifyPop } from '@quire/crypto';
import { type NodeConflict, RequestError, RequestErrorCode } from '../errors.js';
import type { HandlerContext, NodeIndexField, ParsedRequest, Txn, WriteHandler } from '../handler.js';
import { decodeJsonObject } from '../state-keys.js';
import { Limits, arrayOf, blsKey, blsPop, ed25519Key, ip, objectSchema, oneOf, optional, port, portNumber, required, str } from '../validation/index.js';

const VALIDATOR = 'ClientNodeOperation';
const ADDRESS_FIELDS = ['node_ip', 'node_port', 'client_ip', 'client_port'] as const;
const CREATE_FIELDS = ['node_ip', 'node_port', 'client_ip', 'client_port', 'alias'] as const;

const dataSchema = objectSchema('ClientNodeOperationData', {
  alias: required(str({ max: Limits.NAME })),
  node_ip: optional(ip),
  node_port: optional(port),
  client_ip: optional(ip),
  client_port: optional(port),
  services: optional(arrayOf(oneOf(['VALIDATOR']))),
  blskey: optional(blsKey),
  blskey_pop: optional(blsPop),
});

const schema = objectSchema(VALIDATOR, {
  dest: required((v, at) => {
    try {
      ed25519Key(v, at);
    } catch {
      throw new RequestError(RequestErrorCode.NODE_DEST_NOT_KEY, { dest: v });
    }
  }),
  data: required(dataSchema.check),
});

type NodeRecord = Record<string, unknown>;

function verifyPop(key: string, pop: string): boolean {
  const k = b58decodeOrUndefined(key);
  const p = b58decodeOrUndefined(pop);
  if (!k || !p) return false;
  try {
    return blsVerifyPop(k, p);
  } catch {
    return false;
  }
}

/** (ip, numeric port) of a record, or undefined when either is absent. */
function ha(rec: NodeRecord, ipField: string, portField: string): string | undefined {
  const i = rec[ipField];
  const p = portNumber(rec[portField]);
  return typeof i === 'string' && p !== undefined ? `${i}:${p}` : undefined;
}

/**
 * The index keys of a node record (pool state, formats.md 8.1): its alias, node and client
 * addresses (`ip:port`, numeric port) and steward (`identifier`), where present.
 */
export function nodeIndexKeys(rec: Readonly<Record<string, unknown>>): [NodeIndexField, string][] {
  const out: [NodeIndexField, string][] = [];
  if (typeof rec.alias === 'string') out.push(['alias', rec.alias]);
  const nodeHa = ha(rec, 'node_ip', 'node_port');
  if (nodeHa !== undefined) out.push(['nodeAddress', nodeHa]);
  const clientHa = ha(rec, 'client_ip', 'client_port');
  if (clientHa !== undefined) out.push(['clientAddress', clientHa]);
  if (typeof rec.identifier === 'string') out.push(['steward', rec.identifier]);
  return out;
}

const UNIQUE: readonly [NodeIndexField, NodeConflict][] = [
  ['alias', "Node's alias must be unique"],
  ['nodeAddress', "Node's nodestack addresses must be unique"],
  ['clientAddress', "Node's clientstack addresses must be unique"],
];

/** Uniqueness of alias, node address and client address against every other node (pool index). */
function checkUnique(data: NodeRecord, dest: string, ctx: HandlerContext): void {
  const keys = new Map(nodeIndexKeys({ ...data, identifier: undefined }));
  for (const [field, problem] of UNIQUE) {
    const value = keys.get(field);
    if (value !== undefined && ctx.nodes.find(field, value).some((d) => d !== dest)) throw new RequestError(RequestErrorCode.NODE_CONFLICT, { data, problem });
  }
}

function sameValue(a: unknown, b: unknown, field: string): boolean {
  if (field.endsWith('_port')) return portNumber(a) === portNumber(b);
  return canonicalJson(a ?? null) === canonicalJson(b ?? null);
}

function validateDynamic(request: ParsedRequest, ctx: HandlerContext): void {
  const op = request.operation;
  const dest = op.dest as string;
  const data = op.data as NodeRecord;
  const pool = ctx.state(LedgerId.POOL);
  const storedBytes = pool.get(dest);
  const nodeHa = ha(data, 'node_ip', 'node_port');
  if (nodeHa !== undefined && nodeHa === ha(data, 'client_ip', 'client_port')) throw new RequestError(RequestErrorCode.NODE_SAME_HA);
  if (storedBytes === undefined) {
    if (CREATE_FIELDS.some((f) => data[f] === undefined)) throw new RequestError(RequestErrorCode.NODE_MISSING_FIELDS);
    if (ctx.nodes.find('steward', request.author).some((d) => d !== dest))
      throw new RequestError(RequestErrorCode.NODE_STEWARD_HAS_NODE, { author: request.author });
    checkUnique(data, dest, ctx);
    ctx.auth.authorize(request, { kind: 'ADD', field: 'services', newValue: data.services ?? ['VALIDATOR'], isOwner: true });
    return;
  }
  const stored = decodeJsonObject(storedBytes, dest);
  const { identifier, ...storedData } = stored;
  if (canonicalJson(storedData) === canonicalJson(data)) throw new RequestError(RequestErrorCode.NODE_SAME_DATA);
  if (data.alias !== stored.alias) throw new RequestError(RequestErrorCode.NODE_CONFLICT, { data, problem: "Node's alias cannot be changed" });
  checkUnique(data, dest, ctx);
  const isOwner = identifier === request.author;
  for (const field of Object.keys(data)) {
    if (field === 'alias' || field === 'blskey_pop') continue;
    let oldValue = stored[field];
    let newValue = data[field];
    if (field === 'services') {
      oldValue = oldValue ?? [];
      newValue = newValue ?? [];
    }
    if (sameValue(oldValue, newValue, field)) continue;
    ctx.auth.authorize(request, { kind: 'EDIT', field, oldValue, newValue, isOwner });
  }
}

export const nodeHandler: WriteHandler = {
  kind: 'write',
  type: TxnType.NODE,
  name: 'NODE',
  validator: VALIDATOR,
  ledgerId: LedgerId.POOL,

  validateStatic(request) {
    const op = request.operation;
    if (op.verkey !== undefined) throw new RequestError(RequestErrorCode.NODE_VERKEY_NOT_ALLOWED);
    schema.validate(op);
    const data = op.data as NodeRecord;
    const present = ADDRESS_FIELDS.filter((f) => data[f] !== undefined);
    if (present.length > 0 && present.length < ADDRESS_FIELDS.length) {
      throw new RequestError(RequestErrorCode.FIELD_MISSING, {
        validator: 'ClientNodeOperationData',
        fields: ADDRESS_FIELDS.filter((f) => data[f] === undefined).map((f) => `data.${f}`),
      });
    }
    const key = data.blskey as string | undefined;
    const pop = data.blskey_pop as string | undefined;
    if (key !== undefined && pop === undefined) throw new RequestError(RequestErrorCode.NODE_BLS_POP_MISSING);
    if (key === undefined && pop !== undefined) throw new RequestError(RequestErrorCode.NODE_BLS_POP_UNNEEDED);
    if (key !== undefined && pop !== undefined && !verifyPop(key, pop)) throw new RequestError(RequestErrorCode.NODE_BLS_POP_INCORRECT, { pop, key });
  },

  validateDynamic,

  updateState(txn: Txn, ctx) {
    const d = txn.txn.data;
    const dest = d.dest;
    if (typeof dest !== 'string') return;
    const pool = ctx.state(LedgerId.POOL);
    const bytes = pool.get(dest);
    const rec: NodeRecord = bytes === undefined ? { identifier: txn.txn.metadata.from ?? null } : decodeJsonObject(bytes, dest);
    const data = d.data;
    if (data !== null && typeof data === 'object' && !Array.isArray(data)) Object.assign(rec, data);
    pool.set(dest, canonicalJsonBytes(rec));
  },
};

/** Validators of a pool state: node records whose services contain VALIDATOR. */
export function isValidatorRecord(rec: Record<string, unknown>): boolean {
  return Array.isArray(rec.services) && rec.services.includes('VALIDATOR');
}
