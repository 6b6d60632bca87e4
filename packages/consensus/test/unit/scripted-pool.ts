// A scripted pool for unit tests of the primary's batching and of admission control: four cores
// over a network with one simulated clock and a link delay per message, recording the primary's
// PRE-PREPAREs, the answers to clients and the ordered requests.
import {
  ConsensusCore,
  type ConsensusCrypto,
  type ConsensusEffect,
  type ConsensusEvent,
  type ConsensusOptions,
  type NodeMessage,
  type ClientRequestBody,
  type RequestCheck,
} from '@quire/consensus';
import { SimClient, SimRequestAnalyzer, StandInExecutor, simBlsPublicKey } from '@quire/consensus/sim';
import { b58encode } from '@quire/common';

const BASE_UTC = 1_700_000_000;
export const VALIDATORS = ['Node1', 'Node2', 'Node3', 'Node4'];
// BLS stand-ins shaped like the real thing (a 96-byte signature): multi-signatures pass the parse checks
const FAKE_SIGNATURE = b58encode(new Uint8Array(96).fill(7));
const noCrypto: ConsensusCrypto = { blsSign: () => FAKE_SIGNATURE, blsVerifyShare: () => true, blsAggregate: () => FAKE_SIGNATURE, blsVerifyMulti: () => true };
const genesis = VALIDATORS.map((alias) => ({ alias, blskey: simBlsPublicKey(alias) }));

export interface Sent {
  at: number;
  ppSeqNo: number;
  ledgerId: number;
  size: number;
}

/** Four cores, one clock, a link delay per message (`delay`, may depend on the message). */
export class Pool {
  now = 0;
  private seq = 0;
  private readonly events: { at: number; seq: number; fn: () => void }[] = [];
  readonly cores = new Map<string, ConsensusCore>();
  /** PRE-PREPAREs broadcast by Node1 (the primary of view 0) */
  readonly prePrepares: Sent[] = [];
  /** time each request (by reqId) was ordered on Node2 */
  readonly orderedAt = new Map<number, number>();
  delay: (from: string, to: string, msg: NodeMessage) => number = () => 5;
  /** messages for which it returns true are lost */
  drop: (from: string, to: string, msg: NodeMessage) => boolean = () => false;
  /** what `to` receives instead of `msg` (a Byzantine sender's rewrite) */
  rewrite: (from: string, to: string, msg: NodeMessage) => NodeMessage = (_from, _to, msg) => msg;
  /** suspicions raised, in order */
  readonly suspicions: { at: number; by: string; peer: string; code: number }[] = [];
  /** client answers: `${node}:${reqId}` -> 'ack' | 'nack' (first answer) */
  readonly answers = new Map<string, 'ack' | 'nack'>();
  /** reqIds ordered by each node */
  readonly orderedBy = new Map<string, Set<number>>();
  /** what each node told its clients and when: acknowledgements, refusals, answers from the ledger, ordered batches */
  readonly clientEffects: { at: number; node: string; effect: ConsensusEffect }[] = [];
  readonly client = new SimClient(new Uint8Array(32).fill(7));
  /** nodes stopped by `crash` (they receive nothing until `restart`) */
  readonly down = new Set<string>();
  /** each node's executor (its committed state survives `crash`) and how its core is made (`restart`) */
  private readonly replicas = new Map<string, { executor: StandInExecutor; makeCore: () => ConsensusCore }>();
  /** each node's saved refusal mark (intake.ts), kept across `restart` as its stores are */
  readonly refusalMarks = new Map<string, number>();

  /** `crypto`: each node's BLS operations (default: stand-ins under which everything verifies) */
  constructor(consensus: Partial<ConsensusOptions>, crypto: (name: string) => ConsensusCrypto = () => noCrypto) {
    const checks = new Map<string, RequestCheck>();
    for (const name of VALIDATORS) {
      const analyzer = new SimRequestAnalyzer(checks);
      const clock = { now: () => this.now, utcSeconds: () => BASE_UTC + Math.floor(this.now / 1000) };
      const executor = new StandInExecutor(analyzer, genesis);
      const makeCore = (): ConsensusCore =>
        new ConsensusCore(
          { name, validators: VALIDATORS, ...consensus },
          {
            executor,
            crypto: crypto(name),
            requests: analyzer,
            clock,
            refusalMark: { load: () => this.refusalMarks.get(name), save: (until) => this.refusalMarks.set(name, until) },
          },
        );
      this.replicas.set(name, { executor, makeCore });
      this.cores.set(name, makeCore());
    }
  }

  private replica(name: string): { executor: StandInExecutor; makeCore: () => ConsensusCore } {
    const r = this.replicas.get(name);
    if (r === undefined) throw new Error(`no node ${name}`);
    return r;
  }

  /** `name` stops now: what it did not commit is lost, and it receives nothing until `restart`. */
  crash(name: string): void {
    this.down.add(name);
    this.replica(name).executor.dropUncommitted();
  }

  /** `name` starts again from its committed state, with a new core (everything it held only in memory is gone). */
  restart(name: string): void {
    this.down.delete(name);
    const core = this.replica(name).makeCore();
    this.cores.set(name, core);
    this.apply(name, core.start());
  }

  start(): void {
    for (const [name, core] of this.cores) this.apply(name, core.start());
  }

  schedule(at: number, fn: () => void): void {
    const e = { at: Math.max(at, this.now), seq: this.seq++, fn };
    let i = this.events.length;
    while (i > 0 && (this.events[i - 1]!.at > e.at || (this.events[i - 1]!.at === e.at && this.events[i - 1]!.seq > e.seq))) i--;
    this.events.splice(i, 0, e);
  }

  runUntil(until: number): void {
    while (this.events.length > 0 && this.events[0]!.at <= until) {
      const e = this.events.shift()!;
      this.now = e.at;
      e.fn();
    }
    this.now = until;
  }

  /** A client sends `count` writes to every node at `at`. */
  submitAt(at: number, count = 1, to: readonly string[] = VALIDATORS): ClientRequestBody[] {
    const reqs = Array.from({ length: count }, (_, i) => this.client.request(`dest${at}x${i}xxxxxxxxxxxxxxxxxxxx`));
    this.schedule(at, () => {
      for (const r of reqs) this.send(r, to);
    });
    return reqs;
  }

  /** `node` handles `event` (a connection event, a timer) at `at`. */
  eventAt(at: number, node: string, event: ConsensusEvent): void {
    this.schedule(at, () => this.apply(node, this.cores.get(node)!.handle(event)));
  }

  /** The client sends `request` (again) to the nodes `to` at `at`, on its connection `c<reqId>`. */
  sendAt(at: number, request: ClientRequestBody, to: readonly string[]): void {
    this.schedule(at, () => this.send(request, to));
  }

  private send(request: ClientRequestBody, to: readonly string[]): void {
    for (const name of to)
      if (!this.down.has(name)) this.apply(name, this.cores.get(name)!.handle({ kind: 'clientRequest', connId: `c${String(request.reqId)}`, request }));
  }

  /** Carries out `effects` of node `from` (messages, timers) and records what they say. */
  apply(from: string, effects: ConsensusEffect[]): void {
    if (this.down.has(from)) return;
    for (const e of effects) {
      if (e.kind === 'clientAck' || e.kind === 'clientNack' || e.kind === 'replyFromLedger' || e.kind === 'ordered')
        this.clientEffects.push({ at: this.now, node: from, effect: e });
      if (e.kind === 'broadcast') {
        if (e.msg.op === 'PREPREPARE' && from === 'Node1')
          this.prePrepares.push({ at: this.now, ppSeqNo: e.msg.ppSeqNo, ledgerId: e.msg.ledgerId, size: e.msg.reqIdr.length });
        for (const to of VALIDATORS) if (to !== from) this.deliver(from, to, e.msg);
      } else if (e.kind === 'send') {
        this.deliver(from, e.to, e.msg);
      } else if (e.kind === 'setTimer') {
        // a timer of a core that crashed meanwhile is gone with it
        const core = this.cores.get(from)!;
        this.schedule(this.now + e.delayMs, () => {
          if (this.cores.get(from) === core && !this.down.has(from)) this.apply(from, core.handle({ kind: 'timer', id: e.id }));
        });
      } else if (e.kind === 'ordered') {
        const set = this.orderedBy.get(from) ?? new Set<number>();
        this.orderedBy.set(from, set);
        for (const r of e.replies)
          for (const c of r.connIds) {
            set.add(Number(c.slice(1)));
            if (from === 'Node2') this.orderedAt.set(Number(c.slice(1)), this.now);
          }
      } else if (e.kind === 'suspicion') {
        this.suspicions.push({ at: this.now, by: from, peer: e.peer, code: e.code });
      } else if (e.kind === 'clientAck' || e.kind === 'clientNack') {
        const key = `${from}:${String(e.reqId)}`;
        if (!this.answers.has(key)) this.answers.set(key, e.kind === 'clientAck' ? 'ack' : 'nack');
      }
    }
  }

  private deliver(from: string, to: string, msg: NodeMessage): void {
    if (this.drop(from, to, msg)) return;
    const received = this.rewrite(from, to, msg);
    this.schedule(this.now + this.delay(from, to, msg), () => {
      if (!this.down.has(to)) this.apply(to, this.cores.get(to)!.handle({ kind: 'nodeMessage', from, msg: received }));
    });
  }

  /** PRE-PREPAREs of the domain ledger carrying requests */
  writes(): Sent[] {
    return this.prePrepares.filter((p) => p.ledgerId === 1 && p.size > 0);
  }

  inFlight(): number {
    const s = this.cores.get('Node1')!.status();
    return s.lastPrePrepareSeqNo - s.lastOrdered.ppSeqNo;
  }
}
