/**
 * The backstop look at adopted workloads whose output pipes are read (AdoptedWorkload.watchOutput): the
 * pipes' end announces an exit, so `/proc` is looked at only in case a process the task left behind holds
 * them open. An agent restarted under hundreds of tasks did that with a timer and a `/proc/<pid>/stat` read
 * per task every few seconds, most of what it spent idle (P6 after a restart, bench/p6-idle.ts). Here one
 * timer per clock and interval serves every such workload, and a signal 0 (one system call, no file) tells
 * which pids are gone; only those, and every workload each `FULL_LOOK_EVERY` rounds (a pid reused by
 * another process still answers signal 0), get the full look.
 */
import type { Clock } from '../clock.ts';

/** Every this many rounds each workload gets the full look whatever signal 0 says. */
export const FULL_LOOK_EVERY = 6;

/** Whether a process with this pid exists (a zombie or another user's process counts). */
function pidExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

interface Entry {
  pid: number;
  /** The full look; the workload joins again if it is still live. */
  look: () => void;
}

/** The workloads of one clock and interval. */
class BackstopRound {
  private readonly entries = new Set<Entry>();
  private timer: unknown;
  private rounds = 0;

  constructor(
    private readonly clock: Clock,
    private readonly intervalMs: number,
  ) {}

  /** Looks at `pid` from the next round on; returns how to stop looking. */
  add(pid: number, look: () => void): () => void {
    const entry: Entry = { pid, look };
    this.entries.add(entry);
    if (this.timer === undefined) this.timer = this.clock.setTimeout(this.round, this.intervalMs);
    return () => {
      this.entries.delete(entry);
      if (this.entries.size === 0 && this.timer !== undefined) {
        this.clock.clearTimeout(this.timer);
        this.timer = undefined;
      }
    };
  }

  private round = (): void => {
    this.timer = undefined;
    this.rounds += 1;
    const full = this.rounds % FULL_LOOK_EVERY === 0;
    const due: Entry[] = [];
    for (const e of this.entries) if (full || !(e.pid > 0 && pidExists(e.pid))) due.push(e);
    for (const e of due) this.entries.delete(e);
    if (this.entries.size > 0) this.timer = this.clock.setTimeout(this.round, this.intervalMs);
    // After the re-arm: a look that finds the workload live joins again, into the next round.
    for (const e of due) e.look();
  };
}

const rounds = new WeakMap<Clock, Map<number, BackstopRound>>();

/** The shared backstop round of `clock` at `intervalMs`. */
export function backstopRound(clock: Clock, intervalMs: number): BackstopRound {
  let byInterval = rounds.get(clock);
  if (!byInterval) {
    byInterval = new Map();
    rounds.set(clock, byInterval);
  }
  let round = byInterval.get(intervalMs);
  if (!round) {
    round = new BackstopRound(clock, intervalMs);
    byInterval.set(intervalMs, round);
  }
  return round;
}
