// @quire/storage ledger: append + commit of ordered batches on classic-level (the write path of
// every ordered batch), proof generation from the persisted hash store (write replies, GET_TXN,
// catch-up), client-side verification, and a full verification of the hash store at open.
//
// Every rate is given as wall-clock, per CPU-second of the process and of the main thread, with the load
// average (see lib.ts). The txns are built before timing starts (the executor makes them in a running
// node): the figures are those of the ledger.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseJson, requestToTxn, type Request, type Txn } from '@quire/common';
import { Ledger, merkleLeafHash, openLevelKvStore, verifyConsistency, verifyInclusion } from '@quire/storage';
import { loadAverages, measure, report, sample, since } from './lib.js';

const requestText =
  '{"identifier":"V4SGRU86Z58d6TV7PBUe6f","operation":{"dest":"VsKV7grR1BUE29mG2Fm2kX","type":"1","verkey":"~CoRER63DVYnWZtK8uAzNbx","role":"101","alias":"agent-42"},' +
  '"protocolVersion":2,"reqId":1585221529670242337,"signature":"4X3skpoEK2DRgZxQ9PwuEvCJpL8JHdQ8X4HDDFyztgqE15DM2ZnkvrAh9bQY16egVinZTzwHqznmnkaFM4jjyDgd"}';
const template = requestToTxn(parseJson(requestText) as Request);
const BATCH = 100;
let reqId = 0;
/** Batches of distinct txns (by reqId), built once and reused: each use gives them fresh txnMetadata. */
const ring: Txn[][] = Array.from({ length: 64 }, () =>
  Array.from({ length: BATCH }, () => ({ ...template, txn: { ...template.txn, metadata: { ...template.txn.metadata, reqId: ++reqId } } }) as Txn),
);
let nextBatch = 0;
const makeBatch = (): Txn[] => {
  const batch = ring[nextBatch++ % ring.length]!;
  for (const t of batch) (t as { txnMetadata: Txn['txnMetadata'] }).txnMetadata = { txnTime: 1_700_000_000 };
  return batch;
};

console.log(`load average ${loadAverages()} at start`);
const dir = mkdtempSync(join(tmpdir(), 'quire-bench-ledger-'));
try {
  const kv = await openLevelKvStore(dir, { writeBufferJitter: 0 });
  const ledger = await Ledger.open({ ledgerId: 1 }, { kv });

  await measure(
    `ledger append + commit, batches of ${BATCH}, awaited`,
    async () => {
      ledger.append(makeBatch());
      await ledger.commit();
    },
    { opsPerCall: BATCH, target: 50_000, unit: 'txns/s' },
  );

  // consensus keeps batches in flight: the next batch is appended and committed while the
  // previous batch's write is still running in LevelDB's thread
  let inFlight: Promise<void> = Promise.resolve();
  await measure(
    `ledger append + commit, batches of ${BATCH}, pipelined`,
    async () => {
      ledger.append(makeBatch());
      const previous = inFlight;
      inFlight = ledger.commit();
      await previous;
    },
    { opsPerCall: BATCH, target: 50_000, unit: 'txns/s' },
  );
  await inFlight;

  await measure(
    `ledger append + commit, shared batch, sync write`,
    async () => {
      ledger.append(makeBatch());
      const batch = kv.batch();
      ledger.commit(undefined, batch);
      await batch.write({ sync: true });
    },
    { opsPerCall: BATCH, unit: 'txns/s' },
  );

  const n = ledger.size;
  console.log(`ledger holds ${n.toLocaleString('en-US')} txns`);
  let x = 12345;
  const rnd = (k: number): number => {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    return x % k;
  };
  const root = ledger.root;

  await measure(
    'inclusion proof, random seqNo, committed size',
    async () => {
      await ledger.inclusionProof(1 + rnd(n));
    },
    { unit: 'proofs/s' },
  );
  await measure(
    'consistency proof, random old -> committed size',
    async () => {
      await ledger.consistencyProof(1 + rnd(n), n);
    },
    { unit: 'proofs/s' },
  );
  await measure(
    'rootAt(random size)',
    async () => {
      await ledger.rootAt(1 + rnd(n));
    },
    { unit: 'roots/s' },
  );

  const seqNo = 1 + rnd(n);
  const leaf = merkleLeafHash((await ledger.getEncoded(seqNo))!);
  const path = await ledger.inclusionProof(seqNo);
  await measure(`verifyInclusion (${path.length} hashes)`, () => verifyInclusion(leaf, seqNo - 1, n, path, root), { unit: 'verifies/s' });
  const old = Math.floor(n / 3);
  const oldRoot = await ledger.rootAt(old);
  const proof = await ledger.consistencyProof(old, n);
  await measure(`verifyConsistency (${proof.length} hashes)`, () => verifyConsistency(old, n, oldRoot, root, proof), { unit: 'verifies/s' });

  await kv.close();
  const kv2 = await openLevelKvStore(dir, { writeBufferJitter: 0 });
  const t0 = sample();
  const reopened = await Ledger.open({ ledgerId: 1 }, { kv: kv2 });
  report('Ledger.open, intact hash store', 1, since(t0), { unit: 'opens/s' });
  const t1 = sample();
  await Ledger.open({ ledgerId: 1, verify: true }, { kv: kv2 });
  report('Ledger.open with verify: txns re-hashed, checked', reopened.size, since(t1), { unit: 'txns/s' });
  await kv2.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
