// CPU of reading back the txns of an ordered batch as a write's REPLY does (packages/node/src/client-replies.ts
// writeResult -> Ledger.get) once the batch is durable: a ledger over LevelDB holding `size` NYM txns, committed in
// batches of 500 with several batches landing before the replies of the first are built (as on a node, where a
// batch's replies follow the flush of every write started before them). Two ledgers of the same store, one keeping
// the txns made durable last in memory (recentTxnEntries, the default 4096) and one keeping none (0, every read from
// LevelDB), read alternately, `rounds` rounds; process CPU (user + system) per txn read.
//
//   node --conditions=quire-source --import tsx --import @quire/common/polyfill scripts/bench/reply-read.ts [size] [rounds]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Txn } from '@quire/common';
import { Ledger, openLevelKvStore } from '@quire/storage';

const size = Number(process.argv[2] ?? 50_000);
const rounds = Number(process.argv[3] ?? 4);
const BATCH = 500;
const IN_FLIGHT = 4;

const nym = (i: number): Txn =>
  ({
    reqSignature: { type: 'ED25519', values: [{ from: 'V4SGRU86Z58d6TV7PBUe6f', value: `${'5'.repeat(80)}${i}` }] },
    txn: {
      data: { dest: `Did${String(i).padStart(19, '0')}`, verkey: `~${'C'.repeat(21)}${i % 10}`, role: null },
      metadata: {
        digest: i.toString(16).padStart(64, '0'),
        from: 'V4SGRU86Z58d6TV7PBUe6f',
        payloadDigest: i.toString(16).padStart(64, 'f'),
        reqId: 1_700_000_000_000_000_000n + BigInt(i),
      },
      protocolVersion: 2,
      type: '1',
    },
    txnMetadata: { txnId: `${i}`, txnTime: 1_700_000_000 },
    ver: '1',
  }) as unknown as Txn;

const dir = mkdtempSync(join(tmpdir(), 'quire-reply-read-bench-'));
try {
  const kv = await openLevelKvStore(dir, { writeBufferJitter: 0 });
  const kept = await Ledger.open({ ledgerId: 1 }, { kv });
  const none = await Ledger.open({ ledgerId: 2, recentTxnEntries: 0 }, { kv });
  for (const l of [kept, none]) {
    for (let s = 1; s <= size; s += BATCH) {
      l.append(Array.from({ length: Math.min(BATCH, size - s + 1) }, (_, j) => nym(s + j)));
      await l.commit();
    }
  }
  // the replies of batch k are built after batches k..k+IN_FLIGHT-1 landed: read the seqNos of the oldest of the last IN_FLIGHT batches
  const from = size - IN_FLIGHT * BATCH + 1;
  const read = async (l: Ledger): Promise<number> => {
    let n = 0;
    for (let s = from; s < from + BATCH; s++) if ((await l.get(s)) !== undefined) n++;
    return n;
  };
  const measure = async (l: Ledger): Promise<number> => {
    const reps = 40;
    const cpu0 = process.cpuUsage();
    let n = 0;
    for (let r = 0; r < reps; r++) n += await read(l);
    const cpu = process.cpuUsage(cpu0);
    return (cpu.user + cpu.system) / n;
  };
  await measure(kept);
  await measure(none);
  for (let r = 0; r < rounds; r++) {
    const a = await measure(none);
    const b = await measure(kept);
    console.log(`round ${r + 1}: from LevelDB ${a.toFixed(2)} us per txn read, kept in memory ${b.toFixed(2)} us`);
  }
  await kv.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
