/**
 * Rule keys (auth-rules.md §1) and rule matching (§2): `<type>--<ADD|EDIT>--<field>--<old>--<new>`,
 * first match in default-map order wins; `*` in the map's field/old/new positions is a wildcard.
 */
import { RequestError, RequestErrorCode, pyRepr } from '../errors.js';
import { DEFAULT_AUTH_MAP } from './default-map.js';
import type { Constraint } from './constraint.js';

import { RULE_KEY_DELIMITER } from '@quire/common';

export { RULE_KEY_DELIMITER, authRuleStateKey } from '@quire/common';

/** Renders one key part: null/absent -> "", string as is, integer decimal, list Python-style, bool True/False. */
export function renderKeyPart(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'bigint') return String(v);
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (Array.isArray(v)) return `[${v.map((x) => (typeof x === 'string' ? pyRepr(x) : renderKeyPart(x))).join(', ')}]`;
  return JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? x.toString() : x)) ?? '';
}

/** The request key of an action (ADD has `*` as old value). */
export function buildRuleKey(type: string, kind: 'ADD' | 'EDIT', field: string, oldValue: unknown, newValue: unknown): string {
  const old = kind === 'ADD' ? '*' : renderKeyPart(oldValue);
  return [type, kind, field, old, renderKeyPart(newValue)].join(RULE_KEY_DELIMITER);
}

/** One rule of the default map: its key, the key's five parts and its default constraint. */
export interface AuthMapRule {
  readonly key: string;
  readonly type: string;
  readonly kind: string;
  readonly field: string;
  readonly old: string;
  readonly new: string;
  readonly constraint: Constraint;
}

/** Splits a key in its five parts; values may themselves be empty. */
export function splitRuleKey(key: string): [string, string, string, string, string] | undefined {
  const parts = key.split(RULE_KEY_DELIMITER);
  if (parts.length !== 5) return undefined;
  return parts as [string, string, string, string, string];
}

/** The default map indexed by `<type>--<kind>`, keeping map order inside each bucket. */
export class AuthMap {
  private readonly buckets = new Map<string, AuthMapRule[]>();
  private readonly byKey = new Map<string, AuthMapRule>();
  readonly keys: readonly string[];
  /** The rules in map order. */
  readonly rules: readonly AuthMapRule[];

  constructor(entries: readonly (readonly [string, Constraint])[] = DEFAULT_AUTH_MAP) {
    const rules: AuthMapRule[] = [];
    for (const [key, constraint] of entries) {
      const p = splitRuleKey(key);
      if (!p) throw new RequestError(RequestErrorCode.REGISTRY_INVALID, { problem: `malformed auth map key ${key}` });
      const rule: AuthMapRule = { key, type: p[0], kind: p[1], field: p[2], old: p[3], new: p[4], constraint };
      const bucket = `${p[0]}--${p[1]}`;
      let list = this.buckets.get(bucket);
      if (!list) this.buckets.set(bucket, (list = []));
      list.push(rule);
      this.byKey.set(key, rule);
      rules.push(rule);
    }
    this.rules = rules;
    this.keys = rules.map((r) => r.key);
  }

  /** The default-map rule matching a concrete action (first match), or undefined. */
  matchRule(type: string, kind: string, field: string, oldValue: string, newValue: string): AuthMapRule | undefined {
    const list = this.buckets.get(`${type}--${kind}`);
    if (!list) return undefined;
    for (const r of list) {
      if ((r.field === field || r.field === '*') && (r.old === oldValue || r.old === '*') && (r.new === newValue || r.new === '*')) return r;
    }
    return undefined;
  }

  /** The default-map key matching a concrete action (first match), or undefined. */
  findRule(type: string, kind: string, field: string, oldValue: string, newValue: string): string | undefined {
    return this.matchRule(type, kind, field, oldValue, newValue)?.key;
  }

  /** The default-map key matching a request key, or undefined. */
  findRuleForKey(requestKey: string): string | undefined {
    const p = splitRuleKey(requestKey);
    return p ? this.findRule(p[0], p[1], p[2], p[3], p[4]) : undefined;
  }

  /** The rule a default-map key names, or undefined. */
  rule(key: string): AuthMapRule | undefined {
    return this.byKey.get(key);
  }

  has(key: string): boolean {
    return this.byKey.has(key);
  }

  defaultConstraint(key: string): Constraint | undefined {
    return this.byKey.get(key)?.constraint;
  }
}
