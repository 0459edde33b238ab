/**
 * The milliseconds between a supervised workload's pid report and its `setsid` (SUPERVISOR_SCRIPT: the
 * workload is a subshell of its supervisor until it execs `setsid`, so it is still in the supervisor's process
 * group). A signal for the task then reaches the workload alone, never the supervisor, and only while the pid
 * is the same process (workload.ts `signalGroupOf`); a restoring agent that finds the workload there adopts
 * it as its own (launch.ts `findEarlierSpawn`). A shell and its background `sleep` stand in for the
 * supervisor and its workload.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { findEarlierSpawn } from '../../src/drivers/raw-exec/launch.ts';
import { isLive, readProcStat } from '../../src/drivers/raw-exec/proc-stat.ts';
import { attemptPrefix, ensurePrivateDir, writeIntent } from '../../src/drivers/raw-exec/supervisor.ts';
import { signalGroupOf } from '../../src/drivers/raw-exec/workload.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';
import { leftoversRemovedAfterEach } from './raw-exec-leftovers.ts';
import { until } from './until.ts';

const { dirs, children } = leftoversRemovedAfterEach();
const SIGTERM = 15;
const SIGKILL = 9;
const gone = (pid: number) => !isLive(readProcStat(pid));

/** A supervisor stand-in leading its group, and its workload stand-in: its child, in that group, leading none. */
async function beforeSetsid(): Promise<{ supervisor: number; workload: number; startTime: number }> {
  const child = spawn('/bin/sh', ['-c', 'sleep 600 & echo $!; exec sleep 601'], { detached: true, stdio: ['ignore', 'pipe', 'ignore'] });
  children.push(child);
  const [line] = (await once(child.stdout as Readable, 'data')) as [Buffer];
  const workload = Number(line.toString().trim());
  const stat = readProcStat(workload)!;
  expect([stat.ppid, stat.pgrp]).toEqual([child.pid, child.pid]);
  return { supervisor: child.pid!, workload, startTime: stat.startTime };
}

describe('a signal for a workload that leads no group yet', () => {
  it('reaches the workload alone, not its supervisor', async () => {
    const s = await beforeSetsid();
    expect(signalGroupOf(s.workload, s.startTime, SIGTERM)).toBe(true);
    await until(() => gone(s.workload), 'the workload gone');
    expect(gone(s.supervisor)).toBe(false);
  });

  it('reaches nothing when the pid is another process now (another start time)', async () => {
    const s = await beforeSetsid();
    expect(signalGroupOf(s.workload, s.startTime + 1, SIGTERM)).toBe(false);
    expect(signalGroupOf(s.workload, undefined, SIGTERM)).toBe(false);
    expect([gone(s.workload), gone(s.supervisor)]).toEqual([false, false]);
  });

  it('reaches the whole group once there is one', async () => {
    const s = await beforeSetsid();
    expect(signalGroupOf(s.supervisor, readProcStat(s.supervisor)!.startTime, SIGKILL)).toBe(true);
    await until(() => gone(s.workload) && gone(s.supervisor), 'the group gone');
  });

  it('reaches nothing when the process is gone', async () => {
    const s = await beforeSetsid();
    process.kill(s.workload, SIGKILL);
    await until(() => gone(s.workload), 'the workload gone');
    expect(signalGroupOf(s.workload, s.startTime, SIGTERM)).toBe(false);
  });
});

describe('a restoring agent that finds a workload before its setsid', () => {
  function recorded(supervisor: number, workload: number): string {
    const dir = mkdtempSync(join(tmpdir(), 'allocrun-before-setsid-'));
    dirs.push(dir);
    ensurePrivateDir(dir);
    writeIntent(dir, 1, 'tok');
    const prefix = attemptPrefix(dir, 1, 'tok');
    writeFileSync(`${prefix}.claim`, `${supervisor}\n`);
    writeFileSync(`${prefix}.pid`, `${workload}\n`);
    return dir;
  }
  const find = (taskDir: string) =>
    findEarlierSpawn({ task: 'web', taskDir, attempt: 1, clock: new SimulatedClock(), pollMs: 100 }, new AbortController().signal);

  it('adopts it as its own: its start time kept, a kill reaches it', async () => {
    const s = await beforeSetsid();
    const w = (await find(recorded(s.supervisor, s.workload)))!;
    expect([w.pid, w.startTime]).toEqual([s.workload, s.startTime]);
    expect(w.signalAll(SIGKILL)).toBe(true);
    await until(() => gone(s.workload), 'the workload gone');
    expect(gone(s.supervisor)).toBe(false);
  });

  it("does not adopt a process of the supervisor's group that is not its child", async () => {
    const s = await beforeSetsid();
    const other = await beforeSetsid();
    const w = (await find(recorded(s.supervisor, other.workload)))!;
    expect(w.startTime).toBe(-1);
    expect(w.signalAll(SIGKILL)).toBe(false);
    expect(gone(other.workload)).toBe(false);
  });
});
