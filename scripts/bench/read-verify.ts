// The SDK's CPU per verified GET_NYM, in process: what Pool.submitRead does with a node's REPLY once its bytes are
// in (the lossless parse of the bytes, verifyReadReply with the pool's multi-signature cache, and the position checked
// against and noted in what the handle has seen), 64 DIDs read in turn at one root as the reads phase of bench:pool
// reads them. Domain state of 10,000 NYMs, a 4-validator pool with BLS keys. Prints the CPU time per read.
//
//   node --conditions=quire-source --import tsx --import @quire/common/polyfill scripts/bench/read-verify.ts
import { parseJson } from '@quire/common';
import { MultiSignatureCache, verifyReadReply } from '@quire/client';
import { SeenLedgers, readPosition } from '../../packages/client/src/pool/seen.js';
import { loadAverages } from './lib.js';
import { readFixture } from './read-fixture.js';

console.log(`load average ${loadAverages()}`);
const now = Math.floor(Date.now() / 1000);
const { pool, replies: texts } = await readFixture(now);
const utf8 = new TextEncoder();
const replies = texts.map((r) => ({ request: r.request, bytes: utf8.encode(r.text) }));

const cache = new MultiSignatureCache();
const seen = new SeenLedgers();
let k = 0;
function read(): void {
  const r = replies[k++ % replies.length] as (typeof replies)[number];
  const reply = parseJson(r.bytes);
  const v = verifyReadReply({ reply, request: r.request, pool, now, cache });
  const p = readPosition(r.request, v, seen);
  if (p === undefined || seen.check(p) !== undefined) throw new Error('the read is behind');
  seen.noteRead(p);
}
for (let i = 0; i < 20_000; i++) read(); // warm-up: JIT, caches, the multi-signature verified once
for (let round = 0; round < 4; round++) {
  const n = 50_000;
  const c0 = process.cpuUsage();
  for (let i = 0; i < n; i++) read();
  const c = process.cpuUsage(c0);
  console.log(`SDK GET_NYM reply (parse, verify with the cache, seen position): ${((c.user + c.system) / n).toFixed(2)} us CPU per read`);
}
