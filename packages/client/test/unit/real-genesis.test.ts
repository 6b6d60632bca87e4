// Real public Indy pool genesis files (test/vectors/real-genesis: ports as strings or integers, legacy layouts, BN254
// BLS keys) open for reading: the SDK's pool ledger takes them as they are.
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { PoolLedger } from '../../src/index.js';

const file = (name: string): string => readFileSync(new URL(`../../../../test/vectors/real-genesis/${name}`, import.meta.url), 'utf8');

describe('real Indy pool genesis files', () => {
  for (const [name, validators] of [
    ['sovrin_pool_transactions_live_genesis', 4],
    ['sovrin_pool_transactions_sandbox_genesis', 8],
  ] as const) {
    it(`${name} loads: every txn, the current validators with numeric addresses`, () => {
      const text = file(name);
      const ledger = PoolLedger.fromGenesis(text, name);
      expect(ledger.size).to.equal(text.split('\n').filter((l) => l.trim() !== '').length);
      const vs = ledger.validators();
      expect(vs).to.have.length(validators);
      for (const v of vs) {
        expect(v.clientPort, v.alias).to.be.a('number').within(1, 65535);
        expect(v.clientIp, v.alias).to.match(/^\d+\.\d+\.\d+\.\d+$/);
      }
      expect(ledger.f).to.equal(Math.floor((validators - 1) / 3));
    });
  }
});
