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

/**
 * File system calls in libuv's thread pool that have not answered yet (Node's own count of its requests). A
 * `FileHandle`'s close is a `CloseReq` until its promise settles (its `FSReqPromise` is gone before that).
 */
const FILE_CALLS = new Set(['FSReqCallback', 'FSReqPromise', 'CloseReq']);
function fileCallsInFlight(): number {
  let n = 0;
  for (const r of process.getActiveResourcesInfo()) if (FILE_CALLS.has(r)) n++;
  return n;
}

/** How long `settle` waits in real time, at most, for file system calls in flight (see `settle`). */
export const FILE_CALL_WAIT_MS = 1_000;

/**
 * Lets pending promise callbacks and I/O callbacks run; no simulated time passes. File system calls in flight
 * are waited for in real time (up to `fileCallWaitMs`), and what they start settles too: the runtime's real
 * I/O (alloc and task dirs, saves) can take the pool longer than a few turns of the loop on a loaded machine,
 * and simulated time must not pass the work it is waiting on (a sidecar still making its dirs would otherwise
 * be killed in its prestart by a deadline that, in real time, had not come). A call that never answers on
 * its own (a FIFO's open with no writer) holds time only until the wait is over. `fileCallWaitMs` 0: only
 * the turns of the loop, as a benchmark measuring the runtime's own work wants.
 */
export async function settle(rounds = 10, fileCallWaitMs = FILE_CALL_WAIT_MS): Promise<void> {
  const until = Date.now() + fileCallWaitMs;
  for (;;) {
    for (let i = 0; i < rounds; i++) await new Promise<void>((r) => setImmediate(r));
    if (fileCallWaitMs <= 0 || fileCallsInFlight() === 0 || Date.now() >= until) return;
    await new Promise<void>((r) => setTimeout(r, 1));
  }
}

/** A deterministic clock: nothing happens until the test advances it. */
export class SimulatedClock implements Clock {
  private current: number;
  private nextId = 1;
  private readonly timers = new Map<number, Timer>();

  private readonly fileCallWaitMs: number;

  /** `fileCallWaitMs`: how long each step waits, at most, for file system calls in flight (`settle`). */
  constructor(start = 0, options: { fileCallWaitMs?: number } = {}) {
    this.current = start;
    this.fileCallWaitMs = options.fileCallWaitMs ?? FILE_CALL_WAIT_MS;
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
    await settle(10, this.fileCallWaitMs);
    for (;;) {
      const next = this.nextDue(target);
      if (!next) break;
      this.timers.delete(next.id);
      this.current = Math.max(this.current, next.due);
      next.fn();
      await settle(10, this.fileCallWaitMs);
    }
    this.current = target;
    await settle(10, this.fileCallWaitMs);
  }

  /** Advances in steps until `done()` holds, failing after `limit` ms of simulated time. */
  async advanceUntil(done: () => boolean, limit = 24 * 3_600_000, step?: number): Promise<void> {
    const end = this.current + limit;
    await settle(10, this.fileCallWaitMs);
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
