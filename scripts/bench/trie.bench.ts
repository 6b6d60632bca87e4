// State trie benchmarks: NYM-like writes committed every 100 into a LevelDB directory, committed
// reads, proof generation and proof verification on a trie of 100,000 keys.
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StateTrie, openLevelKvStore, verifyTrieProof } from '@quire/storage';
import { measure, record, type MeasureOptions } from './lib.js';

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

/**
 * `measure`, followed by the same rate per CPU-second of this process (all its threads, LevelDB's
 * included): on a machine shared with other work, wall-clock rates understate what the code does.
 */
async function measureWithCpu(name: string, fn: () => unknown, opts: MeasureOptions = {}): Promise<void> {
  let ops = 0;
  const per = opts.opsPerCall ?? 1;
  const c0 = process.cpuUsage();
  await measure(name, async () => {
    await fn();
    ops += per;
  }, opts);
  const c = process.cpuUsage(c0);
  record('  (same, per CPU-second)', ops / ((c.user + c.system) / 1e6), opts.target, opts.unit);
}

const dir = mkdtempSync(join(tmpdir(), 'quire-trie-bench-'));
try {
  const kv = await openLevelKvStore(dir);
  const trie = await StateTrie.open(kv, 'domain');
  console.log(`value size ${nymValue(12345).length} bytes, key size 32 bytes, commit every ${COMMIT_EVERY}, LevelDB in ${dir}`);

  // 1. fill to TRIE_KEYS with commits every 100, timing the whole fill
  let next = 0;
  const fillStart = performance.now();
  const fillCpu = process.cpuUsage();
  while (next < TRIE_KEYS) {
    for (let j = 0; j < COMMIT_EVERY; j++, next++) trie.set(nymKey(next), nymValue(next));
    await trie.commit();
  }
  const fillSecs = (performance.now() - fillStart) / 1000;
  const fillCpuUsage = process.cpuUsage(fillCpu);
  record(`trie fill 0 -> ${TRIE_KEYS.toLocaleString('en-US')} keys (put + commit/100)`, TRIE_KEYS / fillSecs, 20_000, 'puts/s');
  record('  (same, per CPU-second)', TRIE_KEYS / ((fillCpuUsage.user + fillCpuUsage.system) / 1e6), 20_000, 'puts/s');

  // 2. steady-state writes on the full trie: 100 new keys then a commit, per call
  const keyPool: Uint8Array[] = [];
  const valuePool: Uint8Array[] = [];
  for (let i = 0; i < 400_000; i++) {
    keyPool.push(nymKey(TRIE_KEYS + i));
    valuePool.push(nymValue(TRIE_KEYS + i));
  }
  let w = 0;
  await measureWithCpu(
    'trie put 100 + commit to LevelDB (trie >= 100k keys)',
    async () => {
      for (let j = 0; j < COMMIT_EVERY; j++, w++) trie.set(keyPool[w % keyPool.length]!, valuePool[w % valuePool.length]!);
      await trie.commit();
    },
    { opsPerCall: COMMIT_EVERY, target: 20_000, unit: 'puts/s', rounds: 5, roundMs: 500 },
  );

  // updates of existing keys (a NYM key rotation rewrites an existing record)
  let u = 0;
  await measureWithCpu(
    'trie update 100 existing keys + commit to LevelDB',
    async () => {
      for (let j = 0; j < COMMIT_EVERY; j++, u++) {
        const i = (u * 7919) % TRIE_KEYS;
        trie.set(nymKey(i), nymValue(i + u));
      }
      await trie.commit();
    },
    { opsPerCall: COMMIT_EVERY, target: 20_000, unit: 'puts/s', rounds: 5, roundMs: 500 },
  );

  // 3. reads, proofs and verification on a freshly opened trie (cold cache at the start)
  await kv.close();
  const kv2 = await openLevelKvStore(dir);
  const reader = await StateTrie.open(kv2, 'domain');
  const root = reader.committedRoot;
  const sampleKeys = Array.from({ length: 10_000 }, (_, i) => nymKey((i * 104_729) % TRIE_KEYS));
  const coldStart = performance.now();
  for (const k of sampleKeys) reader.get(k, { committed: true });
  record('trie get, cold cache (LevelDB reads)', sampleKeys.length / ((performance.now() - coldStart) / 1000), undefined, 'gets/s');
  let r = 0;
  await measureWithCpu('trie get (committed, warm cache)', () => reader.get(sampleKeys[r++ % sampleKeys.length]!, { committed: true }), { unit: 'gets/s' });
  let p = 0;
  await measureWithCpu('trie generateProof (100k+ keys)', () => reader.generateProof(sampleKeys[p++ % sampleKeys.length]!), { target: 20_000, unit: 'proofs/s' });
  const proofs = sampleKeys.map((k) => reader.generateProof(k));
  const absentKey = nymKey(10_000_000);
  const absentProof = reader.generateProof(absentKey);
  const avg = proofs.reduce((s, x) => s + x.length, 0) / proofs.length;
  console.log(`proof size: ${Math.round(avg)} bytes on average`);
  let v = 0;
  await measureWithCpu(
    'verifyTrieProof (present key, RLP bytes)',
    () => {
      const i = v++ % proofs.length;
      if (verifyTrieProof(root, sampleKeys[i]!, proofs[i]!) === null) throw new Error('proof did not verify');
    },
    { unit: 'verifies/s' },
  );
  await measureWithCpu(
    'verifyTrieProof (absent key)',
    () => {
      if (verifyTrieProof(root, absentKey, absentProof) !== null) throw new Error('absence proof did not verify');
    },
    { unit: 'verifies/s' },
  );
  const b64 = proofs.map((x) => Buffer.from(x).toString('base64'));
  let q = 0;
  await measureWithCpu(
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
