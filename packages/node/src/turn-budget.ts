// A budget of event-loop time for work that runs as a chain of promises. Microtasks never yield to the event loop:
// a chain that always has its next link ready (a backlog of consensus events under overload) runs in one macrotask,
// seconds long in the overload profiles, while timers, socket reads and the refusals of new requests wait.

/**
 * How long one turn of the event loop may spend on the chain before it pauses, ms. The node's event queue orders
 * batches: under overload it must keep most of the CPU (the client host hands over at most 20 ms of requests per turn
 * and the client path checks at most 5 ms of writes), so that the pool orders at its capacity and refuses the rest;
 * and a client's frame waits for the turn to end before the node reads it and can refuse it (at 250 ms per turn, the
 * turns of this chain were most of a node's long tasks at 1,500-2,500 writes/s offered, and a random arrival waited
 * 100-160 ms on average for the loop). With 10 and 50 ms budgets, in the pool of 2026-11-27 (benchmarks-history.md,
 * "Overload: what blocks the nodes' event loops"), the intake's share of each turn slowed the ordering on a saturated
 * machine: the primary proposed nothing for 4 s behind a backlog of PROPAGATEs and the backups voted it out (2 of 3
 * runs). At 100 ms no run at 1,500-2,500 writes/s offered changed view (benchmarks.md, "The refusal's time at
 * overload"); do not go lower without the consensus messages' priority over PROPAGATEs.
 */
export const DEFAULT_TURN_MS = 100;

export class TurnBudget {
  private inTurn = false;
  private turnStartedAt = 0;

  constructor(
    private readonly turnMs: number = DEFAULT_TURN_MS,
    private readonly clock: () => number = () => performance.now(),
  ) {}

  /**
   * Called before each link of the chain: undefined while the current turn has time left, else a promise that
   * resolves once the event loop has turned (timers, I/O and other immediates ran), which the link awaits.
   */
  spend(): Promise<void> | undefined {
    if (!this.inTurn) {
      this.startTurn();
      return undefined;
    }
    if (this.clock() - this.turnStartedAt < this.turnMs) return undefined;
    return new Promise<void>((resolve) =>
      setImmediate(() => {
        this.startTurn();
        resolve();
      }),
    );
  }

  private startTurn(): void {
    this.inTurn = true;
    this.turnStartedAt = this.clock();
    // the turn ends when the event loop reaches its next check phase
    setImmediate(() => (this.inTurn = false));
  }
}
