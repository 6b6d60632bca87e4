import { createHash } from 'node:crypto';
import { StateTrie, openMemoryKvStore, verifyTrieProof } from '@quire/storage';
const utf8 = new TextEncoder();
const key = (i: number) => new Uint8Array(createHash('sha256').update(`did:${i}`).digest());
const val = (i: number) => utf8.encode(`{"dest":"abcdefghijklmnopqrstuv","identifier":"V4SGRU86Z58d6TV7PBUe6f","role":"101","seqNo":${i + 1},"txnTime":${1_700_000_000 + i},"verkey":"abcdefghijklmnopqrstuvabcdefghijklmnopqrstuv","version":null}`);
const kv = await openMemoryKvStore();
const t = await StateTrie.open(kv, 'domain');
const N = 30000;
const keys = Array.from({length: N}, (_, i) => key(i)); const vals = Array.from({length: N}, (_, i) => val(i));
let s = performance.now();
for (let i = 0; i < N; i += 100) { for (let j = i; j < i + 100; j++) t.set(keys[j]!, vals[j]!); await t.commit(); }
console.log('fill', N / ((performance.now() - s) / 1000));
s = performance.now();
for (let i = 0; i < N; i += 100) { for (let j = i; j < i + 100; j++) t.set(keys[j]!, vals[(j+1)%N]!); t.headRoot; }
console.log('set+root no commit', N / ((performance.now() - s) / 1000));
const root = t.committedRoot;
s = performance.now();
const proofs = keys.slice(0, 10000).map((k) => t.generateProof(k));
console.log('proofs', 10000 / ((performance.now() - s) / 1000));
s = performance.now();
for (let i = 0; i < 10000; i++) verifyTrieProof(root, keys[i]!, proofs[i]!);
console.log('verify', 10000 / ((performance.now() - s) / 1000));
s = performance.now();
for (let i = 0; i < 100000; i++) createHash('sha3-256').update(proofs[0]!.subarray(0, 530)).digest();
console.log('sha3 530B', 100000 / ((performance.now() - s) / 1000));
