import { fileURLToPath } from 'node:url';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { canonicalJson, parseJson } from '@quire/common';
import { main } from '../../src/cli/read-ledger.js';
import { Ledger, SnapshotError, SnapshotErrorCode, loadGenesis, nodeDatabasePath, openLevelKvStore, snapshotLevelDb, type KvStore } from '../../src/index.js';
import { LOCAL_DOMAIN_GENESIS } from '../fixtures/genesis.js';

const POOL_GENESIS = fileURLToPath(new URL('../../../../test/vectors/real-genesis/sovrin_pool_transactions_live_genesis', import.meta.url));

interface Run {
  code: number;
  out: string;
  err: string;
}

async function run(...argv: string[]): Promise<Run> {
  let out = '';
  let err = '';
  const code = await main(argv, { out: (s) => void (out += s), err: (s) => void (err += s) });
  return { code, out, err };
}

const AUDIT_TXN = {
  ver: '1',
  txn: {
    type: '2',
    protocolVersion: 2,
    metadata: {},
    data: {
      ver: '1',
      viewNo: 0,
      ppSeqNo: 1,
      ledgerSize: new Map<number, number>([
        [0, 136],
        [1, 5],
        [2, 0],
      ]),
      ledgerRoot: new Map<number, string | number>([[1, 'DJLzEifT7n9DbiCHqQ5KWrWUPFBiZt349popapDfzo5p']]),
      stateRoot: new Map<number, string>([[1, 'DJLzEifT7n9DbiCHqQ5KWrWUPFBiZt349popapDfzo5p']]),
      primaries: ['Node1'],
      digest: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    },
  },
  txnMetadata: { seqNo: 1, txnTime: 1700000000 },
  reqSignature: {},
};

describe('read_ledger', () => {
  let dataDir: string;
  let dbPath: string;

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'quire-read-ledger-'));
    dbPath = nodeDatabasePath(dataDir);
    mkdirSync(dbPath);
    const kv = await openLevelKvStore(dbPath);
    try {
      const genesisFile = join(dataDir, 'domain_transactions_genesis');
      await import('node:fs/promises').then((fs) => fs.writeFile(genesisFile, LOCAL_DOMAIN_GENESIS));
      await loadGenesis(await Ledger.open({ ledgerId: 1 }, { kv }), genesisFile);
      await loadGenesis(await Ledger.open({ ledgerId: 0 }, { kv }), POOL_GENESIS);
      const plugin = await Ledger.open({ ledgerId: 1001 }, { kv });
      plugin.append([
        {
          ver: '1',
          txn: { type: '20000', protocolVersion: 2, metadata: {}, data: { key: 'k', value: 'v' } },
          txnMetadata: { seqNo: 1 },
          reqSignature: {},
        } as never,
      ]);
      await plugin.commit();
      const audit = await Ledger.open({ ledgerId: 3 }, { kv });
      audit.append([AUDIT_TXN as never]);
      await audit.commit();
    } finally {
      await kv.close();
    }
  });

  after(() => {
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('prints the domain ledger as canonical JSON, one txn per line', async () => {
    const r = await run('--type', 'domain', '--data_dir', dataDir);
    expect(r.code).to.equal(0);
    expect(r.err).to.equal('');
    // the standard genesis lines are already canonical JSON
    expect(r.out).to.equal(LOCAL_DOMAIN_GENESIS);
  });

  it('prints a range, one seqNo, or the count', async () => {
    const lines = LOCAL_DOMAIN_GENESIS.trim().split('\n');
    expect((await run('--type', 'domain', '--frm', '2', '--to', '3', '--data_dir', dataDir)).out).to.equal(`${lines[1]}\n${lines[2]}\n`);
    expect((await run('--type', 'domain', '--seq_no', '4', '--data_dir', dataDir)).out).to.equal(`${lines[3]}\n`);
    expect((await run('--type', 'domain', '--count', '--data_dir', dataDir)).out).to.equal('5\n');
    expect((await run('--type', 'config', '--count', '--data_dir', dataDir)).out).to.equal('0\n');
    // precedence: --count, then --seq_no, then the range
    expect((await run('--type', 'domain', '--count', '--seq_no', '2', '--data_dir', dataDir)).out).to.equal('5\n');
    expect((await run('--type', 'domain', '--seq_no', '2', '--frm', '4', '--data_dir', dataDir)).out).to.equal(`${lines[1]}\n`);
    // a range running past the end stops at the last txn
    expect((await run('--type', 'domain', '--frm', '4', '--to', '50', '--data_dir', dataDir)).out).to.equal(`${lines[3]}\n${lines[4]}\n`);
  });

  it('prints only the first 100 txns by default, exactly as stored', async () => {
    const r = await run('--type', 'pool', '--data_dir', dataDir);
    expect(r.code).to.equal(0);
    const out = r.out.trim().split('\n');
    expect(out).to.have.length(100);
    const source = readFileSync(POOL_GENESIS, 'utf8').trim().split('\n');
    for (let i = 0; i < 100; i++) expect(out[i]).to.equal(canonicalJson(parseJson(source[i]!)));
    expect(out[0]).to.contain('"client_port":"9702"');
    expect((await run('--type', 'pool', '--count', '--data_dir', dataDir)).out).to.equal(`${source.length}\n`);
  });

  it('prints a plugin ledger named by its id', async () => {
    const r = await run('--type', '1001', '--data_dir', dataDir);
    expect(r.code).to.equal(0);
    expect(r.out).to.contain('"data":{"key":"k","value":"v"}');
    expect((await run('--type', '1001', '--count', '--data_dir', dataDir)).out).to.equal('1\n');
    expect((await run('--type', '1002', '--count', '--data_dir', dataDir)).out).to.equal('0\n');
  });

  it('writes audit integer map keys as strings', async () => {
    const r = await run('--type', 'audit', '--seq_no', '1', '--data_dir', dataDir);
    expect(r.code).to.equal(0);
    expect(r.out).to.contain('"ledgerSize":{"0":136,"1":5,"2":0}');
    expect(r.out).to.contain('"stateRoot":{"1":"DJLzEifT7n9DbiCHqQ5KWrWUPFBiZt349popapDfzo5p"}');
    expect(r.out.endsWith('}\n')).to.equal(true);
  });

  it('fails with a one-line reason and a non-zero exit', async () => {
    const cases: [string[], string][] = [
      [['--type', 'ledger7', '--data_dir', dataDir], 'error: Unknown ledger type: ledger7\n'],
      [['--type', '7', '--data_dir', dataDir], 'error: Unknown ledger type: 7\n'],
      [['--type', '999', '--data_dir', dataDir], 'error: Unknown ledger type: 999\n'],
      [['--type', 'constructor', '--data_dir', dataDir], 'error: Unknown ledger type: constructor\n'],
      [['--type', 'domain', '--seq_no', '6', '--data_dir', dataDir], 'error: No transactions found for seq_no=6\n'],
      [['--type', 'domain', '--frm', '6', '--data_dir', dataDir], 'error: No transactions found in range 6-100: the domain ledger has 5\n'],
      [['--type', 'domain', '--frm', '3', '--to', '2', '--data_dir', dataDir], 'error: --frm (3) is greater than --to (2)\n'],
      [['--type', 'domain', '--data_dir', join(dataDir, 'nope')], `error: Data directory not found: ${join(dataDir, 'nope')}\n`],
      [['--type', 'domain', '--data_dir', join(dataDir, 'db', '..', '..')], `error: No ledger database in ${join(dataDir, 'db', '..', '..')}\n`],
    ];
    for (const [argv, message] of cases) {
      const r = await run(...argv);
      expect(r.code, argv.join(' ')).to.equal(1);
      expect(r.err).to.equal(message);
      expect(r.out).to.equal('');
    }
    // a command line that does not parse: commander's error, a usage line and where to read more (as quire prints them)
    for (const argv of [
      ['--data_dir', dataDir],
      ['--type', 'domain', '--frm', 'x', '--data_dir', dataDir],
      ['--type', 'domain', '--seq_no', '0'],
      ['--type', 'domain', 'extra'],
      ['--type', 'domain', '--bogus'],
    ]) {
      const r = await run(...argv);
      expect(r.code, argv.join(' ')).to.equal(1);
      const lines = r.err.trim().split('\n');
      expect(lines, argv.join(' ')).to.have.length(3);
      expect(lines[0]).to.match(/^error: /);
      expect(lines.slice(1)).to.deep.equal(['usage: read_ledger [options]', "see 'read_ledger --help'"]);
    }
    expect((await run('--type', 'domain', '--bogus')).err.split('\n')[0]).to.equal("error: unknown option '--bogus'");
  });

  it('finds a database kept under a custom dbDir through the node config (--config)', async () => {
    const other = mkdtempSync(join(tmpdir(), 'quire-read-ledger-dbdir-'));
    try {
      cpSync(dbPath, join(other, 'store', 'ledgers'), { recursive: true });
      const config = join(other, 'node.json');
      writeFileSync(config, JSON.stringify({ name: 'Node1', dbDir: 'store/ledgers', limits: { clientRate: 10 } }));
      // the data directory alone does not lead to it
      expect((await run('--type', 'domain', '--count', '--data_dir', other)).err).to.equal(`error: No ledger database in ${other}\n`);
      const r = await run('--type', 'domain', '--count', '--data_dir', other, '--config', config);
      expect(r.err).to.equal('');
      expect(r.out).to.equal('5\n');
      // an absolute dbDir, and a config without dbDir (the node's default `db`)
      const abs = join(other, 'abs.json');
      writeFileSync(abs, JSON.stringify({ dbDir: join(other, 'store', 'ledgers') }));
      expect((await run('--type', 'pool', '--count', '--data_dir', dataDir, '--config', abs)).out).to.equal(
        (await run('--type', 'pool', '--count', '--data_dir', dataDir)).out,
      );
      const none = join(other, 'none.json');
      writeFileSync(none, '{}');
      expect((await run('--type', 'domain', '--count', '--data_dir', dataDir, '--config', none)).out).to.equal('5\n');
      // refusals, one line each
      const bad = join(other, 'bad.json');
      writeFileSync(bad, '[1]');
      const wrong = join(other, 'wrong.json');
      writeFileSync(wrong, JSON.stringify({ dbDir: 'nowhere' }));
      const cases: [string, string][] = [
        [join(other, 'missing.json'), `error: Cannot read config file ${join(other, 'missing.json')}: ENOENT\n`],
        [bad, `error: Config file ${bad} is not a JSON object\n`],
        [wrong, `error: No ledger database at ${join(other, 'nowhere')} (dbDir of ${wrong})\n`],
      ];
      for (const [file, message] of cases) {
        const e = await run('--type', 'domain', '--data_dir', other, '--config', file);
        expect(e.code).to.equal(1);
        expect(e.err).to.equal(message);
      }
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });

  it('prints help and exits 0', async () => {
    const r = await run('--help');
    expect(r.code).to.equal(0);
    expect(r.out).to.contain('--type <type>');
    expect(r.out).to.contain('--seq_no <n>');
  });

  it('reads a database whose lock is held, through a copy that it removes', async () => {
    const holder: KvStore = await openLevelKvStore(dbPath);
    const tmp = mkdtempSync(join(tmpdir(), 'quire-read-ledger-tmp-'));
    const savedTmp = process.env.TMPDIR;
    process.env.TMPDIR = tmp;
    try {
      const r = await run('--type', 'domain', '--data_dir', dataDir);
      expect(r.err).to.equal('');
      expect(r.code).to.equal(0);
      expect(r.out).to.equal(LOCAL_DOMAIN_GENESIS);
      expect(readdirSync(tmp)).to.deep.equal([]);
    } finally {
      if (savedTmp === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = savedTmp;
      await holder.close();
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});

describe('snapshotLevelDb', () => {
  it('copies a locked database; remove() deletes the copy', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'quire-snapshot-'));
    const holder = await openLevelKvStore(join(dir, 'db'));
    try {
      await holder
        .batch()
        .put('b', new Uint8Array([1]), new Uint8Array([2]))
        .write();
      const snap = await snapshotLevelDb(join(dir, 'db'), { tmpDir: dir });
      const copy = await openLevelKvStore(snap.path, { createIfMissing: false });
      expect(await copy.get('b', new Uint8Array([1]))).to.deep.equal(new Uint8Array([2]));
      await copy.close();
      await snap.remove();
      await snap.remove();
      expect(existsSync(snap.path)).to.equal(false);
    } finally {
      await holder.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a directory that is not a database', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'quire-snapshot-'));
    try {
      await snapshotLevelDb(dir);
      expect.fail('snapshot of a plain directory');
    } catch (e) {
      expect(e).to.be.instanceOf(SnapshotError);
      expect((e as SnapshotError).code).to.equal(SnapshotErrorCode.NOT_A_DATABASE);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
