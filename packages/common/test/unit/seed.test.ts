import { expect } from 'chai';
import { decodeSeed, toHex } from '../../src/index.js';

describe('decodeSeed: the one seed rule of node keys, SDK DID keys and signers (formats.md 2.3)', () => {
  it('takes 32 raw bytes as they are, 64 hex digits in either case, and a 32-byte string as its UTF-8 bytes', () => {
    const raw = new Uint8Array(32).fill(7);
    expect(decodeSeed(raw)).to.equal(raw);
    expect(toHex(decodeSeed('AB'.repeat(32)) as Uint8Array)).to.equal('ab'.repeat(32));
    expect(new TextDecoder().decode(decodeSeed('000000000000000000000000Trustee1') as Uint8Array)).to.equal('000000000000000000000000Trustee1');
  });

  it('answers the byte length found for anything else (-1: neither bytes nor a string)', () => {
    expect(decodeSeed(new Uint8Array(31))).to.equal(31);
    expect(decodeSeed('short')).to.equal(5);
    expect(decodeSeed('é'.repeat(16) + 'x'.repeat(16))).to.equal(48); // 32 characters, 48 UTF-8 bytes
    expect(decodeSeed('ab'.repeat(31) + 'zz')).to.equal(64); // 64 characters, not hex: not 32 bytes either
    expect(decodeSeed(42)).to.equal(-1);
    expect(decodeSeed(undefined)).to.equal(-1);
  });
});
