// Field checks, constraint validation and the static rules of the pool/config types, table-driven:
// accepted cases and one case per rejection rule, asserting codes.
import { expect } from 'chai';
import { codeOf as sharedCodeOf } from '@quire/testing';
import { RequestError } from '../../src/errors.js';
import { parseRequest } from '../../src/pipeline/parse.js';
import { createDefaultRegistry } from '../../src/registry.js';
import { constraintText, parseConstraint } from '../../src/auth/constraint.js';
import { did, ip, schemaVersion, sha256Hex, str, verkey } from '../../src/validation/fields.js';
import { wrapReason } from '../../src/errors.js';
import { TRUSTEE } from './helpers/harness.js';

const at = { validator: 'V', field: 'f' };
/** The code of the coded error `fn` throws, or 'ok' when it returns (any other error is thrown again). */
const codeOf = (fn: () => void): string => sharedCodeOf(fn) ?? 'ok';

const registry = createDefaultRegistry();
function staticCode(op: Record<string, unknown>): string {
  return codeOf(() => {
    const req = parseRequest({ identifier: TRUSTEE.did, reqId: 1, protocolVersion: 2, operation: op, signature: '1111' });
    registry.get(op.type)!.validateStatic(req);
  });
}

describe('validation', () => {
  it('field checks accept good values and name the failing rule', () => {
    const table: [() => void, string][] = [
      [() => did(TRUSTEE.did, at), 'ok'],
      [() => did(TRUSTEE.fullVerkey, at), 'ok'],
      [() => did('0OIl', at), 'FIELD_BASE58_CHARS'],
      [() => did('3yZe7d', at), 'FIELD_BASE58_LENGTH'],
      [() => did(5, at), 'FIELD_TYPE'],
      [() => verkey(TRUSTEE.verkey, at), 'ok'],
      [() => verkey(TRUSTEE.fullVerkey, at), 'ok'],
      [() => verkey('F'.repeat(45), at), 'FIELD_VERKEY'],
      [() => verkey('~' + TRUSTEE.fullVerkey, at), 'FIELD_VERKEY'],
      [() => sha256Hex('ab'.repeat(32), at), 'ok'],
      [() => sha256Hex('ab', at), 'FIELD_HASH'],
      [() => schemaVersion('1.0.3', at), 'ok'],
      [() => schemaVersion('1', at), 'FIELD_VERSION_PARTS'],
      [() => schemaVersion('1.a', at), 'FIELD_VERSION_CHARS'],
      [() => str({ max: 3 })('abcd', at), 'FIELD_TOO_LONG'],
      [() => str()('', at), 'FIELD_EMPTY'],
      [() => ip('::1', at), 'ok'],
      [() => ip('2001:db8::8a2e:370:7334', at), 'ok'],
      [() => ip('256.1.1.1', at), 'FIELD_IP'],
      [() => ip('::', at), 'FIELD_IP'],
    ];
    for (const [fn, code] of table) expect(codeOf(fn), fn.toString()).to.equal(code);
    // thrown, and with Indy's text (a try without a failure after the call would pass on no throw)
    expect(() => did('3yZe7d', at))
      .to.throw(RequestError)
      .with.property('reason', 'validation error [V]: b58 decoded value length 4 should be one of [16, 32] (f=3yZe7d)');
  });

  it('constraints: shapes, roles, off-ledger rule, AND/OR members; texts of auth-rules.md §8', () => {
    const table: [unknown, string][] = [
      [{ constraint_id: 'ROLE', role: '0', sig_count: 1 }, 'ok'],
      [{ constraint_id: 'FORBIDDEN' }, 'ok'],
      [null, 'CONSTRAINT_REQUIRED'],
      [{}, 'CONSTRAINT_REQUIRED'],
      [{ role: '0' }, 'CONSTRAINT_ID_REQUIRED'],
      [{ constraint_id: 'NOT' }, 'FIELD_ENUM'],
      [{ constraint_id: 'ROLE', role: '7', sig_count: 1 }, 'CONSTRAINT_ROLE'],
      [{ constraint_id: 'ROLE', role: '0', sig_count: -1 }, 'FIELD_TOO_SMALL'],
      [{ constraint_id: 'ROLE', role: '0' }, 'FIELD_MISSING'],
      [{ constraint_id: 'ROLE', role: '0', sig_count: 1, off_ledger_signature: true }, 'CONSTRAINT_OFF_LEDGER_ROLE'],
      [{ constraint_id: 'ROLE', role: '0', sig_count: 1, need_to_be_owner: 'yes' }, 'FIELD_TYPE'],
      [{ constraint_id: 'OR', auth_constraints: [] }, 'CONSTRAINT_LIST_EMPTY'],
      [{ constraint_id: 'AND', auth_constraints: [{ constraint_id: 'FORBIDDEN' }], role: '0' }, 'CONSTRAINT_UNEXPECTED_FIELD'],
    ];
    for (const [c, code] of table)
      expect(
        codeOf(() => parseConstraint(c)),
        JSON.stringify(c),
      ).to.equal(code);
    const t = (c: unknown) => constraintText(parseConstraint(c));
    expect(t({ constraint_id: 'ROLE', role: '*', sig_count: 1 })).to.equal('1 signature of any role is required ALL');
    expect(t({ constraint_id: 'ROLE', role: '0', sig_count: 3 })).to.equal('3 TRUSTEE signatures are required');
    expect(t({ constraint_id: 'ROLE', role: '*', sig_count: 1, off_ledger_signature: true })).to.equal(
      '1 signature of any role (off-ledger included) is required',
    );
    expect(t({ constraint_id: 'ROLE', role: '0', sig_count: 1, metadata: { fees: 1 } })).to.equal(
      '1 TRUSTEE signature is required with additional metadata fees 1',
    );
  });

  it('static rules of the pool/config types', () => {
    const c = { constraint_id: 'ROLE', role: '0', sig_count: 1 };
    const table: [Record<string, unknown>, string][] = [
      [{ type: '111', writes: true }, 'ok'],
      [{ type: '111' }, 'FIELD_MISSING'],
      [{ type: '120', auth_type: '1', auth_action: 'ADD', field: 'role', new_value: '0', constraint: c }, 'ok'],
      [{ type: '120', auth_type: '1', auth_action: 'EDIT', field: 'role', new_value: '0', constraint: c }, 'AUTH_RULE_EDIT_NEEDS_OLD'],
      [{ type: '120', auth_type: '1', auth_action: 'ADD', field: 'role', old_value: '2', new_value: '0', constraint: c }, 'AUTH_RULE_ADD_WITH_OLD'],
      [{ type: '120', auth_type: '1', auth_action: 'ADD', field: 'alias', new_value: '0', constraint: c }, 'AUTH_RULE_UNKNOWN'],
      [{ type: '120', auth_type: '1', auth_action: 'DEL', field: 'role', new_value: '0', constraint: c }, 'FIELD_ENUM'],
      [{ type: '120', auth_type: '1', auth_action: 'ADD', field: 'role', new_value: '0' }, 'CONSTRAINT_REQUIRED'],
      [{ type: '122', rules: [] }, 'FIELD_EMPTY'],
      [
        {
          type: '122',
          rules: [
            { auth_type: '1', auth_action: 'ADD', field: 'role', new_value: '0', constraint: c },
            { auth_type: 'x', auth_action: 'ADD', field: '*', new_value: '*', constraint: c },
          ],
        },
        'AUTH_RULE_UNKNOWN',
      ],
      [{ type: '4', version: '1', text: 'x' }, 'ok'],
      [{ type: '4', version: '1', text: 'x', ratification_ts: 1e15 }, 'TAA_TS_OUT_OF_RANGE'],
      [{ type: '4', text: 'x' }, 'FIELD_MISSING'],
      [{ type: '5', version: '1', aml: {} }, 'AML_EMPTY'],
      [{ type: '5', version: '1', aml: { a: 1 } }, 'FIELD_TYPE'],
      [{ type: '109', name: 'u', version: '1.0 ;rm', action: 'start', sha256: 'a'.repeat(64), schedule: {} }, 'FIELD_INVALID'],
      [{ type: '109', name: 'u', version: '1.0', action: 'go', sha256: 'a'.repeat(64) }, 'FIELD_ENUM'],
      [{ type: '109', name: 'u', version: '1.0', action: 'start', sha256: 'a'.repeat(64) }, 'FIELD_MISSING'],
      [
        { type: '109', name: 'u', version: '1.0', action: 'start', sha256: 'a'.repeat(64), schedule: { [TRUSTEE.did]: '2030-01-01T00:00:00' } },
        'UPGRADE_SCHEDULE_INVALID',
      ],
      [{ type: '109', name: 'u', version: '1.0', action: 'cancel', sha256: 'a'.repeat(64) }, 'ok'],
      [{ type: '118', action: 'start', datetime: '0' }, 'ok'],
      [{ type: '118', action: 'start', datetime: 'x'.repeat(36) }, 'FIELD_TOO_LONG'],
      [{ type: '110', data: { action: 'complete', version: '1.2' }, signature: '1111' }, 'ok'],
      [{ type: '110', data: { action: 'done', version: '1.2' }, signature: '1111' }, 'FIELD_ENUM'],
      [{ type: '3', ledgerId: 1, data: 0 }, 'READ_INVALID_SEQNO'],
      [{ type: '6', version: '1', digest: 'a'.repeat(64) }, 'GET_TAA_SELECTORS'],
      [{ type: '7', version: '1', timestamp: 5 }, 'GET_TAA_AML_SELECTORS'],
      [{ type: '121', auth_type: '1' }, 'AUTH_RULE_KEY_INCOMPLETE'],
    ];
    for (const [op, code] of table) expect(staticCode(op), JSON.stringify(op)).to.equal(code);
  });

  it('wraps reasons as requests.md §1.8 does', () => {
    const e = new RequestError('TAA_MISSING', { ledgerId: 1 });
    expect(wrapReason(e, 'V4SGRU86Z58d6TV7PBUe6f', 12n)).to.equal(
      "client request invalid: InvalidClientTaaAcceptanceError('V4SGRU86Z58d6TV7PBUe6f', 12, 'Txn Author Agreement acceptance is required for ledger with id 1', 201)",
    );
    expect(wrapReason(new RequestError('UNKNOWN_SIGNER', { did: 'X' }), 'X', 1)).to.equal(
      'client request invalid: could not authenticate, verkey for X cannot be found',
    );
  });
});
