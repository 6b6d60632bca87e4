/**
 * The decision rule of a write, without sockets or timers: the nodes' final answers are grouped (REPLYs by their
 * committed txn, REQNACKs and REJECTs by reason) and the write settles when one group reaches f+1 nodes, or fails
 * with NO_CONSENSUS as soon as no group can reach f+1 with the answers still to come. `Pool.submitWrite` feeds it
 * what each node's exchange ends with; the tests feed it answers directly.
 *
 * A transient refusal of a node's client listener (TOO_MANY_PENDING, RATE_LIMITED: the node did not look at the
 * request) is not that node's answer once another node took the request in (acknowledged or replied): the nodes that
 * hold it propagate it, so the pool may order it, and only a node asked again can answer this client. Such refusals
 * are set aside and handed out by `takeRetries`. While no node has taken the request in, they are settled once every
 * other node has answered, so a pool that refuses a write everywhere still fails it at once: when every other node
 * refused it too (REQNACK), nobody holds the request and nobody can order it, so each counts like a REQNACK "pool
 * overloaded" (f+1 such answers: REQUEST_NACKED "pool overloaded", the refusal a client backs off on); when a node
 * failed instead (unreachable, timed out: it may hold the request and propagate it), they count as failures.
 *
 * A REQNACK from a node that acknowledged the request earlier (a later copy, sent again after a lost session) is not a
 * refusal: that node took the write in and may be among the n-f that order it (docs/operations.md, Overload), so it
 * counts as the node's failure (NACK_AFTER_ACK), never toward f+1 refusals.
 */
import { POOL_OVERLOADED_REASON, canonicalJson, equalBytes, isPlainObject } from '@quire/common';
import { ClientError, ClientErrorCode, type WriteSummaryData } from '../errors.js';
import { nodeFailure, withoutStack, type NodeAnswer, type NodeFailure } from './exchange.js';

/** The failure code of a node that answered REQNACK after it acknowledged the request (see `WriteQuorum.add`). */
const NACK_AFTER_ACK = 'NACK_AFTER_ACK';

const NO_NODES: readonly string[] = Object.freeze([]);

/** Refusal codes of a node's client listener that say "not now" rather than anything about the request. */
export const TRANSIENT_REFUSALS: ReadonlySet<string> = new Set(['TOO_MANY_PENDING', 'RATE_LIMITED']);

/** The answer when it is a transient refusal of the node's client listener, else undefined. */
function transientRefusal(a: NodeAnswer): (NodeAnswer & { kind: 'error' }) | undefined {
  return a.kind === 'error' && a.error.code === ClientErrorCode.NODE_REFUSED && TRANSIENT_REFUSALS.has(String(a.error.data.refusal)) ? a : undefined;
}

/** What the answers so far decide: a committed txn agreed by f+1 nodes, or the error the write fails with. */
export type WriteDecision = { kind: 'committed'; result: Record<string, unknown>; nodes: string[] } | { kind: 'failed'; error: ClientError };

interface AnswerGroup {
  kind: 'reply' | 'nack' | 'reject';
  nodes: string[];
  answer: NodeAnswer;
}

export class WriteQuorum {
  private readonly groups = new Map<string, AnswerGroup>();
  private readonly errors: NodeFailure[] = [];
  /** nodes that acknowledged or answered the request */
  private readonly heard = new Set<string>();
  /**
   * The distinct committed txns replied so far, each a group `reply#<index>`. Nodes that agree usually send the same
   * bytes, and equal bytes parse to equal results: a reply byte-equal to one of a class's (or the very message the
   * exchanges parsed once, see ParsedMessages) joins it without canonicalization; the canonical JSON of the results is
   * computed only once two replies differ in their bytes, and replies whose results are canonically equal are one
   * group (key order or spacing aside), as before.
   */
  private readonly replyClasses: { raws: Uint8Array[]; message: Record<string, unknown>; canonical?: string }[] = [];
  private answered = 0;
  private decision: WriteDecision | undefined;
  /** transient refusals set aside, by node (see the module comment) */
  private readonly deferred = new Map<string, NodeAnswer & { kind: 'error' }>();
  /** a node acknowledged or replied: the request is in the pool */
  private taken = false;
  /** nodes that acknowledged the request (REQACK) */
  private readonly acked = new Set<string>();
  /** answers counted that were REQNACKs of nodes that had not acknowledged the request */
  private nacks = 0;

  /** `n`: the validators asked; `f`: the faults the pool tolerates (f+1 identical answers settle the write). */
  constructor(
    readonly n: number,
    readonly f: number,
  ) {}

  /** A node acknowledged the request (REQACK): it is named in the detail of a failure, and the request is in the pool. */
  ack(node: string): void {
    this.heard.add(node);
    this.acked.add(node);
    this.taken = true;
  }

  /**
   * The nodes whose transient refusal should be asked again now, each handed out once (its next answer comes back
   * through `add`): none until a node has taken the request in.
   */
  takeRetries(): readonly string[] {
    // asked after every answer and acknowledgement of every write: nothing allocated when there is nothing to hand out
    if (!this.taken || this.decision !== undefined || this.deferred.size === 0) return NO_NODES;
    const nodes = [...this.deferred.keys()];
    this.deferred.clear();
    return nodes;
  }

  /**
   * One node's final answer; returns the decision the answers reach (the same decision again after it was reached,
   * later answers change nothing). An error answer counts as a node that will not answer.
   */
  add(a: NodeAnswer): WriteDecision | undefined {
    if (this.decision !== undefined) return this.decision;
    const refusal = transientRefusal(a);
    if (refusal !== undefined) {
      this.deferred.set(refusal.node, refusal);
      return this.settleDeferred();
    }
    this.answered++;
    if (a.kind === 'nack' && !this.acked.has(a.node)) this.nacks++;
    if (a.kind === 'error') this.errors.push(nodeFailure(a.node, a.error));
    else if (a.kind === 'nack' && this.acked.has(a.node)) {
      // a node that acknowledged the request took it in, and its PROPAGATE may count toward the n-f that order it: its
      // REQNACK of a later copy (asked again after a lost session) does not say the pool refused the write, so it is not
      // counted toward f+1 refusals; it is that node's failure
      this.errors.push({ node: a.node, code: NACK_AFTER_ACK, reason: a.reason });
    } else {
      this.heard.add(a.node);
      if (a.kind === 'reply') this.taken = true;
      const id = a.kind === 'reply' ? this.replyGroup(a) : `${a.kind}|${a.reason}`;
      const g = this.groups.get(id) ?? { kind: a.kind, nodes: [], answer: a };
      g.nodes.push(a.node);
      this.groups.set(id, g);
      if (g.nodes.length >= this.f + 1) {
        const d = this.settledBy(g);
        if (d !== undefined) return (this.decision = d);
      }
    }
    return this.settleDeferred();
  }

  /**
   * Settles the transient refusals when no node took the request in and every other node has answered (asking again
   * would only wait for the deadline): as REQNACKs "pool overloaded" when every other answer was a REQNACK (nobody
   * holds the request), else as failures; then checks whether any group can still reach f+1.
   */
  private settleDeferred(): WriteDecision | undefined {
    if (!this.taken && this.deferred.size > 0 && this.answered + this.deferred.size >= this.n) {
      const nobodyHolds = this.nacks === this.answered;
      const refusals = [...this.deferred.values()];
      this.deferred.clear();
      for (const a of refusals) {
        if (!nobodyHolds) {
          this.answered++;
          this.errors.push(nodeFailure(a.node, a.error));
          continue;
        }
        const d = this.add({
          node: a.node,
          kind: 'nack',
          reason: POOL_OVERLOADED_REASON,
          code: null,
          message: { op: 'REQNACK', reason: POOL_OVERLOADED_REASON, refusal: a.error.data.refusal },
        });
        if (d !== undefined) return d;
      }
    }
    const left = this.n - this.answered;
    let best = 0;
    for (const g of this.groups.values()) best = Math.max(best, g.nodes.length);
    if (best + left < this.f + 1) return (this.decision = { kind: 'failed', error: new ClientError(ClientErrorCode.NO_CONSENSUS, this.summary()) });
    return undefined;
  }

  /** The decision reached, if any. */
  get decided(): WriteDecision | undefined {
    return this.decision;
  }

  /** The error of a write whose deadline passed before a decision: TIMEOUT with what was heard. */
  timedOut(timeoutMs: number): ClientError {
    return new ClientError(ClientErrorCode.TIMEOUT, { timeoutMs, ...this.summary() });
  }

  /** The detail of a failure: each group of answers, each node's failure, the nodes heard from. */
  summary(): WriteSummaryData {
    return {
      replies: [...this.groups.values()].map((g) => ({
        kind: g.kind,
        nodes: g.nodes,
        ...(g.answer.kind === 'nack' || g.answer.kind === 'reject' ? { reason: g.answer.reason } : {}),
      })),
      errors: [...this.errors, ...[...this.deferred.values()].map((a) => nodeFailure(a.node, a.error))],
      answered: [...this.heard],
      n: this.n,
    };
  }

  private replyGroup(a: NodeAnswer & { kind: 'reply' }): string {
    const classes = this.replyClasses;
    const raw = a.raw;
    for (const [i, c] of classes.entries()) {
      if (c.message === a.message) return `reply#${i}`;
      if (raw !== undefined && c.raws.some((r) => equalBytes(r, raw))) return `reply#${i}`;
    }
    if (classes.length > 0) {
      const canonical = canonicalJson(a.message.result ?? null);
      for (const [i, c] of classes.entries()) {
        c.canonical ??= canonicalJson(c.message.result ?? null);
        if (c.canonical !== canonical) continue;
        if (raw !== undefined) c.raws.push(raw);
        return `reply#${i}`;
      }
      classes.push({ raws: raw !== undefined ? [raw] : [], message: a.message, canonical });
    } else classes.push({ raws: raw !== undefined ? [raw] : [], message: a.message });
    return `reply#${classes.length - 1}`;
  }

  /** The decision of a group that reached f+1; none for f+1 identical REPLYs whose result is not an object. */
  private settledBy(g: AnswerGroup): WriteDecision | undefined {
    const first = g.answer;
    if (first.kind === 'reply') {
      const result = first.message.result;
      return isPlainObject(result) ? { kind: 'committed', result, nodes: g.nodes } : undefined;
    }
    if (first.kind === 'nack' || first.kind === 'reject') {
      const code = first.kind === 'nack' ? ClientErrorCode.REQUEST_NACKED : ClientErrorCode.REQUEST_REJECTED;
      // the pool's answer, not a fault of this process: the code, the reason and the nodes are what a caller reads, and a
      // stack trace (taken per refusal, thousands a second from an overloaded pool) would name only this module's frames
      const error = withoutStack(() => new ClientError(code, { reason: first.reason, code: first.code, nodes: g.nodes }, first.reason));
      return { kind: 'failed', error };
    }
    return undefined;
  }
}
