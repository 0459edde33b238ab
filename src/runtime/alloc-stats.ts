/**
 * Nomad's AllocStatsReporter: the latest resource usage of each task and the sum for the allocation,
 * fed by the stats hook and readable at any time or as a stream.
 *
 * Sampling costs `/proc` reads, so the task streams are open only while someone wants the figures: while
 * `stats$` has a subscriber, and for `READ_LEASE_SAMPLES` samples after each `latest()` read (so a
 * poller reading every few seconds keeps them flowing, and an agent nobody asks does no sampling).
 */
import { BehaviorSubject, Observable, type Subscription } from 'rxjs';
import type { ResourceUsage } from '../drivers/controller.ts';
import type { StatsSink } from '../hooks/types.ts';

/** How many samples of each task a `latest()` read keeps the streams open for when `stats$` has no subscriber. */
export const READ_LEASE_SAMPLES = 5;

export interface AllocResourceUsage {
  timestamp: number;
  /** Summed over the tasks included. */
  usage: { cpuPercent: number; memoryRss: number };
  tasks: Record<string, ResourceUsage>;
}

/** A tracked task's stream: how to open it, the open subscription, and the samples left on the read lease. */
interface Source {
  open: () => Observable<ResourceUsage>;
  sub?: Subscription;
  lease: number;
  /** The stream completed or failed: the task's processes are gone, reopening would show nothing. */
  ended: boolean;
}

/** Collects task stats; `latest(filter?)` sums the tasks named (all when omitted). */
export class AllocStatsReporter implements StatsSink {
  private readonly tasks = new Map<string, ResourceUsage>();
  private readonly sources = new Map<string, Source>();
  private readonly subject = new BehaviorSubject<AllocResourceUsage>(this.summary());
  private watchers = 0;
  private readonly stream = new Observable<AllocResourceUsage>((subscriber) => {
    const inner = this.subject.subscribe(subscriber);
    this.watchers++;
    for (const [task, source] of this.sources) this.openSource(task, source);
    return () => {
      inner.unsubscribe();
      this.watchers--;
      if (this.watchers === 0) for (const source of this.sources.values()) if (source.lease <= 0) this.closeSource(source);
    };
  });

  /** Latest usage per task and summed for the allocation; starts sampling for a while if nothing was. */
  latest(taskFilter?: string): AllocResourceUsage {
    for (const [task, source] of this.sources) {
      source.lease = READ_LEASE_SAMPLES;
      this.openSource(task, source);
    }
    return this.summary(taskFilter);
  }

  /** Every change of the allocation's usage, current value first; samples flow while subscribed. */
  get stats$(): Observable<AllocResourceUsage> {
    return this.stream;
  }

  /** Starts following a running task's usage (opened now if anyone is reading). */
  track(task: string, open: () => Observable<ResourceUsage>): void {
    const previous = this.sources.get(task);
    if (previous) this.closeSource(previous);
    const source: Source = { open, lease: 0, ended: false };
    this.sources.set(task, source);
    if (this.watchers > 0) this.openSource(task, source);
  }

  /** Stops following a task and forgets its figures. */
  untrack(task: string): void {
    const source = this.sources.get(task);
    if (source) this.closeSource(source);
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

  private openSource(task: string, source: Source): void {
    if (source.sub || source.ended) return;
    let stop = false;
    const sub = source.open().subscribe({
      next: (usage) => {
        this.report(task, usage);
        if (this.watchers > 0 || --source.lease > 0) return;
        if (source.sub) this.closeSource(source);
        else stop = true; // still inside subscribe()
      },
      error: () => {
        source.ended = true;
        source.sub = undefined;
      },
      complete: () => {
        source.ended = true;
        source.sub = undefined;
      },
    });
    if (stop || source.ended) sub.unsubscribe();
    else source.sub = sub;
  }

  private closeSource(source: Source): void {
    source.sub?.unsubscribe();
    source.sub = undefined;
    source.lease = 0;
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
