// The typed definitions of the write commands: each option's key is the attribute commander parses its flag into
// (registration refuses a definition where they differ), and each builds the request its options describe.
import { expect } from 'chai';
import { Command } from 'commander';
import { ClientErrorCode } from '../../src/errors.js';
import { WRITE_COMMANDS, registerWriteCommand, roleArg, type WriteCommand } from '../../src/cli/write-commands.js';
import { codeOf } from './fixtures.js';

const SUBMITTER = 'V4SGRU86Z58d6TV7PBUe6f';
const byName = (name: string): WriteCommand => WRITE_COMMANDS.find((c) => c.name === name)!;

describe('write command definitions', () => {
  it('register, one command each, every option key being the attribute commander gives its flag', () => {
    const program = new Command('quire');
    for (const c of WRITE_COMMANDS) registerWriteCommand(program, () => undefined, c);
    const names = program.commands.map((c) => c.name());
    expect(new Set(names).size).to.equal(names.length);
    for (const c of WRITE_COMMANDS) {
      const cmd = program.commands.find((x) => x.name() === c.name)!;
      expect(
        cmd.options.map((o) => o.attributeName()),
        c.name,
      ).to.deep.equal(Object.keys(c.options));
      for (const o of cmd.options) expect(o.mandatory, `${c.name} ${o.flags}`).to.equal(c.options[o.attributeName()]!.required === true);
    }
  });

  it('a definition whose option key is not the attribute of its flag is refused at registration', () => {
    const bad: WriteCommand = { name: 'planted', description: '', options: { clientIP: { flags: '--client-ip <ip>' } }, build: () => ({}) as never };
    expect(codeOf(() => registerWriteCommand(new Command('quire'), () => undefined, bad))).to.equal(ClientErrorCode.INVALID_ARGUMENT);
  });

  it('--role takes a role name in any case, a code, or "" / NONE for none', () => {
    expect(['trustee', 'STEWARD', 'Endorser', 'network_monitor'].map(roleArg)).to.deep.equal(['0', '2', '101', '201']);
    expect([roleArg(''), roleArg('none')]).to.deep.equal([null, null]);
    expect(roleArg('2')).to.equal('2');
  });

  it('builds the request its options describe, leaving out what was not given', () => {
    const nym = byName('nym').build({ dest: 'VsKV7grR1BUE29mG2Fm2kX', role: 'steward', version: '2' }, SUBMITTER);
    expect(nym.operation).to.deep.equal({ type: '1', dest: 'VsKV7grR1BUE29mG2Fm2kX', role: '2', version: 2 });
    const node = byName('node').build({ dest: '4PS3EDQ3dW1tci1Bp6543CfuuebjFrg36kLAUcskGfaA', alias: 'Node5', clientPort: '9702', services: '' }, SUBMITTER);
    expect(node.operation.data).to.deep.equal({ alias: 'Node5', client_port: 9702, services: [] });
    expect(codeOf(() => byName('pool-config').check!({ writes: 'maybe' }))).to.equal(ClientErrorCode.INVALID_ARGUMENT);
    expect(codeOf(() => byName('auth-rules').check!({ rules: '{"auth_type":"1"}' }))).to.equal(ClientErrorCode.INVALID_ARGUMENT);
  });
});
