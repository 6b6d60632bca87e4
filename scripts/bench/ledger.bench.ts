// @quire/storage ledger: append + commit of ordered batches on classic-level (the write path of
// every ordered batch), proof generation from the persisted hash store (write replies, GET_TXN,
// catch-up), client-side verification, and a full verification of the hash store at open.
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseJson, requestToTxn, type Request, type Txn } from '@quire/common';
import { Ledger, merkleLeafHash, openLevelKvStore, verifyConsistency, verifyInclusion } from '@quire/storage';
import { measure, record } from './lib.js';

const requestText =
  '{"identifier":"V4SGRU86Z58d6TV7PBUe6f","operation":{"dest":"VsKV7grR1BUE29mG2Fm2kX","type":"1","verkey":"~CoRER63DVYnWZtK8uAzNbx","role":"101","alias":"agent-42"},' +
  '"protocolVersion":2,"reqId":1585221529670242337,"signature":"4X3skpoEK2DRgZxQ9PwuEvCJpL8JHdQ8X4HDDFyztgqE15DM2ZnkvrAh9bQY16egVinZTzwHqznmnkaFM4jjyDgd"}';
const template = requestToTxn(parseJson(requestText) as Request);
const BATCH = 100;
let reqId = 0;
const makeBatch = (): Txn[] =>
  Array.from({ length: BATCH }, () => ({
    ...template,
    txn: { ...template.txn, metadata: { ...template.txn.metadata, reqId: ++reqId } },
    txnMetadata: { txnTime: 1_700_000_000 },
  }));

console.log(`load average ${loadavg().map((l) => l.toFixed(1)).join(' ')} (figures scale down on a busy machine)`);
const dir = mkdtempSync(join(tmpdir(), 'quire-bench-ledger-'));
try {
  const kv = await openLevelKvStore(dir);
  const ledger = await Ledger.open(kv, 1);

  await measure(`ledger append + commit, batches of ${BATCH}, each write awaited`, async () => {
    ledger.append(makeBatch());
    await ledger.commit();
  }, { opsPerCall: BATCH, target: 50_000, unit: 'txns/s' });

  // consensus keeps batches in flight: the next batch is appended and committed while the
  // previous batch's write is still running in LevelDB's thread
  let inFlight: Promise<void> = Promise.resolve();
  await measure(`ledger append + commit, batches of ${BATCH}, pipelined writes`, async () => {
    ledger.append(makeBatch());
    const previous = inFlight;
    inFlight = ledger.commit();
    await previous;
  }, { opsPerCall: BATCH, target: 50_000, unit: 'txns/s' });
  await inFlight;

  await measure(`ledger append + commit into a shared batch, sync write`, async () => {
    ledger.append(makeBatch());
    const batch = kv.batch();
    ledger.commit(undefined, batch);
    await batch.write({ sync: true });
  }, { opsPerCall: BATCH, unit: 'txns/s' });

  const n = ledger.size;
  console.log(`ledger holds ${n.toLocaleString('en-US')} txns`);
  let x = 12345;
  const rnd = (k: number): number => {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    return x % k;
  };
  const root = ledger.root;

  await measure('inclusion proof, random seqNo, committed size', async () => {
    await ledger.inclusionProof(1 + rnd(n));
  });
  await measure('consistency proof, random old size -> committed size', async () => {
    await ledger.consistencyProof(1 + rnd(n), n);
  });
  await measure('rootAt(random size)', async () => {
    await ledger.rootAt(1 + rnd(n));
  });

  const seqNo = 1 + rnd(n);
  const leaf = merkleLeafHash((await ledger.getEncoded(seqNo))!);
  const path = await ledger.inclusionProof(seqNo);
  await measure(`verifyInclusion (${path.length} hashes)`, () => verifyInclusion(leaf, seqNo - 1, n, path, root));
  const old = Math.floor(n / 3);
  const oldRoot = await ledger.rootAt(old);
  const proof = await ledger.consistencyProof(old, n);
  await measure(`verifyConsistency (${proof.length} hashes)`, () => verifyConsistency(old, n, oldRoot, root, proof));

  await kv.close();
  const kv2 = await openLevelKvStore(dir);
  const t0 = performance.now();
  const reopened = await Ledger.open(kv2, 1);
  record('Ledger.open, intact hash store', 1000 / (performance.now() - t0), undefined, 'opens/s');
  const t1 = performance.now();
  await Ledger.open(kv2, 1, { verify: true });
  record('Ledger.open with verify: txns re-hashed and checked', (reopened.size * 1000) / (performance.now() - t1), undefined, 'txns/s');
  await kv2.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
