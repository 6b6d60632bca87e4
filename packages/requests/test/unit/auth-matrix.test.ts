// Auth matrix: for every default rule of auth-map.json, requests signed by each role, as owner and
// not, with enough and too few signatures where sig_count > 1; every decision must match the rule,
// by default, after an AUTH_RULE override and after an AUTH_RULES batch.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { parseJson } from '@quire/common';
import type { Ed25519Signer } from '@quire/crypto';
import { RequestError } from '../../src/errors.js';
import { parseRequest } from '../../src/pipeline/parse.js';
import type { Constraint } from '../../src/auth/constraint.js';
import { splitRuleKey } from '../../src/auth/rule-key.js';
import { DEFAULT_AUTH_MAP } from '../../src/auth/default-map.js';
import { canonicalJson } from '@quire/common';
import { createHarness, newSigner, nymOp, signed, TRUSTEE, type Harness } from './helpers/harness.js';

const MAP = parseJson(readFileSync(new URL('../../../../test/vectors/auth-map.json', import.meta.url), 'utf8')) as { key: string; constraint: Constraint }[];

type Who = 'TRUSTEE' | 'STEWARD' | 'ENDORSER' | 'NETWORK_MONITOR' | 'OWNER' | 'OFF_LEDGER';
const ROLE_OF: Record<Who, string | null | undefined> = {
  TRUSTEE: '0',
  STEWARD: '2',
  ENDORSER: '101',
  NETWORK_MONITOR: '201',
  OWNER: null,
  OFF_LEDGER: undefined,
};

/** Reference model of a constraint for single-author requests whose signers all hold `roles`. */
function expected(c: Constraint, authorRole: string | null | undefined, signerRoles: (string | null | undefined)[], isOwner: boolean, multi: boolean): boolean {
  switch (c.constraint_id) {
    case 'FORBIDDEN':
      return false;
    case 'AND':
      return c.auth_constraints.every((x) => expected(x, authorRole, signerRoles, isOwner, multi));
    case 'OR':
      return c.auth_constraints.some((x) => expected(x, authorRole, signerRoles, isOwner, multi));
    case 'ROLE': {
      if (c.need_to_be_owner && !isOwner) return false;
      if (c.sig_count === 0) return true;
      if (!c.off_ledger_signature && authorRole === undefined) return false;
      const matches = (r: string | null | undefined): boolean => c.off_ledger_signature === true || (r !== undefined && (c.role === '*' || r === c.role));
      const count = multi && c.role === '*' && !c.off_ledger_signature ? signerRoles.length : signerRoles.filter(matches).length;
      return count >= c.sig_count;
    }
  }
}

interface Actors {
  byRole: Record<Exclude<Who, 'TRUSTEE'>, Ed25519Signer>;
  trustees: Ed25519Signer[];
}

async function setup(): Promise<{ h: Harness; actors: Actors }> {
  const h = await createHarness({ verifySignatures: false });
  const endorser = newSigner();
  const monitor = newSigner();
  const owner = newSigner();
  const t2 = newSigner();
  const t3 = newSigner();
  const steward = newSigner();
  const r = await h.order(1, [
    signed(TRUSTEE, nymOp(endorser, '101')),
    signed(TRUSTEE, nymOp(monitor, '201')),
    signed(TRUSTEE, nymOp(owner, null)),
    signed(TRUSTEE, nymOp(t2, '0')),
    signed(TRUSTEE, nymOp(t3, '0')),
    signed(TRUSTEE, nymOp(steward, '2')),
  ]);
  expect(r.validCount).to.equal(6);
  return {
    h,
    actors: { byRole: { STEWARD: steward, ENDORSER: endorser, NETWORK_MONITOR: monitor, OWNER: owner, OFF_LEDGER: newSigner() }, trustees: [TRUSTEE, t2, t3] },
  };
}

function check(h: Harness, actors: Actors, key: string, constraint: Constraint): number {
  const [type, kind, field, old, nv] = splitRuleKey(key)!;
  let cases = 0;
  const whos: Who[] = ['TRUSTEE', 'STEWARD', 'ENDORSER', 'NETWORK_MONITOR', 'OWNER', 'OFF_LEDGER'];
  for (const who of whos) {
    const signer = who === 'TRUSTEE' ? actors.trustees[0]! : actors.byRole[who];
    for (const isOwner of [true, false]) {
      const variants: Ed25519Signer[][] = [[signer]];
      if (who === 'TRUSTEE') variants.push(actors.trustees.slice(0, 2), actors.trustees.slice(0, 3));
      for (const sigs of variants) {
        const multi = sigs.length > 1;
        const raw: Record<string, unknown> = { identifier: signer.did, reqId: 1 + cases, operation: { type }, protocolVersion: 2 };
        if (multi) raw.signatures = Object.fromEntries(sigs.map((s) => [s.did, '1111']));
        else raw.signature = '1111';
        const req = parseRequest(raw);
        const want = expected(
          constraint,
          ROLE_OF[who],
          sigs.map((s) => (s === signer ? ROLE_OF[who] : '0')),
          isOwner,
          multi,
        );
        let got = true;
        let reason = '';
        try {
          h.executor.auth.authorize(req, { type, kind: kind as 'ADD' | 'EDIT', field, oldValue: old, newValue: nv, isOwner });
        } catch (e) {
          if (!(e instanceof RequestError)) throw e;
          got = false;
          reason = `${e.code}: ${e.reason}`;
        }
        expect(got, `${key} by ${who} x${sigs.length} owner=${isOwner}: ${reason}`).to.equal(want);
        cases++;
      }
    }
  }
  return cases;
}

describe('auth matrix', function () {
  this.timeout(60_000);

  it('the built-in default map is exactly auth-map.json, and every key matches itself first', () => {
    expect(DEFAULT_AUTH_MAP.map(([k]) => k)).to.deep.equal(MAP.map((e) => e.key));
    for (let i = 0; i < MAP.length; i++) expect(canonicalJson(DEFAULT_AUTH_MAP[i]![1]), MAP[i]!.key).to.equal(canonicalJson(MAP[i]!.constraint));
  });

  it('every default rule decides as the rule says for every role, owner flag and signature count', async () => {
    const { h, actors } = await setup();
    let n = 0;
    for (const { key, constraint } of MAP) n += check(h, actors, key, constraint);
    expect(n).to.equal(75 * 16);
    await h.close();
  });

  it('after an AUTH_RULE override the overridden rule decides by the new constraint, the others unchanged', async () => {
    const { h, actors } = await setup();
    const override: Constraint = { constraint_id: 'ROLE', role: '201', sig_count: 1, need_to_be_owner: false, metadata: {} };
    const op = { type: '120', auth_type: '101', auth_action: 'ADD', field: '*', new_value: '*', constraint: override };
    const r = await h.order(2, [signed(TRUSTEE, op)]);
    expect(r.results[0]!.valid, (r.results[0] as { reason?: string }).reason).to.equal(true);
    for (const { key, constraint } of MAP) check(h, actors, key, key === '101--ADD--*--*--*' ? override : constraint);
    await h.close();
  });

  it('after an AUTH_RULES batch every overridden rule decides by its new constraint (later wins)', async () => {
    const { h, actors } = await setup();
    const forbidden: Constraint = { constraint_id: 'FORBIDDEN' };
    const twoTrustees: Constraint = { constraint_id: 'ROLE', role: '0', sig_count: 2, need_to_be_owner: false, metadata: {} };
    const anyOwner: Constraint = {
      constraint_id: 'AND',
      auth_constraints: [
        { constraint_id: 'ROLE', role: '*', sig_count: 1, need_to_be_owner: true, metadata: {} },
        { constraint_id: 'ROLE', role: '2', sig_count: 0, need_to_be_owner: false, metadata: {} },
      ],
    };
    const rules = [
      { auth_type: '1', auth_action: 'ADD', field: 'role', new_value: '', constraint: twoTrustees },
      { auth_type: '111', auth_action: 'EDIT', field: 'action', old_value: '*', new_value: '*', constraint: forbidden },
      { auth_type: '0', auth_action: 'EDIT', field: 'services', old_value: "['VALIDATOR']", new_value: '[]', constraint: anyOwner },
      { auth_type: '111', auth_action: 'EDIT', field: 'action', old_value: '*', new_value: '*', constraint: twoTrustees },
    ];
    const r = await h.order(2, [signed(TRUSTEE, { type: '122', rules })]);
    expect(r.results[0]!.valid, (r.results[0] as { reason?: string }).reason).to.equal(true);
    const overrides: Record<string, Constraint> = {
      '1--ADD--role--*--': twoTrustees,
      '111--EDIT--action--*--*': twoTrustees,
      "0--EDIT--services--['VALIDATOR']--[]": anyOwner,
    };
    for (const { key, constraint } of MAP) check(h, actors, key, overrides[key] ?? constraint);
    await h.close();
  });

  it('words failures as auth-rules.md does', async () => {
    const { h, actors } = await setup();
    const owner = actors.byRole.OWNER;
    const req = parseRequest(signed(owner, { type: '101', data: { name: 'n', version: '1.0', attr_names: ['a'] } }));
    let err: RequestError | undefined;
    try {
      h.executor.auth.authorize(req, { kind: 'ADD', field: '*', newValue: '*', isOwner: true });
    } catch (e) {
      err = e as RequestError;
    }
    expect(err?.code).to.equal('AUTH_OR_FAILED');
    expect(err?.reason).to.equal(
      'Rule for this action is: 1 TRUSTEE signature is required OR 1 STEWARD signature is required OR 1 ENDORSER signature is required\nFailed checks:\n' +
        'Constraint: 1 TRUSTEE signature is required, Error: Not enough TRUSTEE signatures\n' +
        'Constraint: 1 STEWARD signature is required, Error: Not enough STEWARD signatures\n' +
        'Constraint: 1 ENDORSER signature is required, Error: Not enough ENDORSER signatures',
    );
    const steward = actors.byRole.STEWARD;
    const notOwner = parseRequest(signed(TRUSTEE, { type: '1', dest: steward.did, role: '2' }));
    expect(() => h.executor.auth.authorize(notOwner, { kind: 'EDIT', field: 'role', oldValue: '2', newValue: '2', isOwner: false }))
      .to.throw(RequestError)
      .with.property('reason', 'TRUSTEE can not touch role field since only the owner can modify it');
    const cancel = parseRequest(signed(TRUSTEE, { type: '109' }));
    expect(() => h.executor.auth.authorize(cancel, { kind: 'ADD', field: 'action', newValue: 'cancel', isOwner: true }))
      .to.throw(RequestError)
      .with.property('code', 'AUTH_NOT_ALLOWED');
    const offLedger = parseRequest(signed(actors.byRole.OFF_LEDGER, { type: '111', writes: true }));
    expect(() => h.executor.auth.authorize(offLedger, { kind: 'EDIT', field: 'action', oldValue: '*', newValue: '*', isOwner: true }))
      .to.throw(RequestError)
      .with.property('code', 'AUTH_AUTHOR_NOT_FOUND');
    await h.close();
  });

  it('endorser rules: endorser must hold ENDORSER and sign; an endorsed request needs the endorser field', async () => {
    const { h, actors } = await setup();
    const owner = actors.byRole.OWNER;
    const endorser = actors.byRole.ENDORSER;
    const op = { type: '101', data: { name: 'n', version: '1.0', attr_names: ['a'] } };
    const act = { kind: 'ADD' as const, field: '*', newValue: '*', isOwner: true };
    const ok = parseRequest(signed([owner, endorser], op, { identifier: owner.did, endorser: endorser.did }));
    expect(() => h.executor.auth.authorize(ok, act)).not.to.throw();
    const noField = parseRequest(signed([owner, endorser], op, { identifier: owner.did }));
    expect(() => h.executor.auth.authorize(noField, act))
      .to.throw(RequestError)
      .with.property('reason')
      .that.contains("'Endorser' field must be explicitly set for the endorsed transaction");
    const steward = actors.byRole.STEWARD;
    const wrongRole = parseRequest(signed([owner, steward], op, { identifier: owner.did, endorser: steward.did }));
    expect(() => h.executor.auth.authorize(wrongRole, act))
      .to.throw(RequestError)
      .with.property('reason')
      .that.contains("Endorser must have one of the following roles: {'ENDORSER'}");
    await h.close();
  });
});
