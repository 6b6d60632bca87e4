// The 3PC vote journal (#15 F8): a node's PRE-PREPARE / PREPARE / COMMIT votes above its stable
// checkpoint are saved before they leave, and a restarted node neither votes for another digest at
// a (view, ppSeqNo) it voted for nor forgets, in its VIEW_CHANGE, what it prepared.
import { expect } from 'chai';
import { ConsensusCore, type ConsensusEffect, Suspicion, batchDigest, type ThreePcVoteJournal } from '@quire/consensus';
import { SimRequestAnalyzer, Simulation, StandInExecutor, replayCommand, simBlsPublicKey, type SimNode } from '@quire/consensus/sim';

const validators = ['Node1', 'Node2', 'Node3', 'Node4'];
const genesis = validators.map((alias) => ({ alias, blskey: simBlsPublicKey(alias) }));
const UTC = 1_700_000_000;

/** Node2 with empty ledgers and `journal` in its store, its initial catch-up done. */
function restartedBackup(journal: ThreePcVoteJournal | undefined): { core: ConsensusCore; saved: ThreePcVoteJournal[] } {
  const analyzer = new SimRequestAnalyzer();
  const executor = new StandInExecutor(analyzer, genesis);
  const clock = { now: () => 0, utcSeconds: () => UTC };
  const crypto = { blsSign: () => 'sig', blsVerifyShare: () => true, blsAggregate: () => 'agg', blsVerifyMulti: () => true };
  const saved: ThreePcVoteJournal[] = [];
  const threePcStore = { load: () => journal, save: (j: ThreePcVoteJournal) => void saved.push(j) };
  const core = new ConsensusCore({ name: 'Node2', validators }, { executor, crypto, requests: analyzer, clock, threePcStore });
  core.start();
  for (const lid of [0, 3]) {
    const own = {
      op: 'LEDGER_STATUS',
      ledgerId: lid,
      txnSeqNo: executor.ledgerStatus(lid).size,
      viewNo: 0,
      ppSeqNo: 0,
      merkleRoot: executor.ledgerStatus(lid).root,
      protocolVersion: 2,
    };
    for (const from of ['Node3', 'Node4']) core.handle({ kind: 'nodeMessage', from, msg: own });
  }
  expect(core.status().catchingUp).to.equal(false);
  return { core, saved };
}

const ROOT = '11111111111111111111111111111111';
function prePrepare(ppSeqNo: number, ppTime: number): Record<string, unknown> {
  return {
    op: 'PREPREPARE',
    instId: 0,
    viewNo: 0,
    ppSeqNo,
    ppTime,
    reqIdr: [],
    discarded: '[]',
    digest: batchDigest(0, ppTime, [], 1),
    ledgerId: 1,
    stateRootHash: ROOT,
    txnRootHash: ROOT,
    sub_seq_no: 0,
    final: true,
    poolStateRootHash: ROOT,
    auditTxnRootHash: ROOT,
  };
}

const sent = (effects: ConsensusEffect[], op: string) => effects.filter((e) => (e.kind === 'broadcast' || e.kind === 'send') && e.msg.op === op);
const suspicions = (effects: ConsensusEffect[]) => effects.filter((e): e is Extract<ConsensusEffect, { kind: 'suspicion' }> => e.kind === 'suspicion');

describe('3PC vote journal (#15 F8)', () => {
  const other = 'a'.repeat(64);
  const journal: ThreePcVoteJournal = {
    preprepared: [{ view_no: 0, pp_view_no: 0, pp_seq_no: 1, pp_digest: other }],
    prepared: [{ view_no: 0, pp_view_no: 0, pp_seq_no: 1, pp_digest: other }],
  };

  it('a restarted backup refuses a PRE-PREPARE with another digest at a (view, ppSeqNo) it voted for: vote 60, no PREPARE', () => {
    const { core } = restartedBackup(journal);
    const effects = core.handle({ kind: 'nodeMessage', from: 'Node1', msg: prePrepare(1, UTC) });
    expect(sent(effects, 'PREPARE')).to.have.length(0);
    expect(suspicions(effects).map((s) => [s.peer, s.code, s.vote])).to.deep.include(['Node1', Suspicion.PPR_EQUIVOCATION, true]);
  });

  it('without the journal (control) the same PRE-PREPARE is taken as new: no equivocation is seen', () => {
    const { core } = restartedBackup(undefined);
    const effects = core.handle({ kind: 'nodeMessage', from: 'Node1', msg: prePrepare(1, UTC) });
    expect(suspicions(effects).map((s) => s.code)).to.not.include(Suspicion.PPR_EQUIVOCATION);
  });

  it('its VIEW_CHANGE still lists the batch it prepared before the restart', () => {
    const { core } = restartedBackup(journal);
    // two validators moved to view 1 (f+1 join rule): this node starts its view change
    const vc = {
      op: 'VIEW_CHANGE',
      viewNo: 1,
      stableCheckpoint: 0,
      prepared: [],
      preprepared: [],
      checkpoints: [{ op: 'CHECKPOINT', instId: 0, viewNo: 0, seqNoStart: 0, seqNoEnd: 0, digest: null }],
    };
    const effects = [...core.handle({ kind: 'nodeMessage', from: 'Node3', msg: vc }), ...core.handle({ kind: 'nodeMessage', from: 'Node4', msg: vc })];
    const own = sent(effects, 'VIEW_CHANGE').map((e) => (e as { msg: { prepared: unknown[]; preprepared: unknown[] } }).msg);
    expect(own).to.have.length.at.least(1);
    expect(own[0]!.prepared).to.deep.equal(journal.prepared);
    expect(own[0]!.preprepared).to.deep.equal(journal.preprepared);
  });

  it('in a pool, every PREPARE and COMMIT a node sends is in its journal by the time it is delivered', () => {
    const sim = new Simulation({ seed: 4, nodes: 4, faults: 'crash', requests: 60 });
    const s = sim as unknown as { network: { ctx: { deliver(target: SimNode, from: string, msg: unknown): void } } };
    const deliver = s.network.ctx.deliver;
    const missing: string[] = [];
    let checked = 0;
    s.network.ctx.deliver = (target, from, msg) => {
      const m = msg as { op?: string; viewNo: number; ppSeqNo: number; digest?: string };
      if (m.op === 'PREPARE' || m.op === 'COMMIT') {
        const node = sim.nodes.find((n) => n.name === from && n.alive)!;
        const list = m.op === 'PREPARE' ? node.threePc?.preprepared : node.threePc?.prepared;
        const ok = (list ?? []).some((b) => b.view_no === m.viewNo && b.pp_seq_no === m.ppSeqNo && (m.digest === undefined || b.pp_digest === m.digest));
        // below the sender's stable checkpoint the journal has been collected (the batch is committed there)
        if (!ok && m.ppSeqNo > node.core.status().stableCheckpoint && m.ppSeqNo > node.core.status().lastOrdered.ppSeqNo)
          missing.push(`${from} ${m.op} ${m.viewNo}:${m.ppSeqNo}`);
        checked++;
      }
      deliver(target, from, msg);
    };
    const r = sim.run();
    expect(r.violations, replayCommand(r)).to.deep.equal([]);
    expect(checked).to.be.greaterThan(100);
    expect(missing).to.deep.equal([]);
  });
  it('is saved when an event changes its votes, and not after an event that changes none', () => {
    const { core, saved } = restartedBackup(undefined);
    const before = saved.length;
    // the empty batch 1 with the roots a fresh executor computes for it (those of the primary)
    const primary = new StandInExecutor(new SimRequestAnalyzer(), genesis);
    const pp = prePrepare(1, UTC);
    const poolStateRootHash = primary.uncommittedPoolStateRoot();
    const digest = pp.digest as string;
    const applied = primary.applyBatch({ ledgerId: 1, requests: [], digests: [], ppTime: UTC, ppSeqNo: 1, originalViewNo: 0, primaries: ['Node1'], digest });
    Object.assign(pp, { stateRootHash: applied.stateRoot, txnRootHash: applied.txnRoot, auditTxnRootHash: applied.auditRoot, poolStateRootHash });
    const effects = core.handle({ kind: 'nodeMessage', from: 'Node1', msg: pp });
    expect(sent(effects, 'PREPARE')).to.have.length(1);
    expect(saved.length).to.equal(before + 1);
    expect(saved.at(-1)?.preprepared.map((b) => b.pp_seq_no)).to.deep.equal([1]);
    // the same PRE-PREPARE again, and a LEDGER_STATUS: no vote changes, no save
    core.handle({ kind: 'nodeMessage', from: 'Node1', msg: pp });
    const status = { op: 'LEDGER_STATUS', ledgerId: 1, txnSeqNo: 0, viewNo: 0, ppSeqNo: 0, merkleRoot: ROOT, protocolVersion: 2 };
    core.handle({ kind: 'nodeMessage', from: 'Node3', msg: status });
    expect(saved.length).to.equal(before + 1);
  });
});
