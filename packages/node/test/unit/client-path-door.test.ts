// The door as a client frame is read (ClientPath.doorAtFrame, called by the client host before the request is
// queued): it refuses and admits exactly what `handle`'s own door does, over request shapes well formed and not (big
// reqIds beyond 2^53, unicode and escaped identifiers, duplicated keys, bytes that are not UTF-8, truncated JSON); its
// REQNACK "pool overloaded" is the bytes encodeReply writes; the writes it admits count toward the admission limit
// while they wait in the client host's queue, until `handle` takes them or their session closes.
import { expect } from 'chai';
import fc from 'fast-check';
import { POOL_OVERLOADED_REASON, parseJson, stringifyJson } from '@quire/common';
import { requestIdentity } from '@quire/consensus';
import { ClientPath, overloadedNack, type ClientChannel } from '../../src/client-path.js';
import { encodeReply } from '../../src/client-replies.js';
import { testLogger } from '../../src/logger.js';
import { type Fixture, memoryFixture, nymRequest, trustee, user } from './helpers.js';

const te = new TextEncoder();
const td = new TextDecoder();

function recorder(session = 's1'): ClientChannel & { responses: string[] } {
  const r = {
    session,
    responses: [] as string[],
    respond: (b: Uint8Array) => (r.responses.push(td.decode(b)), true),
    push: () => true,
  };
  return r;
}

type Mode = 'admit' | 'refuse' | 'by-identity';

/** An admission function as the core's: a decision per request identity (intake.ts), recorded. */
function admission(mode: Mode): { admit: (r: Record<string, unknown>, inProgress: number) => boolean; refused: string[]; admitted: string[] } {
  const a = {
    refused: [] as string[],
    admitted: [] as string[],
    admit: (r: Record<string, unknown>): boolean => {
      const id = requestIdentity(r);
      if (id === undefined) return (a.admitted.push('-'), true);
      const ok = mode === 'admit' || (mode === 'by-identity' && id.length % 2 === 0);
      (ok ? a.admitted : a.refused).push(id);
      return ok;
    },
  };
  return a;
}

function path(fx: Fixture, admit: (r: Record<string, unknown>, inProgress: number) => boolean, submitted: string[]): ClientPath {
  return new ClientPath(
    {},
    {
      pipeline: fx.pipeline,
      stores: fx.stores,
      submit: (connId) => submitted.push(connId),
      admit,
      now: () => 1_700_000_000,
      logger: testLogger(),
    },
  );
}

/** A request's bytes: a signed NYM (or a read) taken apart in the ways a client or an attacker could. */
interface Shape {
  base: number;
  reqId: 'keep' | 'big' | 'u64' | 'beyond-u64' | 'negative' | 'float' | 'string' | 'absent';
  identifier: 'keep' | 'unicode' | 'escaped' | 'number' | 'null' | 'absent';
  unicode: string;
  type: 'keep' | 'read' | 'attrib' | 'number' | 'absent' | 'operation-array';
  signatures: boolean;
  duplicate: 'none' | 'reqId' | 'identifier' | 'operation-type';
  damage: 'none' | 'truncate' | 'bad-utf8' | 'lone-surrogate' | 'trailing';
  cut: number;
}

const shapeArb: fc.Arbitrary<Shape> = fc.record({
  base: fc.nat({ max: 7 }),
  reqId: fc.constantFrom('keep', 'big', 'u64', 'beyond-u64', 'negative', 'float', 'string', 'absent'),
  identifier: fc.constantFrom('keep', 'unicode', 'escaped', 'number', 'null', 'absent'),
  unicode: fc.string({ unit: 'grapheme', maxLength: 12 }),
  type: fc.constantFrom('keep', 'read', 'attrib', 'number', 'absent', 'operation-array'),
  signatures: fc.boolean(),
  duplicate: fc.constantFrom('none', 'reqId', 'identifier', 'operation-type'),
  damage: fc.constantFrom('none', 'none', 'none', 'truncate', 'bad-utf8', 'lone-surrogate', 'trailing'),
  cut: fc.nat({ max: 400 }),
});

const RAW_REQ_ID: Record<Shape['reqId'], string> = {
  keep: '',
  big: '9007199254740993',
  u64: '18446744073709551615',
  'beyond-u64': '18446744073709551616',
  negative: '-5',
  float: '1.5',
  string: '"17"',
  absent: '',
};

function bytesOf(bases: readonly Record<string, unknown>[], s: Shape): Uint8Array {
  const r: Record<string, unknown> = structuredClone(bases[s.base % bases.length]!);
  const op = r.operation as Record<string, unknown>;
  if (s.identifier === 'unicode') r.identifier = s.unicode;
  else if (s.identifier === 'number') r.identifier = 42;
  else if (s.identifier === 'null') r.identifier = null;
  else if (s.identifier === 'absent') delete r.identifier;
  if (s.type === 'read') op.type = '105';
  else if (s.type === 'attrib') op.type = '100';
  else if (s.type === 'number') op.type = 1;
  else if (s.type === 'absent') delete op.type;
  else if (s.type === 'operation-array') r.operation = [op];
  if (s.signatures) {
    r.signatures = { [String(r.identifier ?? 'x')]: r.signature };
    delete r.signature;
  }
  if (s.reqId === 'absent') delete r.reqId;
  else if (s.reqId !== 'keep') r.reqId = 0x5eed; // replaced by the raw token below
  let text = stringifyJson(r);
  if (s.reqId !== 'keep' && s.reqId !== 'absent') text = text.replace('"reqId":24301', `"reqId":${RAW_REQ_ID[s.reqId]}`);
  if (s.identifier === 'escaped' && typeof r.identifier === 'string')
    text = text.replace(`"identifier":"${r.identifier[0]}`, `"identifier":"\\u00${r.identifier.charCodeAt(0).toString(16)}`);
  if (s.duplicate === 'reqId') text = text.replace('{', '{"reqId":1,');
  else if (s.duplicate === 'identifier') text = text.replace('{', '{"identifier":"dup",');
  else if (s.duplicate === 'operation-type') text = text.replace('"operation":{', '"operation":{"type":"1",');
  if (s.damage === 'truncate') text = text.slice(0, s.cut % text.length);
  else if (s.damage === 'lone-surrogate') text = text.replace('"protocolVersion"', '"\\ud800protocolVersion"');
  else if (s.damage === 'trailing') text += ' {}';
  const bytes = te.encode(text);
  if (s.damage !== 'bad-utf8') return bytes;
  // a byte that is never UTF-8 inside the identifier's string (decoded as U+FFFD, as today's path decodes it)
  const at = text.indexOf('"identifier":"');
  if (at < 0) return bytes;
  const out = new Uint8Array(bytes.length + 1);
  out.set(bytes.subarray(0, at + 14));
  out[at + 14] = 0xff;
  out.set(bytes.subarray(at + 14), at + 15);
  return out;
}

describe('client path: the door as a frame is read', function () {
  this.timeout(60_000);
  let fx: Fixture;
  let bases: Record<string, unknown>[];

  before(async () => {
    fx = await memoryFixture();
    bases = Array.from({ length: 8 }, (_, i) => nymRequest(trustee, user(200 + i)));
  });

  after(async () => {
    await fx.stores.kv.close();
  });

  it('refuses and admits exactly what the full path does, with the same answers (property)', async () => {
    await fc.assert(
      fc.asyncProperty(shapeArb, fc.constantFrom<Mode>('admit', 'refuse', 'by-identity'), async (shape, mode) => {
        const data = bytesOf(bases, shape);
        // the full path alone (every request through `handle`)
        const fullAdmission = admission(mode);
        const fullSubmitted: string[] = [];
        const full = path(fx, fullAdmission.admit, fullSubmitted);
        const fullCh = recorder();
        await full.handle(data, fullCh);
        // the door as the frame is read, then `handle` for what it hands on
        const fastAdmission = admission(mode);
        const fastSubmitted: string[] = [];
        const fast = path(fx, fastAdmission.admit, fastSubmitted);
        const fastCh = recorder();
        const answer = fast.doorAtFrame(data, 's1');
        if (answer !== undefined) fastCh.respond(answer);
        else await fast.handle(data, fastCh);
        expect(fastCh.responses).to.deep.equal(fullCh.responses);
        expect(fastSubmitted.length).to.equal(fullSubmitted.length);
        expect(fastAdmission.refused).to.deep.equal(fullAdmission.refused);
        expect(new Set(fastAdmission.admitted)).to.deep.equal(new Set(fullAdmission.admitted));
        expect(fast.refusedCount).to.equal(fullAdmission.refused.length);
        // nothing stays counted once `handle` took the request
        expect(fast.inProgress).to.equal(full.inProgress);
        // a refusal names the request's own identifier and reqId, exactly (a reqId beyond 2^53 too)
        if (fullAdmission.refused.length > 0) {
          const nack = parseJson(fullCh.responses[0]!) as Record<string, unknown>;
          const req = parseJson(td.decode(data)) as Record<string, unknown>;
          expect(nack).to.deep.equal({ op: 'REQNACK', identifier: req.identifier ?? '', reqId: req.reqId, reason: POOL_OVERLOADED_REASON });
        }
      }),
      { numRuns: 150 },
    );
  });

  it("its REQNACK is encodeReply's bytes of {op, identifier, reqId, reason}", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', maxLength: 40 }),
        fc.oneof(fc.nat(), fc.bigInt({ min: 2n ** 53n, max: 2n ** 64n - 1n })),
        (identifier, reqId) => {
          const want = encodeReply({ op: 'REQNACK', identifier, reqId, reason: POOL_OVERLOADED_REASON });
          expect(td.decode(overloadedNack({ identifier, reqId }))).to.equal(td.decode(want));
        },
      ),
    );
    expect(td.decode(overloadedNack({ reqId: 3 }))).to.equal(
      td.decode(encodeReply({ op: 'REQNACK', identifier: '', reqId: 3, reason: POOL_OVERLOADED_REASON })),
    );
  });

  it('counts the writes it admitted toward the limit while they are queued: until handle takes them, or their session closes', async () => {
    const asked: number[] = [];
    const submitted: string[] = [];
    const p = path(fx, (_r, inProgress) => (asked.push(inProgress), true), submitted);
    const a = te.encode(stringifyJson(nymRequest(trustee, user(300))));
    const b = te.encode(stringifyJson(nymRequest(trustee, user(301))));
    const c = te.encode(stringifyJson(nymRequest(trustee, user(302))));
    expect(p.doorAtFrame(a, 's1')).to.equal(undefined);
    expect(p.doorAtFrame(b, 's2')).to.equal(undefined);
    expect(p.doorAtFrame(c, 's2')).to.equal(undefined);
    expect(asked).to.deep.equal([0, 1, 2]);
    // a read is parsed but never counted
    expect(
      p.doorAtFrame(te.encode(stringifyJson({ operation: { type: '105', dest: user(1).did }, identifier: trustee.did, reqId: 9, protocolVersion: 2 })), 's1'),
    ).to.equal(undefined);
    // `handle` takes `a`: it moves from the queue into the writes in progress (asked again with the others queued)
    await p.handle(a, recorder('s1'));
    expect(asked[3]).to.equal(2);
    expect(p.inProgress).to.equal(1);
    // session s2 closes with b and c queued: they no longer count
    p.forgetSession('s2');
    p.doorAtFrame(te.encode(stringifyJson(nymRequest(trustee, user(303)))), 's1');
    expect(asked[4]).to.equal(1);
    expect(submitted).to.have.length(1);
  });

  it('hands everything on without parsing when the pool takes no writes or there is no admission control', () => {
    const p = path(fx, () => false, []);
    p.setWritable(false);
    const bytes = te.encode(stringifyJson(nymRequest(trustee, user(310))));
    expect(p.doorAtFrame(bytes, 's1')).to.equal(undefined);
    p.setWritable(true);
    expect(p.doorAtFrame(bytes, 's1')).to.not.equal(undefined);
    expect(p.refusedCount).to.equal(1);
    p.stop();
    expect(p.doorAtFrame(bytes, 's1')).to.equal(undefined);
  });
});
