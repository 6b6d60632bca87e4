// BLS work of the consensus core, counted: every share signed and aggregate made, every share and
// multi-signature verified, with the CPU time they took (quire_bls_operations_total and
// quire_bls_seconds_total by `op`). The benchmark divides them by the batches ordered to report the
// verifications per batch (an aggregate first, shares one by one only when it fails) and their share
// of the node's CPU. The calls are synchronous, so the process's CPU time across one is the call's:
// wall time is not, it counts the time the process waits for a core on a loaded host.
//
// Reading the process's CPU time is a getrusage(2) call that sums every thread of the process: 4 µs
// in a process whose other threads are idle, 20-57 µs with two busy ones (LevelDB's and libuv's
// threads of a node under load), two per BLS call and six BLS calls per ordered batch and node.
// So the CPU time is read across the first call of each `op` and then across one call in
// CPU_SAMPLE_EVERY; every other call adds the mean of that op's timed calls (an estimate with the
// same expectation: the calls of one op do the same work on inputs of the same size).
import type { ConsensusCrypto } from '@quire/consensus';
import type { Counter } from 'prom-client';

export interface BlsCounters {
  ops: Counter<'op'>;
  seconds: Counter<'op'>;
}

/** One call in this many of each op has its CPU time read; the others add the op's mean. */
export const CPU_SAMPLE_EVERY = 8;

/** `crypto` with each call counted and its CPU time summed; `crypto` itself when there are no counters. */
export function countedBlsCrypto(crypto: ConsensusCrypto, counters: BlsCounters | undefined, sampleEvery = CPU_SAMPLE_EVERY): ConsensusCrypto {
  if (counters === undefined) return crypto;
  if (!Number.isSafeInteger(sampleEvery) || sampleEvery < 1) throw new RangeError(`sampleEvery must be a positive integer, got ${sampleEvery}`);
  // per op: calls made, CPU seconds and count of the timed ones (a fixed set of four ops)
  const stats = new Map<string, { calls: number; timedSeconds: number; timed: number }>();
  const timed = <T>(op: string, f: () => T): T => {
    let s = stats.get(op);
    if (s === undefined) stats.set(op, (s = { calls: 0, timedSeconds: 0, timed: 0 }));
    const sample = s.calls % sampleEvery === 0;
    s.calls++;
    if (!sample) {
      try {
        return f();
      } finally {
        counters.ops.inc({ op });
        counters.seconds.inc({ op }, s.timedSeconds / s.timed);
      }
    }
    const t0 = process.cpuUsage();
    try {
      return f();
    } finally {
      const t = process.cpuUsage(t0);
      const seconds = (t.user + t.system) / 1e6;
      s.timedSeconds += seconds;
      s.timed++;
      counters.ops.inc({ op });
      counters.seconds.inc({ op }, seconds);
    }
  };
  const counted: ConsensusCrypto = {
    blsSign: (value) => timed('sign', () => crypto.blsSign(value)),
    blsVerifyShare: (alias, value, share) => timed('verify_share', () => crypto.blsVerifyShare(alias, value, share)),
    blsAggregate: (shares) => timed('aggregate', () => crypto.blsAggregate(shares)),
    blsVerifyMulti: (participants, value, signature) => timed('verify_multi', () => crypto.blsVerifyMulti(participants, value, signature)),
  };
  // several multi-signatures verified at once (catch-up): one `verify_multi_batch` op per call
  const batch = crypto.blsVerifyMultiBatch?.bind(crypto);
  if (batch !== undefined) counted.blsVerifyMultiBatch = (items) => timed('verify_multi_batch', () => batch(items));
  return counted;
}
