// PRE-PREPARE check 12 (multi-signatures carried by a PRE-PREPARE) on one backup core: only
// verified multi-signatures are ever stored (#15 F2), participants must be validators of the
// registry at the value's pool state root (#15 F10), and a multi-signature the BLS store would
// refuse is refused before this node PREPAREs (#15 F3).
import { expect } from 'chai';
import { b58encode } from '@quire/common';
import { ConsensusCore, type ConsensusCrypto, type ConsensusEffect, type MultiSigTuple, Suspicion, batchDigest } from '@quire/consensus';
import { SimRequestAnalyzer, StandInExecutor, simBlsPublicKey } from '@quire/consensus/sim';

const VALIDATORS = ['Node1', 'Node2', 'Node3', 'Node4'];
const genesis = VALIDATORS.map((alias) => ({ alias, blskey: simBlsPublicKey(alias) }));
const PP_TIME = 1_700_000_000;
/** a well-formed (96-byte) signature that verifies under nobody's keys */
const FORGED = b58encode(new Uint8Array(96).fill(7));
/** a pool state root this node does not hold (older than its pool genesis) */
const OLD_POOL_ROOT = b58encode(new Uint8Array(32).fill(3));

/** A stand-in executor that, like the node's, knows which pool state roots its pool state holds. */
class RootAwareExecutor extends StandInExecutor {
  override hasPoolStateRoot(root: string): boolean {
    return root !== OLD_POOL_ROOT;
  }
}

/** Every aggregate verifies except the forged signature; shares always verify. */
const crypto: ConsensusCrypto = {
  blsSign: () => b58encode(new Uint8Array(96).fill(1)),
  blsVerifyShare: () => true,
  blsAggregate: () => b58encode(new Uint8Array(96).fill(2)),
  blsVerifyMulti: (_parts, _value, signature) => signature !== FORGED,
};

function setup() {
  const analyzer = new SimRequestAnalyzer();
  const executor = new RootAwareExecutor(analyzer, genesis);
  const clock = { t: 0, now: () => clock.t, utcSeconds: () => PP_TIME };
  const core = new ConsensusCore({ name: 'Node2', validators: VALIDATORS }, { executor, crypto, requests: analyzer, clock });
  return { core, executor };
}

/** The primary's empty PRE-PREPARE 1 (roots computed on a twin executor), carrying `blsMultiSigs`. */
function prePrepare(blsMultiSigs: unknown[]): Record<string, unknown> {
  const twin = new StandInExecutor(new SimRequestAnalyzer(), genesis);
  const poolStateRootHash = twin.uncommittedPoolStateRoot();
  const digest = batchDigest(0, PP_TIME, [], 1);
  const a = twin.applyBatch({ ledgerId: 1, requests: [], digests: [], ppTime: PP_TIME, ppSeqNo: 1, originalViewNo: 0, primaries: ['Node1'], digest });
  return {
    op: 'PREPREPARE',
    instId: 0,
    viewNo: 0,
    ppSeqNo: 1,
    ppTime: PP_TIME,
    reqIdr: [],
    discarded: '[]',
    digest,
    ledgerId: 1,
    stateRootHash: a.stateRoot,
    txnRootHash: a.txnRoot,
    sub_seq_no: 0,
    final: true,
    poolStateRootHash,
    auditTxnRootHash: a.auditRoot,
    blsMultiSigs,
  };
}

function tuple(signature: string, participants: string[], poolRoot: string, stateRoot: string): MultiSigTuple {
  return [signature, participants, [1, stateRoot, poolRoot, b58encode(new Uint8Array(32).fill(9)), PP_TIME - 5]];
}

const sent = (effects: ConsensusEffect[], op: string) =>
  effects.flatMap((e) => ((e.kind === 'broadcast' || e.kind === 'send') && e.msg.op === op ? [e.msg] : []));
const suspicions = (effects: ConsensusEffect[]) => effects.flatMap((e) => (e.kind === 'suspicion' ? [e.code] : []));

/** Feeds the PRE-PREPARE, then PREPAREs and COMMITs of Node3 and Node4 until batch 1 is ordered. */
function orderWith(blsMultiSigs: unknown[]) {
  const s = setup();
  const pp = prePrepare(blsMultiSigs);
  const onPP = s.core.handle({ kind: 'nodeMessage', from: 'Node1', msg: pp });
  const prepares = sent(onPP, 'PREPARE');
  const all: ConsensusEffect[] = [...onPP];
  if (prepares.length === 1) {
    for (const from of ['Node3', 'Node4']) all.push(...s.core.handle({ kind: 'nodeMessage', from, msg: structuredClone(prepares[0]) }));
    const own = sent(all, 'COMMIT')[0] as { blsSigs: Record<string, string> } | undefined;
    expect(own, 'own COMMIT').to.not.equal(undefined);
    for (const from of ['Node3', 'Node4'])
      all.push(...s.core.handle({ kind: 'nodeMessage', from, msg: { op: 'COMMIT', instId: 0, viewNo: 0, ppSeqNo: 1, blsSigs: own!.blsSigs } }));
  }
  return { ...s, effects: all, prepared: prepares.length === 1, ordered: all.some((e) => e.kind === 'ordered') };
}

describe('PRE-PREPARE multi-signatures (check 12)', () => {
  it('stores a multi-signature of the PRE-PREPARE that verifies', () => {
    const stateRoot = b58encode(new Uint8Array(32).fill(4));
    const poolRoot = setup().executor.uncommittedPoolStateRoot();
    const good = tuple(b58encode(new Uint8Array(96).fill(5)), ['Node1', 'Node3', 'Node4'], poolRoot, stateRoot);
    const r = orderWith([good]);
    expect(r.ordered).to.equal(true);
    expect(r.executor.storedMultiSigs.map((m) => m.value.state_root_hash)).to.include(stateRoot);
  });

  it('never stores one at a pool state root this node does not hold, even over the genuine one of its state root (F2)', () => {
    const s0 = setup();
    const stateRoot = b58encode(new Uint8Array(32).fill(6));
    // the genuine multi-signature of that state root, at a known pool state root
    const genuine = tuple(b58encode(new Uint8Array(96).fill(5)), ['Node1', 'Node3', 'Node4'], s0.executor.uncommittedPoolStateRoot(), stateRoot);
    const forged = tuple(FORGED, ['Node1', 'Node3', 'Node4'], OLD_POOL_ROOT, stateRoot);
    const r = orderWith([genuine, forged]);
    // the PRE-PREPARE itself is good: the batch is ordered
    expect(r.prepared).to.equal(true);
    expect(r.ordered).to.equal(true);
    expect(suspicions(r.effects)).to.not.include(Suspicion.PPR_BLS_MULTISIG_WRONG);
    const stored = r.executor.storedMultiSigs.filter((m) => m.value.state_root_hash === stateRoot);
    expect(stored.map((m) => m.signature)).to.not.include(FORGED);
    expect(r.executor.blsStore.get(stateRoot)?.signature).to.not.equal(FORGED);
    expect(r.executor.blsStore.get(stateRoot)?.signature).to.equal(genuine[0]);
  });

  it('refuses one whose participants are not all validators at its pool state root (F10)', () => {
    const s0 = setup();
    const poolRoot = s0.executor.uncommittedPoolStateRoot();
    const stateRoot = b58encode(new Uint8Array(32).fill(4));
    // the aggregate "verifies" (e.g. a demoted node's key is still in pool state), but Node9 is no validator
    for (const parts of [
      ['Node1', 'Node3', 'Node9'],
      ['Node1', 'Node3', 'Node3'],
      ['Node1', 'Node3'],
    ]) {
      const r = orderWith([tuple(b58encode(new Uint8Array(96).fill(5)), parts, poolRoot, stateRoot)]);
      expect(r.prepared, parts.join(',')).to.equal(false);
      expect(suspicions(r.effects), parts.join(',')).to.include(Suspicion.PPR_BLS_MULTISIG_WRONG);
      expect(r.executor.storedMultiSigs).to.deep.equal([]);
    }
  });

  it('refuses one whose aggregate does not verify at a known pool state root', () => {
    const poolRoot = setup().executor.uncommittedPoolStateRoot();
    const r = orderWith([tuple(FORGED, ['Node1', 'Node3', 'Node4'], poolRoot, b58encode(new Uint8Array(32).fill(4)))]);
    expect(r.prepared).to.equal(false);
    expect(suspicions(r.effects)).to.include(Suspicion.PPR_BLS_MULTISIG_WRONG);
  });

  it('refuses, before PREPARE, one that the BLS store would refuse: 1-character signature, 31-byte root (F3)', () => {
    const poolRoot = setup().executor.uncommittedPoolStateRoot();
    for (const bad of [
      tuple('3', ['Node1', 'Node3', 'Node4'], poolRoot, b58encode(new Uint8Array(32).fill(4))),
      tuple(b58encode(new Uint8Array(96).fill(5)), ['Node1', 'Node3', 'Node4'], poolRoot, b58encode(new Uint8Array(31).fill(4))),
    ]) {
      const r = orderWith([bad]);
      expect(r.prepared).to.equal(false);
      expect(r.ordered).to.equal(false);
      expect(r.executor.storedMultiSigs).to.deep.equal([]);
    }
  });
});
