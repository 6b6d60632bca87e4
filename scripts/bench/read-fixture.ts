// The verified-read fixture of the in-process client benches (client.bench.ts, read-verify.ts): a 4-validator pool
// with BLS keys, a domain state of 10,000 NYMs, a multi-signature of 3 of the 4 over its root, and 64 GET_NYM REPLYs
// as a node writes them (trie proof and multi-signature), DIDs spread over the state.
import { b58encode, b64encode, multiSignatureMessage, stringifyJson, type Request } from '@quire/common';
import { Ed25519Signer, blsAggregateSignatures, blsKeyFromSeed } from '@quire/crypto';
import { StateTrie, openMemoryKvStore } from '@quire/storage';
import { encodeNymRecord, nymKey, nymReadData, type NymRecord } from '@quire/requests';
import { PoolLedger, buildGetNymRequest } from '@quire/client';

export interface ReadFixture {
  names: string[];
  /** the pool's genesis with the validators' client ports */
  genesisWith(ports: number[]): string;
  /** the validators' BLS keys, from the genesis with the ports 9702-9708 */
  pool: ReturnType<PoolLedger['blsKeys']>;
  /** the 10,000 DIDs of the state */
  dests: string[];
  /** 64 GET_NYM requests and the REPLY text a node answers each with */
  replies: { request: Request; text: string }[];
}

const names = ['Node1', 'Node2', 'Node3', 'Node4'];

/** The fixture at `now` (seconds): the NYMs written 100 s and the multi-signature 5 s before it. */
export async function readFixture(now: number): Promise<ReadFixture> {
  const bls = names.map((n) => blsKeyFromSeed(n.padStart(32, '0')));
  const blsOf = (i: number): (typeof bls)[number] => bls[i] as (typeof bls)[number];
  const genesisWith = (ports: number[]): string =>
    names
      .map((n, i) =>
        stringifyJson({
          reqSignature: {},
          txn: {
            data: {
              data: {
                alias: n,
                blskey: b58encode(blsOf(i).publicKey),
                blskey_pop: b58encode(blsOf(i).proofOfPossession()),
                client_ip: '127.0.0.1',
                client_port: ports[i] as number,
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
  const pool = PoolLedger.fromGenesis(genesisWith([9702, 9704, 9706, 9708])).blsKeys();

  const record = (seqNo: number): NymRecord => ({
    identifier: 'V4SGRU86Z58d6TV7PBUe6f',
    role: null,
    verkey: '~CoRER63DVYnWZtK8uAzNbx',
    seqNo,
    txnTime: now - 100,
  });
  const trie = await StateTrie.open({ name: 'domain' }, { kv: await openMemoryKvStore() });
  const dests: string[] = [];
  for (let i = 0; i < 10_000; i++) {
    const d = Ed25519Signer.fromSeed(String(i).padStart(32, 'd')).did;
    dests.push(d);
    trie.set(nymKey(d), encodeNymRecord(record(i + 10)));
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
  const ms = { signature: b58encode(blsAggregateSignatures([0, 1, 2].map((i) => blsOf(i).sign(msg)))), participants: ['Node1', 'Node2', 'Node3'], value };

  const replies: { request: Request; text: string }[] = [];
  for (let i = 0; i < 64; i++) {
    const at = (i * 151) % dests.length;
    const dest = dests[at] as string;
    const request = buildGetNymRequest({ dest });
    const rec = record(at + 10);
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
    replies.push({ request, text });
  }
  return { names, genesisWith, pool, dests, replies };
}
