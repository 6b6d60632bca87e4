// The BLS counters of a node report the CPU its BLS calls took, not the wall time: on a loaded host a
// call waits for a core, and wall time made BLS look like half of a node's CPU (54 % in a run at
// 50 writes/s with the machine's load average at 7).
import { expect } from 'chai';
import { Counter, Registry } from 'prom-client';
import type { ConsensusCrypto } from '@quire/consensus';
import type { MultiSignatureValue } from '@quire/common';
import { countedBlsCrypto } from '../../src/bls-metrics.js';

/** blocks the thread for `ms` without using CPU */
function blockWithoutCpu(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

async function total(c: Counter<'op'>, op: string): Promise<number> {
  return (await c.get()).values.find((v) => v.labels.op === op)?.value ?? 0;
}

describe('countedBlsCrypto', () => {
  it('counts each call and sums its CPU time, not the time the thread was blocked', async () => {
    const registers = [new Registry()];
    const ops = new Counter({ name: 'ops', help: 'ops', labelNames: ['op'], registers });
    const seconds = new Counter({ name: 'seconds', help: 'seconds', labelNames: ['op'], registers });
    const inner: ConsensusCrypto = {
      blsSign: () => 'sig',
      blsVerifyShare: () => true,
      blsAggregate: () => 'agg',
      blsVerifyMulti: () => {
        blockWithoutCpu(200);
        return true;
      },
    };
    const crypto = countedBlsCrypto(inner, { ops, seconds });
    const value: MultiSignatureValue = { ledger_id: 1, pool_state_root_hash: 'p', state_root_hash: 's', timestamp: 1, txn_root_hash: 't' };
    expect(crypto.blsVerifyMulti(['Node1'], value, 'sig')).to.equal(true);
    expect(crypto.blsSign(value)).to.equal('sig');
    expect(await total(ops, 'verify_multi')).to.equal(1);
    expect(await total(ops, 'sign')).to.equal(1);
    // 200 ms blocked: wall time would count 0.2 s
    expect(await total(seconds, 'verify_multi')).to.be.below(0.1);
  });

  it('returns the crypto itself when there are no counters', () => {
    const inner = { blsSign: () => 's', blsVerifyShare: () => true, blsAggregate: () => 'a', blsVerifyMulti: () => true } as unknown as ConsensusCrypto;
    expect(countedBlsCrypto(inner, undefined)).to.equal(inner);
  });
});
