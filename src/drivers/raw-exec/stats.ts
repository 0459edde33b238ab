/**
 * Resource usage of a raw_exec task (Nomad's stats hook source): CPU and memory summed over the task's
 * process group, sampled from `/proc` every interval on the driver's clock.
 */
import { Observable } from 'rxjs';
import type { Clock } from '../clock.ts';
import type { ResourceUsage } from '../controller.ts';
import { DEFAULT_CLOCK_TICKS, isLive, processGroupMembers, readProcMemory, readProcStat, type ProcStat } from './proc-stat.ts';

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

interface Sample {
  at: number;
  /** Cumulative ticks per process, keyed by `pid:startTime` so a reused pid starts from zero. */
  ticks: Map<string, number>;
}

function members(opts: GroupStatsOptions): ProcStat[] {
  if (opts.pgid !== opts.pid) {
    const only = readProcStat(opts.pid);
    return isLive(only) ? [only] : [];
  }
  return processGroupMembers(opts.pgid);
}

/** Emits one ResourceUsage per interval while any member of the group lives, then completes. */
export function processGroupStats(opts: GroupStatsOptions): Observable<ResourceUsage> {
  const hz = opts.ticksPerSecond ?? DEFAULT_CLOCK_TICKS;
  const interval = Math.max(1, opts.intervalMs);
  return new Observable<ResourceUsage>((subscriber) => {
    let timer: unknown;
    let prev: Sample = { at: opts.clock.now(), ticks: new Map() };
    for (const p of members(opts)) prev.ticks.set(`${p.pid}:${p.startTime}`, p.utime + p.stime);

    const tick = () => {
      timer = undefined;
      try {
        const procs = members(opts);
        if (procs.length === 0) return subscriber.complete();
        const now = opts.clock.now();
        const next: Sample = { at: now, ticks: new Map() };
        let utime = 0;
        let stime = 0;
        let delta = 0;
        let rss = 0;
        let vms = 0;
        let swap = 0;
        for (const p of procs) {
          const key = `${p.pid}:${p.startTime}`;
          const total = p.utime + p.stime;
          next.ticks.set(key, total);
          // A process born during the interval spent all its ticks in it.
          delta += Math.max(0, total - (prev.ticks.get(key) ?? 0));
          utime += p.utime;
          stime += p.stime;
          const mem = readProcMemory(p.pid);
          if (mem) {
            rss += mem.rss;
            vms += mem.vms;
            swap += mem.swap;
          }
        }
        const elapsedSec = Math.max(1, now - prev.at) / 1000;
        prev = next;
        subscriber.next({
          timestamp: now,
          cpu: {
            percent: (delta / hz / elapsedSec) * 100,
            userMs: (utime * 1000) / hz,
            systemMs: (stime * 1000) / hz,
            totalTicks: utime + stime,
          },
          memory: { rss, vms, swap },
          pids: procs.map((p) => p.pid),
        });
        if (!subscriber.closed) timer = opts.clock.setTimeout(tick, interval);
      } catch (err) {
        subscriber.error(err);
      }
    };
    timer = opts.clock.setTimeout(tick, interval);
    return () => {
      if (timer !== undefined) opts.clock.clearTimeout(timer);
    };
  });
}
