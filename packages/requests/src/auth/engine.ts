/**
 * The authorization engine (auth-rules.md §2, §4, §5): finds the rule of an action (default map,
 * overridden by `1:<key>` in config state), evaluates ROLE / AND / OR / FORBIDDEN with signature
 * counts, ownership, off-ledger signatures, the author-must-exist rule and the endorser rules, and
 * throws RequestError worded as the spec words it.
 */
import { equalBytes, parseJson, stringifyJson } from '@quire/common';
import { RequestError, RequestErrorCode, type RequestErrorArgsOf } from '../errors.js';
import type { AuthAction, AuthEngine, IdrCache, ParsedRequest, StateAccess } from '../handler.js';
import { type Constraint, type RoleConstraint, constraintFromState, constraintText, roleName } from './constraint.js';
import { AuthMap, authRuleStateKey, renderKeyPart } from './rule-key.js';

const PRIVILEGED = new Set(['0', '2', '101']);
const ENDORSER = '101';
const textDecoder = new TextDecoder('utf-8', { fatal: true });

export interface AuthEngineModules {
  /** Config state (uncommitted head): overrides are read from it. */
  config: StateAccess;
  idr: IdrCache;
  /** TYPE_NAME of a type code for reasons (`Unknown_transaction_type` when unknown). */
  typeName: (type: string) => string;
  /** The default map (defaults to auth-map.json). */
  authMap?: AuthMap;
}

/** The shared instance of the default map (immutable). */
export const DEFAULT_MAP = new AuthMap();

export class AuthorizationEngine implements AuthEngine {
  private readonly map: AuthMap;
  private readonly overrideCache = new Map<string, { bytes: Uint8Array; constraint: Constraint }>();

  constructor(private readonly modules: AuthEngineModules) {
    this.map = modules.authMap ?? DEFAULT_MAP;
  }

  /** The rule (override or default) for a default-map key, reading config state at the head. */
  constraintFor(key: string, opts: { committed?: boolean } = {}): Constraint | undefined {
    return this.overrideFor(key, opts.committed === true) ?? this.map.defaultConstraint(key);
  }

  /** The override of a default-map key in config state (at the head, or committed), or undefined when there is none. */
  private overrideFor(key: string, committed: boolean): Constraint | undefined {
    const stateKey = authRuleStateKey(key);
    const bytes = committed ? this.modules.config.getCommitted(stateKey) : this.modules.config.get(stateKey);
    if (bytes === undefined) return undefined;
    const cached = this.overrideCache.get(key);
    if (cached && equalBytes(cached.bytes, bytes)) return cached.constraint;
    let value: unknown;
    try {
      value = parseJson(textDecoder.decode(bytes));
    } catch {
      throw new RequestError(RequestErrorCode.STATE_CORRUPT, { key: stateKey, problem: 'not JSON' });
    }
    const constraint = constraintFromState(value, stateKey);
    this.overrideCache.set(key, { bytes, constraint });
    return constraint;
  }

  authorize(request: ParsedRequest, action: AuthAction): void {
    const type = action.type ?? request.type;
    const old = action.kind === 'ADD' ? '*' : renderKeyPart(action.oldValue);
    const rule = this.map.matchRule(type, action.kind, action.field, old, renderKeyPart(action.newValue));
    if (rule === undefined) throw new RequestError(RequestErrorCode.AUTH_NOT_ALLOWED, { request: renderRequest(request) });
    const constraint = this.overrideFor(rule.key, false) ?? rule.constraint;
    const failure = this.evaluate(constraint, request, { type, field: action.field, isOwner: action.isOwner });
    if (failure !== undefined) throw failure instanceof RequestError ? failure : new RequestError(...failure);
  }

  /**
   * Why `c` does not hold for the request, or undefined when it does. Failures are the arguments of their error until one is
   * reported: an OR tries its branches in turn and most requests fail some of them (a steward's NYM fails the
   * TRUSTEE branch first), so building an error with its reason text and stack for each would cost more than the
   * rule itself.
   */
  private evaluate(c: Constraint, req: ParsedRequest, act: { type: string; field: string; isOwner: boolean }): Failure | undefined {
    switch (c.constraint_id) {
      case 'FORBIDDEN':
        return [RequestErrorCode.AUTH_FORBIDDEN];
      case 'AND':
        for (const child of c.auth_constraints) {
          const f = this.evaluate(child, req, act);
          if (f !== undefined) return f;
        }
        return undefined;
      case 'OR': {
        const failed: [Constraint, Failure][] = [];
        for (const child of c.auth_constraints) {
          let f: Failure | undefined;
          try {
            f = this.evaluate(child, req, act);
          } catch (e) {
            if (!(e instanceof RequestError)) throw e;
            f = e;
          }
          if (f === undefined) return undefined;
          failed.push([child, f]);
        }
        const failures = failed.map(([child, f]) => `Constraint: ${constraintText(child)}, Error: ${reasonOf(f)}`);
        return [RequestErrorCode.AUTH_OR_FAILED, { rule: constraintText(c), failures }];
      }
      case 'ROLE':
        return this.roleFailure(c, req, act) ?? this.endorserFailure(req);
    }
  }

  private roleFailure(c: RoleConstraint, req: ParsedRequest, act: { type: string; field: string; isOwner: boolean }): Failure | undefined {
    const idr = this.modules.idr;
    if (c.need_to_be_owner && !act.isOwner) {
      const authorRole = idr.roleOf(req.author);
      const authorRoleName = authorRole === null || authorRole === undefined ? 'None role' : roleName(authorRole);
      return [RequestErrorCode.AUTH_NOT_OWNER, { roleName: authorRoleName, field: act.field, typeName: this.modules.typeName(act.type) }];
    }
    if (c.sig_count <= 0) return undefined;
    if (!c.off_ledger_signature && idr.roleOf(req.author) === undefined) return [RequestErrorCode.AUTH_AUTHOR_NOT_FOUND, { did: req.author }];
    if (req.multiSigned && !req.signers.some(([d]) => d === req.author)) return [RequestErrorCode.AUTH_AUTHOR_MUST_SIGN];
    if (this.count(c, req) < c.sig_count) return [RequestErrorCode.AUTH_NOT_ENOUGH_SIGNATURES, { roleName: roleName(c.role) }];
    return undefined;
  }

  /** count(c) of auth-rules.md §5.1. */
  private count(c: RoleConstraint, req: ParsedRequest): number {
    const idr = this.modules.idr;
    const matches = (did: string): boolean => {
      if (c.off_ledger_signature) return true;
      const r = idr.roleOf(did);
      if (r === undefined) return false;
      return c.role === '*' || r === c.role;
    };
    if (!req.multiSigned) return req.signers.length === 1 ? (matches(req.author) ? 1 : 0) : 0;
    if (c.role === '*') return req.signers.length;
    let n = 0;
    for (const [did] of req.signers) if (matches(did)) n++;
    return n;
  }

  /** endorserCheck of auth-rules.md §5.3. */
  private endorserFailure(req: ParsedRequest): Failure | undefined {
    const idr = this.modules.idr;
    const endorser = req.endorser;
    if (endorser !== null && idr.roleOf(endorser) !== ENDORSER) return [RequestErrorCode.AUTH_ENDORSER_ROLE];
    if (endorser !== null && endorser !== req.author && (!req.multiSigned || !req.signers.some(([d]) => d === endorser))) {
      return [RequestErrorCode.AUTH_ENDORSER_MUST_SIGN];
    }
    if (!req.multiSigned) return undefined;
    if (req.signers.length === 1 && req.signers[0][0] === req.author) return undefined;
    const authorRole = idr.roleOf(req.author);
    if (authorRole !== undefined && authorRole !== null && PRIVILEGED.has(authorRole)) return undefined;
    const anyPrivileged = req.signers.some(([d]) => {
      const r = idr.roleOf(d);
      return r !== undefined && r !== null && PRIVILEGED.has(r);
    });
    if (!anyPrivileged) return undefined;
    if (endorser === null) return [RequestErrorCode.AUTH_ENDORSER_FIELD_REQUIRED];
    return undefined;
  }
}

/** The codes a constraint's evaluation reports. */
type AuthFailureCode =
  | typeof RequestErrorCode.AUTH_FORBIDDEN
  | typeof RequestErrorCode.AUTH_OR_FAILED
  | typeof RequestErrorCode.AUTH_NOT_OWNER
  | typeof RequestErrorCode.AUTH_AUTHOR_NOT_FOUND
  | typeof RequestErrorCode.AUTH_AUTHOR_MUST_SIGN
  | typeof RequestErrorCode.AUTH_NOT_ENOUGH_SIGNATURES
  | typeof RequestErrorCode.AUTH_ENDORSER_ROLE
  | typeof RequestErrorCode.AUTH_ENDORSER_MUST_SIGN
  | typeof RequestErrorCode.AUTH_ENDORSER_FIELD_REQUIRED;

/** An unmet constraint: the arguments of the error it is reported as, built only when reported (a thrown one kept as it is). */
type Failure = RequestErrorArgsOf<AuthFailureCode> | RequestError;

function reasonOf(f: Failure): string {
  return f instanceof RequestError ? f.reason : new RequestError(...f).reason;
}

/** The request rendering used in "not allowed" reasons (compact JSON of the kept fields). */
export function renderRequest(req: ParsedRequest): string {
  try {
    return stringifyJson(req.request);
  } catch {
    return `{"identifier":${JSON.stringify(req.author)},"operation":{"type":${JSON.stringify(req.type)}}}`;
  }
}
