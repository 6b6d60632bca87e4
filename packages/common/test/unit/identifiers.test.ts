import { expect } from 'chai';
import fc from 'fast-check';
import {
  IdentifierError,
  IdentifierErrorCode as I,
  NYM_VERSION_1_MISMATCH,
  NYM_VERSION_2_MISMATCH,
  abbreviatedVerkey,
  b58decode,
  b58encode,
  checkNymDidBinding,
  checkNymVersionValue,
  decodeDid,
  didFromVerkey,
  didIndyV2Id,
  fullVerkey,
  isAbbreviatedVerkey,
  isFullVerkey,
  isValidDid,
  isValidVerkey,
  peerIdOfNodeDest,
  resolveVerkey,
  unqualifiedDid,
} from '@quire/common';
import { expectCode } from './helpers.js';
import { loadVectors } from './vectors.js';

interface Identity {
  name: string;
  verkey_hex: string;
  verkey_base58: string;
  did: string;
  abbreviated_verkey: string;
  did_indy_v2_id: string;
}
const { identities } = loadVectors<{ identities: Identity[] }>('identities.json');

describe('identifiers (formats 2.1-2.2)', () => {
  describe('identities.json', () => {
    for (const id of identities) {
      it(id.name, () => {
        const vk = new Uint8Array(Buffer.from(id.verkey_hex, 'hex'));
        expect(didFromVerkey(vk)).to.equal(id.did);
        expect(abbreviatedVerkey(vk)).to.equal(id.abbreviated_verkey);
        expect(fullVerkey(vk)).to.equal(id.verkey_base58);
        expect(didIndyV2Id(vk)).to.equal(id.did_indy_v2_id);
        expect(Buffer.from(resolveVerkey(id.did, id.abbreviated_verkey)!).toString('hex')).to.equal(id.verkey_hex);
        expect(Buffer.from(resolveVerkey(id.did, id.verkey_base58)!).toString('hex')).to.equal(id.verkey_hex);
        expect(isValidDid(id.did)).to.equal(true);
        expect(isAbbreviatedVerkey(id.abbreviated_verkey)).to.equal(true);
        expect(isFullVerkey(id.verkey_base58)).to.equal(true);
        expect(checkNymDidBinding(id.did, id.verkey_base58, 1)).to.equal(null);
        expect(checkNymDidBinding(id.did_indy_v2_id, id.verkey_base58, 2)).to.equal(null);
        expect(checkNymDidBinding(id.did, id.verkey_base58, 2)).to.equal(NYM_VERSION_2_MISMATCH);
        expect(checkNymDidBinding(id.did_indy_v2_id, id.verkey_base58, 1)).to.equal(NYM_VERSION_1_MISMATCH);
      });
    }
  });

  it('resolves the examples of formats.md 2.1', () => {
    expect(b58encode(resolveVerkey('99BgFBg35BehzfSADV5nM4', '~8zH9ZSyZTFPGJ4ZPL5Rvxx')!)).to.equal('5SMfqc4NGeQM21NMx3cB9sqop6KCFFC1TqoGKGptdock');
    const cryptonym = new Uint8Array([...b58decode('L5AD5g65TDQr1PPHHRoiGf'), ...b58decode('Bf9Z1tKWpcJAvKJVhZhvVZ')]);
    expect(b58encode(cryptonym)).to.equal('BPtrqHo3WyjmTNpVchEhWxp3qfDdssdFUNoM8kmKoEWw');
    expect(b58encode(resolveVerkey('BPtrqHo3WyjmTNpVchEhWxp3qfDdssdFUNoM8kmKoEWw')!)).to.equal('BPtrqHo3WyjmTNpVchEhWxp3qfDdssdFUNoM8kmKoEWw');
    expect(b58encode(resolveVerkey('BPtrqHo3WyjmTNpVchEhWxp3qfDdssdFUNoM8kmKoEWw', null)!)).to.equal('BPtrqHo3WyjmTNpVchEhWxp3qfDdssdFUNoM8kmKoEWw');
    expectCode(() => resolveVerkey('V4SGRU86Z58d6TV7PBUe6f', 'F'.repeat(45)), IdentifierError, I.INVALID_VERKEY);
    expect(isValidVerkey('F'.repeat(45))).to.equal(false);
  });

  it('a 16-byte DID without verkey has no key (guardianship)', () => {
    expect(resolveVerkey('V4SGRU86Z58d6TV7PBUe6f')).to.equal(null);
    expect(resolveVerkey('V4SGRU86Z58d6TV7PBUe6f', null)).to.equal(null);
    expect(resolveVerkey('V4SGRU86Z58d6TV7PBUe6f', '')).to.equal(null);
  });

  it('checks lengths on decoded bytes', () => {
    const b16 = b58encode(new Uint8Array(16).fill(7));
    const b15 = b58encode(new Uint8Array(15).fill(7));
    const b17 = b58encode(new Uint8Array(17).fill(7));
    const b32 = b58encode(new Uint8Array(32).fill(7));
    const b31 = b58encode(new Uint8Array(31).fill(7));
    const zeros16 = b58encode(new Uint8Array(16));
    expect(zeros16).to.equal('1'.repeat(16));
    expect(isValidDid(zeros16)).to.equal(true);
    expect(decodeDid(b15)).to.equal(undefined);
    expect(decodeDid(b17)).to.equal(undefined);
    expect(decodeDid('')).to.equal(undefined);
    expect(decodeDid('0OIl')).to.equal(undefined);
    expect(isFullVerkey(b31)).to.equal(false);
    expect(isAbbreviatedVerkey('~' + b15)).to.equal(false);
    expect(isAbbreviatedVerkey('~' + b32)).to.equal(false);
    expectCode(() => resolveVerkey(b16, '~' + b15), IdentifierError, I.INVALID_VERKEY);
    expectCode(() => resolveVerkey(b32, '~' + b16), IdentifierError, I.ABBREVIATED_VERKEY_NEEDS_16_BYTE_DID);
    expectCode(() => resolveVerkey(b17), IdentifierError, I.INVALID_DID);
    expectCode(() => resolveVerkey('0bad'), IdentifierError, I.INVALID_DID);
    expectCode(() => resolveVerkey(b16, '~0bad'), IdentifierError, I.INVALID_VERKEY);
    expectCode(() => resolveVerkey(b16, b31), IdentifierError, I.INVALID_VERKEY);
    expectCode(() => didFromVerkey(new Uint8Array(31)), IdentifierError, I.INVALID_KEY_LENGTH);
    expectCode(() => abbreviatedVerkey(new Uint8Array(33)), IdentifierError, I.INVALID_KEY_LENGTH);
  });

  it('DID + abbreviated verkey always resolve to the key they came from', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), (vk) => {
        expect(Buffer.from(resolveVerkey(didFromVerkey(vk), abbreviatedVerkey(vk))!).equals(Buffer.from(vk))).to.equal(true);
      }),
      { numRuns: 100 },
    );
  });

  it('strips qualified DID prefixes', () => {
    expect(unqualifiedDid('did:sov:V4SGRU86Z58d6TV7PBUe6f')).to.equal('V4SGRU86Z58d6TV7PBUe6f');
    expect(unqualifiedDid('did:indy:sovrin:staging:V4SGRU86Z58d6TV7PBUe6f')).to.equal('V4SGRU86Z58d6TV7PBUe6f');
    expect(unqualifiedDid('V4SGRU86Z58d6TV7PBUe6f')).to.equal('V4SGRU86Z58d6TV7PBUe6f');
  });

  describe('NYM version (formats 2.2)', () => {
    const t = identities[0]!;
    it('accepts 0, 1, 2 and absent; names any other value', () => {
      for (const v of [undefined, null, 0, 1, 2]) expect(checkNymVersionValue(v)).to.equal(null);
      expect(checkNymVersionValue(3)).to.equal('Version must be one of {0, 1, 2}, received 3');
      expect(checkNymVersionValue(-1)).to.equal('Version must be one of {0, 1, 2}, received -1');
      expect(checkNymVersionValue('1')).to.equal('Version must be one of {0, 1, 2}, received 1');
      expect(checkNymDidBinding(t.did, t.verkey_base58, 7)).to.equal('Version must be one of {0, 1, 2}, received 7');
    });

    it('version 0 / absent never checks the binding', () => {
      expect(checkNymDidBinding('anything', undefined, 0)).to.equal(null);
      expect(checkNymDidBinding('anything', '~abc', undefined)).to.equal(null);
    });

    it('versions 1 and 2 fail with an abbreviated, absent or malformed verkey', () => {
      for (const vk of [t.abbreviated_verkey, undefined, null, '', 'F'.repeat(45), '0OIl']) {
        expect(checkNymDidBinding(t.did, vk, 1)).to.equal('Identifier with version 1 must be first 16 bytes of verkey');
        expect(checkNymDidBinding(t.did_indy_v2_id, vk, 2)).to.equal('Identifier with version 2 must be first 16 bytes of SHA256 of verkey');
      }
    });
  });
});

describe('peerIdOfNodeDest: the libp2p PeerId of a node from its NODE.dest', () => {
  it("gives libp2p's PeerIds (vectors computed with @libp2p/peer-id 6)", () => {
    expect(peerIdOfNodeDest('Gw6pDLhcBcoQesN72qfotTgFa7cbuqZpkX3Xo6pLhPhv')).to.equal('12D3KooWRkTyxUHKNX4u4ksXfSR9fFm64SfEwXeJi7QZB5yEbLRr');
    expect(peerIdOfNodeDest('52Y2w7NXvFk4zUsVGXaq3ai8xBVNV8FX7aME2Vpz2tH')).to.equal('12D3KooW9tPhn4h5ipXEUszJ7sGvbqfYdHE8QBCjUhwNc1eisycD');
  });

  it('refuses a dest that is not base58 of 32 bytes with INVALID_VERKEY', () => {
    for (const bad of ['', '0OIl', 'Gw6pDLhcBcoQesN72qfotT', 'Gw6pDLhcBcoQesN72qfotTgFa7cbuqZpkX3Xo6pLhPhvGw6p', 42 as unknown as string]) {
      try {
        peerIdOfNodeDest(bad);
        expect.fail(`accepted ${String(bad)}`);
      } catch (e) {
        expect(e).to.be.instanceOf(IdentifierError);
        expect((e as IdentifierError).code).to.equal(I.INVALID_VERKEY);
      }
    }
  });
});
