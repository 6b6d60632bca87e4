// The SDK's CPU per verified GET_NYM, in process: what Pool.submitRead does with a node's REPLY once its bytes are
// in (the lossless parse of the bytes, verifyReadReply with the pool's multi-signature cache, and the position checked
// against and noted in what the handle has seen), 64 DIDs read in turn at one root as the reads phase of bench:pool
// reads them. Domain state of 10,000 NYMs, a 4-validator pool with BLS keys. Prints the CPU time per read.
//
//   node --conditions=quire-source --import tsx --import @quire/common/polyfill scripts/bench/read-verify.ts
import { b58encode, b64encode, multiSignatureMessage, parseJson, stringifyJson, type Request } from '@quire/common';
import { Ed25519Signer, blsAggregateSignatures, blsKeyFromSeed } from '@quire/crypto';
import { StateTrie, openMemoryKvStore } from '@quire/storage';
import { encodeNymRecord, nymKey, nymReadData, type NymRecord } from '@quire/requests';
import { MultiSignatureCache, PoolLedger, buildGetNymRequest, verifyReadReply } from '@quire/client';
import { SeenLedgers, readPosition } from '../../packages/client/src/pool/seen.js';
import { loadAverages } from './lib.js';

console.log(`load average ${loadAverages()}`);
const names = ['Node1', 'Node2', 'Node3', 'Node4'];
const bls = names.map((n) => blsKeyFromSeed(n.padStart(32, '0')));
const genesis = names
  .map((n, i) =>
    stringifyJson({
      reqSignature: {},
      txn: {
        data: {
          data: {
            alias: n,
            blskey: b58encode(bls[i]?.publicKey as Uint8Array),
            blskey_pop: b58encode(bls[i]?.proofOfPossession() as Uint8Array),
            client_ip: '127.0.0.1',
            client_port: 9702 + 2 * i,
            node_ip: '127.0.0.1',
            node_port: 9701 + 2 * i,
            services: ['VALIDATOR'],
          },
          dest: Ed25519Signer.fromSeed(n.padStart(32, '0')).fullVerkey,
        },
        metadata: {},
        type: '0',
      },
      txnMetadata: { seqNo: i + 1 },
      ver: '1',
    }),
  )
  .join('\n');
const pool = PoolLedger.fromGenesis(genesis).blsKeys();

const now = Math.floor(Date.now() / 1000);
const trie = await StateTrie.open({ name: 'domain' }, { kv: await openMemoryKvStore() });
const dests: string[] = [];
for (let i = 0; i < 10_000; i++) {
  const d = Ed25519Signer.fromSeed(String(i).padStart(32, 'd')).did;
  dests.push(d);
  const rec: NymRecord = { identifier: 'V4SGRU86Z58d6TV7PBUe6f', role: null, verkey: '~CoRER63DVYnWZtK8uAzNbx', seqNo: i + 10, txnTime: now - 100 };
  trie.set(nymKey(d), encodeNymRecord(rec));
}
await trie.commit();
const root = b58encode(trie.committedRoot);
const value = {
  ledger_id: 1,
  pool_state_root_hash: 'HNvueuQSgG8S19UR9YsVxNJBL4yd8c5MYsTyyi4QLwh1',
  state_root_hash: root,
  timestamp: now - 5,
  txn_root_hash: 'C2t4zdcHiG3kekqEreK6vpvqwZDoKWRJcX3Q3ryPrPKa',
};
const msg = multiSignatureMessage(value);
const ms = {
  signature: b58encode(blsAggregateSignatures([0, 1, 2].map((i) => (bls[i] as (typeof bls)[number]).sign(msg)))),
  participants: ['Node1', 'Node2', 'Node3'],
  value,
};

const utf8 = new TextEncoder();
const replies: { request: Request; bytes: Uint8Array }[] = [];
for (let i = 0; i < 64; i++) {
  const dest = dests[(i * 151) % dests.length] as string;
  const request = buildGetNymRequest({ dest });
  const rec: NymRecord = {
    identifier: 'V4SGRU86Z58d6TV7PBUe6f',
    role: null,
    verkey: '~CoRER63DVYnWZtK8uAzNbx',
    seqNo: ((i * 151) % dests.length) + 10,
    txnTime: now - 100,
  };
  const text = stringifyJson({
    op: 'REPLY',
    result: {
      ...request.operation,
      identifier: request.identifier,
      reqId: request.reqId,
      data: nymReadData(rec, dest),
      seqNo: rec.seqNo,
      txnTime: rec.txnTime,
      state_proof: { root_hash: root, proof_nodes: b64encode(trie.generateProof(nymKey(dest))), multi_signature: ms },
    },
  });
  replies.push({ request, bytes: utf8.encode(text) });
}

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
