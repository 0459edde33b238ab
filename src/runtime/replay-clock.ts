/**
 * The replay's clock (replay-driver.ts): time stands at each input's recorded time, so the machines read
 * what they read in the run, and a delayed event fires only when the recording says it fired.
 */
/** A clock that moves only when the replay sets it, and fires a timer only when the recording fired it. */
export class ReplayClock {
  /** The time now; the replay sets it to each input's recorded time. */
  current = 0;
  private nextId = 1;
  private readonly timers = new Map<number, { due: number; fn: () => void }>();
  now(): number {
    return this.current;
  }
  setTimeout(fn: (...args: unknown[]) => void, ms: number): number {
    const id = this.nextId++;
    this.timers.set(id, { due: this.current + Math.max(0, ms || 0), fn: fn as () => void });
    return id;
  }
  clearTimeout(id: unknown): void {
    this.timers.delete(id as number);
  }
  /** Fires the first timer set to be due at `due`; false when none is. */
  fire(due: number): boolean {
    for (const [id, t] of this.timers) {
      if (t.due !== due) continue;
      this.timers.delete(id);
      t.fn();
      return true;
    }
    return false;
  }
  /** When the timers not yet fired are due (for a divergence's report). */
  pendingDues(): number[] {
    return [...this.timers.values()].map((t) => t.due);
  }
}
