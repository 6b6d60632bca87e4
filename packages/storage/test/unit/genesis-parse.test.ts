import { fileURLToPath } from 'node:url';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { GenesisError, GenesisErrorCode, parseGenesis } from '../../src/index.js';
import { LOCAL_DOMAIN_GENESIS } from '../fixtures/genesis.js';

const REAL = fileURLToPath(new URL('../../../../test/vectors/real-genesis', import.meta.url));
const msgpackVector = JSON.parse(readFileSync(new URL('../../../../test/vectors/msgpack.json', import.meta.url), 'utf8')) as {
  cases: { expected_hex: string }[];
};

function expectGenesisError(fn: () => unknown, code: string, line?: number): GenesisError {
  try {
    fn();
  } catch (e) {
    expect(e).to.be.instanceOf(GenesisError);
    const g = e as GenesisError;
    expect(g.code).to.equal(code);
    expect(g.data.file).to.equal('g.txt');
    if (line !== undefined) {
      expect(g.data.line).to.equal(line);
      expect(g.message).to.contain(`g.txt:${line}`);
    }
    return g;
  }
  return expect.fail(`expected ${code}`);
}

describe('genesis parsing', () => {
  it('parses the standard local domain genesis; line 1 encodes to the 135-byte vector', () => {
    const entries = parseGenesis(LOCAL_DOMAIN_GENESIS, { file: 'domain_transactions_genesis', ledgerId: 1 });
    expect(entries.map((e) => e.seqNo)).to.deep.equal([1, 2, 3, 4, 5]);
    expect(entries.map((e) => e.line)).to.deep.equal([1, 2, 3, 4, 5]);
    expect(Buffer.from(entries[0]!.encoded).toString('hex')).to.equal(msgpackVector.cases[0]!.expected_hex);
  });

  it('ignores blank lines (also with CRLF) and keeps real line numbers', () => {
    const lines = LOCAL_DOMAIN_GENESIS.trim().split('\n');
    const text = `\n${lines[0]}\r\n   \n\n${lines[1]}\r\n`;
    const entries = parseGenesis(text, { file: 'g.txt' });
    expect(entries.map((e) => e.line)).to.deep.equal([2, 5]);
    expect(entries.map((e) => e.seqNo)).to.deep.equal([1, 2]);
  });

  for (const name of readdirSync(REAL)) {
    it(`parses the real genesis file ${name}`, () => {
      const text = readFileSync(join(REAL, name), 'utf8');
      const ledgerId = name.includes('pool') ? 0 : 1;
      const entries = parseGenesis(text, { file: name, ledgerId });
      expect(entries.length).to.equal(text.trim().split('\n').length);
      expect(entries.at(-1)!.seqNo).to.equal(entries.length);
    });
  }

  it('keeps ports as they were written: string and integer ports hash differently', () => {
    const line = (port: string): string =>
      `{"reqSignature":{},"txn":{"data":{"data":{"alias":"Node1","client_port":${port}},"dest":"Gw6pDLhcBcoQesN72qfotTgFa7cbuqZpkX3Xo6pLhPhv"},"metadata":{},"type":"0"},"txnMetadata":{"seqNo":1},"ver":"1"}`;
    const asString = parseGenesis(line('"9702"'), { file: 'p' })[0]!;
    const asInt = parseGenesis(line('9702'), { file: 'p' })[0]!;
    expect((asString.txn as any).txn.data.data.client_port).to.equal('9702');
    expect((asInt.txn as any).txn.data.data.client_port).to.equal(9702);
    expect(Buffer.compare(asString.encoded, asInt.encoded)).to.not.equal(0);
  });

  it('keeps integers above 2^53 exact', () => {
    const text =
      '{"reqSignature":{},"txn":{"data":{"dest":"V4SGRU86Z58d6TV7PBUe6f"},"metadata":{"reqId":1585221529670242337},"type":"1"},"txnMetadata":{"seqNo":1},"ver":"1"}';
    const [e] = parseGenesis(text, { file: 'g.txt' });
    expect((e!.txn as any).txn.metadata.reqId).to.equal(1585221529670242337n);
    expect(Buffer.from(e!.encoded).toString('hex')).to.contain('cf15ffd695164bd021');
  });

  it('names the file and line of a line that is not JSON', () => {
    const lines = LOCAL_DOMAIN_GENESIS.trim().split('\n');
    expectGenesisError(() => parseGenesis([lines[0], '', lines[1]!.slice(0, 40)].join('\n'), { file: 'g.txt' }), GenesisErrorCode.INVALID_JSON, 3);
    expectGenesisError(() => parseGenesis('{"a":1,"a":2}', { file: 'g.txt' }), GenesisErrorCode.INVALID_JSON, 1);
  });

  it('rejects txns lacking required fields', () => {
    const ok = JSON.parse(LOCAL_DOMAIN_GENESIS.split('\n')[0]!) as Record<string, any>;
    const cases: [string, (t: Record<string, any>) => void][] = [
      ['ver', (t) => delete t.ver],
      ['ver', (t) => (t.ver = 1)],
      ['txn', (t) => delete t.txn],
      ['txn.type', (t) => delete t.txn.type],
      ['txn.type', (t) => (t.txn.type = 1)],
      ['txn.data', (t) => delete t.txn.data],
      ['txn.metadata', (t) => (t.txn.metadata = [])],
      ['reqSignature', (t) => delete t.reqSignature],
      ['txnMetadata', (t) => delete t.txnMetadata],
      ['txnMetadata.seqNo', (t) => delete t.txnMetadata.seqNo],
      ['txnMetadata.seqNo', (t) => (t.txnMetadata.seqNo = '1')],
      ['transaction', (t) => Object.assign(t, { ver: '1' }) && false],
    ];
    for (const [field, mutate] of cases.slice(0, -1)) {
      const t = structuredClone(ok);
      mutate(t);
      const err = expectGenesisError(
        () => parseGenesis(`${LOCAL_DOMAIN_GENESIS.split('\n')[0]}\n${JSON.stringify(t).replace('"seqNo":1', '"seqNo":2')}`, { file: 'g.txt' }),
        GenesisErrorCode.INVALID_TXN,
        2,
      );
      expect(err.data.field, `mutation of ${field}`).to.equal(field);
    }
    expectGenesisError(() => parseGenesis('[1,2,3]', { file: 'g.txt' }), GenesisErrorCode.INVALID_TXN, 1);
  });

  it('rejects the pre-1.0 flat layout', () => {
    expectGenesisError(
      () => parseGenesis('{"dest":"V4SGRU86Z58d6TV7PBUe6f","role":"0","type":"1","verkey":"~CoRER63DVYnWZtK8uAzNbx"}', { file: 'g.txt' }),
      GenesisErrorCode.LEGACY_LAYOUT,
      1,
    );
  });

  it('rejects seqNos out of order', () => {
    const lines = LOCAL_DOMAIN_GENESIS.trim().split('\n');
    const swapped = [lines[0], lines[2], lines[1]].join('\n');
    const err = expectGenesisError(() => parseGenesis(swapped, { file: 'g.txt' }), GenesisErrorCode.SEQ_NO_OUT_OF_ORDER, 2);
    expect(err.data.expected).to.equal(2);
    expect(err.data.actual).to.equal(3);
    expectGenesisError(() => parseGenesis(lines[1]!, { file: 'g.txt' }), GenesisErrorCode.SEQ_NO_OUT_OF_ORDER, 1);
  });

  it('rejects a txn type of another ledger (a pool file given as domain genesis)', () => {
    const pool = readFileSync(join(REAL, 'sovrin_pool_transactions_live_genesis'), 'utf8');
    expectGenesisError(() => parseGenesis(pool, { file: 'g.txt', ledgerId: 1 }), GenesisErrorCode.WRONG_LEDGER, 1);
  });
});
