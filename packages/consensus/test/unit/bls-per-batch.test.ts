// The BLS cost of an ordered batch (#16 item 5): a node verifies one aggregate per batch and ledger in the normal
// case, whether it builds its multi-signature first or receives the primary's copy of it in a PRE-PREPARE first
// (check 12), and verifies shares one by one only when an aggregate fails, to find the bad signer and order without it.
// The BLS stand-in below has what the core relies on: one valid signature per key and message (shares and aggregates
// are compared as bytes) and aggregation that is commutative.
import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { b58decode, b58encode } from '@quire/common';
import {
  type Commit,
  type ConsensusCrypto,
  type ConsensusEffect,
  type MultiSignature,
  type MultiSignatureValue,
  type NodeMessage,
  Suspicion,
} from '@quire/consensus';
import { Pool, VALIDATORS } from './scripted-pool.js';

const valueKey = (v: MultiSignatureValue): string => `${v.ledger_id}|${v.pool_state_root_hash}|${v.state_root_hash}|${v.timestamp}|${v.txn_root_hash}`;

/** the one valid share of `alias` over `value`: 96 bytes */
function share(alias: string, value: MultiSignatureValue): Uint8Array {
  const h = createHash('sha256')
    .update(`${alias}|${valueKey(value)}`)
    .digest();
  return Uint8Array.from({ length: 96 }, (_, i) => h[i % 32]!);
}

function xor(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(96);
  for (const p of parts) for (let i = 0; i < 96; i++) out[i]! ^= p[i]!;
  return out;
}

interface Counts {
  verifyMulti: number;
  verifyShare: number;
}

/** Node `name`'s stand-in BLS, counting its verifications. */
function countingCrypto(name: string, counts: Map<string, Counts>): ConsensusCrypto {
  const c: Counts = { verifyMulti: 0, verifyShare: 0 };
  counts.set(name, c);
  return {
    blsSign: (value) => b58encode(share(name, value)),
    blsVerifyShare: (alias, value, s) => {
      c.verifyShare++;
      return s === b58encode(share(alias, value));
    },
    blsAggregate: (shares) => b58encode(xor(shares.map((s) => b58decode(s)))),
    blsVerifyMulti: (participants, value, signature) => {
      c.verifyMulti++;
      return signature === b58encode(xor(participants.map((p) => share(p, value))));
    },
  };
}

/** A pool with counting BLS; every node's ordered multi-signatures and suspicions are recorded. */
function countingPool(): { pool: Pool; counts: Map<string, Counts>; ordered: Map<string, MultiSignature[][]> } {
  const counts = new Map<string, Counts>();
  const pool = new Pool({ stateFreshnessUpdateIntervalSec: 3600 }, (name) => countingCrypto(name, counts));
  const ordered = new Map<string, MultiSignature[][]>(VALIDATORS.map((n) => [n, []]));
  const apply = pool.apply.bind(pool);
  pool.apply = (from: string, effects: ConsensusEffect[]): void => {
    for (const e of effects) if (e.kind === 'ordered' && e.multiSigs.length > 0) ordered.get(from)!.push(e.multiSigs);
    apply(from, effects);
  };
  // links of different speeds, so that nodes aggregate different sets of COMMITs (and the primary's copy in the next
  // PRE-PREPARE differs from a backup's own), and a PRE-PREPARE sometimes overtakes the COMMITs of the batch before
  let n = 0;
  pool.delay = (from: string, to: string, msg: NodeMessage) => (msg.op === 'PREPREPARE' ? 2 : 3 + ((n++ * 7 + from.length + to.charCodeAt(4)) % 23));
  return { pool, counts, ordered };
}

/** The crypto of the stand-in: a multi-signature is valid when it is the XOR of its participants' valid shares. */
const valid = (ms: MultiSignature): boolean => ms.signature === b58encode(xor(ms.participants.map((p) => share(p, ms.value))));

describe('BLS verifications per ordered batch', () => {
  it('one aggregate verification per batch and ledger on every node, no share verified on its own', () => {
    const { pool, counts, ordered } = countingPool();
    pool.start();
    for (let i = 0; i < 40; i++) pool.submitAt(1_000 + i * 150, 1 + (i % 3));
    pool.runUntil(20_000);
    for (const node of VALIDATORS) {
      const batches = ordered.get(node)!;
      const values = batches.reduce((a, m) => a + m.length, 0);
      expect(batches.length, node).to.be.greaterThan(15);
      expect(batches.flat().every(valid), `${node}: every multi-signature it built is valid`).to.equal(true);
      expect(counts.get(node), `${node}: ${batches.length} batches`).to.deep.equal({ verifyMulti: values, verifyShare: 0 });
    }
    const ordered1 = ordered.get('Node1')!.length;
    for (const node of VALIDATORS) expect(ordered.get(node)!.length).to.equal(ordered1);
  });

  it('a bad share: the aggregate fails, the shares are verified one by one, the bad signer is left out and suspected', () => {
    const { pool, counts, ordered } = countingPool();
    // Node4's COMMITs carry a share that is not its signature (sent, or sent again on request)
    const forged = (c: Commit): Commit => ({
      ...c,
      blsSigs: Object.fromEntries(Object.keys(c.blsSigs).map((l) => [l, b58encode(new Uint8Array(96).fill(9))])),
    });
    pool.rewrite = (from, _to, msg) => {
      if (from !== 'Node4') return msg;
      if (msg.op === 'COMMIT') return forged(msg);
      if (msg.op === 'MESSAGE_RESPONSE' && msg.msg?.op === 'COMMIT') return { ...msg, msg: forged(msg.msg) };
      return msg;
    };
    pool.start();
    for (let i = 0; i < 10; i++) pool.submitAt(1_000 + i * 300);
    pool.runUntil(15_000);
    for (const node of ['Node1', 'Node2', 'Node3']) {
      const multiSigs = ordered.get(node)!.flat();
      expect(multiSigs.length, node).to.be.greaterThan(5);
      expect(multiSigs.every(valid), node).to.equal(true);
      expect(
        multiSigs.some((ms) => ms.participants.includes('Node4')),
        `${node} never signs with Node4's share`,
      ).to.equal(false);
      expect(counts.get(node)!.verifyShare, `${node} looked for the bad share`).to.be.greaterThan(0);
      expect(pool.suspicions.some((s) => s.by === node && s.peer === 'Node4' && s.code === Suspicion.CM_BLS_SIG_WRONG)).to.equal(true);
    }
  });
});
