import { fileURLToPath } from 'node:url';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { b58encode } from '@quire/common';
import { GenesisError, GenesisErrorCode, Ledger, loadGenesis, openMemoryKvStore, type KvStore } from '../../src/index.js';
import { LOCAL_DOMAIN_GENESIS } from '../fixtures/genesis.js';

const REAL = fileURLToPath(new URL('../../../../test/vectors/real-genesis', import.meta.url));
// Root of the domain ledger after the standard 5-line local domain genesis (formats.md 11),
// cross-checked with an independent RFC 6962 computation over MP of each line.
const LOCAL_DOMAIN_ROOT = 'DJLzEifT7n9DbiCHqQ5KWrWUPFBiZt349popapDfzo5p';

async function expectGenesisError(p: Promise<unknown>, code: string): Promise<GenesisError> {
  try {
    await p;
  } catch (e) {
    expect(e).to.be.instanceOf(GenesisError);
    expect((e as GenesisError).code).to.equal(code);
    return e as GenesisError;
  }
  return expect.fail(`expected ${code}`);
}

describe('genesis loading', () => {
  let dir: string;
  let kv: KvStore;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'quire-genesis-'));
    kv = await openMemoryKvStore();
  });
  afterEach(async () => {
    await kv.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function file(name: string, text: string): string {
    const p = join(dir, name);
    writeFileSync(p, text);
    return p;
  }

  it('loads the standard local domain genesis with a stable root', async () => {
    const ledger = await Ledger.open({ ledgerId: 1 }, { kv });
    const result = await loadGenesis(ledger, file('domain_transactions_genesis', LOCAL_DOMAIN_GENESIS));
    expect(result).to.include({ txnCount: 5, loaded: 5, size: 5 });
    expect(b58encode(result.root)).to.equal(LOCAL_DOMAIN_ROOT);
    expect(b58encode(ledger.root)).to.equal(LOCAL_DOMAIN_ROOT);
    const txn = await ledger.get(2);
    expect(txn?.txn.metadata).to.deep.equal({ from: 'V4SGRU86Z58d6TV7PBUe6f' });
    // the committed data survives a reopen
    const reopened = await Ledger.open({ ledgerId: 1 }, { kv });
    expect(reopened.size).to.equal(5);
    expect(b58encode(reopened.root)).to.equal(LOCAL_DOMAIN_ROOT);
  });

  it('the same txns with blank lines give the same root', async () => {
    const ledger = await Ledger.open({ ledgerId: 1 }, { kv });
    const spaced = '\n\n' + LOCAL_DOMAIN_GENESIS.trim().split('\n').join('\n\n  \n') + '\n\n';
    const result = await loadGenesis(ledger, file('g', spaced));
    expect(b58encode(result.root)).to.equal(LOCAL_DOMAIN_ROOT);
  });

  for (const name of readdirSync(REAL)) {
    it(`loads the real genesis file ${name}`, async () => {
      const ledgerId = name.includes('pool') ? 0 : 1;
      const ledger = await Ledger.open({ ledgerId }, { kv });
      const path = join(REAL, name);
      const lines = readFileSync(path, 'utf8').trim().split('\n');
      const result = await loadGenesis(ledger, path);
      expect(result.loaded).to.equal(lines.length);
      expect(ledger.size).to.equal(lines.length);
      // every line is stored exactly as parsed: a string port stays a string
      const first = await ledger.get(1);
      if (ledgerId === 0) expect((first!.txn.data.data as Record<string, unknown>).client_port).to.be.a('string');
      const last = await ledger.get(lines.length);
      expect(last!.reqSignature).to.deep.equal(JSON.parse(lines.at(-1)!).reqSignature);
    });
  }

  it('does not write into a ledger that already holds the genesis, and detects a different one', async () => {
    const ledger = await Ledger.open({ ledgerId: 1 }, { kv });
    const path = file('g', LOCAL_DOMAIN_GENESIS);
    await loadGenesis(ledger, path);
    const again = await loadGenesis(ledger, path);
    expect(again).to.include({ loaded: 0, size: 5, txnCount: 5 });
    expect(b58encode(again.root)).to.equal(LOCAL_DOMAIN_ROOT);
    const other = LOCAL_DOMAIN_GENESIS.replace('"role":"2"', '"role":"101"');
    const err = await expectGenesisError(loadGenesis(ledger, file('other', other)), GenesisErrorCode.MISMATCH);
    expect(err.data.line).to.equal(2);
    expect(ledger.size).to.equal(5);
  });

  it('writes nothing when a line is bad', async () => {
    const lines = LOCAL_DOMAIN_GENESIS.trim().split('\n');
    const bad: [string, string, number][] = [
      [[lines[0], lines[1], '{not json'].join('\n'), GenesisErrorCode.INVALID_JSON, 3],
      [[lines[0], lines[1]!.replace('"txnMetadata":{"seqNo":2},', ''), lines[2]].join('\n'), GenesisErrorCode.INVALID_TXN, 2],
      [[lines[0], lines[2], lines[1]].join('\n'), GenesisErrorCode.SEQ_NO_OUT_OF_ORDER, 2],
    ];
    for (const [text, code, line] of bad) {
      const ledger = await Ledger.open({ ledgerId: 1 }, { kv });
      const path = file('bad', text);
      const err = await expectGenesisError(loadGenesis(ledger, path), code);
      expect(err.data.line).to.equal(line);
      expect(err.message).to.contain(`${path}:${line}`);
      expect(ledger.size).to.equal(0);
      expect(ledger.uncommittedSize).to.equal(0);
      for await (const _ of kv.iterate('txn/1')) expect.fail('a txn was written');
    }
  });

  it('reports an unreadable or empty file', async () => {
    const ledger = await Ledger.open({ ledgerId: 1 }, { kv });
    await expectGenesisError(loadGenesis(ledger, join(dir, 'missing')), GenesisErrorCode.UNREADABLE);
    await expectGenesisError(loadGenesis(ledger, file('empty', '\n \n')), GenesisErrorCode.EMPTY);
  });

  it('rejects a pool genesis given for the domain ledger', async () => {
    const ledger = await Ledger.open({ ledgerId: 1 }, { kv });
    await expectGenesisError(loadGenesis(ledger, join(REAL, 'sovrin_pool_transactions_live_genesis')), GenesisErrorCode.WRONG_LEDGER);
    expect(ledger.size).to.equal(0);
  });

  it('joins a caller batch: nothing is durable until the batch is written', async () => {
    const ledger = await Ledger.open({ ledgerId: 1 }, { kv });
    const batch = kv.batch();
    await loadGenesis(ledger, file('g', LOCAL_DOMAIN_GENESIS), { batch });
    expect((await Ledger.open({ ledgerId: 1 }, { kv })).size).to.equal(0);
    await batch.write();
    const reopened = await Ledger.open({ ledgerId: 1 }, { kv });
    expect(reopened.size).to.equal(5);
    expect(b58encode(reopened.root)).to.equal(LOCAL_DOMAIN_ROOT);
  });
});
