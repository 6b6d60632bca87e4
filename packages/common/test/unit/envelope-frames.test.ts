// encodeEnvelopeFrames (a client's flush: its queued requests framed into one chunk) against encodeFrame(encodeEnvelope()).
import { expect } from 'chai';
import {
  ClientWireError,
  ClientWireErrorCode,
  EnvelopeKind,
  FrameDecoder,
  concatBytes,
  decodeEnvelope,
  encodeEnvelope,
  encodeEnvelopeFrames,
  encodeFrame,
} from '@quire/common';

describe('encodeEnvelopeFrames', () => {
  const enc = new TextEncoder();

  it('writes the bytes of a frame of an envelope per request, end to end, whatever the lengths of ids and payloads', () => {
    // ids and payload lengths on both sides of the varints' one-, two- and three-byte boundaries
    const ids = [1, 127, 128, 16_383, 16_384, 2 ** 31, Number.MAX_SAFE_INTEGER];
    const sizes = [0, 1, 121, 122, 125, 126, 127, 128, 600, 16_370, 16_384, 70_000];
    for (const id of ids)
      for (const size of sizes) {
        const payload = Uint8Array.from({ length: size }, (_, i) => (i * 31 + id) & 0xff);
        expect(encodeEnvelopeFrames(EnvelopeKind.REQUEST, [id], [payload])).to.deep.equal(encodeFrame(encodeEnvelope(EnvelopeKind.REQUEST, id, payload)));
      }
    const payloads = sizes.map((n) => new Uint8Array(n).fill(n & 0xff));
    const many = sizes.map((_, i) => ids[i % ids.length]);
    const expected = concatBytes(many.map((id, i) => encodeFrame(encodeEnvelope(EnvelopeKind.REQUEST, id, payloads[i]))));
    expect(encodeEnvelopeFrames(EnvelopeKind.REQUEST, many, payloads)).to.deep.equal(expected);
  });

  it('one payload shared by several requests (a write to every node) decodes to each request, and none is an empty chunk', () => {
    const payload = enc.encode('{"operation":{"type":"1"},"reqId":1}');
    const chunk = encodeEnvelopeFrames(EnvelopeKind.REQUEST, [5, 6, 7], [payload, payload, payload]);
    const frames = new FrameDecoder({ maxFrameLength: 1 << 20, maxSkipLength: 0 }).push(chunk);
    expect(frames.map((f) => (f.kind === 'frame' ? decodeEnvelope(f.data) : f))).to.deep.equal(
      [5, 6, 7].map((id) => ({ kind: EnvelopeKind.REQUEST, id, payload })),
    );
    expect(encodeEnvelopeFrames(EnvelopeKind.REQUEST, [], [])).to.have.length(0);
  });

  it('refuses an id encodeEnvelope refuses, with INVALID_REQUEST_ID', () => {
    for (const id of [-1, 1.5, Number.MAX_SAFE_INTEGER + 1, Number.NaN]) {
      let code: unknown;
      try {
        encodeEnvelopeFrames(EnvelopeKind.REQUEST, [1, id], [new Uint8Array(1), new Uint8Array(1)]);
      } catch (e) {
        code = e instanceof ClientWireError ? e.code : e;
      }
      expect(code, String(id)).to.equal(ClientWireErrorCode.INVALID_REQUEST_ID);
    }
  });
});
