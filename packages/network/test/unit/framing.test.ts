import { expect } from 'chai';
import fc from 'fast-check';
import { ClientWireErrorCode } from '@quire/common';
import { FrameDecoder, encodeFrame, readVarint, varintLength, writeVarint } from '../../src/index.js';
import { codeOf } from '@quire/testing';

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

describe('framing', () => {
  it('varints round-trip and have minimal length', () => {
    for (const n of [0, 1, 127, 128, 300, 16383, 16384, 131072, 2 ** 31, 2 ** 40]) {
      const buf = new Uint8Array(varintLength(n));
      expect(writeVarint(n, buf, 0)).to.equal(buf.length);
      expect(readVarint(buf, 0)).to.deep.equal({ value: n, next: buf.length });
    }
    expect(readVarint(Uint8Array.of(0x80), 0)).to.equal(undefined);
  });

  it('rejects non-minimal and over-long varints with MALFORMED_FRAME', () => {
    expect(codeOf(() => readVarint(Uint8Array.of(0x80, 0x00), 0))).to.equal(ClientWireErrorCode.MALFORMED_FRAME);
    expect(codeOf(() => readVarint(new Uint8Array(8).fill(0xff), 0))).to.equal(ClientWireErrorCode.MALFORMED_FRAME);
    const d = new FrameDecoder({ maxFrameLength: 100, maxSkipLength: 0 });
    expect(codeOf(() => d.push(new Uint8Array(9).fill(0xff)))).to.equal(ClientWireErrorCode.MALFORMED_FRAME);
  });

  it('decodes frames however the bytes are split', () => {
    fc.assert(
      fc.property(
        fc.array(fc.uint8Array({ maxLength: 300 }), { maxLength: 8 }),
        fc.array(fc.integer({ min: 1, max: 50 }), { minLength: 1, maxLength: 20 }),
        (payloads, cuts) => {
          const wire = concat(payloads.map(encodeFrame));
          const d = new FrameDecoder({ maxFrameLength: 300, maxSkipLength: 0 });
          const got: Uint8Array[] = [];
          let at = 0;
          let c = 0;
          while (at < wire.length) {
            const len = cuts[c++ % cuts.length]!;
            for (const f of d.push(wire.subarray(at, at + len))) if (f.kind === 'frame') got.push(Uint8Array.from(f.data));
            at += len;
          }
          expect(got.map((g) => Buffer.from(g).toString('hex'))).to.deep.equal(payloads.map((p) => Buffer.from(p).toString('hex')));
          expect(d.partial).to.equal(false);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('skips an oversize body within maxSkipLength, keeping its head, then continues', () => {
    const d = new FrameDecoder({ maxFrameLength: 10, maxSkipLength: 1000, headBytes: 4 });
    const big = new Uint8Array(500).map((_, i) => i & 0xff);
    const wire = concat([encodeFrame(big), encodeFrame(Uint8Array.of(7, 8))]);
    const out = [...d.push(wire.subarray(0, 3)), ...d.push(wire.subarray(3, 250)), ...d.push(wire.subarray(250))];
    expect(out).to.have.length(2);
    expect(out[0]).to.deep.include({ kind: 'oversize', length: 500 });
    expect([...(out[0] as { head: Uint8Array }).head]).to.deep.equal([0, 1, 2, 3]);
    expect(out[1]!.kind).to.equal('frame');
    expect([...(out[1] as { data: Uint8Array }).data]).to.deep.equal([7, 8]);
  });

  it('throws on a frame beyond maxSkipLength without buffering it', () => {
    const d = new FrameDecoder({ maxFrameLength: 10, maxSkipLength: 0 });
    const prefix = new Uint8Array(varintLength(11));
    writeVarint(11, prefix, 0);
    expect(codeOf(() => d.push(prefix))).to.equal(ClientWireErrorCode.MALFORMED_FRAME);
  });

  it('reports a partial frame until it completes', () => {
    const d = new FrameDecoder({ maxFrameLength: 10, maxSkipLength: 0 });
    expect(d.partial).to.equal(false);
    d.push(Uint8Array.of(3, 1));
    expect(d.partial).to.equal(true);
    expect(d.push(Uint8Array.of(2, 3))).to.have.length(1);
    expect(d.partial).to.equal(false);
  });
});
