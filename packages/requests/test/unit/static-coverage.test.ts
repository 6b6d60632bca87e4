// Static validation of every registered type (writes, the actions POOL_RESTART and VALIDATOR_INFO, reads) and the
// limits of transactions.md §8: one valid operation per type, then every field of it removed and
// given a value of the wrong type. Each failure must carry a stable code and a reason naming the
// field. A type registered without an entry here fails the first test.
import { b58encode } from '@quire/common';
import { Ed25519Signer, blsKeyFromSeed, blsProofOfPossession } from '@quire/crypto';
import { expect } from 'chai';
import { RequestError, RequestErrorCode } from '../../src/errors.js';
import { parseRequest } from '../../src/pipeline/parse.js';
import { createDefaultRegistry } from '../../src/registry.js';
import { TRUSTEE, signed } from './helpers/harness.js';

const registry = createDefaultRegistry();
const NODE_KEY = Ed25519Signer.fromSeed(`${'0'.repeat(27)}Node1`);
const BLS = blsKeyFromSeed(`${'0'.repeat(27)}Node1`);
const HASH = 'a'.repeat(64);
const DID = TRUSTEE.did;
const json = (v: unknown): string => JSON.stringify(v);
const rs = (type: string, rsType: string, id: string, content: unknown): Record<string, unknown> => ({
  type,
  id,
  rsType,
  rsName: 'n',
  rsVersion: '1.0',
  content: json(content),
});

/** One valid operation per type code. */
const VALID: Record<string, Record<string, unknown>> = {
  // pool / config writes and the action
  '0': {
    type: '0',
    dest: NODE_KEY.fullVerkey,
    data: {
      alias: 'Node1',
      node_ip: '10.0.0.1',
      node_port: 9701,
      client_ip: '10.0.0.1',
      client_port: 9702,
      services: ['VALIDATOR'],
      blskey: b58encode(BLS.publicKey),
      blskey_pop: b58encode(blsProofOfPossession(BLS)),
    },
  },
  '4': { type: '4', version: '1.0', text: 'agreement', ratification_ts: 1_700_000_000 },
  '5': { type: '5', version: '1.0', aml: { click: 'a click' }, amlContext: 'ctx' },
  '8': { type: '8' },
  '9': { type: '9', ledgers_ids: [909] },
  '109': {
    type: '109',
    name: 'quire',
    version: '1.2.3',
    action: 'start',
    sha256: HASH,
    schedule: { [NODE_KEY.fullVerkey]: '2030-01-01T00:00:00.000000+00:00' },
    timeout: 10,
    justification: 'j',
    force: false,
    reinstall: false,
    package: 'quire',
  },
  '110': { type: '110', data: { action: 'complete', version: '1.2' }, signature: '1111' },
  '111': { type: '111', writes: true, force: false },
  '118': { type: '118', action: 'start', datetime: '2030-01-01T00:00:00+00:00' },
  '119': { type: '119' },
  '120': { type: '120', auth_type: '1', auth_action: 'ADD', field: 'role', new_value: '0', constraint: { constraint_id: 'ROLE', role: '0', sig_count: 1 } },
  '122': {
    type: '122',
    rules: [{ auth_type: '1', auth_action: 'ADD', field: 'role', new_value: '0', constraint: { constraint_id: 'ROLE', role: '0', sig_count: 1 } }],
  },
  // domain writes
  '1': { type: '1', dest: DID, verkey: TRUSTEE.verkey, role: '101', alias: 'a', diddocContent: '{"service":[]}', version: 0 },
  '100': { type: '100', dest: DID, raw: '{"name":"x"}' },
  '101': { type: '101', data: { name: 's', version: '1.0', attr_names: ['a'] } },
  '102': { type: '102', ref: 7, signature_type: 'CL', tag: 't', data: { primary: {} } },
  '113': {
    type: '113',
    id: `${DID}:4:${DID}:3:CL:7:t:CL_ACCUM:r`,
    credDefId: `${DID}:3:CL:7:t`,
    revocDefType: 'CL_ACCUM',
    tag: 'r',
    value: { issuanceType: 'ISSUANCE_BY_DEFAULT', maxCredNum: 5, publicKeys: {}, tailsHash: 'h', tailsLocation: 'l' },
  },
  '114': { type: '114', revocRegDefId: 'r', revocDefType: 'CL_ACCUM', value: { accum: 'a2', prevAccum: 'a1', issued: [1], revoked: [2] } },
  '200': rs('200', 'ctx', 'did:sov:c', { '@context': { a: 'https://a' } }),
  '201': rs('201', 'sch', 'did:sov:s', { '@id': 'did:sov:s', '@type': 'rdfs:Class' }),
  '202': rs('202', 'enc', 'did:sov:e', {
    input: { id: 'i', type: 'string' },
    output: { id: 'o', type: 'integer' },
    algorithm: { description: 'd', documentation: 'https://d', implementation: 'https://i' },
    testVectors: 'https://t',
  }),
  '203': rs('203', 'map', 'did:sov:m', {
    '@id': 'did:sov:m',
    '@type': 'x',
    schema: 'did:sov:s',
    attributes: { issuer: [{ enc: 'did:sov:e', rank: 1 }], issuanceDate: [{ enc: 'did:sov:e', rank: 2 }] },
  }),
  '204': rs('204', 'cdf', 'did:sov:d', { signatureType: 'CL', mapping: 'did:sov:m', schema: 'did:sov:s', publicKey: { primary: {} } }),
  '205': rs('205', 'pdf', 'did:sov:p', { '@id': 'did:sov:p', '@type': 'x' }),
  // reads
  '3': { type: '3', ledgerId: 1, data: 1 },
  '6': { type: '6', version: '1.0' },
  '7': { type: '7', timestamp: 5 },
  '10': { type: '10' },
  '104': { type: '104', dest: DID, raw: 'name', seqNo: 1 },
  '105': { type: '105', dest: DID, timestamp: 5 },
  '107': { type: '107', dest: DID, data: { name: 's', version: '1.0' } },
  '108': { type: '108', origin: DID, ref: 7, signature_type: 'CL', tag: 't' },
  '115': { type: '115', id: 'r' },
  '116': { type: '116', revocRegDefId: 'r', timestamp: 5 },
  '117': { type: '117', revocRegDefId: 'r', from: 1, to: 5 },
  '121': { type: '121', auth_type: '1', auth_action: 'ADD', field: 'role', new_value: '0' },
  '300': { type: '300', id: 'did:sov:s' },
  '301': { type: '301', rsType: 'sch', rsName: 'n', rsVersion: '1.0' },
};

/** Fields whose absence is allowed (optional in the spec). */
const OPTIONAL: Record<string, readonly string[]> = {
  '0': [],
  '1': ['verkey', 'role', 'alias', 'diddocContent', 'version'],
  '3': ['ledgerId'],
  '4': ['text', 'ratification_ts'],
  '5': ['amlContext'],
  '6': ['version'],
  '7': ['timestamp'],
  '100': [],
  '102': ['tag'],
  '104': ['seqNo'],
  '105': ['timestamp'],
  '108': ['tag'],
  '109': ['timeout', 'justification', 'force', 'reinstall', 'package'],
  '111': ['force'],
  '117': ['from'],
  '118': ['datetime'],
  '120': ['new_value'],
};

/**
 * GET_AUTH_RULE takes none or all of the key fields: a missing one is refused with the text of
 * auth-rules.md §6.2, which names no field.
 */
const ALL_OR_NONE: Record<string, RequestErrorCode> = { '121': RequestErrorCode.AUTH_RULE_KEY_INCOMPLETE };

/** Fields for which a value of the wrong type is not refused (any JSON is accepted there). */
const ANY_JSON: Record<string, readonly string[]> = {};

/** A request holding `op`, as a node receives it (signature content is irrelevant to static validation). */
function staticError(op: Record<string, unknown>): RequestError | null {
  try {
    const req = parseRequest({ identifier: DID, reqId: 1, protocolVersion: 2, operation: op, signature: '1111' });
    const h = registry.get(req.type);
    if (h === undefined) throw new RequestError(RequestErrorCode.UNKNOWN_TYPE, { type: req.type });
    h.validateStatic(req);
    return null;
  } catch (e) {
    if (e instanceof RequestError) return e;
    throw e;
  }
}

function expectRefused(op: Record<string, unknown>, what: string): RequestError {
  const err = staticError(op);
  expect(err, `${what}: ${json(op).slice(0, 200)}`).to.not.equal(null);
  expect(Object.values(RequestErrorCode), what).to.include(err!.code);
  return err!;
}

describe('static validation of every type', () => {
  it('covers every registered type, and accepts one valid operation of each', () => {
    expect(registry.types().sort()).to.deep.equal(Object.keys(VALID).sort());
    for (const [type, op] of Object.entries(VALID)) {
      const err = staticError(op);
      expect(err?.reason ?? null, `type ${type}`).to.equal(null);
    }
  });

  for (const [type, valid] of Object.entries(VALID)) {
    const name = registry.nameOf(type);
    it(`${name} (${type}): every required field missing, every field of a wrong type, named in the reason`, () => {
      for (const field of Object.keys(valid).filter((f) => f !== 'type')) {
        const without = { ...valid };
        delete without[field];
        if (OPTIONAL[type]?.includes(field)) {
          expect(staticError(without)?.reason ?? null, `${name} without optional ${field}`).to.equal(null);
        } else if (ALL_OR_NONE[type] !== undefined) {
          expect(expectRefused(without, `${name} without ${field}`).code).to.equal(ALL_OR_NONE[type]);
        } else {
          const err = expectRefused(without, `${name} without ${field}`);
          expect(err.reason, `${name} without ${field}: ${err.reason}`).to.contain(field);
        }
        if (ANY_JSON[type]?.includes(field)) continue;
        const err = expectRefused({ ...valid, [field]: 12.5 }, `${name} with ${field}=12.5`);
        expect(err.reason, `${name} with ${field}=12.5: ${err.reason}`).to.contain(field);
      }
    });
  }

  it('refuses unknown type codes and a non-string type', () => {
    for (const t of ['9999', '', '-1', '2']) expect(staticError({ type: t })?.code, t).to.be.oneOf([RequestErrorCode.UNKNOWN_TYPE]);
    expect(() => parseRequest({ identifier: DID, reqId: 1, protocolVersion: 2, operation: { type: 1 } }))
      .to.throw(RequestError)
      .with.property('code', RequestErrorCode.FIELD_TYPE);
  });
});

describe('the limits of transactions.md §8', () => {
  const b58 = (n: number): string => b58encode(new Uint8Array(n).fill(7));
  const envelope = (extra: Record<string, unknown>): RequestError | null => {
    try {
      parseRequest({ reqId: 1, protocolVersion: 2, operation: { type: '105', dest: DID }, ...extra });
      return null;
    } catch (e) {
      return e as RequestError;
    }
  };

  it('DIDs decode to 16 or 32 bytes: dest, identifier, endorser, signer DIDs', () => {
    for (const n of [16, 32]) {
      expect(staticError({ type: '1', dest: b58(n) }), `dest of ${n} bytes`).to.equal(null);
      expect(envelope({ identifier: b58(n) }), `identifier of ${n} bytes`).to.equal(null);
    }
    for (const n of [15, 17, 31, 33]) {
      const e1 = staticError({ type: '1', dest: b58(n) })!;
      expect(e1.code).to.equal(RequestErrorCode.FIELD_BASE58_LENGTH);
      expect(e1.reason).to.contain('dest=');
      for (const [field, extra] of [
        ['identifier', { identifier: b58(n) }],
        ['endorser', { identifier: DID, endorser: b58(n), signatures: { [DID]: '1111' } }],
        ['signatures', { signatures: { [b58(n)]: '1111' } }],
      ] as const) {
        const e = envelope(extra)!;
        expect(e?.code, `${field} of ${n} bytes`).to.equal(RequestErrorCode.FIELD_BASE58_LENGTH);
        expect(e.reason).to.contain(field);
      }
    }
  });

  it('verkeys: full = 32 bytes, abbreviated = "~" + 16 bytes', () => {
    expect(staticError({ type: '1', dest: DID, verkey: b58(32) })).to.equal(null);
    expect(staticError({ type: '1', dest: DID, verkey: `~${b58(16)}` })).to.equal(null);
    for (const vk of [b58(31), b58(33), b58(16), `~${b58(15)}`, `~${b58(17)}`, `~${b58(32)}`, 'F'.repeat(45)]) {
      const e = staticError({ type: '1', dest: DID, verkey: vk })!;
      expect(e?.code, vk).to.equal(RequestErrorCode.FIELD_VERKEY);
      expect(e.reason).to.contain('verkey=');
    }
  });

  it('diddocContent: at most 10 KiB of UTF-8', () => {
    const doc = (bytes: number, ch = 'x'): string => `{"a":"${ch.repeat(bytes - 8)}"}`;
    expect(staticError({ type: '1', dest: DID, diddocContent: doc(10240) })).to.equal(null);
    expect(staticError({ type: '1', dest: DID, diddocContent: doc(10241) })?.code).to.equal(RequestErrorCode.FIELD_TOO_LONG);
    // 3 bytes per character: fewer than 10,240 characters but more than 10 KiB
    const wide = `{"a":"${'€'.repeat(3500)}"}`;
    expect(wide.length).to.be.below(10240);
    const e = staticError({ type: '1', dest: DID, diddocContent: wide })!;
    expect(e.code).to.equal(RequestErrorCode.FIELD_TOO_LONG);
    expect(e.reason).to.contain('diddocContent');
  });

  it('supported types: signature type CL, revocation type CL_ACCUM, node service VALIDATOR', () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ ...VALID['102']!, signature_type: 'BBS' }, 'signature_type'],
      [{ ...VALID['204']!, content: json({ signatureType: 'BBS', mapping: 'm', schema: 's', publicKey: { primary: {} } }) }, 'signatureType'],
      [{ ...VALID['113']!, revocDefType: 'OTHER' }, 'revocDefType'],
      [{ ...VALID['114']!, revocDefType: 'OTHER' }, 'revocDefType'],
      [{ ...VALID['0']!, data: { ...(VALID['0']!.data as object), services: ['OBSERVER'] } }, 'services'],
    ];
    for (const [op, field] of cases) {
      const e = staticError(op)!;
      expect(e, field).to.not.equal(null);
      expect(e.reason, field).to.contain(field);
    }
  });

  it('taaAcceptance.time is checked as a date at ordering (the envelope takes integers only)', () => {
    const acc = { taaDigest: HASH, mechanism: 'click', time: 1_700_000_000.5 };
    expect(envelope({ identifier: DID, taaAcceptance: acc })?.code).to.equal(RequestErrorCode.FIELD_TYPE);
    expect(envelope({ identifier: DID, taaAcceptance: { ...acc, time: 1_699_920_000 } })).to.equal(null);
  });
});

describe('a request signed for real passes the same static checks', () => {
  it('every valid write operation signed by the trustee passes', () => {
    for (const [type, op] of Object.entries(VALID)) {
      if (registry.get(type)!.kind === 'read') continue;
      const req = parseRequest(signed(TRUSTEE, op));
      registry.get(type)!.validateStatic(req);
    }
  });
});
