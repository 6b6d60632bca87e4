// BLS work of the consensus core, counted: every share signed and aggregate made, every share and
// multi-signature verified, with the CPU time each took (quire_bls_operations_total and
// quire_bls_seconds_total by `op`). The benchmark divides them by the batches ordered to report the
// verifications per batch (an aggregate first, shares one by one only when it fails) and their share
// of the node's CPU. The calls are synchronous, so the process's CPU time across one is the call's:
// wall time is not, it counts the time the process waits for a core on a loaded host.
import type { ConsensusCrypto } from '@quire/consensus';
import type { Counter } from 'prom-client';

export interface BlsCounters {
  ops: Counter<'op'>;
  seconds: Counter<'op'>;
}

/** `crypto` with each call counted and its CPU time summed; `crypto` itself when there are no counters. */
export function countedBlsCrypto(crypto: ConsensusCrypto, counters: BlsCounters | undefined): ConsensusCrypto {
  if (counters === undefined) return crypto;
  const timed = <T>(op: string, f: () => T): T => {
    const t0 = process.cpuUsage();
    try {
      return f();
    } finally {
      const t = process.cpuUsage(t0);
      counters.ops.inc({ op });
      counters.seconds.inc({ op }, (t.user + t.system) / 1e6);
    }
  };
  return {
    blsSign: (value) => timed('sign', () => crypto.blsSign(value)),
    blsVerifyShare: (alias, value, share) => timed('verify_share', () => crypto.blsVerifyShare(alias, value, share)),
    blsAggregate: (shares) => timed('aggregate', () => crypto.blsAggregate(shares)),
    blsVerifyMulti: (participants, value, signature) => timed('verify_multi', () => crypto.blsVerifyMulti(participants, value, signature)),
  };
}
