// quire wallet create|open|list, did new --alias / use / list, pool add|use|list: keys encrypted under a passphrase
// (scrypt + AES-256-GCM, mode 0600), writes signed with the wallet's DID without --seed, pool profiles, the accepted
// TAA remembered per pool.
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { b58decode, parseJson, signatureInput } from '@quire/common';
import { ed25519Verify } from '@quire/crypto';
import { main } from '../../src/cli/main.js';
import { acceptedTaa, rememberTaa } from '../../src/cli/wallet.js';
import { DidKey } from '../../src/index.js';
import { poolGenesis } from './fixtures.js';

async function runCli(argv: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out, err };
}

const ALICE_SEED = '000000000000000000000000000Alice';

describe('quire wallet, DIDs and pool profiles', function () {
  this.timeout(60_000);
  const home = mkdtempSync(join(tmpdir(), 'quire-wallet-'));
  const saved = { home: process.env.QUIRE_CLI_HOME, pass: process.env.QUIRE_WALLET_PASSPHRASE };
  before(() => {
    process.env.QUIRE_CLI_HOME = home;
    process.env.QUIRE_WALLET_PASSPHRASE = 'correct horse battery';
  });
  after(() => {
    for (const [k, v] of [
      ['QUIRE_CLI_HOME', saved.home],
      ['QUIRE_WALLET_PASSPHRASE', saved.pass],
    ] as const) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    rmSync(home, { recursive: true, force: true });
  });

  it('wallet create: an encrypted file of mode 0600, in use; list marks it', async () => {
    const r = await runCli(['wallet', 'create', 'main']);
    expect(r.code, r.err.join('\n')).to.equal(0);
    expect(r.out[0]).to.equal('wallet main created and in use');
    const file = join(home, 'wallets', 'main.wallet');
    expect(statSync(file).mode & 0o777).to.equal(0o600);
    const f = JSON.parse(readFileSync(file, 'utf8')) as { kdf: { name: string; N: number }; cipher: string };
    expect(f.kdf.name).to.equal('scrypt');
    expect(f.kdf.N).to.be.at.least(1 << 15);
    expect(f.cipher).to.equal('aes-256-gcm');
    expect((await runCli(['wallet', 'create', 'main'])).err[0]).to.match(/^error: wallet: wallet main already exists/);
    expect((await runCli(['wallet', 'list'])).out).to.deep.equal(['* main']);
  });

  it('did new --alias stores the key (the seed is neither printed nor in clear on disk); did use signs writes with it', async () => {
    const alice = DidKey.fromSeed(ALICE_SEED);
    const r = await runCli(['did', 'new', '--alias', 'alice', '--seed', ALICE_SEED]);
    expect(r.code, r.err.join('\n')).to.equal(0);
    expect(r.out[0]).to.equal(`did         ${alice.did}`);
    expect(r.out.join('\n')).to.not.contain(alice.seedHex);
    const disk = readFileSync(join(home, 'wallets', 'main.wallet'), 'utf8');
    expect(disk).to.not.contain(alice.seedHex);
    expect(disk).to.not.contain(alice.did);
    const use = await runCli(['did', 'use', 'alice']);
    expect(use.out[0]).to.equal(`signing as alice (${alice.did}) from wallet main`);
    expect((await runCli(['did', 'list'])).out[0]).to.match(new RegExp(`^\\* alice\\s+${alice.did} `));
    // a write without --seed is signed by the wallet's DID in use
    const w = await runCli(['--dry-run', 'nym', '--dest', DidKey.random().did]);
    expect(w.code, w.err.join('\n')).to.equal(0);
    const req = parseJson(w.out[0]!) as { identifier: string; signature: string };
    expect(req.identifier).to.equal(alice.did);
    expect(ed25519Verify(alice.publicKey, signatureInput(req), b58decode(req.signature))).to.equal(true);
  });

  it('a wrong passphrase is refused with one line; open checks it and switches wallets', async () => {
    expect((await runCli(['wallet', 'create', 'other'])).code).to.equal(0);
    expect((await runCli(['wallet', 'list'])).out).to.deep.equal(['  main', '* other']);
    process.env.QUIRE_WALLET_PASSPHRASE = 'not the passphrase';
    const bad = await runCli(['wallet', 'open', 'main']);
    expect(bad.code).to.equal(1);
    expect(bad.err).to.deep.equal(['error: wallet: wrong passphrase for wallet main (or a damaged wallet file)']);
    process.env.QUIRE_WALLET_PASSPHRASE = 'correct horse battery';
    const ok = await runCli(['wallet', 'open', 'main']);
    expect(ok.out[0]).to.equal('wallet main in use (1 DIDs)');
    expect((await runCli(['wallet', 'open', 'nope'])).err[0]).to.match(/^error: wallet: no wallet nope/);
  });

  it('a wallet file asking for an unbounded or unknown key derivation is refused with one line, before deriving', async () => {
    const file = join(home, 'wallets', 'main.wallet');
    const good = readFileSync(file, 'utf8');
    const f = JSON.parse(good) as { kdf: Record<string, unknown> };
    try {
      for (const kdf of [{ N: 2 ** 30 }, { r: 1e6 }, { p: 64 }, { N: 3000 }, { N: -1 }, { N: '32768' }, { name: 'argon2id' }]) {
        writeFileSync(file, JSON.stringify({ ...f, kdf: { ...f.kdf, ...kdf } }), { mode: 0o600 });
        const r = await runCli(['wallet', 'open', 'main']);
        expect(r.code, JSON.stringify(kdf)).to.equal(1);
        expect(r.err, JSON.stringify(kdf)).to.deep.equal([
          'error: wallet: the file of wallet main asks for a key derivation this CLI does not do (scrypt with N a power of 2 up to 2^20, r up to 16, p up to 4)',
        ]);
      }
      writeFileSync(file, 'null', { mode: 0o600 });
      expect((await runCli(['wallet', 'open', 'main'])).err[0]).to.match(/^error: wallet: the file of wallet main asks for a key derivation/);
    } finally {
      writeFileSync(file, good, { mode: 0o600 });
    }
    expect((await runCli(['wallet', 'open', 'main'])).code).to.equal(0);
  });

  it('pool add / use / list: a command without --genesis uses the pool profile in use', async () => {
    const s = createServer();
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    const port = (s.address() as { port: number }).port;
    await new Promise<void>((r) => s.close(() => r()));
    const file = join(home, 'down.txn');
    writeFileSync(file, poolGenesis({ ports: [port, port, port, port] }));
    const add = await runCli(['pool', 'add', 'local', '--genesis', file]);
    expect(add.code, add.err.join('\n')).to.equal(0);
    expect(add.out[0]).to.equal(`pool local: ${file} (in use)`);
    expect((await runCli(['pool', 'list'])).out[0]).to.equal(`* local            ${file}`);
    expect((await runCli(['pool', 'use', 'nowhere'])).err[0]).to.match(/^error: pool: no pool profile nowhere/);
    // the profile's genesis is used: the pool is contacted (and is down)
    const st = await runCli(['--timeout', '3000', 'pool', 'status']);
    expect(st.code).to.equal(1);
    expect(st.out[0]).to.equal('no quorum: 0 of 4 answered, 3 needed');
  });

  it('the accepted TAA is remembered per pool genesis file', () => {
    const file = join(home, 'down.txn');
    expect(acceptedTaa(file)).to.equal(undefined);
    rememberTaa(file, { version: '1.0', digest: 'ab'.repeat(32), mechanism: 'on_file' });
    expect(acceptedTaa(file)).to.deep.equal({ version: '1.0', digest: 'ab'.repeat(32), mechanism: 'on_file' });
    expect(acceptedTaa(join(home, 'other.txn'))).to.equal(undefined);
  });
});
