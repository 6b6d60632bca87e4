import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { b58decode } from '@quire/common';
import { blsVerifyPop } from '@quire/crypto';
import { main } from '../../src/cli.js';
import { NodeError, NodeErrorCode } from '../../src/errors.js';
import { parseSeedArgument, readKeyFile, writeKeyFile } from '../../src/keys.js';

async function rejects(p: Promise<unknown>, code: string): Promise<void> {
  try {
    await p;
  } catch (e) {
    expect(e).to.be.instanceOf(NodeError);
    expect((e as NodeError).code).to.equal(code);
    return;
  }
  expect.fail(`expected ${code}`);
}

describe('keys', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'quire-keys-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('parses 32-character, hex and random seeds and refuses others', () => {
    expect(Buffer.from(parseSeedArgument('000000000000000000000000000Node1')).toString()).to.equal('000000000000000000000000000Node1');
    expect(parseSeedArgument('ab'.repeat(32))).to.deep.equal(new Uint8Array(32).fill(0xab));
    const a = parseSeedArgument('random');
    expect(a.length).to.equal(32);
    expect(parseSeedArgument('random')).to.not.deep.equal(a);
    for (const bad of ['short', '0'.repeat(33), 'zz'.repeat(32).slice(0, 63)]) {
      expect(() => parseSeedArgument(bad))
        .to.throw(NodeError)
        .with.property('code', NodeErrorCode.SEED_INVALID);
    }
  });

  it('writes a 0600 key file whose dest is the standard Node1 verkey, with a valid BLS PoP', async () => {
    const f = join(dir, 'sub', 'node-keys.json');
    const k = await writeKeyFile(f, 'Node1', parseSeedArgument('000000000000000000000000000Node1'));
    expect(k.dest).to.equal('Gw6pDLhcBcoQesN72qfotTgFa7cbuqZpkX3Xo6pLhPhv');
    expect(blsVerifyPop(b58decode(k.blskey), b58decode(k.blskey_pop))).to.equal(true);
    expect((await stat(f)).mode & 0o777).to.equal(0o600);
    const back = await readKeyFile(f);
    expect(back.dest).to.equal(k.dest);
    expect(back.blskey).to.equal(k.blskey);
    expect(back.name).to.equal('Node1');
    await rejects(writeKeyFile(f, 'Node1', parseSeedArgument('random')), NodeErrorCode.KEYS_EXIST);
  });

  it('refuses a key file that is missing, too open, or inconsistent with its seed', async () => {
    await rejects(readKeyFile(join(dir, 'none.json')), NodeErrorCode.KEYS_INVALID);
    const f = join(dir, 'k.json');
    await writeKeyFile(f, 'Node2', parseSeedArgument('000000000000000000000000000Node2'));
    await chmod(f, 0o644);
    await rejects(readKeyFile(f), NodeErrorCode.KEYS_INVALID);
    await chmod(f, 0o600);
    const body = JSON.parse(await readFile(f, 'utf8')) as Record<string, unknown>;
    await writeFile(f, JSON.stringify({ ...body, dest: 'Gw6pDLhcBcoQesN72qfotTgFa7cbuqZpkX3Xo6pLhPhv' }), { mode: 0o600 });
    await rejects(readKeyFile(f), NodeErrorCode.KEYS_INVALID);
    await writeFile(f, 'not json', { mode: 0o600 });
    await rejects(readKeyFile(f), NodeErrorCode.KEYS_INVALID);
  });

  it('quire-node init prints dest, blskey, blskey_pop; user errors exit 1 with one line', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const io = { out: (l: string) => out.push(l), err: (l: string) => err.push(l) };
    expect(await main(['init', '--data-dir', dir, '--name', 'Node3', '--seed', '000000000000000000000000000Node3'], io)).to.equal(0);
    expect(out).to.include('dest: DKVxG2fXXTU8yT5N7hGEbXB3dfdAnYv1JczDUHpmDxya');
    expect(out.some((l) => l.startsWith('blskey: '))).to.equal(true);
    expect(out.some((l) => l.startsWith('blskey_pop: '))).to.equal(true);
    expect(await main(['init', '--data-dir', dir, '--name', 'Node3', '--seed', 'random'], io)).to.equal(1);
    expect(err.at(-1)).to.match(/already exists/);
    expect(await main(['init', '--data-dir', dir, '--name', 'X', '--seed', 'short'], io)).to.equal(1);
    expect(err.at(-1)).to.match(/^invalid seed/);
    expect(await main(['start', '--data-dir', dir, '--config', join(dir, 'nope.json')], io)).to.equal(1);
    expect(err.at(-1)).to.match(/^cannot read config file/);
    // command-line overrides of the config are validated like the config file
    expect(await main(['start', '--data-dir', dir, '--metrics-port', 'abc'], io)).to.equal(1);
    expect(err.at(-1)).to.match(/metricsPort: expected an integer/);
    expect(await main(['start', '--data-dir', dir, '--log-level', 'loud'], io)).to.equal(1);
    expect(err.at(-1)).to.match(/logLevel: expected one of/);
  });
});
