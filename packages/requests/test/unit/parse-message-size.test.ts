// parseMessage refuses a text whose UTF-8 is longer than Limits.MESSAGE_BYTES (MESSAGE_TOO_LARGE with its byte length)
// and parses one within it, whatever its characters: a text of at most a third of the limit in UTF-16 units is not
// encoded to be measured, so the boundary is checked with 1-, 2-, 3- and 4-byte characters on both sides of it.
import { expect } from 'chai';
import fc from 'fast-check';
import { Limits, RequestError, RequestErrorCode, parseMessage } from '../../src/index.js';

const LIMIT = Limits.MESSAGE_BYTES;
const utf8Length = (s: string): number => new TextEncoder().encode(s).length;

/** A JSON string literal of `count` copies of `ch`, padded with ASCII to `bytes` bytes of UTF-8 when it can be. */
function literal(ch: string, bytes: number): string {
  const each = utf8Length(ch);
  const count = Math.floor((bytes - 2) / each);
  return `"${ch.repeat(count)}${'a'.repeat(bytes - 2 - count * each)}"`;
}

function outcome(text: string): 'parsed' | RequestErrorCode {
  try {
    parseMessage(text);
    return 'parsed';
  } catch (e) {
    if (e instanceof RequestError) return e.code;
    throw e;
  }
}

describe('parseMessage size limit', () => {
  it('parses a text of exactly the limit and refuses one byte more, in characters of every UTF-8 length', () => {
    for (const ch of ['a', 'é', '€', '😀']) {
      const atLimit = literal(ch, LIMIT);
      expect(utf8Length(atLimit)).to.equal(LIMIT);
      expect(outcome(atLimit), `${ch} at the limit`).to.equal('parsed');
      const over = literal(ch, LIMIT + 1);
      expect(utf8Length(over)).to.equal(LIMIT + 1);
      expect(outcome(over), `${ch} one byte over`).to.equal(RequestErrorCode.MESSAGE_TOO_LARGE);
      // the same as bytes
      expect(outcome(new TextEncoder().encode(over) as never), `${ch} one byte over, as bytes`).to.equal(RequestErrorCode.MESSAGE_TOO_LARGE);
    }
  });

  it('refuses exactly the texts longer than the limit in UTF-8, around a third of it in units too', () => {
    const unit = fc.constantFrom('a', 'é', '€', '😀', '\ud800');
    fc.assert(
      fc.property(fc.array(unit, { minLength: 1, maxLength: 8 }), fc.integer({ min: Math.floor(LIMIT / 4) - 64, max: LIMIT + 64 }), (chars, bytes) => {
        const pattern = chars.join('');
        const per = utf8Length(pattern);
        let body = pattern.repeat(Math.max(0, Math.floor((bytes - 2) / per)));
        for (let i = 0; utf8Length(body) + 2 < bytes; i++) body += chars[i % chars.length] ?? 'a';
        const text = `"${body}"`;
        const expected = utf8Length(text) > LIMIT ? RequestErrorCode.MESSAGE_TOO_LARGE : 'parsed';
        const got = outcome(text);
        // a lone surrogate is not well-formed JSON text for the lossless parser: refused as MALFORMED_JSON when within the limit
        if (expected === 'parsed' && got === RequestErrorCode.MALFORMED_JSON) return body.includes('\ud800');
        expect(got).to.equal(expected);
        return true;
      }),
      { numRuns: 60 },
    );
  });
});
