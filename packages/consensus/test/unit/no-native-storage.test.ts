// The consensus core is pure: its entries load no native storage binding (classic-level) and not the request
// handlers (@quire/requests), whose interfaces it names only through its own (interfaces.ts). A child process whose
// module resolution refuses each of them imports the core and its simulator; the main entry of @quire/storage, which
// opens databases, is the control that the refusal bites.
import { expect } from 'chai';
import { importRefusing } from '@quire/testing';

describe('consensus loads no native storage binding and no request handlers (#22)', function () {
  this.timeout(240_000);

  for (const specifier of ['@quire/consensus', '@quire/consensus/sim']) {
    it(`${specifier} imports with classic-level unresolvable`, () => {
      const r = importRefusing(specifier, 'classic-level');
      expect(r.ok, r.output).to.equal(true);
    });
  }

  it('@quire/consensus imports with @quire/requests unresolvable', () => {
    const r = importRefusing('@quire/consensus', '@quire/requests');
    expect(r.ok, r.output).to.equal(true);
  });

  it('control: @quire/storage (the stores) does not import with classic-level unresolvable', () => {
    const r = importRefusing('@quire/storage', 'classic-level');
    expect(r.ok).to.equal(false);
    expect(r.output).to.contain('classic-level refused');
  });
});
