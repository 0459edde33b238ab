/**
 * raw_exec's hold on a workload (workload.ts), the rules the first table left open: an adopted workload
 * without a supervisor that is still a zombie when looked at ends with the status the zombie carries (proc(5)
 * field 52), exactly, as if raw_exec were its parent; the group is reaped at the exit only while its leader's
 * pid is still the leader's (a pid since reused is left alone); and a released unsupervised child no longer
 * keeps the agent alive, nor do its pipes. Real processes, for milliseconds; zombies are made by a parent
 * that exec's into `sleep` and so never reaps.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isLive, processGroupMembers, readProcStat } from '../../src/drivers/raw-exec/proc-stat.ts';
import { attemptPrefix, ensurePrivateDir } from '../../src/drivers/raw-exec/supervisor.ts';
import { AdoptedWorkload, SpawnedWorkload } from '../../src/drivers/raw-exec/workload.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';
import { leftoversRemovedAfterEach } from './raw-exec-leftovers.ts';
import { until } from './until.ts';

const { dirs, children } = leftoversRemovedAfterEach();

async function group(script: string, stdio: 'ignore' | 'pipe' = 'ignore'): Promise<ChildProcess & { pid: number }> {
  const child = spawn('/bin/sh', ['-c', script], { detached: true, stdio });
  children.push(child);
  await once(child, 'spawn');
  return child as ChildProcess & { pid: number };
}

/** A zombie that ran `script`: the child of a parent that never reaps it. */
async function zombie(script: string): Promise<{ pid: number; startTime: number }> {
  const parent = await group(`/bin/sh -c '${script}' & exec sleep 600`);
  // The children file lists zombies too (a /proc scan of live processes would not).
  const child = () => Number(readFileSync(`/proc/${parent.pid}/task/${parent.pid}/children`, 'utf8').trim().split(' ')[0]);
  await until(() => child() > 0 && readProcStat(child())?.state === 'Z', 'the zombie');
  return { pid: child(), startTime: readProcStat(child())!.startTime };
}

describe('an adopted workload without a supervisor, found a zombie, ends with the status the zombie carries', () => {
  it.each([
    ['exit 3', { exitCode: 3, signal: 0 }],
    ['kill -TERM $$', { exitCode: 143, signal: 15 }],
  ])('`%s` reads as %j', async (script, result) => {
    const z = await zombie(script);
    const w = new AdoptedWorkload(z.pid, undefined, z.startTime, new SimulatedClock(), 100);
    await expect(w.waitExit()).resolves.toEqual(result);
  });

  it('a zombie of the same pid but another start time is not ours: its status is not taken', async () => {
    const z = await zombie('exit 3');
    const w = new AdoptedWorkload(z.pid, undefined, z.startTime + 1, new SimulatedClock(), 100);
    await expect(w.waitExit()).resolves.toMatchObject({ exitCode: -1, signal: 0 });
  });
});

describe("the group is reaped at the exit only while the leader's pid is the leader's", () => {
  it("a leader still there under its own start time has its group killed", async () => {
    const leader = await group('sleep 600 & exec sleep 600');
    await until(() => processGroupMembers(leader.pid).length === 2, 'the group');
    const startTime = readProcStat(leader.pid)!.startTime;
    const w = new SpawnedWorkload(() => undefined, leader.pid, startTime, Promise.resolve({ exitCode: 0, signal: 0 }));
    await w.waitExit();
    await until(() => processGroupMembers(leader.pid).every((m) => !isLive(m)), 'the group killed');
  });

  it('a pid now held by a process of another start time is left alone, with its group', async () => {
    const other = await group('sleep 600 & exec sleep 600');
    await until(() => processGroupMembers(other.pid).length === 2, 'the group');
    const startTime = readProcStat(other.pid)!.startTime;
    const w = new SpawnedWorkload(() => undefined, other.pid, startTime - 1, Promise.resolve({ exitCode: 0, signal: 0 }));
    await w.waitExit();
    // A SIGKILL sent by mistake has, by the next turn of the loop, almost always landed (under load the check may miss it, never fail wrongly).
    await new Promise((r) => setImmediate(r));
    expect(processGroupMembers(other.pid).filter((m) => isLive(m))).toHaveLength(2);
  });
});

describe('a signal that reached nothing is not taken for the cause of death', () => {
  it('a group signal to a group that is gone leaves the end unknown', async () => {
    const sleeper = await group('exec sleep 600');
    const startTime = readProcStat(sleeper.pid)!.startTime;
    const clock = new SimulatedClock();
    // The process is ours; the group recorded for it names no process, so the group signal reaches nothing.
    const w = new AdoptedWorkload(sleeper.pid, 2 ** 22 + 31, startTime, clock, 100);
    expect(w.signalAll(15)).toBe(false);
    let got: unknown;
    void w.waitExit().then((r) => (got = r));
    process.kill(sleeper.pid, 'SIGKILL');
    await once(sleeper, 'exit');
    await until(() => readProcStat(sleeper.pid) === undefined, 'the reap');
    await clock.advance(100);
    expect(got).toMatchObject({ exitCode: -1, signal: 0 });
  });
});

describe('the end of the output pipes', () => {
  it('with nobody waiting, still means they are no longer watched: a later wait polls at the poll interval', async () => {
    const sleeper = await group('exec sleep 600');
    const startTime = readProcStat(sleeper.pid)!.startTime;
    const dir = mkdtempSync(join(tmpdir(), 'allocrun-workload-end-'));
    dirs.push(dir);
    ensurePrivateDir(dir);
    const prefix = attemptPrefix(dir, 0, 'tok');
    writeFileSync(`${prefix}.status`, '0\n');
    const clock = new SimulatedClock();
    const w = new AdoptedWorkload(sleeper.pid, sleeper.pid, startTime, clock, 100, { prefix, pid: 2 ** 22 + 17, startTime: undefined }, 'web', 5_000);
    w.watchOutput();
    w.outputEnded();
    let got: unknown;
    void w.waitExit().then((r) => (got = r));
    process.kill(sleeper.pid, 'SIGKILL');
    await once(sleeper, 'exit');
    await clock.advance(100);
    expect(got).toEqual({ exitCode: 0, signal: 0 });
  });
});

describe('a stop marker is not an exit', () => {
  it('with no status on file, the wait goes on while the supervisor lives, and the status decides', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'allocrun-workload-end-'));
    dirs.push(dir);
    ensurePrivateDir(dir);
    const prefix = attemptPrefix(dir, 0, 'tok');
    writeFileSync(`${prefix}.stop`, '');
    const clock = new SimulatedClock();
    // The workload is gone; this very process stands in for its live supervisor, about to write the status.
    const w = new AdoptedWorkload(2 ** 22 + 19, 2 ** 22 + 19, 1, clock, 100, { prefix, pid: process.pid, startTime: readProcStat(process.pid)!.startTime }, 'web');
    let got: unknown;
    void w.waitExit().then((r) => (got = r));
    await clock.advance(100);
    expect(got).toBeUndefined();
    writeFileSync(`${prefix}.status`, '143\n');
    await clock.advance(100);
    expect(got).toEqual({ exitCode: 143, signal: 15, stoppedByAgent: true });
  });
});

describe('a released unsupervised child', () => {
  it('no longer keeps the agent alive, nor do its pipes', async () => {
    const child = await group('read -r x', 'pipe');
    const held = () =>
      (process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles().filter(
        (h) => h === child || (child.stdio as unknown[]).includes(h),
      ).length;
    expect(held()).toBeGreaterThanOrEqual(2);
    SpawnedWorkload.releaseOf(child)();
    expect(held()).toBe(0);
    child.stdin!.end('\n');
    await once(child, 'exit');
  });

  it('adds nothing to pipes already closed when it has exited', async () => {
    const child = await group('read -r x', 'pipe');
    const closed = once(child, 'close');
    child.stdin!.end('\n');
    await closed;
    expect(child.stdio.every((s) => !s || s.destroyed)).toBe(true);
    SpawnedWorkload.releaseOf(child)();
    // A closed socket unref'd waits for a 'connect' that never comes (Node's Socket.unref): one listener a task.
    expect(child.stdio.map((s) => s?.listenerCount('connect') ?? 0)).toEqual(child.stdio.map(() => 0));
  });

  it('with stdio it does not pipe (null entries), is released all the same', async () => {
    const child = spawn('/bin/sh', ['-c', 'read -r x'], { detached: true, stdio: ['pipe', 'ignore', 'ignore'] });
    children.push(child);
    await once(child, 'spawn');
    expect(() => SpawnedWorkload.releaseOf(child)()).not.toThrow();
    child.stdin!.end('\n');
    await once(child, 'exit');
  });
});
