// State trie benchmarks: NYM-like writes committed every 100 into a LevelDB directory, updates of
// existing keys, committed reads, proof generation and proof verification on a trie of 100,000+ keys.
//
// Every rate is given as wall-clock, per CPU-second of the process and of the main thread, with the load
// average (see lib.ts). Keys and values are generated before timing starts: the figures are those of the
// trie and the store, not of the generator.
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StateTrie, openLevelKvStore, verifyTrieProofAt } from '@quire/storage';
import { loadAverages, measure, report, sample, since, threadCpuMs } from './lib.js';

const TRIE_KEYS = 100_000;
const COMMIT_EVERY = 100;
const utf8 = new TextEncoder();

/** NYM state key: SHA-256 of the DID (formats 8.2). */
function nymKey(i: number): Uint8Array {
  return new Uint8Array(createHash('sha256').update(`did:${i}`).digest());
}

/** A NYM state value of about 200 bytes: CJ of the merged record. */
function nymValue(i: number): Uint8Array {
  const did = createHash('sha256').update(`dest ${i}`).digest('base64').replace(/[+/=]/g, 'x').slice(0, 22);
  const verkey = createHash('sha256').update(`verkey ${i}`).digest('base64').replace(/[+/=]/g, 'x').slice(0, 44);
  return utf8.encode(
    `{"dest":"${did}","identifier":"V4SGRU86Z58d6TV7PBUe6f","role":"101","seqNo":${i + 1},"txnTime":${1_700_000_000 + i},"verkey":"${verkey}","version":null}`,
  );
}

console.log(`load average ${loadAverages()} at start; generating inputs...`);
const FRESH = 400_000;
const UPDATES = 50_000;
const fillKeys = Array.from({ length: TRIE_KEYS }, (_, i) => nymKey(i));
const fillValues = Array.from({ length: TRIE_KEYS }, (_, i) => nymValue(i));
const keyPool = Array.from({ length: FRESH }, (_, i) => nymKey(TRIE_KEYS + i));
const valuePool = Array.from({ length: FRESH }, (_, i) => nymValue(TRIE_KEYS + i));
const updateKeys = Array.from({ length: UPDATES }, (_, u) => fillKeys[(u * 7919) % TRIE_KEYS]!);
const updateValues = Array.from({ length: UPDATES }, (_, u) => nymValue(((u * 7919) % TRIE_KEYS) + u + 1));

const dir = mkdtempSync(join(tmpdir(), 'quire-trie-bench-'));
try {
  const kv = await openLevelKvStore(dir, { writeBufferJitter: 0 }); // one store: the figures stay comparable from run to run
  const trie = await StateTrie.open({ name: 'domain' }, { kv });
  console.log(`value size ${fillValues[12345]!.length} bytes, key size 32 bytes, commit every ${COMMIT_EVERY}, LevelDB in ${dir}`);

  // 1. fill to TRIE_KEYS with commits every 100, timing the whole fill
  const threadsBefore = threadCpuMs();
  const writeStart = performance.now();
  let waitMs = 0;
  const fill = sample();
  for (let next = 0; next < TRIE_KEYS;) {
    for (let j = 0; j < COMMIT_EVERY; j++, next++) trie.set(fillKeys[next]!, fillValues[next]!);
    const c = trie.commit();
    const t = performance.now();
    await c;
    waitMs += performance.now() - t;
  }
  const fillTime = since(fill);
  report(`trie fill 0 -> ${TRIE_KEYS.toLocaleString('en-US')} keys (put + commit/100)`, TRIE_KEYS, fillTime, { unit: 'puts/s', target: 20_000 });

  // 2. steady-state writes on the full trie: 100 new keys then a commit, per call
  let w = 0;
  await measure(
    'trie put 100 + commit (trie >= 100k keys)',
    async () => {
      for (let j = 0; j < COMMIT_EVERY; j++, w++) trie.set(keyPool[w % FRESH]!, valuePool[w % FRESH]!);
      await trie.commit();
    },
    { opsPerCall: COMMIT_EVERY, target: 20_000, unit: 'puts/s', roundMs: 500 },
  );

  // the same with each commit's write overlapping the next 100 puts, as the node's executor chains
  // its batch writes behind one another instead of waiting for each (one write in flight here)
  let pending: Promise<void> | void = undefined;
  await measure(
    'trie put 100 + commit, write overlapping the next puts',
    async () => {
      for (let j = 0; j < COMMIT_EVERY; j++, w++) trie.set(keyPool[w % FRESH]!, valuePool[w % FRESH]!);
      await pending;
      pending = trie.commit();
    },
    { opsPerCall: COMMIT_EVERY, target: 20_000, unit: 'puts/s', roundMs: 500 },
  );
  await pending;

  // updates of existing keys (a NYM key rotation rewrites an existing record)
  let u = 0;
  await measure(
    'trie update 100 existing keys + commit',
    async () => {
      for (let j = 0; j < COMMIT_EVERY; j++, u++) trie.set(updateKeys[u % UPDATES]!, updateValues[u % UPDATES]!);
      await trie.commit();
    },
    { opsPerCall: COMMIT_EVERY, target: 20_000, unit: 'puts/s', roundMs: 500 },
  );

  // where the time of the write phases went: the main thread (trie changes, encoding, hashing,
  // building LevelDB batches, GC pauses), the other threads (LevelDB's compaction thread, libuv's
  // pool running the batch writes into the log and memtable, V8's GC helpers), and the main
  // thread's wait for awaited writes during the fill
  const threadsAfter = threadCpuMs();
  const puts = TRIE_KEYS + w + u;
  const writeWallMs = performance.now() - writeStart;
  if (threadsBefore !== undefined && threadsAfter !== undefined) {
    const mainUs = ((threadsAfter.main - threadsBefore.main) * 1000) / puts;
    const otherUs = ((threadsAfter.others - threadsBefore.others) * 1000) / puts;
    console.log(
      `write phases, ${puts.toLocaleString('en-US')} puts in ${(writeWallMs / 1000).toFixed(1)} s: CPU per put ${mainUs.toFixed(1)} µs on the main thread + ` +
        `${otherUs.toFixed(1)} µs on other threads (LevelDB compaction and writes, GC helpers) = ${(mainUs + otherUs).toFixed(1)} µs, ` +
        `a ceiling of ${Math.round(2e6 / (mainUs + otherUs)).toLocaleString('en-US')} puts/s on 2 cores; main thread busy ${((100 * (threadsAfter.main - threadsBefore.main)) / writeWallMs).toFixed(0)} % of the wall time; ` +
        `fill: ${((100 * waitMs) / fillTime.wallMs).toFixed(0)} % of its wall time awaiting commit writes`,
    );
  }
  const stats = kv.engineProperty('leveldb.stats');
  if (stats !== undefined) console.log(`LevelDB compactions so far:\n${stats.trim()}`);

  // 3. reads, proofs and verification on a freshly opened trie (cold cache at the start)
  await kv.close();
  const kv2 = await openLevelKvStore(dir, { writeBufferJitter: 0 }); // one store: the figures stay comparable from run to run
  const reader = await StateTrie.open({ name: 'domain' }, { kv: kv2 });
  const root = reader.committedRoot;
  const sampleKeys = Array.from({ length: 10_000 }, (_, i) => fillKeys[(i * 104_729) % TRIE_KEYS]!);
  const cold = sample();
  for (const k of sampleKeys) reader.get(k, { committed: true });
  report('trie get, cold cache (LevelDB reads)', sampleKeys.length, since(cold), { unit: 'gets/s' });
  let r = 0;
  await measure('trie get (committed, warm cache)', () => reader.get(sampleKeys[r++ % sampleKeys.length]!, { committed: true }), { unit: 'gets/s' });
  let p = 0;
  await measure('trie generateProof (100k+ keys)', () => reader.generateProof(sampleKeys[p++ % sampleKeys.length]!), { target: 20_000, unit: 'proofs/s' });
  const proofs = sampleKeys.map((k) => reader.generateProof(k));
  const absentKey = nymKey(10_000_000);
  const absentProof = reader.generateProof(absentKey);
  const avg = proofs.reduce((s, x) => s + x.length, 0) / proofs.length;
  console.log(`proof size: ${Math.round(avg)} bytes on average`);
  let v = 0;
  await measure(
    'verifyTrieProofAt (present key, RLP bytes)',
    () => {
      const i = v++ % proofs.length;
      if (verifyTrieProofAt(root, sampleKeys[i]!, proofs[i]!) === null) throw new Error('proof did not verify');
    },
    { unit: 'verifies/s' },
  );
  await measure(
    'verifyTrieProofAt (absent key)',
    () => {
      if (verifyTrieProofAt(root, absentKey, absentProof) !== null) throw new Error('absence proof did not verify');
    },
    { unit: 'verifies/s' },
  );
  const b64 = proofs.map((x) => Buffer.from(x).toString('base64'));
  let q = 0;
  await measure(
    'verifyTrieProofAt (present key, base64 proof_nodes)',
    () => {
      const i = q++ % b64.length;
      verifyTrieProofAt(root, sampleKeys[i]!, b64[i]!);
    },
    { unit: 'verifies/s' },
  );
  await kv2.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
