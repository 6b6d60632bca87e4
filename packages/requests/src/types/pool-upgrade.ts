/**
 * POOL_UPGRADE ("109", config; requests.md §5.2): schedules or cancels an upgrade of the node
 * software. No state: nodes derive their schedule from the config ledger (§6.2). Static checks
 * parse the schedule and enforce the 5-minute spacing unless `force`; the node-id set is checked
 * against the pool state at ordering; the "in the future" check uses the node's clock at receipt.
 */
import { canonicalJson, codePointCompare, LedgerId, TxnType } from '@quire/common';
import { RequestError, RequestErrorCode } from '../errors.js';
import type { HandlerContext, ParsedRequest, Txn, WriteHandler } from '../handler.js';
import {
  Limits,
  bool,
  did,
  fieldData,
  integer,
  mapOf,
  nullable,
  objectSchema,
  oneOf,
  optional,
  parseDateTimeWithOffset,
  required,
  sha256Hex,
  str,
} from '../validation/index.js';

const VALIDATOR = 'ClientPoolUpgradeOperation';
const VERSION_CHARS = /^[0-9a-zA-Z.\-+!]+$/;

const schema = objectSchema(VALIDATOR, {
  name: required(str({ max: Limits.NAME })),
  action: required(oneOf(['start', 'cancel'])),
  version: required((v, at) => {
    str({ max: Limits.VERSION })(v, at);
    if (!VERSION_CHARS.test(v as string))
      throw new RequestError(RequestErrorCode.FIELD_INVALID, { ...fieldData(at, v), problem: 'only alphanumerics and [.-+!] are allowed' });
  }),
  sha256: required(sha256Hex),
  schedule: optional(mapOf(str(), did)),
  timeout: optional(integer({ min: 0 })),
  justification: optional(nullable(str({ max: Limits.JUSTIFICATION, allowEmpty: true }))),
  force: optional(bool),
  reinstall: optional(bool),
  package: optional(str({ max: Limits.NAME })),
});

/** Parsed schedule: node id -> epoch seconds. Throws UPGRADE_SCHEDULE_INVALID. */
export function parseSchedule(schedule: Record<string, unknown>): Map<string, number> {
  const out = new Map<string, number>();
  for (const id of Object.keys(schedule).sort(codePointCompare)) {
    const t = parseDateTimeWithOffset(schedule[id] as string);
    if (t === null)
      throw new RequestError(RequestErrorCode.UPGRADE_SCHEDULE_INVALID, { schedule, problem: `${String(schedule[id])} cannot be parsed to a time` });
    out.set(id, t);
  }
  return out;
}

/** Node version: 2 or 3 numeric release parts and an optional rcN pre-release. */
export function parseNodeVersion(v: string): { release: number[]; rc: number | null } | null {
  const m = /^(\d+)\.(\d+)(?:\.(\d+))?(?:[.-]?rc(\d+))?$/.exec(v);
  if (!m) return null;
  const release = [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)];
  return { release, rc: m[4] === undefined ? null : Number(m[4]) };
}

/** Compares node versions: numeric release parts, then a release after its rc pre-releases. */
export function compareNodeVersions(a: string, b: string): number {
  const x = parseNodeVersion(a);
  const y = parseNodeVersion(b);
  if (!x || !y) return codePointCompare(a, b);
  for (let i = 0; i < 3; i++) if (x.release[i] !== y.release[i]) return x.release[i] - y.release[i];
  if (x.rc === y.rc) return 0;
  if (x.rc === null) return 1;
  if (y.rc === null) return -1;
  return x.rc - y.rc;
}

/** Package name: first token of the first line (split on whitespace, `;`, `&&`, `|`). */
export function upgradePackageName(pkg: string): string {
  const first = pkg.split(/\r?\n/)[0] ?? '';
  return first.split(/\s|;|&&|\|/).find((t) => t.length > 0) ?? '';
}

/**
 * The last committed action for (name, version), `*` when none: the status Indy reads from the
 * committed config ledger (through the upgrade index, not a ledger scan).
 */
function lastStatus(ctx: HandlerContext, name: string, version: string): string {
  return ctx.upgrades.lastAction(name, version) ?? '*';
}

/**
 * The POOL_UPGRADE txns of a config ledger as `[name, version, action]`, for the upgrade index
 * (the txn data is the request's, validated at ordering; anything else is skipped).
 */
export function upgradeEntryOf(txn: Txn | undefined): [name: string, version: string, action: string] | undefined {
  if (txn?.txn?.type !== TxnType.POOL_UPGRADE) return undefined;
  const d = txn.txn.data;
  if (typeof d?.name !== 'string' || typeof d.version !== 'string' || typeof d.action !== 'string') return undefined;
  return [d.name, d.version, d.action];
}

function validateDynamic(request: ParsedRequest, ctx: HandlerContext): void {
  const op = request.operation;
  const action = op.action as string;
  if (action === 'start' && op.force !== true) {
    const expected = ctx.nodes.validators();
    const given = Object.keys(op.schedule as object).sort(codePointCompare);
    if (canonicalJson(expected) !== canonicalJson(given))
      throw new RequestError(RequestErrorCode.UPGRADE_SCHEDULE_INVALID, { schedule: op.schedule, problem: 'Schedule should contain id of all nodes' });
  }
  const status = lastStatus(ctx, op.name as string, op.version as string);
  if (status === 'start' && action === 'start') throw new RequestError(RequestErrorCode.UPGRADE_ALREADY_SCHEDULED, { name: op.name });
  if (status === '*') ctx.auth.authorize(request, { kind: 'ADD', field: 'action', newValue: action, isOwner: true });
  else ctx.auth.authorize(request, { kind: 'EDIT', field: 'action', oldValue: status, newValue: action, isOwner: true });
  const sw = ctx.software;
  const pkg = upgradePackageName(typeof op.package === 'string' ? op.package : (sw?.nodePackage ?? 'quire-node'));
  if (pkg === '') throw new RequestError(RequestErrorCode.UPGRADE_PACKAGE_EMPTY);
  if (sw === undefined || action !== 'start') return;
  const version = op.version as string;
  if (parseNodeVersion(version) === null) throw new RequestError(RequestErrorCode.UPGRADE_VERSION_INVALID, { version, versionClass: 'NodeVersion' });
  const installed = sw.installedVersion(pkg);
  if (installed === undefined) throw new RequestError(RequestErrorCode.UPGRADE_PACKAGE_NOT_INSTALLED, { pkg });
  if (!sw.belongsToPool(pkg)) throw new RequestError(RequestErrorCode.UPGRADE_PACKAGE_FOREIGN, { pkg });
  const cmp = compareNodeVersions(version, installed);
  if (!(cmp > 0 || (cmp === 0 && op.reinstall === true))) throw new RequestError(RequestErrorCode.UPGRADE_NOT_UPGRADABLE, { version });
}

export const poolUpgradeHandler: WriteHandler = {
  kind: 'write',
  type: TxnType.POOL_UPGRADE,
  name: 'POOL_UPGRADE',
  validator: VALIDATOR,
  ledgerId: LedgerId.CONFIG,
  forceable: true,

  validateStatic(request) {
    const op = request.operation;
    schema.validate(op);
    if (op.action !== 'start') return;
    if (op.schedule === undefined) throw new RequestError(RequestErrorCode.FIELD_MISSING, { validator: VALIDATOR, fields: ['schedule'] });
    const times = parseSchedule(op.schedule as Record<string, unknown>);
    if (op.force === true) return;
    const sorted = [...times.values()].sort((a, b) => a - b);
    for (let i = 1; i < sorted.length; i++) {
      const span = sorted[i] - sorted[i - 1];
      if (span < Limits.UPGRADE_MIN_SEPARATION_SECONDS) {
        throw new RequestError(RequestErrorCode.UPGRADE_SCHEDULE_INVALID, {
          schedule: op.schedule,
          problem: `time span between upgrades is ${span} seconds which is less than specified in the config`,
        });
      }
    }
  },

  validateAtReceipt(request, ctx) {
    const op = request.operation;
    if (op.action !== 'start' || op.force === true) return;
    for (const [, t] of parseSchedule(op.schedule as Record<string, unknown>)) {
      if (t <= ctx.now)
        throw new RequestError(RequestErrorCode.UPGRADE_SCHEDULE_INVALID, {
          schedule: op.schedule,
          problem: `${new Date(t * 1000).toISOString()} is less than current time`,
        });
    }
  },

  validateDynamic,

  updateState() {
    // no state: the schedule is derived from the config ledger (requests.md §6.2)
  },
};
