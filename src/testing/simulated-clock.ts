/**
 * A simulated clock for the whole runtime (actors, drivers, hooks). Unlike a bare `increment`, `advance`
 * fires timers one at a time in due order and lets the promise chains each one starts settle before the
 * next, so work scheduled by a timer that falls inside the advanced span still runs at its own time.
 */
import type { Clock } from '../drivers/clock.ts';

interface Timer {
  id: number;
  due: number;
  fn: () => void;
}

/** Lets pending promise callbacks and I/O callbacks run; no real time passes. */
export async function settle(rounds = 10): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise<void>((r) => setImmediate(r));
}

/** A deterministic clock: nothing happens until the test advances it. */
export class SimulatedClock implements Clock {
  private current: number;
  private nextId = 1;
  private readonly timers = new Map<number, Timer>();

  constructor(start = 0) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  setTimeout(fn: (...args: unknown[]) => void, ms: number): number {
    const id = this.nextId++;
    this.timers.set(id, { id, due: this.current + Math.max(0, ms || 0), fn: fn as () => void });
    return id;
  }

  clearTimeout(id: unknown): void {
    this.timers.delete(id as number);
  }

  /** How many timers are pending (useful to assert that nothing is left scheduled). */
  get pendingTimers(): number {
    return this.timers.size;
  }

  /** Moves time forward by `ms`, firing due timers in order and settling after each. */
  async advance(ms: number): Promise<void> {
    const target = this.current + ms;
    await settle();
    for (;;) {
      const next = this.nextDue(target);
      if (!next) break;
      this.timers.delete(next.id);
      this.current = Math.max(this.current, next.due);
      next.fn();
      await settle();
    }
    this.current = target;
    await settle();
  }

  /** Advances in steps until `done()` holds, failing after `limit` ms of simulated time. */
  async advanceUntil(done: () => boolean, limit = 24 * 3_600_000, step?: number): Promise<void> {
    const end = this.current + limit;
    await settle();
    while (!done()) {
      if (this.current >= end) throw new Error(`condition not reached within ${limit} ms of simulated time`);
      const next = this.nextDue(end);
      if (!next) throw new Error('condition not reached and no timers are pending: the runtime is waiting on something else');
      await this.advance(step ?? next.due - this.current);
    }
  }

  private nextDue(limit: number): Timer | undefined {
    let best: Timer | undefined;
    for (const t of this.timers.values()) {
      if (t.due > limit) continue;
      if (!best || t.due < best.due || (t.due === best.due && t.id < best.id)) best = t;
    }
    return best;
  }
}
