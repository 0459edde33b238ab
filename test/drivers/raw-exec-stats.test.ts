import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import type { Subscription } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import type { ResourceUsage } from '../../src/drivers/controller.ts';
import { isLive, processGroupMembers, readProcStat } from '../../src/drivers/raw-exec/proc-stat.ts';
import { PID_REFRESH_MS, processGroupStats } from '../../src/drivers/raw-exec/stats.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';

// Every process a test starts leads its own group and is killed (group and all) afterwards.
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

async function startGroup(script: string): Promise<ChildProcess> {
  const p = spawn('/bin/sh', ['-c', script], { detached: true, stdio: ['pipe', 'ignore', 'ignore'] });
  started.push(p);
  await once(p, 'spawn');
  return p;
}

/** Polls `cond` until it holds; a bounded wait for a state, never a timed assertion. */
async function until(cond: () => boolean, what: string): Promise<void> {
  const end = Date.now() + 10_000;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

function watch(pid: number, clock: SimulatedClock, intervalMs = 1_000) {
  const samples: ResourceUsage[] = [];
  let completed = false;
  subs.push(processGroupStats({ pid, pgid: pid, intervalMs, clock }).subscribe({ next: (u) => samples.push(u), complete: () => (completed = true) }));
  return { samples, done: () => completed };
}

describe('raw_exec stats sampling', () => {
  it('serves every task of the agent from one timer, sampling all of them on the same tick', async () => {
    const clock = new SimulatedClock(0);
    const a = await startGroup('exec sleep 600');
    const b = await startGroup('exec sleep 600');
    const wa = watch(a.pid!, clock);
    await clock.advance(300);
    const wb = watch(b.pid!, clock);
    expect(clock.pendingTimers).toBe(1);
    await clock.advance(700);
    expect(wa.samples.map((s) => s.timestamp)).toEqual([1_000]);
    expect(wb.samples.map((s) => s.timestamp)).toEqual([1_000]);
    expect(wa.samples[0]!.pids).toEqual([a.pid]);
    expect(wb.samples[0]!.memory.rss).toBeGreaterThan(0);
  });

  it('stops its timer when nobody is subscribed', async () => {
    const clock = new SimulatedClock(0);
    const a = await startGroup('exec sleep 600');
    watch(a.pid!, clock);
    expect(clock.pendingTimers).toBe(1);
    for (const s of subs.splice(0)) s.unsubscribe();
    expect(clock.pendingTimers).toBe(0);
  });

  it('sums the whole process group, and finds members born later at the next pid refresh', async () => {
    const clock = new SimulatedClock(0);
    // The shell starts a background sleep only when told to, after the first scan has run.
    const p = await startGroup('read go; sleep 600 & wait');
    const w = watch(p.pid!, clock);
    await clock.advance(1_000);
    expect(w.samples[0]!.pids).toEqual([p.pid]);
    p.stdin!.write('go\n');
    await until(() => processGroupMembers(p.pid!).length === 2, 'the background sleep');
    await clock.advance(1_000);
    // Between refreshes only the known pids are read.
    expect(w.samples[1]!.pids).toEqual([p.pid]);
    await clock.advance(PID_REFRESH_MS);
    expect(w.samples.at(-1)!.pids).toHaveLength(2);
    expect(w.samples.at(-1)!.pids).toContain(p.pid);
  });

  it('completes once every member of the group has exited', async () => {
    const clock = new SimulatedClock(0);
    const p = await startGroup('exec sleep 600');
    const w = watch(p.pid!, clock);
    await clock.advance(1_000);
    expect(w.samples).toHaveLength(1);
    process.kill(-p.pid!, 'SIGKILL');
    await once(p, 'exit');
    await until(() => !isLive(readProcStat(p.pid!)), 'the exit');
    await clock.advance(1_000);
    expect(w.done()).toBe(true);
    expect(clock.pendingTimers).toBe(0);
  });
});
