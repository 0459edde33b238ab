/**
 * Nomad's AllocStatsReporter: the latest resource usage of each task and the sum for the allocation,
 * fed by the stats hook and readable at any time or as a stream.
 *
 * A task is sampled from the moment it is tracked (its poststart) until it is untracked (it exited, or the
 * agent shuts down), whether or not anyone reads, so a first read finds real figures. Sampling costs
 * `/proc` reads, so the rate follows the readers: at the hook's interval (Nomad's 1 s) for the task's
 * first `READ_LEASE_SAMPLES` samples, while `stats$` is watched, and for `READ_LEASE_SAMPLES` samples after
 * each `latest()` read (a poller keeps it there); every `BACKGROUND_INTERVAL_MS` otherwise, so an agent
 * nobody asks does a tenth of the work and still answers a first read with figures at most that old.
 */
import { BehaviorSubject, Observable, type Subscription } from 'rxjs';
import type { ResourceUsage } from '../drivers/controller.ts';
import type { StatsSink } from '../hooks/types.ts';

/** How many samples at the full rate a task's start, and each `latest()` read, buys when nobody watches `stats$`. */
export const READ_LEASE_SAMPLES = 5;
/** The sampling interval of a task nobody is reading, ms. */
export const BACKGROUND_INTERVAL_MS = 10_000;

export interface AllocResourceUsage {
  timestamp: number;
  /** Summed over the tasks included. */
  usage: { cpuPercent: number; memoryRss: number };
  tasks: Record<string, ResourceUsage>;
}

/** A tracked task's stream: how to open it, the open subscription, its rate, and the samples left at the full rate. */
interface Source {
  open: (intervalMs?: number) => Observable<ResourceUsage>;
  sub?: Subscription;
  fast: boolean;
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
    for (const source of this.sources.values()) this.openFast(source);
    return () => {
      inner.unsubscribe();
      this.watchers--;
      if (this.watchers === 0) for (const source of this.sources.values()) if (source.lease <= 0) this.openSlow(source);
    };
  });

  /** Latest usage per task and summed for the allocation; samples at the full rate for a while after. */
  latest(taskFilter?: string): AllocResourceUsage {
    for (const source of this.sources.values()) {
      source.lease = READ_LEASE_SAMPLES;
      this.openFast(source);
    }
    return this.summary(taskFilter);
  }

  /** Every change of the allocation's usage, current value first; samples at the full rate while subscribed. */
  get stats$(): Observable<AllocResourceUsage> {
    return this.stream;
  }

  /** Starts following a running task's usage now, at the full rate (a task tracked again replaces its stream). */
  track(task: string, open: (intervalMs?: number) => Observable<ResourceUsage>): void {
    const previous = this.sources.get(task);
    if (previous) this.close(previous);
    const source: Source = { open, fast: false, lease: READ_LEASE_SAMPLES, ended: false };
    this.sources.set(task, source);
    this.openFast(source, task);
  }

  /** Stops following a task and forgets its figures. */
  untrack(task: string): void {
    const source = this.sources.get(task);
    if (source) this.close(source);
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

  private nameOf(source: Source): string | undefined {
    for (const [name, s] of this.sources) if (s === source) return name;
    return undefined;
  }

  /** (Re)opens the stream at the hook's interval; each sample spends the lease unless `stats$` is watched. */
  private openFast(source: Source, name = this.nameOf(source)): void {
    if (source.ended || (source.sub && source.fast) || name === undefined) return;
    source.sub?.unsubscribe();
    source.sub = undefined;
    source.fast = true;
    let subscribed = false;
    let slowDown = false;
    const sub = this.subscribe(source, name, source.open(), () => {
      if (this.watchers > 0 || --source.lease > 0) return;
      if (subscribed) this.openSlow(source);
      else slowDown = true; // still inside subscribe()
    });
    subscribed = true;
    if (source.ended) return sub.unsubscribe();
    source.sub = sub;
    if (slowDown) this.openSlow(source);
  }

  /** Reopens the stream at the background interval. */
  private openSlow(source: Source): void {
    const name = this.nameOf(source);
    if (source.ended || name === undefined || (source.sub && !source.fast)) return;
    source.sub?.unsubscribe();
    source.sub = undefined;
    source.fast = false;
    const sub = this.subscribe(source, name, source.open(BACKGROUND_INTERVAL_MS), () => undefined);
    if (source.ended) return sub.unsubscribe();
    source.sub = sub;
  }

  private subscribe(source: Source, name: string, stream: Observable<ResourceUsage>, afterSample: () => void): Subscription {
    const end = () => {
      source.ended = true;
      source.sub = undefined;
    };
    return stream.subscribe({
      next: (usage) => {
        this.report(name, usage);
        afterSample();
      },
      error: end,
      complete: end,
    });
  }

  private close(source: Source): void {
    source.sub?.unsubscribe();
    source.sub = undefined;
    source.ended = true;
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
