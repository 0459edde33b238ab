/**
 * Nomad's AllocStatsReporter: the latest resource usage of each task and the sum for the allocation,
 * fed by the stats hook and readable at any time or as a stream.
 */
import { BehaviorSubject, type Observable } from 'rxjs';
import type { ResourceUsage } from '../drivers/controller.ts';

export interface AllocResourceUsage {
  timestamp: number;
  /** Summed over the tasks included. */
  usage: { cpuPercent: number; memoryRss: number };
  tasks: Record<string, ResourceUsage>;
}

/** Collects task stats; `latest(filter?)` sums the tasks named (all when omitted). */
export class AllocStatsReporter {
  private readonly tasks = new Map<string, ResourceUsage>();
  private readonly subject = new BehaviorSubject<AllocResourceUsage>(this.latest());

  /** Latest usage per task and summed for the allocation. */
  latest(taskFilter?: string): AllocResourceUsage {
    const tasks: Record<string, ResourceUsage> = {};
    let cpuPercent = 0;
    let memoryRss = 0;
    let timestamp = 0;
    for (const [name, u] of this.tasks ?? []) {
      if (taskFilter !== undefined && name !== taskFilter) continue;
      tasks[name] = u;
      cpuPercent += u.cpu.percent;
      memoryRss += u.memory.rss;
      timestamp = Math.max(timestamp, u.timestamp);
    }
    return { timestamp, usage: { cpuPercent, memoryRss }, tasks };
  }

  /** Every change of the allocation's usage, current value first. */
  get stats$(): Observable<AllocResourceUsage> {
    return this.subject.asObservable();
  }

  /** Records a sample for a task. */
  report(task: string, usage: ResourceUsage): void {
    this.tasks.set(task, usage);
    this.subject.next(this.latest());
  }

  /** Forgets a task that no longer runs. */
  clear(task: string): void {
    if (this.tasks.delete(task)) this.subject.next(this.latest());
  }
}
