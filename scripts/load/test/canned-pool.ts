// Four real client hosts (@quire/network's ClientHost, the node side of /quire/client/1.0.0) that answer
// as a pool would, from one shared in-memory ledger: writes get REQACK then a REPLY push with the txn
// at the next seqNo (the same on every host), GET_NYM is answered from a real state trie with a real
// BLS multi-signature of three nodes, GET_TXN from the ledger with its size and root. Nothing is
// ordered: this is a stand-in for the pool when the generator itself is under test.
import { b58encode, b64encode, canonicalJson, multiSignatureMessage, parseJson, sha256, sha256Hex, stringifyJson } from '@quire/common';
import { Ed25519Signer, blsAggregateSignatures, blsKeyFromSeed } from '@quire/crypto';
import { ClientHost } from '@quire/network';
import { encodeNymRecord, nymKey, nymReadData, type NymRecord } from '@quire/requests';
import { StateTrie, openMemoryKvStore } from '@quire/storage';

const NAMES = ['Node1', 'Node2', 'Node3', 'Node4'];
const seedOf = (n: string): string => n.padStart(32, '0');
const bls = NAMES.map((n) => blsKeyFromSeed(seedOf(n)));
const enc = new TextEncoder();

export function cannedGenesis(ports: number[]): string {
  return (
    NAMES.map((alias, i) =>
      stringifyJson({
        reqSignature: {},
        txn: {
          data: {
            data: {
              alias,
              blskey: b58encode(bls[i]!.publicKey),
              blskey_pop: b58encode(bls[i]!.proofOfPossession()),
              client_ip: '127.0.0.1',
              client_port: ports[i],
              node_ip: '127.0.0.1',
              node_port: 9701 + 2 * i,
              services: ['VALIDATOR'],
            },
            dest: Ed25519Signer.fromSeed(seedOf(alias)).fullVerkey,
          },
          metadata: {},
          type: '0',
        },
        txnMetadata: { seqNo: i + 1 },
        ver: '1',
      }),
    ).join('\n') + '\n'
  );
}

type Txn = Record<string, unknown>;

export class CannedPool {
  readonly hosts: ClientHost[] = [];
  readonly txns: Txn[] = [];
  private readonly byKey = new Map<string, Txn>();
  /** Per host: seqNos it pretends not to have (to test the ledger check). */
  readonly hidden: Set<number>[] = NAMES.map(() => new Set());
  /** Per host: refuse writes with this REQNACK reason. */
  readonly nack: (string | undefined)[] = NAMES.map(() => undefined);
  writes = 0;
  reads = 0;
  /** txnTime of the newest write: the time of the "batch" the state proofs sign, as a pool's multi-signature has */
  private lastTxnTime = 0;

  /** ledger root by size, computed once per seqNo */
  private readonly rootAt = new Map<number, string>();

  private constructor(private readonly trie: StateTrie) {}

  static async start(): Promise<CannedPool> {
    const pool = new CannedPool(await StateTrie.open({ name: 'domain' }, { kv: await openMemoryKvStore() }));
    for (let i = 0; i < NAMES.length; i++) {
      const h = await ClientHost.create({ seed: enc.encode(seedOf(NAMES[i]!)), host: '127.0.0.1', port: 0, clientRate: 1_000_000, clientBurst: 1_000_000 });
      h.on('request', (clientId, bytes, respond, info) => {
        void pool.answer(i, parseJson(bytes) as Record<string, unknown>).then((msgs) => {
          respond(enc.encode(stringifyJson(msgs[0])));
          for (const m of msgs.slice(1)) h.push(clientId, enc.encode(stringifyJson(m)), info.requestId);
        });
      });
      pool.hosts.push(h);
    }
    return pool;
  }

  get genesis(): string {
    return cannedGenesis(this.hosts.map((h) => h.port));
  }

  get root(): string {
    return b58encode(sha256(enc.encode(this.txns.map((t) => canonicalJson(t)).join('\n'))));
  }

  private async answer(host: number, req: Record<string, unknown>): Promise<unknown[]> {
    const op = req.operation as Record<string, unknown>;
    const type = String(op.type);
    if (type === '105') {
      this.reads++;
      const dest = String(op.dest);
      const raw = this.trie.get(nymKey(dest), { committed: true });
      const rec = raw === undefined ? undefined : (parseJson(new TextDecoder().decode(raw)) as NymRecord);
      const root = b58encode(this.trie.committedRoot);
      const value = {
        ledger_id: 1,
        pool_state_root_hash: 'HNvueuQSgG8S19UR9YsVxNJBL4yd8c5MYsTyyi4QLwh1',
        state_root_hash: root,
        timestamp: this.lastTxnTime > 0 ? this.lastTxnTime : Math.floor(Date.now() / 1000) - 1,
        txn_root_hash: 'C2t4zdcHiG3kekqEreK6vpvqwZDoKWRJcX3Q3ryPrPKa',
      };
      const msg = multiSignatureMessage(value);
      const multi = { signature: b58encode(blsAggregateSignatures([0, 1, 2].map((k) => bls[k]!.sign(msg)))), participants: ['Node1', 'Node2', 'Node3'], value };
      return [
        {
          op: 'REPLY',
          result: {
            ...op,
            identifier: req.identifier,
            reqId: req.reqId,
            data: rec === undefined ? null : nymReadData(rec, dest),
            seqNo: rec?.seqNo ?? null,
            txnTime: rec?.txnTime ?? null,
            state_proof: { root_hash: root, proof_nodes: b64encode(this.trie.generateProof(nymKey(dest))), multi_signature: multi },
          },
        },
      ];
    }
    if (type === '3') {
      const seqNo = Number(op.data);
      const t = this.txns[seqNo - 1];
      const data =
        t === undefined || this.hidden[host]!.has(seqNo)
          ? null
          : { ...t, rootHash: this.hidden[host]!.size > 0 ? 'forked' : this.root, auditPath: [], ledgerSize: this.txns.length };
      return [{ op: 'REPLY', result: { ...op, identifier: req.identifier, reqId: req.reqId, seqNo, data } }];
    }
    const ack = { op: 'REQACK', identifier: req.identifier, reqId: req.reqId };
    if (this.nack[host] !== undefined) return [{ op: 'REQNACK', identifier: req.identifier, reqId: req.reqId, reason: this.nack[host] }];
    const key = `${String(req.identifier)}|${String(req.reqId)}`;
    let txn = this.byKey.get(key);
    if (txn === undefined) {
      this.writes++;
      const seqNo = this.txns.length + 1;
      const txnTime = Math.floor(Date.now() / 1000);
      this.lastTxnTime = Math.max(this.lastTxnTime, txnTime);
      const data = { ...op };
      delete data.type;
      txn = {
        ver: '1',
        txn: { type, protocolVersion: 2, data, metadata: { from: req.identifier, reqId: req.reqId, digest: sha256Hex(stringifyJson(req)) } },
        txnMetadata: { seqNo, txnTime },
        reqSignature: { type: 'ED25519', values: [{ from: req.identifier, value: req.signature }] },
      };
      // the ledger keeps an ATTRIB's raw as the hex SHA-256 of its canonical JSON (formats.md 4)
      const stored =
        type === '100' && typeof data.raw === 'string'
          ? { ...txn, txn: { ...(txn.txn as object), data: { ...data, raw: sha256Hex(canonicalJson(parseJson(data.raw))) } } }
          : txn;
      this.txns.push(stored);
      this.byKey.set(key, txn);
      if (type === '1') {
        this.trie.set(
          nymKey(String(op.dest)),
          encodeNymRecord({
            identifier: String(req.identifier),
            role: (op.role as string | undefined) ?? null,
            verkey: (op.verkey as string | undefined) ?? null,
            seqNo,
            txnTime,
          }),
        );
        await this.trie.commit();
      }
    }
    // the root at the txn's own seqNo, as a node's REPLY has it: the same bytes from every host, whatever was
    // written since (hosts that answer in one turn of the event loop would otherwise see different roots)
    const seqNo = (txn.txnMetadata as { seqNo: number }).seqNo;
    let rootHash = this.rootAt.get(seqNo);
    if (rootHash === undefined) {
      rootHash = b58encode(
        sha256(
          enc.encode(
            this.txns
              .slice(0, seqNo)
              .map((t) => canonicalJson(t))
              .join('\n'),
          ),
        ),
      );
      this.rootAt.set(seqNo, rootHash);
    }
    return [ack, { op: 'REPLY', result: { ...txn, rootHash, auditPath: [] } }];
  }

  async close(): Promise<void> {
    await Promise.all(this.hosts.map((h) => h.close()));
  }
}
