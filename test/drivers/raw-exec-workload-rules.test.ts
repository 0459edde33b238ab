/**
 * raw_exec's hold on a workload (workload.ts), rule by rule: how a spawned one's exit is read (its own, or
 * its supervisor's), how an adopted one's end is found (the zombie's status, the supervisor's record, the
 * stop marker, the last signal sent) and when it is lost, and which signals reach it. The supervisor's
 * records are written by hand and time is a simulated clock, so each step of a race (the workload gone and
 * its status not yet written, the pipes ending) is taken in order, not waited for. A `sleep` stands in for a
 * live workload where one is needed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { constants, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { WorkloadLostError } from '../../src/drivers/raw-exec/errors.ts';
import { isLive, processGroupMembers, readProcStat } from '../../src/drivers/raw-exec/proc-stat.ts';
import { attemptPrefix, ensurePrivateDir, type SupervisorRef } from '../../src/drivers/raw-exec/supervisor.ts';
import { AdoptedWorkload, SpawnedWorkload } from '../../src/drivers/raw-exec/workload.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';
import { leftoversRemovedAfterEach } from './raw-exec-leftovers.ts';
import { until } from './until.ts';

const SIGKILL = constants.signals.SIGKILL;
const SIGTERM = constants.signals.SIGTERM;
/** A pid no process holds (above the kernel's limit of 2^22). */
const NO_PID = 2 ** 22 + 11;

const { dirs, children } = leftoversRemovedAfterEach();

/** A supervisor's file prefix, with `files` (suffix → content) written. */
function prefixWith(files: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'allocrun-workload-'));
  dirs.push(dir);
  ensurePrivateDir(dir);
  const prefix = attemptPrefix(dir, 0, 'tok');
  for (const [suffix, text] of Object.entries(files)) writeFileSync(`${prefix}${suffix}`, text);
  return prefix;
}

/** A live stand-in workload: a `sleep` leading its own group, with its start time. */
async function sleeper(script = 'exec sleep 600'): Promise<{ child: ChildProcess; pid: number; startTime: number }> {
  const child = spawn('/bin/sh', ['-c', script], { detached: true, stdio: 'ignore' });
  children.push(child);
  await once(child, 'spawn');
  const pid = child.pid!;
  return { child, pid, startTime: readProcStat(pid)!.startTime };
}

/** A supervisor that is gone, for adopted workloads whose records decide. */
const goneSupervisor = (prefix: string): SupervisorRef => ({ prefix, pid: NO_PID, startTime: undefined });
/** This very process as a live supervisor. */
const liveSupervisor = (prefix: string): SupervisorRef => ({ prefix, pid: process.pid, startTime: readProcStat(process.pid)!.startTime });

describe("a spawned workload's exit", () => {
  it.each([
    [{ code: 0, signal: null }, { exitCode: 0, signal: 0 }],
    [{ code: 3, signal: null }, { exitCode: 3, signal: 0 }],
    [{ code: 137, signal: null }, { exitCode: 137, signal: 9 }],
    [{ code: 200, signal: null }, { exitCode: 200, signal: 0 }],
  ])("under a supervisor is the status it exits with: %j reads as %j", async (exit, result) => {
    await expect(SpawnedWorkload.supervisedExit(Promise.resolve(exit), prefixWith())).resolves.toEqual(result);
  });

  it('under a supervisor killed by a signal is the status on file', async () => {
    const prefix = prefixWith({ '.status': '143\n' });
    await expect(SpawnedWorkload.supervisedExit(Promise.resolve({ code: null, signal: 'SIGKILL' }), prefix)).resolves.toEqual({ exitCode: 143, signal: 15 });
  });

  it('under a supervisor killed without a record is an error naming the signal', async () => {
    await expect(SpawnedWorkload.supervisedExit(Promise.resolve({ code: null, signal: 'SIGKILL' }), prefixWith())).resolves.toEqual({
      exitCode: -1,
      signal: 0,
      err: 'the task supervisor was killed (SIGKILL) without recording the exit status',
    });
  });

  it('under a supervisor the spawner lost track of is an error saying why', async () => {
    const prefix = prefixWith({ '.status': '0\n' });
    await expect(SpawnedWorkload.supervisedExit(Promise.resolve({ code: 0, signal: null, lost: 'the helper died' }), prefix)).resolves.toEqual({
      exitCode: -1,
      signal: 0,
      err: 'the helper died',
    });
  });

  it.each([
    ['exit 4', { exitCode: 4, signal: 0 }],
    ['kill -TERM $$', { exitCode: 143, signal: 15 }],
    ['kill -KILL $$', { exitCode: 137, signal: 9 }],
  ])("without a supervisor is the child's own: `%s` reads as %j", async (script, result) => {
    const child = spawn('/bin/sh', ['-c', script], { stdio: 'ignore' });
    await expect(SpawnedWorkload.exitOf(child)).resolves.toEqual(result);
  });

  it('is kept once known: no signal goes to a pid that may be reused', async () => {
    const { pid, startTime } = await sleeper();
    const w = new SpawnedWorkload(() => undefined, pid, startTime, Promise.resolve({ exitCode: 0, signal: 0 }));
    expect(w.pgid).toBe(pid);
    await w.waitExit();
    expect(w.result).toEqual({ exitCode: 0, signal: 0 });
    expect(w.signalAll(0)).toBe(false);
    expect(w.signalMain(0)).toBe(false);
  });

  it('signals its group and its main process while it runs', async () => {
    const { child, pid, startTime } = await sleeper('sleep 600 & wait');
    await until(() => processGroupMembers(pid).length === 2, 'the group');
    let released = 0;
    const w = new SpawnedWorkload(() => (released += 1), pid, startTime, new Promise(() => undefined));
    expect(w.signalMain(0)).toBe(true);
    expect(w.signalAll(SIGKILL)).toBe(true);
    await once(child, 'exit');
    await until(() => processGroupMembers(pid).length === 0, 'the group gone');
    w.release();
    expect(released).toBe(1);
  });

  it("reaps what is left of its group once it exits, a daemon it left included", async () => {
    const { child, pid, startTime } = await sleeper('sleep 600 & exec sleep 600');
    await until(() => processGroupMembers(pid).length === 2, 'the daemon');
    const daemon = processGroupMembers(pid).find((m) => m.pid !== pid)!;
    let exit!: (r: { exitCode: number; signal: number }) => void;
    const w = new SpawnedWorkload(() => undefined, pid, startTime, new Promise((r) => (exit = r)));
    process.kill(pid, 'SIGKILL');
    await once(child, 'exit');
    expect(isLive(readProcStat(daemon.pid))).toBe(true);
    exit({ exitCode: 137, signal: 9 });
    await w.waitExit();
    await until(() => !isLive(readProcStat(daemon.pid)), 'the daemon reaped');
  });

  it('rejects a wait that is aborted, before or during it, leaving the exit to others', async () => {
    const w = new SpawnedWorkload(() => undefined, NO_PID, undefined, new Promise(() => undefined));
    const early = new AbortController();
    early.abort(new Error('early'));
    await expect(w.waitExit(early.signal)).rejects.toThrow('early');
    const late = new AbortController();
    const waiting = w.waitExit(late.signal);
    late.abort(new Error('late'));
    await expect(waiting).rejects.toThrow('late');
  });

  it('answers a wait with the exit, or with its failure', async () => {
    const ok = new SpawnedWorkload(() => undefined, NO_PID, undefined, Promise.resolve({ exitCode: 2, signal: 0 }));
    await expect(ok.waitExit(new AbortController().signal)).resolves.toEqual({ exitCode: 2, signal: 0 });
    const failed = new SpawnedWorkload(() => undefined, NO_PID, undefined, Promise.reject(new Error('gone')));
    await expect(failed.waitExit(new AbortController().signal)).rejects.toThrow('gone');
  });
});

describe("an adopted workload's end", () => {
  it('is the status its supervisor recorded, once the workload is gone', async () => {
    const prefix = prefixWith({ '.status': '3\n' });
    const w = new AdoptedWorkload(NO_PID, NO_PID, 1, new SimulatedClock(), 100, goneSupervisor(prefix), 'web');
    await expect(w.waitExit()).resolves.toEqual({ exitCode: 3, signal: 0 });
    expect(w.result).toEqual({ exitCode: 3, signal: 0 });
  });

  it.each([
    ['', { exitCode: 143, signal: 15, stoppedByAgent: true }],
    ['restart\n', { exitCode: 143, signal: 15, stoppedByAgent: true, stoppedFor: 'restart' }],
  ])('is marked as stopped by an agent when a stop marker %j is on file', async (marker, result) => {
    const prefix = prefixWith({ '.status': '143\n', '.stop': marker });
    const w = new AdoptedWorkload(NO_PID, NO_PID, 1, new SimulatedClock(), 100, goneSupervisor(prefix), 'web');
    await expect(w.waitExit()).resolves.toEqual(result);
  });

  it('is lost when the workload and its supervisor are gone and nothing was recorded', async () => {
    const prefix = prefixWith();
    const w = new AdoptedWorkload(NO_PID, NO_PID, 1, new SimulatedClock(), 100, goneSupervisor(prefix), 'web');
    const err = await w.waitExit().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkloadLostError);
    expect((err as Error).message).toBe(
      `task "web": the workload was lost: process ${NO_PID} and its supervisor ${NO_PID} are gone and no exit status was recorded (${prefix}.claim)`,
    );
    // Asked again, the same answer, at once.
    await expect(w.waitExit()).rejects.toBe(err);
  });

  it('waits for a live supervisor to write the status of a workload that is gone, polling at its interval', async () => {
    const prefix = prefixWith();
    const clock = new SimulatedClock();
    const w = new AdoptedWorkload(NO_PID, NO_PID, 1, clock, 100, liveSupervisor(prefix), 'web');
    let result: unknown;
    void w.waitExit().then((r) => (result = r));
    await clock.advance(100);
    expect(result).toBeUndefined();
    expect(clock.pendingTimers).toBe(1);
    writeFileSync(`${prefix}.status`, '0\n');
    await clock.advance(99);
    expect(result).toBeUndefined();
    await clock.advance(1);
    expect(result).toEqual({ exitCode: 0, signal: 0 });
    expect(clock.pendingTimers).toBe(0);
  });

  it('without a supervisor, and its status reaped by another, is unknown: an error saying so', async () => {
    const w = new AdoptedWorkload(NO_PID, NO_PID, 1, new SimulatedClock(), 100);
    await expect(w.waitExit()).resolves.toEqual({
      exitCode: -1,
      signal: 0,
      err: 'exit status unknown: the process was recovered after an agent restart and its parent reaped it',
    });
  });

  it.each([
    [SIGKILL, { exitCode: 137, signal: SIGKILL }],
    [SIGTERM, { exitCode: 143, signal: SIGTERM }],
  ])('without a supervisor, after our signal %i, is taken to be that signal', async (signo, result) => {
    const { child, pid, startTime } = await sleeper();
    const clock = new SimulatedClock();
    const w = new AdoptedWorkload(pid, pid, startTime, clock, 100);
    let got: unknown;
    void w.waitExit().then((r) => (got = r));
    expect(w.signalAll(signo)).toBe(true);
    // Node is the sleep's parent here and reaps it: the status is gone, as under another reaper.
    await once(child, 'exit');
    await until(() => readProcStat(pid) === undefined, 'the reap');
    await clock.advance(100);
    expect(got).toEqual(result);
  });

  it('is found at the poll interval while nothing watches its output, at the watched interval while its pipes are read', async () => {
    const { child, pid, startTime } = await sleeper();
    const prefix = prefixWith({ '.status': '0\n' });
    const clock = new SimulatedClock();
    const w = new AdoptedWorkload(pid, pid, startTime, clock, 100, goneSupervisor(prefix), 'web', 5_000);
    w.watchOutput();
    let got: unknown;
    void w.waitExit().then((r) => (got = r));
    process.kill(pid, 'SIGKILL');
    await once(child, 'exit');
    await clock.advance(100);
    expect(got).toBeUndefined();
    await clock.advance(4_900);
    expect(got).toEqual({ exitCode: 0, signal: 0 });
  });

  it('waited on before its pipes are read, is looked at the watched interval once they are', async () => {
    const { child, pid, startTime } = await sleeper();
    const prefix = prefixWith({ '.status': '0\n' });
    const clock = new SimulatedClock();
    const w = new AdoptedWorkload(pid, pid, startTime, clock, 100, goneSupervisor(prefix), 'web', 5_000);
    let got: unknown;
    void w.waitExit().then((r) => (got = r));
    await clock.advance(50);
    w.watchOutput();
    process.kill(pid, 'SIGKILL');
    await once(child, 'exit');
    await clock.advance(4_900);
    expect(got).toBeUndefined();
    await clock.advance(100);
    expect(got).toEqual({ exitCode: 0, signal: 0 });
  });

  it('watching the output of a workload without a supervisor changes nothing: its pipes are not read', async () => {
    const { child, pid, startTime } = await sleeper();
    const clock = new SimulatedClock();
    const w = new AdoptedWorkload(pid, pid, startTime, clock, 100, undefined, 'web', 5_000);
    w.watchOutput();
    let got: unknown;
    void w.waitExit().then((r) => (got = r));
    process.kill(pid, 'SIGKILL');
    await once(child, 'exit');
    await until(() => readProcStat(pid) === undefined, 'the reap');
    await clock.advance(100);
    expect(got).toBeDefined();
  });

  it('is read at once when its output pipes end, without waiting for the next poll', async () => {
    const { child, pid, startTime } = await sleeper();
    const prefix = prefixWith({ '.status': '7\n' });
    const clock = new SimulatedClock();
    const w = new AdoptedWorkload(pid, pid, startTime, clock, 100, goneSupervisor(prefix), 'web', 5_000);
    w.watchOutput();
    let got: unknown;
    void w.waitExit().then((r) => (got = r));
    process.kill(pid, 'SIGKILL');
    await once(child, 'exit');
    w.outputEnded();
    await clock.advance(0);
    expect(got).toEqual({ exitCode: 7, signal: 0 });
    expect(clock.pendingTimers).toBe(0);
  });

  it('the end of the pipes with nobody waiting polls nothing', async () => {
    const clock = new SimulatedClock();
    const w = new AdoptedWorkload(NO_PID, NO_PID, 1, clock, 100, goneSupervisor(prefixWith({ '.status': '0\n' })), 'web');
    w.outputEnded();
    expect(clock.pendingTimers).toBe(0);
    expect(w.result).toBeUndefined();
  });

  it('once known, is answered at once and kept', async () => {
    const prefix = prefixWith({ '.status': '5\n' });
    const clock = new SimulatedClock();
    const w = new AdoptedWorkload(NO_PID, NO_PID, 1, clock, 100, goneSupervisor(prefix), 'web');
    await w.waitExit();
    writeFileSync(`${prefix}.status`, '6\n');
    await expect(w.waitExit()).resolves.toEqual({ exitCode: 5, signal: 0 });
    w.outputEnded();
    expect(w.result).toEqual({ exitCode: 5, signal: 0 });
  });

  it('a wait aborted before or during it is rejected, and the last waiter gone stops the polling', async () => {
    const { pid, startTime } = await sleeper();
    const clock = new SimulatedClock();
    const w = new AdoptedWorkload(pid, pid, startTime, clock, 100);
    const early = new AbortController();
    early.abort(new Error('early'));
    await expect(w.waitExit(early.signal)).rejects.toThrow('early');
    expect(clock.pendingTimers).toBe(0);
    const a = new AbortController();
    const b = new AbortController();
    const wa = w.waitExit(a.signal);
    const wb = w.waitExit(b.signal);
    expect(clock.pendingTimers).toBe(1);
    a.abort(new Error('a'));
    await expect(wa).rejects.toThrow('a');
    expect(clock.pendingTimers).toBe(1);
    b.abort(new Error('b'));
    await expect(wb).rejects.toThrow('b');
    expect(clock.pendingTimers).toBe(0);
  });

  it('a waiter that stays is answered even though another aborted', async () => {
    const { child, pid, startTime } = await sleeper();
    const clock = new SimulatedClock();
    const w = new AdoptedWorkload(pid, pid, startTime, clock, 100);
    const a = new AbortController();
    const wa = w.waitExit(a.signal).catch(() => 'aborted');
    let got: unknown;
    void w.waitExit(new AbortController().signal).then((r) => (got = r));
    a.abort(new Error('a'));
    expect(await wa).toBe('aborted');
    w.signalAll(SIGKILL);
    await once(child, 'exit');
    await until(() => readProcStat(pid) === undefined, 'the reap');
    await clock.advance(100);
    expect(got).toEqual({ exitCode: 137, signal: SIGKILL });
  });
});

describe('signals reach an adopted workload only while it is the process adopted', () => {
  it('reaches the group it leads, and the main process alone', async () => {
    const { child, pid, startTime } = await sleeper('sleep 600 & wait');
    await until(() => processGroupMembers(pid).length === 2, 'the group');
    const w = new AdoptedWorkload(pid, pid, startTime, new SimulatedClock(), 100);
    expect(w.signalMain(0)).toBe(true);
    expect(w.signalAll(SIGKILL)).toBe(true);
    await once(child, 'exit');
    await until(() => processGroupMembers(pid).length === 0, 'the group gone');
  });

  it('reaches only the pid when it does not lead a group', async () => {
    const { pid } = await sleeper('sleep 600 & sleep 600; wait');
    await until(() => processGroupMembers(pid).length === 3, 'the group');
    const [member, other] = processGroupMembers(pid).filter((m) => m.pid !== pid);
    const w = new AdoptedWorkload(member!.pid, undefined, member!.startTime, new SimulatedClock(), 100);
    expect(w.signalAll(SIGKILL)).toBe(true);
    await until(() => !isLive(readProcStat(member!.pid)), 'the member gone');
    expect(isLive(readProcStat(pid))).toBe(true);
    expect(isLive(readProcStat(other!.pid))).toBe(true);
  });

  it('reaches nothing when the pid now belongs to another process', async () => {
    const { pid, startTime } = await sleeper();
    const w = new AdoptedWorkload(pid, pid, startTime + 1, new SimulatedClock(), 100);
    expect(w.signalAll(SIGKILL)).toBe(false);
    expect(w.signalMain(SIGKILL)).toBe(false);
    expect(isLive(readProcStat(pid))).toBe(true);
  });

  it('reaches nothing once its end is known or lost', async () => {
    const { pid, startTime } = await sleeper();
    const known = new AdoptedWorkload(pid, pid, startTime, new SimulatedClock(), 100, goneSupervisor(prefixWith({ '.status': '0\n' })));
    // A workload that is still there but whose end was recorded: the record wins.
    (known as unknown as { result: unknown }).result = { exitCode: 0, signal: 0 };
    expect(known.signalAll(0)).toBe(false);
    expect(known.signalMain(0)).toBe(false);
    const lost = new AdoptedWorkload(NO_PID, NO_PID, 1, new SimulatedClock(), 100, goneSupervisor(prefixWith()));
    await lost.waitExit().catch(() => undefined);
    expect(lost.signalAll(0)).toBe(false);
    expect(lost.signalMain(0)).toBe(false);
  });

  it('a signal to a process that is gone is not remembered as the one that ended it', async () => {
    const { child, pid, startTime } = await sleeper();
    const clock = new SimulatedClock();
    const w = new AdoptedWorkload(pid, pid, startTime, clock, 100);
    process.kill(pid, 'SIGKILL');
    await once(child, 'exit');
    await until(() => readProcStat(pid) === undefined, 'the reap');
    expect(w.signalAll(SIGTERM)).toBe(false);
    await expect(w.waitExit()).resolves.toMatchObject({ exitCode: -1 });
  });
});
