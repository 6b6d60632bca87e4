// Test fixtures: a 4-node pool with development keys (formats.md 2.3, 9.1), real state tries and ledgers from
// @quire/storage, and real BLS multi-signatures from @quire/crypto.
import { b58encode, b64encode, multiSignatureMessage, stringifyJson, type MultiSignature, type MultiSignatureValue } from '@quire/common';
import { Ed25519Signer, blsAggregateSignatures, blsKeyFromSeed } from '@quire/crypto';
import { Ledger, StateTrie, openMemoryKvStore } from '@quire/storage';
import { PoolLedger } from '../../src/index.js';
import { codeOf } from '@quire/testing';

export { codeOf };

export const NODE_NAMES = ['Node1', 'Node2', 'Node3', 'Node4'] as const;
export const STEWARDS = ['Th7MpTaRZVRYnPiabds81Y', 'EbP4aYNeTHL6q385GuVpRV', '4cU41vWW82ArfxJxHkzXPG', 'TWwCRQRZ2ZHMJFn9TzLp7W'];

export function nodeSeed(name: string): string {
  return name.padStart(32, '0');
}

export const blsKeys = NODE_NAMES.map((n) => blsKeyFromSeed(nodeSeed(n)));
export const nodeDests = NODE_NAMES.map((n) => Ed25519Signer.fromSeed(nodeSeed(n)).fullVerkey);

/** One pool genesis line per node; `ports` gives each node's client port, `nodePorts` its node port. */
export function poolGenesis(opts: { ports?: number[]; nodePorts?: number[]; count?: number; host?: string } = {}): string {
  const count = opts.count ?? 4;
  const lines: string[] = [];
  for (let i = 0; i < count; i++) {
    const sk = blsKeys[i]!;
    const txn = {
      reqSignature: {},
      txn: {
        data: {
          data: {
            alias: NODE_NAMES[i],
            blskey: b58encode(sk.publicKey),
            blskey_pop: b58encode(sk.proofOfPossession()),
            client_ip: opts.host ?? '127.0.0.1',
            client_port: opts.ports?.[i] ?? 9702 + 2 * i,
            node_ip: opts.host ?? '127.0.0.1',
            node_port: opts.nodePorts?.[i] ?? 9701 + 2 * i,
            services: ['VALIDATOR'],
          },
          dest: nodeDests[i],
        },
        metadata: { from: STEWARDS[i] },
        type: '0',
      },
      txnMetadata: { seqNo: i + 1 },
      ver: '1',
    };
    lines.push(stringifyJson(txn));
  }
  return lines.join('\n') + '\n';
}

export const poolLedger = PoolLedger.fromGenesis(poolGenesis());

export const POOL_STATE_ROOT = 'HNvueuQSgG8S19UR9YsVxNJBL4yd8c5MYsTyyi4QLwh1';
export const TXN_ROOT = 'C2t4zdcHiG3kekqEreK6vpvqwZDoKWRJcX3Q3ryPrPKa';

/** A real multi-signature by the given signers (indexes into NODE_NAMES) over `value`. */
export function multiSign(value: MultiSignatureValue, signers: number[] = [0, 1, 2]): MultiSignature {
  const msg = multiSignatureMessage(value);
  const sig = blsAggregateSignatures(signers.map((i) => blsKeys[i]!.sign(msg)));
  return { signature: b58encode(sig), participants: signers.map((i) => NODE_NAMES[i]!), value };
}

/** A state trie holding `entries`, committed; returns it with its root. */
export async function stateWith(entries: [Uint8Array | string, Uint8Array][], name: 'domain' | 'config' = 'domain'): Promise<StateTrie> {
  const kv = await openMemoryKvStore();
  const trie = await StateTrie.open({ name }, { kv });
  for (const [k, v] of entries) trie.set(k, v);
  await trie.commit();
  return trie;
}

/** The `state_proof` a node would attach for `key`, signed by `signers` at `timestamp`. */
export function stateProof(trie: StateTrie, key: Uint8Array | string, ledgerId: number, timestamp: number, signers?: number[]): Record<string, unknown> {
  const root = b58encode(trie.committedRoot);
  return {
    root_hash: root,
    proof_nodes: b64encode(trie.generateProof(key)),
    multi_signature: multiSign(
      { ledger_id: ledgerId, pool_state_root_hash: POOL_STATE_ROOT, state_root_hash: root, timestamp, txn_root_hash: TXN_ROOT },
      signers,
    ),
  };
}

export async function ledgerWith(txns: Record<string, unknown>[], ledgerId = 1): Promise<Ledger> {
  const kv = await openMemoryKvStore();
  const ledger = await Ledger.open({ ledgerId }, { kv });
  ledger.append(txns as never);
  await ledger.commit();
  return ledger;
}
