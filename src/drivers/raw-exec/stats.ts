/**
 * Resource usage of raw_exec tasks (the source of Nomad's stats hook): CPU and memory summed over each
 * task's process group, from `/proc`.
 *
 * One sampler per clock serves every task of the agent. It wakes once per interval for all of them
 * (subscriptions are put on a shared grid), reads only the pids it already knows, and finds group
 * members with one scan of `/proc` shared by every task, repeated only every `PID_REFRESH_MS` (Nomad's
 * executor rescans its pids every 5 s too) or when a new task joins. It runs only while someone is
 * subscribed: an agent whose stats nobody reads does no `/proc` work at all.
 */
import { readFileSync } from 'node:fs';
import { Observable, type Subscriber } from 'rxjs';
import type { Clock } from '../clock.ts';
import type { ResourceUsage } from '../controller.ts';
import { DEFAULT_CLOCK_TICKS, isLive, readProcMemory, readProcStat, scanProcessGroups, type ProcStat } from './proc-stat.ts';

/** How often each task's set of pids is refreshed from a full `/proc` scan. */
export const PID_REFRESH_MS = 5_000;

/** Which processes to measure and how often. */
export interface GroupStatsOptions {
  /** The task's main process. */
  pid: number;
  /** Its process group; when it is not `pid` (the process is not a group leader) only `pid` is measured. */
  pgid: number;
  intervalMs: number;
  clock: Clock;
  ticksPerSecond?: number;
}

/** One subscription: a group, its known members and its last sample. */
interface Watch {
  readonly opts: GroupStatsOptions;
  readonly hz: number;
  readonly interval: number;
  readonly subscriber: Subscriber<ResourceUsage>;
  /** Known members: pid → start time, so a reused pid is not mistaken for a member. */
  members: Map<number, number>;
  /** Whether a /proc scan has filled `members` since this watch joined. */
  scanned: boolean;
  due: number;
  /** Cumulative ticks per `pid:startTime` at the last sample, and when that was (ticks since boot). */
  prevTicks: Map<string, number>;
  prevBootTicks: number;
  prevAt: number;
}

/** Seconds since boot, the clock `/proc/<pid>/stat` start times count in; NaN when unreadable. */
function uptimeSeconds(): number {
  try {
    return Number.parseFloat(readFileSync('/proc/uptime', 'utf8'));
  } catch {
    return Number.NaN;
  }
}

/** The first slot of the shared grid at least half an interval away, so samples of all tasks coincide. */
export function nextSlot(now: number, interval: number): number {
  let due = (Math.floor(now / interval) + 1) * interval;
  if (due - now < interval / 2) due += interval;
  return due;
}

/** The agent-wide sampler of one clock. */
class ProcSampler {
  private readonly watches = new Set<Watch>();
  private timer: unknown;
  private timerDue = Number.POSITIVE_INFINITY;
  private lastScan = Number.NEGATIVE_INFINITY;

  constructor(private readonly clock: Clock) {}

  add(opts: GroupStatsOptions, subscriber: Subscriber<ResourceUsage>): Watch {
    const now = this.clock.now();
    const hz = opts.ticksPerSecond ?? DEFAULT_CLOCK_TICKS;
    const interval = Math.max(1, opts.intervalMs);
    // The baseline is the main process alone: members found later that predate it report from their next sample.
    const leader = readProcStat(opts.pid);
    const prevTicks = new Map<string, number>();
    const members = new Map<number, number>();
    if (isLive(leader)) {
      prevTicks.set(`${leader.pid}:${leader.startTime}`, leader.utime + leader.stime);
      members.set(leader.pid, leader.startTime);
    }
    const watch: Watch = {
      opts, hz, interval, subscriber, members,
      scanned: opts.pgid !== opts.pid,
      due: nextSlot(now, interval),
      prevTicks,
      prevBootTicks: uptimeSeconds() * hz,
      prevAt: now,
    };
    this.watches.add(watch);
    this.schedule();
    return watch;
  }

  remove(watch: Watch): void {
    this.watches.delete(watch);
    this.schedule();
  }

  private schedule(): void {
    let due = Number.POSITIVE_INFINITY;
    for (const w of this.watches) due = Math.min(due, w.due);
    if (due === this.timerDue) return;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.timerDue = due;
    if (due === Number.POSITIVE_INFINITY) return;
    this.timer = this.clock.setTimeout(() => this.tick(), Math.max(0, due - this.clock.now()));
  }

  private tick(): void {
    this.timer = undefined;
    this.timerDue = Number.POSITIVE_INFINITY;
    const now = this.clock.now();
    let scan: Map<number, ProcStat[]> | undefined;
    const scanOnce = () => {
      if (!scan) {
        scan = scanProcessGroups();
        this.lastScan = now;
      }
      return scan;
    };
    const due = [...this.watches].filter((w) => w.due <= now);
    if (due.some((w) => !w.scanned) || now - this.lastScan >= PID_REFRESH_MS) scanOnce();
    const uptime = uptimeSeconds();
    for (const w of due) {
      if (!this.watches.has(w)) continue; // unsubscribed by an earlier emission of this tick
      w.due = nextSlot(now, w.interval);
      try {
        this.sample(w, now, uptime, scan, scanOnce);
      } catch (err) {
        this.watches.delete(w);
        w.subscriber.error(err);
      }
    }
    this.schedule();
  }

  /** Reads the watch's members (from this tick's scan when there is one) and emits their usage. */
  private sample(w: Watch, now: number, uptime: number, scan: Map<number, ProcStat[]> | undefined, scanOnce: () => Map<number, ProcStat[]>): void {
    let procs = this.readMembers(w, scan);
    if (procs.length === 0 && !scan && w.opts.pgid === w.opts.pid) {
      // Every member we knew of is gone; one that started since the last scan may still live.
      procs = this.readMembers(w, scanOnce());
    }
    if (procs.length === 0) {
      this.watches.delete(w);
      w.subscriber.complete();
      return;
    }
    const bootTicks = uptime * w.hz;
    const nextTicks = new Map<string, number>();
    let utime = 0;
    let stime = 0;
    let delta = 0;
    let rss = 0;
    let vms = 0;
    let swap = 0;
    for (const p of procs) {
      const key = `${p.pid}:${p.startTime}`;
      const total = p.utime + p.stime;
      nextTicks.set(key, total);
      const before = w.prevTicks.get(key);
      if (before !== undefined) delta += Math.max(0, total - before);
      // A process born during the interval spent all its ticks in it; one found late but older did not.
      else if (!(p.startTime < w.prevBootTicks)) delta += total;
      utime += p.utime;
      stime += p.stime;
      const mem = readProcMemory(p.pid);
      if (mem) {
        rss += mem.rss;
        vms += mem.vms;
        swap += mem.swap;
      }
    }
    const elapsedSec = Math.max(1, now - w.prevAt) / 1000;
    w.prevTicks = nextTicks;
    w.prevBootTicks = bootTicks;
    w.prevAt = now;
    w.subscriber.next({
      timestamp: now,
      cpu: {
        percent: (delta / w.hz / elapsedSec) * 100,
        userMs: (utime * 1000) / w.hz,
        systemMs: (stime * 1000) / w.hz,
        totalTicks: utime + stime,
      },
      memory: { rss, vms, swap },
      pids: procs.map((p) => p.pid),
    });
  }

  /** The live members of the watch's group: from `scan` when given (refreshing the known set), else by pid. */
  private readMembers(w: Watch, scan: Map<number, ProcStat[]> | undefined): ProcStat[] {
    if (scan && w.opts.pgid === w.opts.pid) {
      const procs = scan.get(w.opts.pgid) ?? [];
      w.members = new Map(procs.map((p) => [p.pid, p.startTime]));
      w.scanned = true;
      return procs;
    }
    const procs: ProcStat[] = [];
    for (const [pid, startTime] of w.members) {
      const stat = readProcStat(pid);
      if (isLive(stat) && stat.startTime === startTime) procs.push(stat);
      else w.members.delete(pid);
    }
    return procs;
  }
}

const samplers = new WeakMap<Clock, ProcSampler>();

function samplerOf(clock: Clock): ProcSampler {
  let s = samplers.get(clock);
  if (!s) {
    s = new ProcSampler(clock);
    samplers.set(clock, s);
  }
  return s;
}

/**
 * Emits one ResourceUsage per interval while any member of the group lives, then completes. The first
 * sample comes one to one and a half intervals after subscribing (on the agent-wide grid).
 */
export function processGroupStats(opts: GroupStatsOptions): Observable<ResourceUsage> {
  return new Observable<ResourceUsage>((subscriber) => {
    const sampler = samplerOf(opts.clock);
    const watch = sampler.add(opts, subscriber);
    return () => sampler.remove(watch);
  });
}
