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

  it('reads the CPU time across one call of each op in sampleEvery and adds the mean of the timed calls for the others', async () => {
    const registers = [new Registry()];
    const ops = new Counter({ name: 'ops', help: 'ops', labelNames: ['op'], registers });
    const seconds = new Counter({ name: 'seconds', help: 'seconds', labelNames: ['op'], registers });
    const inner = { blsSign: () => 'sig', blsVerifyShare: () => true, blsAggregate: () => 'agg', blsVerifyMulti: () => true } as unknown as ConsensusCrypto;
    // a scripted CPU clock: the k-th timed call took deltas[k] µs
    const deltas = [1000, 3000, 5000];
    let reads = 0;
    let timedCalls = 0;
    const real = process.cpuUsage.bind(process);
    process.cpuUsage = ((prev?: NodeJS.CpuUsage): NodeJS.CpuUsage => {
      reads++;
      if (prev === undefined) return { user: 0, system: 0 };
      return { user: deltas[timedCalls++] ?? 0, system: 0 };
    }) as typeof process.cpuUsage;
    const value: MultiSignatureValue = { ledger_id: 1, pool_state_root_hash: 'p', state_root_hash: 's', timestamp: 1, txn_root_hash: 't' };
    try {
      const crypto = countedBlsCrypto(inner, { ops, seconds }, 4);
      for (let i = 0; i < 8; i++) crypto.blsSign(value);
      // another op has its own first timed call
      crypto.blsAggregate(['a', 'b']);
    } finally {
      process.cpuUsage = real;
    }
    expect(reads).to.equal(6);
    expect(await total(ops, 'sign')).to.equal(8);
    // call 1 timed (1 ms), calls 2-4 add 1 ms each, call 5 timed (3 ms), calls 6-8 add the mean, 2 ms each
    expect(await total(seconds, 'sign')).to.be.closeTo(0.013, 1e-9);
    expect(await total(ops, 'aggregate')).to.equal(1);
    expect(await total(seconds, 'aggregate')).to.be.closeTo(0.005, 1e-9);
  });

  it('counts a call that throws and passes the error on', async () => {
    const registers = [new Registry()];
    const ops = new Counter({ name: 'ops', help: 'ops', labelNames: ['op'], registers });
    const seconds = new Counter({ name: 'seconds', help: 'seconds', labelNames: ['op'], registers });
    const inner = {
      blsSign: () => {
        throw new Error('no key');
      },
      blsVerifyShare: () => true,
      blsAggregate: () => 'agg',
      blsVerifyMulti: () => true,
    } as unknown as ConsensusCrypto;
    const crypto = countedBlsCrypto(inner, { ops, seconds }, 2);
    const value: MultiSignatureValue = { ledger_id: 1, pool_state_root_hash: 'p', state_root_hash: 's', timestamp: 1, txn_root_hash: 't' };
    for (let i = 0; i < 3; i++) expect(() => crypto.blsSign(value)).to.throw('no key');
    expect(await total(ops, 'sign')).to.equal(3);
    expect(Number.isFinite(await total(seconds, 'sign'))).to.equal(true);
  });

  it('refuses a sampling period that is not a positive integer', () => {
    const registers = [new Registry()];
    const counters = {
      ops: new Counter({ name: 'ops', help: 'ops', labelNames: ['op'], registers }),
      seconds: new Counter({ name: 'seconds', help: 'seconds', labelNames: ['op'], registers }),
    };
    const inner = { blsSign: () => 's', blsVerifyShare: () => true, blsAggregate: () => 'a', blsVerifyMulti: () => true } as unknown as ConsensusCrypto;
    for (const bad of [0, -1, 1.5, Number.NaN]) expect(() => countedBlsCrypto(inner, counters, bad)).to.throw(RangeError);
  });

  it('returns the crypto itself when there are no counters', () => {
    const inner = { blsSign: () => 's', blsVerifyShare: () => true, blsAggregate: () => 'a', blsVerifyMulti: () => true } as unknown as ConsensusCrypto;
    expect(countedBlsCrypto(inner, undefined)).to.equal(inner);
  });
});
