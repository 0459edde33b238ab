/**
 * Nomad's AllocStatsReporter: the latest resource usage of each task and the sum for the allocation,
 * fed by the stats hook and readable at any time or as a stream.
 *
 * As Nomad's stats hook does, a task is sampled from the moment it is tracked (its poststart) until it is
 * untracked (it exited, or the agent shuts down), whether or not anyone reads: a first read of a task that
 * has run a few seconds finds real figures, not an empty table. The cost stays low because one sampler per
 * agent serves every task (src/drivers/raw-exec/stats.ts).
 */
import { BehaviorSubject, type Observable, type Subscription } from 'rxjs';
import type { ResourceUsage } from '../drivers/controller.ts';
import type { StatsSink } from '../hooks/types.ts';

export interface AllocResourceUsage {
  timestamp: number;
  /** Summed over the tasks included. */
  usage: { cpuPercent: number; memoryRss: number };
  tasks: Record<string, ResourceUsage>;
}

/** Collects task stats; `latest(filter?)` sums the tasks named (all when omitted). */
export class AllocStatsReporter implements StatsSink {
  private readonly tasks = new Map<string, ResourceUsage>();
  /** The open stream of each tracked task (absent once it ended: the task's processes are gone). */
  private readonly sources = new Map<string, Subscription | undefined>();
  private readonly subject = new BehaviorSubject<AllocResourceUsage>(this.summary());

  /** Latest usage per task and summed for the allocation. */
  latest(taskFilter?: string): AllocResourceUsage {
    return this.summary(taskFilter);
  }

  /** Every change of the allocation's usage, current value first. */
  get stats$(): Observable<AllocResourceUsage> {
    return this.subject.asObservable();
  }

  /** Starts following a running task's usage now (a task tracked again, after a restart, replaces its stream). */
  track(task: string, open: () => Observable<ResourceUsage>): void {
    this.sources.get(task)?.unsubscribe();
    this.sources.set(task, undefined);
    let sub: Subscription | undefined;
    let ended = false;
    const end = () => {
      ended = true;
      if (sub && this.sources.get(task) === sub) this.sources.set(task, undefined);
    };
    sub = open().subscribe({ next: (usage) => this.report(task, usage), error: end, complete: end });
    if (ended) sub.unsubscribe();
    else this.sources.set(task, sub);
  }

  /** Stops following a task and forgets its figures. */
  untrack(task: string): void {
    this.sources.get(task)?.unsubscribe();
    this.sources.delete(task);
    this.clear(task);
  }

  /** Records a sample for a task. */
  report(task: string, usage: ResourceUsage): void {
    this.tasks.set(task, usage);
    this.subject.next(this.summary());
  }

  /** Forgets a task's figures. */
  clear(task: string): void {
    if (this.tasks.delete(task)) this.subject.next(this.summary());
  }

  private summary(taskFilter?: string): AllocResourceUsage {
    const tasks: Record<string, ResourceUsage> = {};
    let cpuPercent = 0;
    let memoryRss = 0;
    let timestamp = 0;
    for (const [name, u] of this.tasks) {
      if (taskFilter !== undefined && name !== taskFilter) continue;
      tasks[name] = u;
      cpuPercent += u.cpu.percent;
      memoryRss += u.memory.rss;
      timestamp = Math.max(timestamp, u.timestamp);
    }
    return { timestamp, usage: { cpuPercent, memoryRss }, tasks };
  }
}
