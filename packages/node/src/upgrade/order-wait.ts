/**
 * The wait of an upgrading node for its own NODE_UPGRADE `in_progress` to be ordered (requests.md
 * §6.2): it is told of every committed config txn (ordered, or learned by a catch-up replay) and
 * ends when one is this node's `in_progress` for the awaited version, committed after the
 * config-ledger size seen when the wait began (an earlier attempt's txn does not count); or when
 * the bound passes; or when ended from outside (upgrade failed, node closing).
 */
import { TxnType } from '@quire/common';
import type { Txn } from '@quire/common';
import type { UpgradeClock, ClockTimer } from './clock.js';
import { NodeUpgradeAction } from './node-upgrade-request.js';

/** How a wait ended. */
export type OrderWaitOutcome = 'ordered' | 'timeout' | 'ended';

interface Wait {
  version: string;
  afterSeqNo: number;
  timer: ClockTimer;
  resolve(outcome: OrderWaitOutcome): void;
}

export class InProgressOrderWatch {
  private wait: Wait | undefined;
  /** highest config-ledger seqNo seen */
  private lastSeqNo = 0;

  constructor(
    /** NODE.dest of this node: `metadata.from` of its NODE_UPGRADE txns */
    private readonly nodeDest: string,
    private readonly clock: UpgradeClock,
  ) {}

  /** Waits (at most `timeoutMs`) for this node's `in_progress` of `version`; a wait already running ends first. */
  begin(version: string, timeoutMs: number): Promise<OrderWaitOutcome> {
    this.end();
    return new Promise<OrderWaitOutcome>((resolve) => {
      const w: Wait = {
        version,
        afterSeqNo: this.lastSeqNo,
        timer: this.clock.setTimer(this.clock.now() + timeoutMs, () => this.settle(w, 'timeout')),
        resolve,
      };
      this.wait = w;
    });
  }

  /** A committed config txn, in ledger order. */
  note(txn: Txn): void {
    const seqNo = txn.txnMetadata?.seqNo;
    const w = this.wait;
    if (
      w !== undefined &&
      txn.txn.type === TxnType.NODE_UPGRADE &&
      txn.txn.metadata?.from === this.nodeDest &&
      (typeof seqNo !== 'number' || seqNo > w.afterSeqNo)
    ) {
      const d = (txn.txn.data as { data?: { action?: unknown; version?: unknown } }).data;
      if (d?.action === NodeUpgradeAction.IN_PROGRESS && d.version === w.version) this.settle(w, 'ordered');
    }
    if (typeof seqNo === 'number' && seqNo > this.lastSeqNo) this.lastSeqNo = seqNo;
  }

  /** Ends the running wait, if any, with `ended`. */
  end(): void {
    if (this.wait !== undefined) this.settle(this.wait, 'ended');
  }

  private settle(w: Wait, outcome: OrderWaitOutcome): void {
    if (this.wait !== w) return;
    this.wait = undefined;
    this.clock.clearTimer(w.timer);
    w.resolve(outcome);
  }
}
