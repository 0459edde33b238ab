/**
 * raw_exec's resource usage (stats.ts), the rules the first rule table left open: a group's set of pids is
 * refreshed from a /proc scan only every PID_REFRESH_MS (Nomad's executor: 5 s), so a member born between
 * scans is seen at the next refresh and not before; a member found by a refresh that already lived at the
 * last sample did not spend its ticks in the interval (start times and the last sample compared in clock
 * ticks since boot); and watches of different intervals on one clock each sample at their own slots only.
 * On a SimulatedClock, with processes that stop themselves (SIGSTOP) so their ticks hold still.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import type { Subscription } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import type { ResourceUsage } from '../../src/drivers/controller.ts';
import { processGroupMembers, readProcStat } from '../../src/drivers/raw-exec/proc-stat.ts';
import { PID_REFRESH_MS, processGroupStats } from '../../src/drivers/raw-exec/stats.ts';
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

/** A shell leading its own group running `script`, its stdin a pipe to tell it to go on. */
async function group(script: string): Promise<ChildProcess & { pid: number }> {
  const p = spawn('/bin/sh', ['-c', script], { detached: true, stdio: ['pipe', 'ignore', 'ignore'] });
  started.push(p);
  await once(p, 'spawn');
  return p as ChildProcess & { pid: number };
}

/** Ticks since boot, the clock start times count in (USER_HZ 100). */
const uptimeTicks = () => Number.parseFloat(readFileSync('/proc/uptime', 'utf8')) * 100;

function watch(pid: number, clock: SimulatedClock, intervalMs = 1_000) {
  const samples: ResourceUsage[] = [];
  subs.push(processGroupStats({ pid, pgid: pid, intervalMs, clock }).subscribe((u) => samples.push(u)));
  return samples;
}

/**
 * The leader waits for a line on stdin, then starts a member that burns CPU, user and system time both (it
 * opens /dev/null over and over), and stops itself; the leader idles.
 */
const LATE_MEMBER = `read go; /bin/sh -c 'i=0; while [ $i -lt 60000 ]; do : >/dev/null; i=$((i+1)); done; kill -STOP $$; sleep 600' & read never`;

/** Starts the late member and waits until it has burnt its ticks and stopped. */
async function startMember(leader: ChildProcess & { pid: number }): Promise<number> {
  leader.stdin!.write('go\n');
  await until(() => processGroupMembers(leader.pid).some((m) => m.pid !== leader.pid && m.state === 'T'), 'the member to burn and stop');
  return processGroupMembers(leader.pid).find((m) => m.pid !== leader.pid)!.pid;
}

describe(`a group's pids are refreshed from /proc every ${PID_REFRESH_MS} ms, not at every sample`, () => {
  it('a member born after the first sample is seen at the refresh, and not a sample before', async () => {
    const leader = await group(LATE_MEMBER);
    const clock = new SimulatedClock(0);
    const samples = watch(leader.pid, clock);
    await clock.advance(1_000); // the first sample scans /proc
    const member = await startMember(leader);
    await clock.advance(PID_REFRESH_MS - 1_000); // samples at 2 s ... 5 s read the known pids only
    expect(samples.map((s) => s.pids)).toEqual([[leader.pid], [leader.pid], [leader.pid], [leader.pid], [leader.pid]]);
    await clock.advance(1_000); // 6 s: 5 s after the first scan
    expect(samples.at(-1)!.pids!.sort()).toEqual([leader.pid, member].sort());
  });

  it('a member found by the refresh that lived at the last sample brings none of its past ticks into the percent', async () => {
    const leader = await group(LATE_MEMBER);
    const clock = new SimulatedClock(0);
    const samples = watch(leader.pid, clock);
    await clock.advance(1_000);
    const member = await startMember(leader);
    const ticks = readProcStat(member)!;
    expect(ticks.utime + ticks.stime).toBeGreaterThan(0);
    // The sample at 5 s comes after the member started (it has already stopped), so at 6 s the member is older than it.
    await clock.advance(PID_REFRESH_MS);
    const last = samples.at(-1)!;
    expect(last.pids).toContain(member);
    expect(last.cpu.percent).toBe(0);
    expect(last.cpu.totalTicks).toBe(processGroupMembers(leader.pid).reduce((n, m) => n + m.utime + m.stime, 0));
  });

  it('a member born within the interval counts all its ticks at the refresh that finds it', async () => {
    const leader = await group(LATE_MEMBER);
    const clock = new SimulatedClock(0);
    // One sample at 5 s (the first scan), the next at 10 s (the refresh): the member is born between them.
    const samples = watch(leader.pid, clock, PID_REFRESH_MS);
    await clock.advance(PID_REFRESH_MS);
    expect(samples.map((s) => s.pids)).toEqual([[leader.pid]]);
    // Born in a later clock tick than the sample (start times count in ticks): not within the sample's own tick.
    const sampledAt = uptimeTicks();
    await until(() => uptimeTicks() >= sampledAt + 2, 'the next clock ticks');
    const member = await startMember(leader);
    const spent = readProcStat(member)!;
    expect(spent.stime).toBeGreaterThan(0);
    await clock.advance(PID_REFRESH_MS);
    const last = samples.at(-1)!;
    expect(last.pids).toContain(member);
    const ticks = (s: ResourceUsage) => s.cpu.totalTicks!;
    const delta = ticks(last) - ticks(samples[0]!);
    expect(delta).toBeGreaterThanOrEqual(spent.utime + spent.stime);
    expect(last.cpu.percent).toBeCloseTo((delta / 100 / (PID_REFRESH_MS / 1000)) * 100, 10);
  });
});

describe('a watch that joins a sampler which has just scanned', () => {
  it('scans for its own group at its first sample, whatever the refresh', async () => {
    const other = await group('exec sleep 600');
    const clock = new SimulatedClock(0);
    watch(other.pid, clock);
    await clock.advance(1_000); // the sampler's scan, for the first watch
    const leader = await group('sleep 600 & read never');
    await until(() => processGroupMembers(leader.pid).length === 2, 'the member');
    const samples = watch(leader.pid, clock);
    await clock.advance(1_000);
    expect(samples).toHaveLength(1);
    expect(samples[0]!.pids!.sort()).toEqual(processGroupMembers(leader.pid).map((m) => m.pid).sort());
  });

  it('of a process that is already gone, completes at its first sample without an error', async () => {
    const gone = spawn('/bin/true');
    await once(gone, 'exit');
    const clock = new SimulatedClock(0);
    let end = '';
    subs.push(processGroupStats({ pid: gone.pid!, pgid: gone.pid!, intervalMs: 1_000, clock }).subscribe({ complete: () => (end = 'complete'), error: () => (end = 'error') }));
    await clock.advance(1_000);
    expect(end).toBe('complete');
  });
});

describe('watches of different intervals on one clock', () => {
  it('each samples at its own slots only', async () => {
    const p = await group('exec sleep 600');
    const clock = new SimulatedClock(0);
    const fast = watch(p.pid, clock, 1_000);
    const slow = watch(p.pid, clock, 3_000);
    await clock.advance(6_000);
    expect(fast.map((s) => s.timestamp)).toEqual([1_000, 2_000, 3_000, 4_000, 5_000, 6_000]);
    expect(slow.map((s) => s.timestamp)).toEqual([3_000, 6_000]);
  });
});
