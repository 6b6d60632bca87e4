// parseJson's strings, short and long (a long string is checked with native searches once it passes 48 characters):
// the same text, the same refusals (control characters, lone surrogates, bad escapes, no closing quote) wherever in
// the string they are, and the position of a refusal as the character-by-character scan reports it.
import { expect } from 'chai';
import fc from 'fast-check';
import { EncodingError, EncodingErrorCode as C, parseJson } from '@quire/common';

/** What parsing `text` gives: the value, or the error code and position. */
function outcome(text: string): { value: unknown } | { code: string; position: unknown } {
  try {
    return { value: parseJson(text) };
  } catch (e) {
    expect(e).to.be.instanceOf(EncodingError);
    return { code: (e as EncodingError).code, position: (e as EncodingError).data.position };
  }
}

/** The reference: what a string literal must parse to, by RFC 8259 and formats.md 1.4 (no lone surrogates). */
function expected(body: string): { value: string } | { code: string } {
  // eslint-disable-next-line no-control-regex -- the characters JSON forbids raw in a string
  if (/[\u0000-\u001f]/.test(body)) return { code: C.INVALID_JSON };
  if (body.includes('"') || body.includes('\\')) throw new Error('not a raw body');
  if (!(body as unknown as { isWellFormed(): boolean }).isWellFormed()) return { code: C.LONE_SURROGATE };
  return { value: body };
}

describe('parseJson strings, short and long', () => {
  // bodies with no quote or backslash, of any length around the switch to native searches
  const rawChar = fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom(...'ABCxyz019+/=é€'.split('')) },
    { weight: 1, arbitrary: fc.constantFrom('\u0000', '\u001f', '\n', '\t') },
    { weight: 1, arbitrary: fc.constantFrom('\ud83d', '\ude00', '\ud83d\ude00') },
  );
  const body = fc.array(rawChar, { maxLength: 140, size: 'max' }).map((cs) => cs.join(''));

  it('a raw string body parses to itself or is refused as the reference says, alone and inside an object', () => {
    fc.assert(
      fc.property(body, (b) => {
        const want = expected(b);
        for (const [text, unwrap] of [
          [`"${b}"`, (v: unknown) => v],
          [`{"proof_nodes":"${b}","x":1}`, (v: unknown) => (v as Record<string, unknown>).proof_nodes],
        ] as const) {
          const got = outcome(text);
          if ('value' in want) expect('value' in got ? unwrap(got.value) : got).to.equal(want.value);
          else expect('code' in got ? got.code : got).to.equal(want.code);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('escapes anywhere in a long string decode as JSON.parse decodes them; a bad escape is refused at its place', () => {
    const piece = fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom('a', 'Z', '9', '+', 'é') },
      { weight: 1, arbitrary: fc.constantFrom('\\"', '\\\\', '\\/', '\\n', '\\u0041', '\\ud83d\\ude00', '\\u00e9') },
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 120, size: 'max' }), fc.nat(), (pieces, at) => {
        const b = pieces.join('');
        expect(parseJson(`"${b}"`)).to.equal(JSON.parse(`"${b}"`));
        // a bad escape inserted at a piece boundary: INVALID_JSON at the backslash
        const i = pieces.slice(0, at % (pieces.length + 1)).join('').length;
        const bad = `"${b.slice(0, i)}\\x${b.slice(i)}"`;
        expect(outcome(bad)).to.deep.equal({ code: C.INVALID_JSON, position: i + 1 });
      }),
      { numRuns: 1000 },
    );
  });

  it('a control character or a lone surrogate after the first 48 characters is refused as before it', () => {
    const long = 'A'.repeat(100);
    expect(outcome(`"${long}\u0001"`)).to.deep.equal({ code: C.INVALID_JSON, position: 101 });
    expect(outcome(`"${long.slice(0, 10)}\u0001${long}"`)).to.deep.equal({ code: C.INVALID_JSON, position: 11 });
    expect(outcome(`"${long}\ud800${long}"`)).to.deep.equal({ code: C.LONE_SURROGATE, position: 1 });
    expect(outcome(`"${long}\ud83d\ude00"`)).to.deep.equal({ value: `${long}\ud83d\ude00` });
    // no closing quote: the whole rest is scanned and the string reported unterminated at its opening quote
    expect(outcome(`"${long}`)).to.deep.equal({ code: C.INVALID_JSON, position: 0 });
    expect(outcome(`["${long}`)).to.deep.equal({ code: C.INVALID_JSON, position: 1 });
  });
});
