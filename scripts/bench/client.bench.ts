// @quire/client light-client verification: a GET_NYM reply checked end to end (answers the request, trie proof
// against root_hash, BLS multi-signature of n-f validators over MP(value), freshness), without and with the
// multi-signature cache per state root. Domain state of 10,000 NYMs, a 4-validator pool with BLS keys.
import { b58encode, b64encode, multiSignatureMessage, parseJson, stringifyJson, type Request } from '@quire/common';
import { Ed25519Signer, blsAggregateSignatures, blsKeyFromSeed } from '@quire/crypto';
import { StateTrie, openMemoryKvStore } from '@quire/storage';
import { encodeNymRecord, nymKey, nymReadData, type NymRecord } from '@quire/requests';
import { MultiSignatureCache, PoolLedger, buildGetNymRequest, verifyReadReply } from '@quire/client';
import { loadAverages, measure } from './lib.js';

console.log(`load average ${loadAverages()} (wall-clock figures scale down on a busy machine)`);

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
            blskey: b58encode(bls[i]!.publicKey),
            blskey_pop: b58encode(bls[i]!.proofOfPossession()),
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

const now = 1_700_000_000;
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
const ms = { signature: b58encode(blsAggregateSignatures([0, 1, 2].map((i) => bls[i]!.sign(msg)))), participants: ['Node1', 'Node2', 'Node3'], value };

const replies: { request: Request; reply: unknown; text: string }[] = [];
for (let i = 0; i < 64; i++) {
  const dest = dests[(i * 151) % dests.length]!;
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
  replies.push({ request, reply: parseJson(text), text });
}
console.log(`proof size ${replies[0]!.text.length} bytes of reply JSON`);

// 16 replies per call, so that the harness's per-call await does not weigh on sub-millisecond figures
const PER_CALL = 16;
let k = 0;
await measure(
  'GET_NYM reply: trie proof + BLS (3 of 4)  [<= 3 ms]',
  () => {
    for (let j = 0; j < PER_CALL; j++) {
      const r = replies[k++ % replies.length]!;
      verifyReadReply({ reply: r.reply, request: r.request, pool, now });
    }
  },
  { target: 333, unit: 'replies/s', opsPerCall: PER_CALL },
);

const cache = new MultiSignatureCache();
await measure(
  'GET_NYM reply: multi-signature cached per root  [<= 0.3 ms]',
  () => {
    for (let j = 0; j < PER_CALL; j++) {
      const r = replies[k++ % replies.length]!;
      verifyReadReply({ reply: r.reply, request: r.request, pool, now, cache });
    }
  },
  { target: 3333, unit: 'replies/s', opsPerCall: PER_CALL },
);

await measure(
  'GET_NYM reply: parse wire JSON + verify, cached',
  () => {
    for (let j = 0; j < PER_CALL; j++) {
      const r = replies[k++ % replies.length]!;
      verifyReadReply({ reply: parseJson(r.text), request: r.request, pool, now, cache });
    }
  },
  { unit: 'replies/s', opsPerCall: PER_CALL },
);
