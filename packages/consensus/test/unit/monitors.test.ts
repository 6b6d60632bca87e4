// The view-change triggers of the monitor (consensus.md §5, §6.1): vote 43 when the state
// signatures are not refreshed, 61 when a request waits too long (M2), 25 when nothing gets
// ordered while requests wait (M1). Four cores over a small scripted network with one clock; the
// votes are read from the INSTANCE_CHANGE messages the cores broadcast.
import { expect } from 'chai';
import { b58encode } from '@quire/common';
import {
  ConsensusCore,
  type ConsensusCrypto,
  type ConsensusEffect,
  type ConsensusOptions,
  type NodeMessage,
  type ClientRequestBody,
  type RequestCheck,
  ConsensusError,
  ConsensusErrorCode,
  Suspicion,
  defaultConsensusOptions,
  resolveOptions,
} from '@quire/consensus';
import { SimClient, SimRequestAnalyzer, StandInExecutor, simBlsPublicKey } from '@quire/consensus/sim';

const BASE_UTC = 1_700_000_000;
const VALIDATORS = ['Node1', 'Node2', 'Node3', 'Node4'];
// BLS stand-ins shaped like the real thing (a 96-byte signature): multi-signatures in PRE-PREPAREs pass the parse checks
const FAKE_SIGNATURE = b58encode(new Uint8Array(96).fill(7));
const noCrypto: ConsensusCrypto = { blsSign: () => FAKE_SIGNATURE, blsVerifyShare: () => true, blsAggregate: () => FAKE_SIGNATURE, blsVerifyMulti: () => true };
const genesis = VALIDATORS.map((alias) => ({ alias, blskey: simBlsPublicKey(alias) }));
const INTERVAL_MS = defaultConsensusOptions.stateFreshnessUpdateIntervalSec * 1000;
const LINK_DELAY_MS = 2;

interface Vote {
  at: number;
  from: string;
  viewNo: number;
  reason: number;
}

interface PoolNode {
  name: string;
  analyzer: SimRequestAnalyzer;
  executor: StandInExecutor;
  core: ConsensusCore;
  /** bumped at every crash and restart: timers of an earlier core are ignored */
  epoch: number;
  alive: boolean;
}

/** a message on its way, for the filters */
interface Wire {
  from: string;
  to: string;
  msg: NodeMessage;
}

/** Four cores, one simulated clock, fixed link delay, and filters standing for a faulty primary. */
class ScriptedPool {
  now = 0;
  private seq = 0;
  private readonly events: { at: number; seq: number; fn: () => void }[] = [];
  readonly nodes: PoolNode[];
  readonly votes: Vote[] = [];
  /** ordered batches per node: [time, ledgerId, number of requests] */
  readonly ordered = new Map<string, [number, number, number][]>();
  /** messages for which it returns true are not delivered */
  drop: (w: Wire) => boolean = () => false;

  constructor(private readonly consensus: Partial<ConsensusOptions> = {}) {
    // one check cache for the four analyzers (a check is a pure function of the request): one
    // signature verification per request instead of four
    const checks = new Map<string, RequestCheck>();
    this.nodes = VALIDATORS.map((name) => {
      const analyzer = new SimRequestAnalyzer(checks);
      const node: PoolNode = {
        name,
        analyzer,
        executor: new StandInExecutor(analyzer, genesis),
        core: undefined as unknown as ConsensusCore,
        epoch: 0,
        alive: true,
      };
      node.core = this.createCore(node);
      return node;
    });
  }

  private createCore(node: PoolNode): ConsensusCore {
    const clock = { now: () => this.now, utcSeconds: () => BASE_UTC + Math.floor(this.now / 1000) };
    return new ConsensusCore(
      { name: node.name, validators: VALIDATORS, ...this.consensus },
      { executor: node.executor, crypto: noCrypto, requests: node.analyzer, clock },
    );
  }

  node(name: string): PoolNode {
    return this.nodes.find((n) => n.name === name)!;
  }

  start(): void {
    for (const n of this.nodes) this.apply(n, n.core.start());
  }

  /** The node stops: its timers are dropped, messages to it are lost. */
  crash(name: string): void {
    const n = this.node(name);
    n.epoch++;
    n.alive = false;
  }

  /** A new core over the node's ledgers (a restart: the audit ledger is all it knows). */
  restart(name: string): void {
    const n = this.node(name);
    n.epoch++;
    n.alive = true;
    n.core = this.createCore(n);
    this.apply(n, n.core.start());
  }

  schedule(at: number, fn: () => void): void {
    const e = { at: Math.max(at, this.now), seq: this.seq++, fn };
    let i = this.events.length;
    while (i > 0 && (this.events[i - 1]!.at > e.at || (this.events[i - 1]!.at === e.at && this.events[i - 1]!.seq > e.seq))) i--;
    this.events.splice(i, 0, e);
  }

  /** Runs every event up to `until` (simulated ms). */
  runUntil(until: number): void {
    while (this.events.length > 0 && this.events[0]!.at <= until) {
      const e = this.events.shift()!;
      this.now = e.at;
      e.fn();
    }
    this.now = until;
  }

  /** A client sends a request to every node. */
  submit(request: ClientRequestBody, connId = `c${this.seq}`): void {
    for (const n of this.nodes) {
      if (!n.alive) continue;
      if (this.drop({ from: 'client', to: n.name, msg: { op: 'PROPAGATE', request, senderClient: connId } })) continue;
      this.apply(n, n.core.handle({ kind: 'clientRequest', connId, request }));
    }
  }

  private deliver(from: PoolNode, to: string, msg: NodeMessage): void {
    if (this.drop({ from: from.name, to, msg })) return;
    const target = this.node(to);
    const epoch = target.epoch;
    this.schedule(this.now + LINK_DELAY_MS, () => {
      if (target.alive && target.epoch === epoch) this.apply(target, target.core.handle({ kind: 'nodeMessage', from: from.name, msg }));
    });
  }

  private apply(node: PoolNode, effects: ConsensusEffect[]): void {
    const epoch = node.epoch;
    for (const e of effects) {
      if (e.kind === 'broadcast') {
        if (e.msg.op === 'INSTANCE_CHANGE') this.votes.push({ at: this.now, from: node.name, viewNo: e.msg.viewNo, reason: e.msg.reason });
        for (const other of VALIDATORS) if (other !== node.name) this.deliver(node, other, e.msg);
      } else if (e.kind === 'send') {
        this.deliver(node, e.to, e.msg);
      } else if (e.kind === 'setTimer') {
        this.schedule(this.now + e.delayMs, () => {
          if (node.epoch === epoch) this.apply(node, node.core.handle({ kind: 'timer', id: e.id }));
        });
      } else if (e.kind === 'ordered') {
        const list = this.ordered.get(node.name) ?? [];
        list.push([this.now, e.ledgerId, e.replies.length]);
        this.ordered.set(node.name, list);
      }
    }
  }

  view(name: string): number {
    return this.node(name).core.status().viewNo;
  }

  /** Every other node loses its connection to `alias`. */
  disconnect(alias: string): void {
    for (const n of this.nodes) if (n.name !== alias) this.apply(n, n.core.handle({ kind: 'peerDisconnected', alias }));
  }

  /** `from` sends INSTANCE_CHANGE{viewNo, reason} to every other node at `at` (a vote the test puts on the wire) */
  injectVote(from: string, viewNo: number, reason: number, at: number): void {
    this.schedule(at, () => {
      this.votes.push({ at: this.now, from, viewNo, reason });
      for (const to of VALIDATORS) if (to !== from) this.deliver(this.node(from), to, { op: 'INSTANCE_CHANGE', viewNo, reason });
    });
  }

  /** the votes of the honest nodes for a view */
  votesFor(viewNo: number, honest: readonly string[]): Vote[] {
    return this.votes.filter((v) => v.viewNo === viewNo && honest.includes(v.from));
  }
}

const isRequest = (msg: NodeMessage, req: ClientRequestBody) =>
  msg.op === 'PROPAGATE' && msg.request.reqId === req.reqId && msg.request.identifier === req.identifier;
const BACKUPS = ['Node2', 'Node3', 'Node4'];
/** a primary that proposes nothing: no PRE-PREPARE, not even as an answer to a MESSAGE_REQUEST */
const proposesNothing = (w: Wire, primary = 'Node1') => w.from === primary && (w.msg.op === 'PREPREPARE' || w.msg.op === 'MESSAGE_RESPONSE');

describe('monitor: state signatures not updated (vote 43, consensus.md §5)', () => {
  it('has ACCEPTABLE_FRESHNESS_INTERVALS_COUNT = 2 by default and rejects counts and intervals that are not positive', () => {
    expect(resolveOptions({ name: 'A', validators: ['A'] }).acceptableFreshnessIntervalsCount).to.equal(2);
    expect(resolveOptions({ name: 'A', validators: ['A'], acceptableFreshnessIntervalsCount: 5 }).acceptableFreshnessIntervalsCount).to.equal(5);
    const bad = [
      { acceptableFreshnessIntervalsCount: 0 },
      { acceptableFreshnessIntervalsCount: 1.5 },
      { stateFreshnessUpdateIntervalSec: 0 },
      { stateFreshnessUpdateIntervalSec: Number.NaN },
    ];
    for (const o of bad) {
      try {
        resolveOptions({ name: 'A', validators: ['A'], ...o });
        expect.fail(`accepted ${JSON.stringify(o)}`);
      } catch (e) {
        expect(e, JSON.stringify(o)).to.be.instanceOf(ConsensusError);
        expect((e as ConsensusError).code).to.equal(ConsensusErrorCode.INVALID_OPTIONS);
      }
    }
  });

  it('a silent primary that orders nothing and sends no freshness batch is voted out with 43', () => {
    const pool = new ScriptedPool();
    pool.start();
    // the primary of view 0 refreshes the ledgers at start, then falls silent
    pool.runUntil(1_000);
    expect(pool.ordered.get('Node2')?.length ?? 0).to.be.greaterThan(0);
    pool.drop = (w) => proposesNothing(w);
    pool.runUntil(4 * INTERVAL_MS);
    const votes = pool.votesFor(1, BACKUPS);
    expect(votes.map((v) => v.reason)).to.have.members([43, 43, 43]);
    // not before ACCEPTABLE_FRESHNESS_INTERVALS_COUNT intervals of silence
    expect(Math.min(...votes.map((v) => v.at))).to.be.at.least(2 * INTERVAL_MS);
    for (const n of BACKUPS) expect(pool.view(n), n).to.equal(1);
    // the new primary refreshes the ledgers: no further vote
    expect(pool.votes.filter((v) => v.viewNo > 1)).to.deep.equal([]);
    const afterView = (pool.ordered.get('Node3') ?? []).filter(([t]) => t > votes[0]!.at);
    expect(new Set(afterView.map(([, lid]) => lid))).to.deep.equal(new Set([0, 1, 2]));
  });

  it('waits one interval after entering a view before judging it, however stale lastUpdate is', () => {
    const pool = new ScriptedPool();
    pool.start();
    pool.runUntil(1_000);
    // every primary is silent; in the middle of a freshness period the pool leaves view 0 for
    // another reason (its primary disconnects) and enters view 1 with lastUpdate 1.5 intervals old
    pool.drop = (w) => w.msg.op === 'PREPREPARE' || w.msg.op === 'MESSAGE_RESPONSE';
    pool.schedule(1.5 * INTERVAL_MS, () => pool.disconnect('Node1'));
    pool.runUntil(5 * INTERVAL_MS);
    const first = pool.votesFor(1, BACKUPS);
    expect(first.map((v) => v.reason)).to.have.members([26, 26, 26]);
    const enteredView1 = Math.max(...first.map((v) => v.at));
    // a check at the period boundary after the view change would find lastUpdate two intervals old
    const second = pool.votesFor(2, ['Node1', 'Node3', 'Node4']);
    expect(second.length).to.be.at.least(3);
    expect(second.every((v) => v.reason === Suspicion.STATE_SIGS_ARE_NOT_UPDATED)).to.equal(true);
    expect(Math.min(...second.map((v) => v.at)) - enteredView1).to.be.at.least(INTERVAL_MS);
    // so it goes on while every primary stays silent: one view per interval, each voted out with 43
    const views = Math.min(...VALIDATORS.map((n) => pool.view(n)));
    expect(views).to.be.at.least(3);
    for (let v = 3; v <= views; v++) {
      const prev = pool.votes.filter((x) => x.viewNo === v - 1);
      const next = pool.votes.filter((x) => x.viewNo === v);
      expect(
        next.every((x) => x.reason === Suspicion.STATE_SIGS_ARE_NOT_UPDATED),
        `view ${v}`,
      ).to.equal(true);
      expect(Math.min(...next.map((x) => x.at)) - Math.max(...prev.map((x) => x.at)), `view ${v}`).to.be.at.least(INTERVAL_MS);
    }
  });

  it('a node that is catching up does not vote 43', () => {
    const pool = new ScriptedPool();
    // Node2 alone: its catch-up at start gets no answer and never ends
    for (const n of ['Node1', 'Node3', 'Node4']) pool.crash(n);
    pool.restart('Node2');
    pool.runUntil(4 * INTERVAL_MS);
    expect(pool.node('Node2').core.status().catchingUp).to.equal(true);
    expect(pool.votes.filter((v) => v.reason === Suspicion.STATE_SIGS_ARE_NOT_UPDATED)).to.deep.equal([]);
  });

  it('an honest idle pool never votes 43 over several intervals', () => {
    const pool = new ScriptedPool();
    pool.start();
    const client = new SimClient(new Uint8Array(32).fill(7));
    pool.schedule(500, () => pool.submit(client.request('fresh-1')));
    pool.runUntil(6 * INTERVAL_MS + 1_000);
    expect(pool.votes).to.deep.equal([]);
    for (const n of VALIDATORS) expect(pool.view(n)).to.equal(0);
    // a freshness batch per ledger in every interval
    const batches = pool.ordered.get('Node4') ?? [];
    for (const lid of [0, 1, 2]) expect(batches.filter(([, l]) => l === lid).length, `ledger ${lid}`).to.be.at.least(6);
  });

  it('a primary saturated by writes on one ledger still refreshes the others, and nobody votes 43', () => {
    // offered load above the pool's capacity: every freed batch slot could go to the next full
    // domain batch, so freshness batches must go first. One batch of one request in flight and
    // 200 requests/s offered saturate the pool with a quarter of the requests (and CPU) that two
    // batches of two needed: the outcome is a function of the simulated clock alone, and the
    // test stays far below its timeout on a loaded machine
    const pool = new ScriptedPool({ stateFreshnessUpdateIntervalSec: 2, max3pcBatchSize: 1, max3pcBatchesInFlight: 1 });
    pool.start();
    const client = new SimClient(new Uint8Array(32).fill(9));
    let n = 0;
    for (let t = 100; t < 10_000; t += 20)
      pool.schedule(t, () => {
        for (let i = 0; i < 4; i++) pool.submit(client.request(`load-${n++}`));
      });
    pool.runUntil(10_000);
    const batches = pool.ordered.get('Node3') ?? [];
    // saturated: requests were still waiting when the load stopped
    const orderedRequests = batches.filter(([, l]) => l === 1).reduce((a, [, , r]) => a + r, 0);
    expect(orderedRequests).to.be.greaterThan(1_000);
    expect(orderedRequests).to.be.below(n);
    expect(pool.votes.filter((v) => v.reason === Suspicion.STATE_SIGS_ARE_NOT_UPDATED)).to.deep.equal([]);
    for (const v of VALIDATORS) expect(pool.view(v), v).to.equal(0);
    // the pool and config ledgers got a batch in every interval of the load
    for (const lid of [0, 2]) {
      const times = batches.filter(([, l]) => l === lid).map(([t]) => t);
      for (let from = 0; from + 2_000 <= 10_000; from += 2_000)
        expect(
          times.some((t) => t >= from && t < from + 2_500),
          `ledger ${lid} from ${from}`,
        ).to.equal(true);
    }
  });

  it('a shorter interval and a larger count are honoured (options)', () => {
    const pool = new ScriptedPool({ stateFreshnessUpdateIntervalSec: 5, acceptableFreshnessIntervalsCount: 3 });
    pool.start();
    pool.runUntil(500);
    pool.drop = (w) => proposesNothing(w);
    pool.runUntil(30_000);
    const votes = pool.votesFor(1, BACKUPS);
    expect(votes.map((v) => v.reason)).to.have.members([43, 43, 43]);
    const at = Math.min(...votes.map((v) => v.at));
    expect(at).to.be.at.least(15_000);
    expect(at).to.be.below(21_000);
  });

  it('a pool restarted long after its last batch does not vote 43 within the first interval', () => {
    const pool = new ScriptedPool();
    pool.start();
    pool.runUntil(1_000);
    // the whole pool is down for ten minutes (nothing in flight: every batch was ordered)
    for (const n of VALIDATORS) expect(pool.node(n).core.status().lastOrdered.ppSeqNo, n).to.equal(pool.node(n).core.status().lastPrePrepareSeqNo);
    for (const n of VALIDATORS) pool.crash(n);
    pool.runUntil(11 * INTERVAL_MS);
    const restartAt = pool.now;
    for (const n of VALIDATORS) pool.restart(n);
    pool.runUntil(restartAt + 4 * INTERVAL_MS);
    const votes43 = pool.votes.filter((v) => v.at >= restartAt && v.reason === Suspicion.STATE_SIGS_ARE_NOT_UPDATED);
    // the restored primary proposes nothing in its restored view; the freshness detector replaces it
    expect(votes43.length).to.be.at.least(3);
    expect(Math.min(...votes43.map((v) => v.at)) - restartAt).to.be.at.least(INTERVAL_MS);
    for (const n of VALIDATORS) expect(pool.view(n), n).to.be.at.least(1);
    const after = (pool.ordered.get('Node3') ?? []).filter(([t]) => t > restartAt);
    expect(new Set(after.map(([, lid]) => lid))).to.deep.equal(new Set([0, 1, 2]));
  });
});

describe('monitor: M2 votes 61, M1 votes 25 (consensus.md §6.1)', () => {
  it('a request withheld by a primary that orders the others leads to votes 61', () => {
    const pool = new ScriptedPool();
    pool.start();
    const client = new SimClient(new Uint8Array(32).fill(8));
    const censored = client.request('censored');
    // the primary ignores every copy of one request and keeps ordering the others
    pool.drop = (w) => w.to === 'Node1' && isRequest(w.msg, censored);
    pool.schedule(1_000, () => pool.submit(censored));
    for (let t = 500; t < 40_000; t += 500) pool.schedule(t, () => pool.submit(client.request(`other-${t}`)));
    pool.runUntil(40_000);
    const votes = pool.votesFor(1, BACKUPS);
    expect(votes.length).to.be.at.least(3);
    expect(
      votes.every((v) => v.reason === Suspicion.REQUEST_NOT_ORDERED),
      JSON.stringify(votes),
    ).to.equal(true);
    // REQUEST_ORDERING_TIMEOUT after it was finalised, while the other requests kept being ordered
    expect(Math.min(...votes.map((v) => v.at))).to.be.at.least(1_000 + defaultConsensusOptions.requestOrderingTimeoutMs);
    for (const n of BACKUPS) expect(pool.view(n), n).to.equal(1);
    expect(pool.node('Node3').executor.isPayloadCommitted(pool.node('Node3').analyzer.payloadDigestOf(censored))).to.equal(true);
  });

  it('a stall (nothing ordered while requests wait) leads to votes 25', () => {
    const pool = new ScriptedPool();
    pool.start();
    const client = new SimClient(new Uint8Array(32).fill(9));
    pool.schedule(500, () => pool.submit(client.request('before')));
    pool.runUntil(1_000);
    expect((pool.ordered.get('Node2') ?? []).some(([, , n]) => n > 0)).to.equal(true);
    // the primary stops proposing; a request arrives
    pool.drop = (w) => proposesNothing(w);
    const stalled = client.request('stalled');
    pool.schedule(2_000, () => pool.submit(stalled));
    pool.runUntil(15_000);
    const votes = pool.votesFor(1, BACKUPS);
    expect(votes.length).to.be.at.least(3);
    expect(
      votes.every((v) => v.reason === Suspicion.PRIMARY_DEGRADED),
      JSON.stringify(votes),
    ).to.equal(true);
    expect(Math.min(...votes.map((v) => v.at))).to.be.at.least(2_000 + defaultConsensusOptions.progressTimeoutMs);
    for (const n of BACKUPS) expect(pool.view(n), n).to.equal(1);
    expect(pool.node('Node3').executor.isPayloadCommitted(pool.node('Node3').analyzer.payloadDigestOf(stalled))).to.equal(true);
  });

  describe('Indy rule: a node whose own monitor reports adds its vote for a view a peer proposed, with its own code', () => {
    // the periodic monitor never runs here: a node can only vote by joining a peer's proposal
    const silentMonitor = { perfCheckFreqMs: 1e12 };

    it('M2 (a censored request) joins with 61, not before REQUEST_ORDERING_TIMEOUT', () => {
      const pool = new ScriptedPool(silentMonitor);
      pool.start();
      const client = new SimClient(new Uint8Array(32).fill(10));
      const censored = client.request('censored-2');
      pool.drop = (w) => w.to === 'Node1' && isRequest(w.msg, censored);
      pool.schedule(1_000, () => pool.submit(censored));
      for (let t = 500; t < 30_000; t += 500) pool.schedule(t, () => pool.submit(client.request(`o-${t}`)));
      pool.injectVote('Node1', 1, Suspicion.PRIMARY_DISCONNECTED, 15_000);
      pool.runUntil(20_000);
      expect(pool.votesFor(1, BACKUPS)).to.deep.equal([]);
      pool.injectVote('Node1', 1, Suspicion.PRIMARY_DISCONNECTED, 22_000);
      pool.runUntil(30_000);
      const votes = pool.votesFor(1, BACKUPS);
      expect(votes.map((v) => v.reason)).to.have.members([61, 61, 61]);
      for (const n of BACKUPS) expect(pool.view(n), n).to.equal(1);
    });

    it('M1 (a stall) joins with 25', () => {
      const pool = new ScriptedPool(silentMonitor);
      pool.start();
      const client = new SimClient(new Uint8Array(32).fill(11));
      pool.runUntil(1_000);
      pool.drop = (w) => proposesNothing(w);
      pool.schedule(1_500, () => pool.submit(client.request('stalled-2')));
      pool.injectVote('Node1', 1, Suspicion.PRIMARY_DISCONNECTED, 6_000);
      pool.runUntil(8_000);
      const votes = pool.votesFor(1, BACKUPS);
      expect(votes.map((v) => v.reason)).to.have.members([25, 25, 25]);
      for (const n of BACKUPS) expect(pool.view(n), n).to.equal(1);
    });

    it("a peer's vote 43 is not adopted by a node whose monitor reports nothing", () => {
      const pool = new ScriptedPool(silentMonitor);
      pool.start();
      pool.injectVote('Node2', 1, Suspicion.STATE_SIGS_ARE_NOT_UPDATED, 5_000);
      pool.runUntil(10_000);
      expect(pool.votes.filter((v) => v.from !== 'Node2')).to.deep.equal([]);
      for (const n of VALIDATORS) expect(pool.view(n), n).to.equal(0);
    });
  });
});
