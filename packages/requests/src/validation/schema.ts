/**
 * Object schemas: the operation schema of each type is a table of field name -> check. Validation
 * reports every missing required field at once (`missed fields - a, b. `), then checks each present
 * field in table order; the first bad field throws. Unknown extra fields are tolerated (they are
 * copied into txn.data, requests.md §1.1).
 */
import { RequestError, RequestErrorCode } from '../errors.js';
import { type Check, type FieldAt, isPlainObject, pyType } from './fields.js';

export interface FieldSpec {
  check: Check;
  /** Absent (or null, when `nullAsAbsent`) is allowed. */
  optional?: boolean;
  /** Treat null like absent (Indy's optional validators skip None). */
  nullAsAbsent?: boolean;
}

/** A required field. */
export function required(check: Check): FieldSpec {
  return { check };
}

/** An optional field; `null` counts as absent unless `nullable` is set on the check itself. */
export function optional(check: Check, opts: { nullAsAbsent?: boolean } = {}): FieldSpec {
  return { check, optional: true, nullAsAbsent: opts.nullAsAbsent ?? false };
}

export type Fields = Readonly<Record<string, FieldSpec | Check>>;

export interface ObjectSchema {
  readonly validator: string;
  readonly fields: Fields;
  /** Throws RequestError; `path` prefixes nested field names (e.g. `data`). */
  validate(value: unknown, path?: string): void;
  /** As a field check, for nesting (`data: nested(nodeDataSchema)`). */
  readonly check: Check;
}

const spec = (f: FieldSpec | Check): FieldSpec => (typeof f === 'function' ? { check: f } : f);

export function objectSchema(validator: string, fields: Fields): ObjectSchema {
  const entries = Object.entries(fields).map(([k, f]) => [k, spec(f)] as const);
  const validate = (value: unknown, path = ''): void => {
    if (!isPlainObject(value)) {
      throw new RequestError(RequestErrorCode.FIELD_TYPE, { validator, field: path || 'operation', value, expected: 'dict', got: pyType(value) });
    }
    const missing: string[] = [];
    for (const [name, f] of entries) {
      const present = Object.hasOwn(value, name) && value[name] !== undefined;
      if (!present && !f.optional) missing.push(path ? `${path}.${name}` : name);
    }
    if (missing.length > 0) throw new RequestError(RequestErrorCode.FIELD_MISSING, { validator, fields: missing });
    for (const [name, f] of entries) {
      if (!Object.hasOwn(value, name)) continue;
      const v = value[name];
      if (v === undefined) continue;
      if (v === null && f.optional && f.nullAsAbsent) continue;
      const at: FieldAt = { validator, field: path ? `${path}.${name}` : name };
      f.check(v, at);
    }
  };
  const check: Check = (v, at) => validate(v, at.field);
  return { validator, fields, validate, check };
}
