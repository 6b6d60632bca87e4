// The crypto floor of one write on this machine: what signature work alone costs, and therefore the
// highest write rate a pool of n nodes sharing this machine's cores could reach if nothing else
// cost anything. Per write, every node checks the request's ed25519 signature once; per ordered
// batch (one ledger), every node makes one BLS signature share over the new state root, verifies the
// n-1 shares of the others and aggregates them into the multi-signature. With batches of B writes:
//
//   cpu per write = n * t(ed25519 verify) + n * (t(BLS sign) + (n-1) * t(BLS verify) + t(aggregate n)) / B
//   writes/s ceiling = cores / cpu per write
//
// A read with a state proof costs the client one trie walk (sha3) and, once per state root, one
// FastAggregateVerify of the multi-signature; reads are not part of this floor.
import { availableParallelism } from 'node:os';
import { signatureInput, type Request } from '@quire/common';
import { Ed25519Signer, blsAggregateSignatures, blsKeyFromSeed, blsVerify, ed25519Verify } from '@quire/crypto';
import { measure } from './lib.js';

export interface CryptoCosts {
  /** Microseconds of one core per operation. */
  ed25519VerifyUs: number;
  signingInputUs: number;
  blsSignUs: number;
  blsVerifyUs: number;
  /** Aggregating n shares (with their decoding and subgroup checks). */
  blsAggregateUs: number;
  n: number;
}

export interface CryptoCeiling {
  batchSize: number;
  /** Microseconds of CPU, summed over all nodes, per write. */
  cpuPerWriteUs: number;
  writesPerSecond: number;
}

/** Measures the per-operation costs on one core (n = pool size for the aggregate). */
export async function measureCryptoCosts(n = 4, roundMs = 300): Promise<CryptoCosts> {
  const author = Ed25519Signer.fromSeed('000000000000000000000000Trustee1');
  const request: Request = {
    identifier: author.did,
    reqId: 1_700_000_000_000_000_000n,
    protocolVersion: 2,
    operation: { type: '1', dest: 'VsKV7grR1BUE29mG2Fm2kX', verkey: '~CoRER63DVYnWZtK8uAzNbx' },
  };
  const input = signatureInput(request);
  const sig = author.sign(input);
  const pk = author.publicKey;
  const opts = { roundMs, rounds: 3 };
  const per = 32;
  const ed = await measure(
    'floor: ed25519 verify of a NYM request (native)',
    () => {
      for (let i = 0; i < per; i++) ed25519Verify(pk, input, sig);
    },
    { ...opts, opsPerCall: per },
  );
  const ser = await measure(
    'floor: signing serialization of a NYM request',
    () => {
      for (let i = 0; i < per; i++) signatureInput(request);
    },
    { ...opts, opsPerCall: per },
  );
  // the multi-signature value of a batch: ledger id, roots and timestamp, about 200 bytes of canonical JSON
  const value = new TextEncoder().encode(
    '{"ledger_id":1,"pool_state_root_hash":"HNvueuQSgG8S19UR9YsVxNJBL4yd8c5MYsTyyi4QLwh1","state_root_hash":"C2t4zdcHiG3kekqEreK6vpvqwZDoKWRJcX3Q3ryPrPKa","timestamp":1700000000,"txn_root_hash":"C2t4zdcHiG3kekqEreK6vpvqwZDoKWRJcX3Q3ryPrPKa"}',
  );
  const keys = Array.from({ length: n }, (_, i) => blsKeyFromSeed(`Node${i + 1}`.padStart(32, '0')));
  const shares = keys.map((k) => k.sign(value));
  const sign = await measure('floor: BLS sign (share over a state root)', () => keys[0]!.sign(value), opts);
  const verify = await measure('floor: BLS verify (one share)', () => blsVerify(keys[1]!.publicKey, value, shares[1]!), opts);
  const agg = await measure(`floor: BLS aggregate ${n} shares`, () => blsAggregateSignatures(shares), opts);
  return {
    ed25519VerifyUs: 1e6 / ed.opsPerSec,
    signingInputUs: 1e6 / ser.opsPerSec,
    blsSignUs: 1e6 / sign.opsPerSec,
    blsVerifyUs: 1e6 / verify.opsPerSec,
    blsAggregateUs: 1e6 / agg.opsPerSec,
    n,
  };
}

/** The write-rate ceiling for batches of `batchSize` writes on `cores` cores. */
export function cryptoCeiling(c: CryptoCosts, batchSize: number, cores = availableParallelism()): CryptoCeiling {
  const perBatchPerNode = c.blsSignUs + (c.n - 1) * c.blsVerifyUs + c.blsAggregateUs;
  const cpuPerWriteUs = c.n * c.ed25519VerifyUs + (c.n * perBatchPerNode) / Math.max(1, batchSize);
  return { batchSize, cpuPerWriteUs, writesPerSecond: (cores * 1e6) / cpuPerWriteUs };
}
