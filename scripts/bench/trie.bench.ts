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
import { StateTrie, openLevelKvStore, verifyTrieProof } from '@quire/storage';
import { loadAverages, measure, report, sample, since } from './lib.js';

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
  const kv = await openLevelKvStore(dir);
  const trie = await StateTrie.open(kv, 'domain');
  console.log(`value size ${fillValues[12345]!.length} bytes, key size 32 bytes, commit every ${COMMIT_EVERY}, LevelDB in ${dir}`);

  // 1. fill to TRIE_KEYS with commits every 100, timing the whole fill
  const fill = sample();
  for (let next = 0; next < TRIE_KEYS; ) {
    for (let j = 0; j < COMMIT_EVERY; j++, next++) trie.set(fillKeys[next]!, fillValues[next]!);
    await trie.commit();
  }
  report(`trie fill 0 -> ${TRIE_KEYS.toLocaleString('en-US')} keys (put + commit/100)`, TRIE_KEYS, since(fill), { unit: 'puts/s', target: 20_000 });

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

  // 3. reads, proofs and verification on a freshly opened trie (cold cache at the start)
  await kv.close();
  const kv2 = await openLevelKvStore(dir);
  const reader = await StateTrie.open(kv2, 'domain');
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
    'verifyTrieProof (present key, RLP bytes)',
    () => {
      const i = v++ % proofs.length;
      if (verifyTrieProof(root, sampleKeys[i]!, proofs[i]!) === null) throw new Error('proof did not verify');
    },
    { unit: 'verifies/s' },
  );
  await measure(
    'verifyTrieProof (absent key)',
    () => {
      if (verifyTrieProof(root, absentKey, absentProof) !== null) throw new Error('absence proof did not verify');
    },
    { unit: 'verifies/s' },
  );
  const b64 = proofs.map((x) => Buffer.from(x).toString('base64'));
  let q = 0;
  await measure(
    'verifyTrieProof (present key, base64 proof_nodes)',
    () => {
      const i = q++ % b64.length;
      verifyTrieProof(root, sampleKeys[i]!, b64[i]!);
    },
    { unit: 'verifies/s' },
  );
  await kv2.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
