/**
 * The delayed evaluations of rescheduling (Nomad's eval broker holding an evaluation until its `WaitUntil`): one
 * timer per pending follow-up evaluation, armed when the write that made it is applied, and for every pending one the
 * store holds when an agent starts. At `WaitUntil` the evaluation is processed (`due`, in its job's queue).
 *
 * The timer is never the record: the evaluation is in the store with its `WaitUntil` from the commit that made it, and
 * processing it writes it complete in the same commit as its replacements. An agent started before `WaitUntil`
 * waits the rest; one started after processes it at once; a second run of one already processed finds it complete
 * and does nothing.
 */
import type { Clock } from '../drivers/clock.ts';

/** The longest a platform timer may wait (Node's setTimeout overflows past it): longer waits are re-armed. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** What a follow-up evaluation's timer needs of it. */
export interface PendingFollowup {
  ID: string;
  Status: string;
  /** RFC 3339, as Nomad's API shows it. */
  WaitUntil?: string;
}

export class FollowupTimer {
  private readonly timers = new Map<string, { handle: unknown; due: number }>();
  private closed = false;

  constructor(
    private readonly clock: Clock,
    /** Processes evaluation `id` (the registry's follow-up, in its job's queue). */
    private readonly due: (id: string) => Promise<void>,
    private readonly log: (line: string) => void,
  ) {}

  /** After a write of evaluations: a pending follow-up is armed, any other one's timer cleared. */
  applied(evals: readonly PendingFollowup[]): void {
    for (const e of evals) {
      if (e.Status === 'pending' && e.WaitUntil) this.arm(e.ID, Date.parse(e.WaitUntil));
      else this.clear(e.ID);
    }
  }

  /** When evaluation `id` is due, if armed (ms). */
  dueOf(id: string): number | undefined {
    return this.timers.get(id)?.due;
  }

  /** Stops every timer: the agent is shutting down. */
  close(): void {
    this.closed = true;
    for (const t of this.timers.values()) if (t.handle !== undefined) this.clock.clearTimeout(t.handle);
    this.timers.clear();
  }

  private clear(id: string): void {
    const t = this.timers.get(id);
    if (t?.handle !== undefined) this.clock.clearTimeout(t.handle);
    this.timers.delete(id);
  }

  private arm(id: string, at: number): void {
    if (this.closed || this.timers.get(id)?.due === at) return;
    this.clear(id);
    const wait = at - this.clock.now();
    // Past already (the agent was down): processed now, not on a clock that may not move.
    if (wait <= 0) {
      this.timers.set(id, { handle: undefined, due: at });
      queueMicrotask(() => this.fire(id, at));
      return;
    }
    const handle = this.clock.setTimeout(() => {
      if (this.timers.get(id)?.handle !== handle) return;
      // A wait cut at the platform's longest timer: wait on.
      if (this.clock.now() < at) {
        this.timers.delete(id);
        return this.arm(id, at);
      }
      this.fire(id, at);
    }, Math.min(wait, MAX_TIMER_MS));
    this.timers.set(id, { handle, due: at });
  }

  private fire(id: string, at: number): void {
    if (this.closed || this.timers.get(id)?.due !== at) return;
    this.timers.delete(id);
    this.due(id).catch((err: unknown) => {
      if (!this.closed) this.log(`follow-up evaluation ${id} could not be processed (${err instanceof Error ? err.message : String(err)}); the next agent start tries again`);
    });
  }
}
