// A node's answer to a GET_NYM, in process: the request's JSON parsed and checked, the read handler run through one
// StoresReadContext (as a node keeps it) over a domain state of 10,000 NYMs, and the REPLY written as JSON; 64 DIDs
// read in turn at one root, as the reads phase of bench:pool reads them. Prints the CPU time per read.
//
//   node --conditions=quire-source --import tsx --import @quire/common/polyfill scripts/bench/read-answer.ts
import { parseJson, stringifyJson } from '@quire/common';
import { Ed25519Signer } from '@quire/crypto';
import { StateTrie, openMemoryKvStore } from '@quire/storage';
import { StoresReadContext, answerRead, createDefaultRegistry, encodeNymRecord, nymKey, parseRequest } from '@quire/requests';
import { loadAverages } from './lib.js';

console.log(`load average ${loadAverages()}`);
const trie = await StateTrie.open({ name: 'domain' }, { kv: await openMemoryKvStore() });
const dests: string[] = [];
for (let i = 0; i < 10_000; i++) {
  const d = Ed25519Signer.fromSeed(String(i).padStart(32, 'd')).did;
  dests.push(d);
  trie.set(
    nymKey(d),
    encodeNymRecord({ identifier: 'V4SGRU86Z58d6TV7PBUe6f', role: null, verkey: '~CoRER63DVYnWZtK8uAzNbx', seqNo: i + 10, txnTime: 1_700_000_000 }),
  );
}
await trie.commit();
// the read context needs the states only for GET_NYM at the committed root
const ctx = new StoresReadContext({ states: { 0: trie, 1: trie, 2: trie } } as unknown as ConstructorParameters<typeof StoresReadContext>[0]);
const handler = createDefaultRegistry().read('105');
if (handler === undefined) throw new Error('no GET_NYM handler');
const texts = Array.from({ length: 64 }, (_, i) =>
  stringifyJson({
    identifier: 'V4SGRU86Z58d6TV7PBUe6f',
    reqId: 1000 + i,
    protocolVersion: 2,
    operation: { type: '105', dest: dests[(i * 151) % dests.length] },
  }),
);
const utf8 = new TextEncoder();
let k = 0;
async function answer(): Promise<number> {
  const req = parseRequest(parseJson(texts[k++ % texts.length] as string) as Record<string, unknown>);
  handler?.validateStatic(req);
  const reply = await answerRead(handler as NonNullable<typeof handler>, req, ctx);
  return utf8.encode(stringifyJson({ op: 'REPLY', result: reply.result })).length;
}
for (let i = 0; i < 20_000; i++) await answer(); // warm-up: JIT and the context's caches
for (let round = 0; round < 3; round++) {
  const n = 40_000;
  const c0 = process.cpuUsage();
  for (let i = 0; i < n; i++) await answer();
  const c = process.cpuUsage(c0);
  console.log(`node GET_NYM answer (parse, checks, lookup and proof, REPLY JSON): ${((c.user + c.system) / n).toFixed(1)} us CPU per read`);
}
