/**
 * raw_exec's resource usage, rule by rule: the shared sampling grid, what each figure is made of (ticks to
 * milliseconds at the clock's USER_HZ, CPU percent from the ticks spent since the last sample, memory from
 * /proc), which processes count, and when a watch ends. Figures are pinned exactly on stopped processes
 * (SIGSTOP), whose ticks and memory hold still while the test reads them.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import type { Subscription } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import type { ResourceUsage } from '../../src/drivers/controller.ts';
import { isLive, processGroupMembers, readProcMemory, readProcStat } from '../../src/drivers/raw-exec/proc-stat.ts';
import { nextSlot, processGroupStats, type GroupStatsOptions } from '../../src/drivers/raw-exec/stats.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';
import { until } from './until.ts';

const started: ChildProcess[] = [];
const subs: Subscription[] = [];
afterEach(() => {
  for (const s of subs.splice(0)) s.unsubscribe();
  for (const p of started.splice(0)) {
    try {
      process.kill(-p.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

const stopped = (pid: number) => readProcStat(pid)?.state === 'T';

/** A shell leading its own group running `script`; resolves once it has started. */
async function group(script: string): Promise<ChildProcess & { pid: number }> {
  const p = spawn('/bin/sh', ['-c', script], { detached: true, stdio: ['pipe', 'ignore', 'ignore'] });
  started.push(p);
  await once(p, 'spawn');
  return p as ChildProcess & { pid: number };
}

/** Burns CPU for a while (a few tens of ticks), in the shell itself. */
const BURN = 'i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done';

function watch(opts: Omit<GroupStatsOptions, 'intervalMs'> & { intervalMs?: number }) {
  const samples: ResourceUsage[] = [];
  let completed = false;
  subs.push(processGroupStats({ intervalMs: 1_000, ...opts }).subscribe({ next: (u) => samples.push(u), complete: () => (completed = true) }));
  return { samples, done: () => completed };
}

describe('samples of every task fall on one grid, at least half an interval after subscribing', () => {
  it.each([
    [0, 1000, 1000],
    [400, 1000, 1000],
    [500, 1000, 1000],
    [501, 1000, 2000],
    [999, 1000, 2000],
    [1000, 1000, 2000],
    [1400, 1000, 2000],
    [7, 1, 8],
  ])('at %i with an interval of %i, the first sample is at %i', (now, interval, due) => {
    expect(nextSlot(now, interval)).toBe(due);
  });

  it('an interval under a millisecond counts as one', async () => {
    const p = await group('exec sleep 600');
    const clock = new SimulatedClock(0);
    const w = watch({ pid: p.pid, pgid: p.pid, clock, intervalMs: 0 });
    await clock.advance(1);
    expect(w.samples.map((s) => s.timestamp)).toEqual([1]);
    await clock.advance(1);
    expect(w.samples.map((s) => s.timestamp)).toEqual([1, 2]);
  });
});

describe('a sample is made of the group\'s ticks and memory', () => {
  it.each([undefined, 50])('reports CPU times in ms at %s ticks a second (100 by default), and memory from /proc', async (hz) => {
    // Opening /dev/null over and over spends system time too, so both figures are non-zero.
    const p = await group(`i=0; while [ $i -lt 40000 ]; do : >/dev/null; i=$((i+1)); done; kill -STOP $$; sleep 600`);
    await until(() => stopped(p.pid), 'the burn to stop');
    const clock = new SimulatedClock(0);
    const w = watch({ pid: p.pid, pgid: p.pid, clock, ...(hz ? { ticksPerSecond: hz } : {}) });
    await clock.advance(1_000);
    const stat = readProcStat(p.pid)!;
    const ticksPerSecond = hz ?? 100;
    expect(stat.utime).toBeGreaterThan(0);
    expect(stat.stime).toBeGreaterThan(0);
    expect(w.samples).toEqual([
      {
        timestamp: 1_000,
        cpu: {
          // Its ticks were all spent before the watch began.
          percent: 0,
          userMs: (stat.utime * 1000) / ticksPerSecond,
          systemMs: (stat.stime * 1000) / ticksPerSecond,
          totalTicks: stat.utime + stat.stime,
        },
        memory: readProcMemory(p.pid),
        pids: [p.pid],
      },
    ]);
  });

  it('reports as CPU percent the ticks spent since the last sample, per second of the interval', async () => {
    const p = await group(`kill -STOP $$; ${BURN}; kill -STOP $$; sleep 600`);
    await until(() => stopped(p.pid), 'the first stop');
    const before = readProcStat(p.pid)!;
    const clock = new SimulatedClock(0);
    const w = watch({ pid: p.pid, pgid: p.pid, clock, intervalMs: 2_000 });
    process.kill(p.pid, 'SIGCONT');
    await until(() => !stopped(p.pid), 'the burn to start');
    await until(() => stopped(p.pid), 'the burn to stop');
    const after = readProcStat(p.pid)!;
    const spent = after.utime + after.stime - (before.utime + before.stime);
    expect(spent).toBeGreaterThan(0);
    await clock.advance(2_000);
    // `spent` ticks (1/100 s each) in 2 s.
    expect(w.samples[0]!.cpu.percent).toBeCloseTo(spent / 100 / 2 * 100, 10);
    await clock.advance(2_000);
    expect(w.samples[1]!.cpu.percent).toBe(0);
  });

  it('does not count the past ticks of a member found late that is older than the last sample', async () => {
    // The member burns, stops, and only then is the watch made: its ticks predate every sample.
    const p = await group(`/bin/sh -c '${BURN}; kill -STOP $$; sleep 600' & kill -STOP $$; wait`);
    await until(() => processGroupMembers(p.pid).some((m) => m.pid !== p.pid && m.state === 'T') && stopped(p.pid), 'both stopped');
    const member = processGroupMembers(p.pid).find((m) => m.pid !== p.pid)!;
    expect(member.utime + member.stime).toBeGreaterThan(0);
    const clock = new SimulatedClock(0);
    const w = watch({ pid: p.pid, pgid: p.pid, clock });
    await clock.advance(1_000);
    expect(w.samples[0]!.pids!.sort()).toEqual([p.pid, member.pid].sort());
    expect(w.samples[0]!.cpu.percent).toBe(0);
    expect(w.samples[0]!.cpu.totalTicks).toBe(processGroupMembers(p.pid).reduce((n, m) => n + m.utime + m.stime, 0));
  });
});

describe('which processes a watch measures, and when it ends', () => {
  it('measures the pid alone when it does not lead the group it is given', async () => {
    const p = await group('sleep 600 & wait');
    await until(() => processGroupMembers(p.pid).length === 2, 'the sleep');
    const child = processGroupMembers(p.pid).find((m) => m.pid !== p.pid)!;
    const clock = new SimulatedClock(0);
    const w = watch({ pid: child.pid, pgid: p.pid, clock });
    await clock.advance(1_000);
    expect(w.samples.map((s) => s.pids)).toEqual([[child.pid]]);
    process.kill(child.pid, 'SIGKILL');
    await until(() => !isLive(readProcStat(child.pid)), 'the child to exit');
    await clock.advance(1_000);
    expect(w.done()).toBe(true);
    expect(w.samples).toHaveLength(1);
  });

  it('looks for members born since the last scan once every member it knew is gone', async () => {
    const p = await group('read go; sleep 600 & exit 0');
    const clock = new SimulatedClock(0);
    const w = watch({ pid: p.pid, pgid: p.pid, clock });
    await clock.advance(1_000);
    expect(w.samples.map((s) => s.pids)).toEqual([[p.pid]]);
    p.stdin!.write('go\n');
    await once(p, 'exit');
    await until(() => processGroupMembers(p.pid).length === 1 && processGroupMembers(p.pid)[0]!.pid !== p.pid, 'the leader gone, the sleep left');
    const sleep = processGroupMembers(p.pid)[0]!;
    // Well before the pid refresh: only the vanished leader was known.
    await clock.advance(1_000);
    expect(w.done()).toBe(false);
    expect(w.samples.map((s) => s.pids)).toEqual([[p.pid], [sleep.pid]]);
  });

  it('completes once nothing of the group lives, and only that watch', async () => {
    const a = await group('read go; exit 0');
    const b = await group('exec sleep 600');
    const clock = new SimulatedClock(0);
    const wa = watch({ pid: a.pid, pgid: a.pid, clock });
    const wb = watch({ pid: b.pid, pgid: b.pid, clock });
    await clock.advance(1_000);
    a.stdin!.write('go\n');
    await once(a, 'exit');
    await until(() => !isLive(readProcStat(a.pid)), 'the exit');
    await clock.advance(1_000);
    expect([wa.done(), wb.done()]).toEqual([true, false]);
    expect([wa.samples.length, wb.samples.length]).toEqual([1, 2]);
    expect(clock.pendingTimers).toBe(1);
  });

  it('a watch unsubscribed by another watch\'s sample on the same tick gets no sample', async () => {
    const a = await group('exec sleep 600');
    const b = await group('exec sleep 600');
    const clock = new SimulatedClock(0);
    const got: string[] = [];
    let subB: Subscription | undefined;
    subs.push(processGroupStats({ pid: a.pid, pgid: a.pid, intervalMs: 1_000, clock }).subscribe(() => {
      got.push('a');
      subB?.unsubscribe();
    }));
    subB = processGroupStats({ pid: b.pid, pgid: b.pid, intervalMs: 1_000, clock }).subscribe(() => got.push('b'));
    await clock.advance(1_000);
    expect(got).toEqual(['a']);
  });

  it('keeps one timer for the earliest due watch, and none once all are gone', async () => {
    const a = await group('exec sleep 600');
    const clock = new SimulatedClock(0);
    const fast = processGroupStats({ pid: a.pid, pgid: a.pid, intervalMs: 100, clock }).subscribe();
    const slow = processGroupStats({ pid: a.pid, pgid: a.pid, intervalMs: 10_000, clock }).subscribe();
    expect(clock.pendingTimers).toBe(1);
    fast.unsubscribe();
    expect(clock.pendingTimers).toBe(1);
    slow.unsubscribe();
    expect(clock.pendingTimers).toBe(0);
  });
});
