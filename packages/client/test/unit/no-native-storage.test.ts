// The light client and the consensus core use storage's pure verifiers only: importing them must not
// load LevelDB's native binding (classic-level), so that they run where no native module can be
// built (a browser bundle, a restricted host). A child process whose module resolution refuses
// `classic-level` imports each package's entry (@quire/testing's importRefusing); the main entry of
// @quire/storage, which opens databases, is the control.
import { expect } from 'chai';
import { importRefusing } from '@quire/testing';

const importWithoutClassicLevel = (specifier: string, refused = 'classic-level'): ReturnType<typeof importRefusing> => importRefusing(specifier, refused);

describe('the light client and consensus load no native storage binding (#22)', function () {
  this.timeout(240_000);

  for (const specifier of ['@quire/client', '@quire/consensus', '@quire/storage/proofs']) {
    it(`${specifier} imports with classic-level unresolvable`, () => {
      const r = importWithoutClassicLevel(specifier);
      expect(r.ok, r.output).to.equal(true);
    });
  }

  // the package map: the client owns its dialer and its libp2p stack, and never loads the validators' transport (#22)
  it('@quire/client imports with @quire/network unresolvable', () => {
    const r = importWithoutClassicLevel('@quire/client', '@quire/network');
    expect(r.ok, r.output).to.equal(true);
  });

  it('control: @quire/node (the validators) does not', () => {
    const r = importWithoutClassicLevel('@quire/node', '@quire/network');
    expect(r.ok).to.equal(false);
    expect(r.output).to.contain('@quire/network refused');
  });

  it('control: @quire/storage (the stores) does not', () => {
    const r = importWithoutClassicLevel('@quire/storage');
    expect(r.ok).to.equal(false);
    expect(r.output).to.contain('classic-level refused');
  });
});
