import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { b58decode, parseJson, signatureInput, stringifyJson } from '@quire/common';
import { ed25519Verify } from '@quire/crypto';
import { main } from '../../src/cli/main.js';
import { DidKey, buildNymRequest } from '../../src/index.js';

export async function runCli(argv: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out, err };
}

describe('quire CLI (offline commands)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'quire-cli-'));
  const trustee = DidKey.fromSeed('000000000000000000000000Trustee1');
  const steward = DidKey.fromSeed('000000000000000000000000Steward1');

  it('did new --seed prints the identity, as JSON with --json', async () => {
    const r = await runCli(['--json', 'did', 'new', '--seed', '000000000000000000000000Trustee1']);
    expect(r.code).to.equal(0);
    expect(parseJson(r.out[0]!)).to.deep.include({ did: 'V4SGRU86Z58d6TV7PBUe6f', verkey: '~CoRER63DVYnWZtK8uAzNbx' });
    const rnd = await runCli(['did', 'new']);
    expect(rnd.code).to.equal(0);
    expect(rnd.out.join('\n')).to.match(/seed\s+[0-9a-f]{64}/);
  });

  it('a write with --dry-run prints the signed request (reqId exact) and sign adds a multi-signature', async () => {
    const r = await runCli(['--seed', '000000000000000000000000Trustee1', '--dry-run', 'nym', '--dest', 'VsKV7grR1BUE29mG2Fm2kX', '--role', 'ENDORSER']);
    expect(r.code, r.err.join('\n')).to.equal(0);
    const req = parseJson(r.out[0]!) as { reqId: bigint; signature: string; operation: Record<string, unknown> };
    expect(typeof req.reqId).to.equal('bigint');
    expect(req.operation.role).to.equal('101');
    expect(ed25519Verify(trustee.publicKey, signatureInput(req), b58decode(req.signature))).to.equal(true);
    const file = join(dir, 'req.json');
    writeFileSync(file, r.out[0]!);
    const key = join(dir, 'key.json');
    writeFileSync(key, stringifyJson({ seed: '000000000000000000000000Steward1' }));
    const s = await runCli(['--key-file', key, 'sign', '--request-file', file]);
    expect(s.code, s.err.join('\n')).to.equal(0);
    const signed = parseJson(s.out[0]!) as { signatures: Record<string, string>; reqId: bigint };
    expect(Object.keys(signed.signatures).sort()).to.deep.equal([steward.did, trustee.did].sort());
    expect(signed.reqId).to.equal(req.reqId);
  });

  it('the endorser flow: --endorser prints the author-signed request, the endorser signs it', async () => {
    const author = DidKey.fromSeed('00000000000000000000000000Author');
    const r = await runCli([
      '--seed',
      '00000000000000000000000000Author',
      '--endorser',
      trustee.did,
      'schema',
      '--name',
      'n',
      '--version',
      '1.0',
      '--attrs',
      'a,b',
    ]);
    expect(r.code, r.err.join('\n')).to.equal(0);
    const file = join(dir, 'endorse.json');
    writeFileSync(file, r.out[0]!);
    process.env.QUIRE_SEED = '000000000000000000000000Trustee1';
    try {
      const s = await runCli(['sign', '--request-file', file]);
      expect(s.code, s.err.join('\n')).to.equal(0);
      expect(Object.keys((parseJson(s.out[0]!) as { signatures: object }).signatures).sort()).to.deep.equal([author.did, trustee.did].sort());
    } finally {
      delete process.env.QUIRE_SEED;
    }
  });

  it('user errors print one line and exit non-zero', async () => {
    const noKey = await runCli(['nym', '--dest', 'VsKV7grR1BUE29mG2Fm2kX']);
    expect(noKey.code).to.equal(1);
    expect(noKey.err.join('\n')).to.contain('--seed');
    const noGenesis = await runCli(['get-nym', '--dest', 'VsKV7grR1BUE29mG2Fm2kX']);
    expect(noGenesis.code).to.equal(1);
    expect(noGenesis.err.join('\n')).to.contain('--genesis');
    const badDest = await runCli(['--seed', '000000000000000000000000Trustee1', '--dry-run', 'nym', '--dest', '0OIl']);
    expect(badDest.code).to.equal(1);
    const missing = await runCli(['get-txn', '--ledger', 'domain']);
    expect(missing.code).to.equal(1);
    // a ledger name is looked up among the ledgers only, never among an object's inherited properties
    for (const ledger of ['constructor', 'toString', '__proto__', '4', '999', '01001', '2147483648']) {
      const bad = await runCli(['--genesis', '/nonexistent', 'get-txn', '--ledger', ledger, '--seq-no', '1']);
      expect(bad.code, ledger).to.equal(1);
      expect(bad.err.join('\n'), ledger).to.contain('--ledger: pool, domain, config, audit, 0-3 or a plugin ledger id (1000 and above)');
    }
    // a plugin ledger id passes the argument check (then the missing genesis file stops it)
    const plugin = await runCli(['--genesis', '/nonexistent', 'get-txn', '--ledger', '1001', '--seq-no', '1']);
    expect(plugin.code).to.equal(1);
    expect(plugin.err.join('\n')).to.not.contain('--ledger:');
    expect((await runCli(['--help'])).code).to.equal(0);
    expect(buildNymRequest).to.be.a('function');
  });
});
