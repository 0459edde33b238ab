/**
 * The deployment watcher's progress deadline timer (Nomad's `watch` loop, `deadlineTimer`): one timer per running
 * deployment, at its cutoff (progress-deadline.ts), moved each time the deployment is read again after a change of
 * its job or allocations, cleared once it ends. At the cutoff the deployment is read again and judged (Nomad's
 * shouldFail); one that passes (canaries healthy and waiting for a promotion) is left until its cutoff moves.
 *
 * The timer is never the record: the cutoff is derived from the store each time, so an agent started after it
 * passed judges the deployment as soon as it is looked at, and one started before arms the timer again.
 */
import type { Clock } from '../drivers/clock.ts';
import type { Json } from './job-json.ts';
import { deadlineVerdict, progressCutoff } from './progress-deadline.ts';

/** The longest a platform timer may wait (Node's setTimeout overflows past it): longer waits are re-armed. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** What the watcher asks of the agent. */
export interface ProgressWatcherDeps {
  clock: Clock;
  /** The deployment as the routes show it now (undefined once it is gone). */
  read(id: string): Json | undefined;
  /**
   * Fails deployment `d` by its progress deadline (and reverts when `rollback`), in its job's queue, unless `still`
   * says, read there, that it no longer should.
   */
  fail(d: Json, rollback: boolean, still: () => boolean): Promise<void>;
  log(line: string): void;
}

export class ProgressWatcher {
  private readonly timers = new Map<string, { handle: unknown; due: number }>();
  /** Cutoffs judged and passed (Nomad's "skipping deadline"): not judged again until the cutoff moves. */
  private readonly skipped = new Map<string, number>();
  private closed = false;

  constructor(private readonly deps: ProgressWatcherDeps) {}

  /** Looks at deployment `d` as just read: arms, moves or clears its timer; one already past its cutoff is judged now. */
  look(d: Json): void {
    const id = String(d['ID']);
    const cutoff = d['Status'] === 'running' && !this.closed ? progressCutoff(d) : undefined;
    const timer = this.timers.get(id);
    if (timer && timer.due === cutoff) return;
    if (timer) this.deps.clock.clearTimeout(timer.handle);
    this.timers.delete(id);
    if (cutoff === undefined) {
      this.skipped.delete(id);
      return;
    }
    if (this.skipped.get(id) === cutoff) return;
    this.skipped.delete(id);
    const wait = cutoff - this.deps.clock.now();
    // Past already (the agent was down, or the verdict came in late): judged now, not on a clock that may not move.
    if (wait <= 0) {
      this.timers.set(id, { handle: undefined, due: cutoff });
      queueMicrotask(() => this.due(id, cutoff));
      return;
    }
    this.timers.set(id, { handle: this.deps.clock.setTimeout(() => this.due(id, cutoff), Math.min(wait, MAX_TIMER_MS)), due: cutoff });
  }

  /** The cutoff now armed for deployment `id`, if any (ms). */
  cutoffOf(id: string): number | undefined {
    return this.timers.get(id)?.due;
  }

  /** Stops every timer: the agent is shutting down. */
  close(): void {
    this.closed = true;
    for (const t of this.timers.values()) if (t.handle !== undefined) this.deps.clock.clearTimeout(t.handle);
    this.timers.clear();
  }

  private due(id: string, cutoff: number): void {
    if (this.closed || this.timers.get(id)?.due !== cutoff) return;
    this.timers.delete(id);
    const d = this.deps.read(id);
    if (!d) return;
    // A wait longer than a platform timer's: armed again for the rest.
    if (progressCutoff(d) === cutoff && this.deps.clock.now() < cutoff) return this.look(d);
    if (d['Status'] !== 'running' || progressCutoff(d) !== cutoff) return this.look(d);
    const { fail, rollback } = deadlineVerdict(d);
    if (!fail) {
      this.skipped.set(id, cutoff);
      return;
    }
    const still = () => {
      const now = this.deps.read(id);
      return now !== undefined && now['Status'] === 'running' && progressCutoff(now) === cutoff && deadlineVerdict(now).fail;
    };
    this.deps.fail(d, rollback, still).catch((err: unknown) => {
      this.deps.log(`deployment ${id}: its progress deadline passed and it could not be failed (${err instanceof Error ? err.message : String(err)}); the next change of its job or agent start tries again`);
    });
  }
}
