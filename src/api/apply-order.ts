/**
 * The agent's writes applied in index order, as Nomad's FSM applies Raft entries. A write takes its index, then
 * awaits its durable commit, then applies (makes itself visible to reads and publishes its events); commits may
 * end in any order, so the apply of each waits here until every lower index taken has applied or failed. Without
 * it a blocking query holding a later index could miss an earlier write, and a table's index could go back.
 */

/** One index taken and not yet settled: its apply once its commit is durable (undefined while it commits). */
type Open = { ready?: () => void };

/** The sequencer of one agent's indexes (its StateIndex has one: `index.order`). */
export class ApplyOrder {
  /** Indexes taken and not yet applied or abandoned, lowest first (each is taken past every one before it). */
  private readonly open = new Map<number, Open>();
  /** Writes waiting for every index below theirs to settle (`settledBelow`). */
  private waiters: { index: number; resolve: () => void }[] = [];
  /** Set while applies run: one made meanwhile queues behind them instead of running inside another. */
  private draining = false;

  /**
   * `next` takes the agent's next index; `report` is told of an apply that threw after it was queued (the write
   * that queued it had already returned), so the next ones still run.
   */
  constructor(
    private readonly next: () => number,
    private readonly report: (err: unknown) => void = (err) => queueMicrotask(() => {
      throw err;
    }),
  ) {}

  /**
   * Takes the next index for a write that commits before it applies. Settle it exactly once, with `apply` once
   * its commit is durable or `abandon` when it fails: until then every later index's apply waits.
   */
  take(): number {
    const index = this.next();
    this.open.set(index, {});
    return index;
  }

  /**
   * Runs `apply` for `index` (taken with `take`) once every lower index has settled, and resolves with what it
   * returns (rejects with what it throws; the index is settled either way). Runs it at once when none is open.
   */
  applyAt<T>(index: number, apply: () => T): Promise<T> {
    const entry = this.open.get(index);
    if (!entry || entry.ready) return Promise.reject(new Error(`index ${index} is not one taken and left to apply (ApplyOrder.take)`));
    return new Promise<T>((resolve, reject) => {
      entry.ready = () => {
        try {
          resolve(apply());
        } catch (err) {
          reject(err);
        }
      };
      this.drain();
    });
  }

  /** The write at `index` failed: nothing of it is applied, and later indexes go on. */
  abandon(index: number): void {
    if (!this.open.delete(index)) return;
    this.drain();
  }

  /**
   * A write with no commit (a runner's state change): takes the next index and runs `apply` with it at once when
   * no lower index is open, else as soon as they have all settled. Returns the index.
   */
  applyNext(apply: (index: number) => void): number {
    const index = this.next();
    if (this.open.size === 0 && !this.draining) {
      this.draining = true;
      try {
        apply(index);
      } finally {
        this.draining = false;
      }
      this.drain();
      return index;
    }
    this.open.set(index, {
      ready: () => {
        try {
          apply(index);
        } catch (err) {
          this.report(err);
        }
      },
    });
    return index;
  }

  /**
   * Resolves once every index below `index` has applied or failed: for a write whose reads see its commit at once
   * (the variables are read from the store), so its commit must wait for them, not only its apply.
   */
  settledBelow(index: number): Promise<void> {
    if (this.lowest() >= index) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ index, resolve }));
  }

  /** The indexes taken and not yet settled, lowest first. */
  get pending(): number[] {
    return [...this.open.keys()];
  }

  /** How many writes wait in `settledBelow` (none once every index below theirs has settled). */
  get waiting(): number {
    return this.waiters.length;
  }

  private lowest(): number {
    for (const index of this.open.keys()) return index;
    return Infinity;
  }

  /** Applies, lowest first, every write whose lower indexes have all settled; then wakes the writers waiting for theirs. */
  private drain(): void {
    if (this.draining) return;
    this.draining = true;
    try {
      for (;;) {
        const head = this.open.entries().next();
        if (head.done || !head.value[1].ready) break;
        this.open.delete(head.value[0]);
        head.value[1].ready();
      }
    } finally {
      this.draining = false;
    }
    if (this.waiters.length === 0) return;
    const lowest = this.lowest();
    const woken = this.waiters.filter((w) => lowest >= w.index);
    this.waiters = this.waiters.filter((w) => lowest < w.index);
    for (const w of woken) w.resolve();
  }
}
