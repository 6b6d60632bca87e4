/**
 * TXN_AUTHOR_AGREEMENT ("4", config, payload ver "2"; requests.md §5.7): a new agreement, or the
 * retirement (un-retirement) of an existing version. An agreement with empty text disables
 * acceptance checks until a later non-empty one (seed rule). State (formats.md 8.3): new version ->
 * `2:d:<digest>` W({digest, ratification_ts, text, version}), `2:v:<version>` and `2:latest` -> digest;
 * existing version -> `2:d:<digest>` rewritten with `retirement_ts` set or removed.
 */
import { LedgerId, TxnType } from '@quire/common';
import { RequestError, RequestErrorCode } from '../errors.js';
import type { Txn, WriteHandler } from '../handler.js';
import { encodeText, encodeWrapped } from '../state-keys.js';
import { AML_LATEST_KEY, TAA_LATEST_KEY, readDigest, readTaaByDigest, reader, taaDigest, taaDigestKey, taaEnabled, taaVersionKey } from '../taa/taa-state.js';
import { Limits, integer, objectSchema, optional, required, str } from '../validation/index.js';

const VALIDATOR = 'ClientTxnAuthorAgreementOperation';
/** Largest timestamp representable as a date (9999-12-31T23:59:59Z). */
const MAX_TS = 253402300799;

const schema = objectSchema(VALIDATOR, {
  version: required(str({ max: Limits.NAME })),
  text: optional(str({ max: Limits.TAA_TEXT, allowEmpty: true }), { nullAsAbsent: true }),
  ratification_ts: optional(integer({ min: 0 }), { nullAsAbsent: true }),
  retirement_ts: optional(integer({ min: 0 }), { nullAsAbsent: true }),
});

const present = (op: Readonly<Record<string, unknown>>, k: string): boolean => op[k] !== undefined && op[k] !== null;

export const txnAuthorAgreementHandler: WriteHandler = {
  kind: 'write',
  type: TxnType.TXN_AUTHOR_AGREEMENT,
  name: 'TXN_AUTHOR_AGREEMENT',
  validator: VALIDATOR,
  ledgerId: LedgerId.CONFIG,

  validateStatic(request) {
    const op = request.operation;
    schema.validate(op);
    for (const field of ['ratification_ts', 'retirement_ts'] as const) {
      const ts = op[field] as number | bigint;
      if (present(op, field) && ts > MAX_TS) throw new RequestError(RequestErrorCode.TAA_TS_OUT_OF_RANGE, { field, ts });
    }
  },

  validateDynamic(request, ctx) {
    const op = request.operation;
    const state = ctx.state(LedgerId.CONFIG);
    const get = reader(state);
    const version = op.version as string;
    const storedDigest = readDigest(get, taaVersionKey(version));
    ctx.auth.authorize(request, { kind: storedDigest === undefined ? 'ADD' : 'EDIT', field: '*', oldValue: '*', newValue: '*', isOwner: true });
    if (state.get(AML_LATEST_KEY) === undefined) throw new RequestError(RequestErrorCode.TAA_AML_NOT_SET);
    if (storedDigest === undefined) {
      if (!present(op, 'text')) throw new RequestError(RequestErrorCode.TAA_CREATE_WITHOUT_TEXT);
      if (present(op, 'retirement_ts')) throw new RequestError(RequestErrorCode.TAA_CREATE_WITH_RETIREMENT);
      if (present(op, 'ratification_ts') && ctx.ppTime !== null && (op.ratification_ts as number) > ctx.ppTime)
        throw new RequestError(RequestErrorCode.TAA_RATIFICATION_IN_FUTURE);
      return;
    }
    const stored = readTaaByDigest(get, storedDigest);
    if (stored === undefined)
      throw new RequestError(RequestErrorCode.STATE_CORRUPT, { key: taaDigestKey(storedDigest), problem: 'agreement named by its version is missing' });
    if (present(op, 'text') && op.text !== stored.text) throw new RequestError(RequestErrorCode.TAA_TEXT_CHANGE);
    if (present(op, 'ratification_ts') && op.ratification_ts !== stored.ratification_ts) throw new RequestError(RequestErrorCode.TAA_RATIFICATION_CHANGE);
    if (taaEnabled(get) === undefined) throw new RequestError(RequestErrorCode.TAA_RETIRE_WHILE_DISABLED);
    if (readDigest(get, TAA_LATEST_KEY) === storedDigest) throw new RequestError(RequestErrorCode.TAA_RETIRE_LATEST);
  },

  updateState(txn: Txn, ctx) {
    const d = txn.txn.data;
    const state = ctx.state(LedgerId.CONFIG);
    const get = reader(state);
    const version = d.version as string;
    const { seqNo, txnTime } = ctx.txn;
    const storedDigest = readDigest(get, taaVersionKey(version));
    if (storedDigest === undefined) {
      const text = typeof d.text === 'string' ? d.text : '';
      const digest = taaDigest(version, text);
      const ratification = typeof d.ratification_ts === 'number' ? d.ratification_ts : txnTime;
      state.set(taaDigestKey(digest), encodeWrapped({ digest, ratification_ts: ratification, text, version }, seqNo, txnTime));
      state.set(taaVersionKey(version), encodeText(digest));
      state.set(TAA_LATEST_KEY, encodeText(digest));
      return;
    }
    const stored = readTaaByDigest(get, storedDigest);
    if (stored === undefined) return;
    const val: Record<string, unknown> = {
      digest: stored.digest,
      ratification_ts: stored.ratification_ts ?? stored.lut,
      text: stored.text,
      version: stored.version,
    };
    if (typeof d.retirement_ts === 'number') val.retirement_ts = d.retirement_ts;
    state.set(taaDigestKey(storedDigest), encodeWrapped(val, seqNo, txnTime));
  },
};
