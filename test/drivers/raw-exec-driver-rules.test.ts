/**
 * The raw_exec driver's decisions that need no task to run (raw-exec-driver.ts), rule by rule: which handles
 * it recovers and why it refuses the others, the handle it gives back, the calls that need a started task,
 * and the checks made before a spawn (config, logs block, working directory, command). A `sleep` stands in
 * for a recovered process where one must be live.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { DriverContext, DriverHandle } from '../../src/drivers/controller.ts';
import type { TaskSpec } from '../../src/jobspec/types.ts';
import { CommandNotFoundError, InvalidSignalError, RawExecConfigError, RecoverError, SpawnError, TaskNotRunningError } from '../../src/drivers/raw-exec/errors.ts';
import { processGroupMembers, readProcStat } from '../../src/drivers/raw-exec/proc-stat.ts';
import { allocLogDir, createRawExecDriver, RAW_EXEC } from '../../src/drivers/raw-exec/raw-exec-driver.ts';
import { LogConfigError } from '../../src/drivers/raw-exec/rotating-log.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';
import { leftoversRemovedAfterEach } from './raw-exec-leftovers.ts';

const NO_PID = 2 ** 22 + 17;
const never = () => new AbortController().signal;

const { dirs, children } = leftoversRemovedAfterEach();

const task = (config: unknown = { command: 'sleep', args: ['60'] }, extra: Partial<TaskSpec> = {}): TaskSpec =>
  ({ name: 'web', driver: 'raw_exec', config, ...extra }) as unknown as TaskSpec;

function context(extra: Partial<DriverContext> = {}): DriverContext {
  const allocDir = mkdtempSync(join(tmpdir(), 'allocrun-driver-rules-'));
  dirs.push(allocDir);
  return { allocId: 'a1', env: { PATH: '/usr/bin:/bin' }, taskDir: join(allocDir, 'web'), allocDir, clock: new SimulatedClock(), ...extra };
}

async function sleeper(script = 'exec sleep 600'): Promise<{ pid: number; startTime: number }> {
  const child = spawn('/bin/sh', ['-c', script], { detached: true, stdio: 'ignore' });
  children.push(child);
  await once(child, 'spawn');
  return { pid: child.pid!, startTime: readProcStat(child.pid!)!.startTime };
}

const driver = createRawExecDriver({ supervise: false });

function recoverError(handle: DriverHandle): RecoverError {
  try {
    driver.recover(handle, task(), context());
  } catch (err) {
    expect(err).toBeInstanceOf(RecoverError);
    return err as RecoverError;
  }
  throw new Error('recovered');
}

describe('the driver is raw_exec, and logs under <alloc dir>/alloc/logs', () => {
  it('is named raw_exec', () => {
    expect(RAW_EXEC).toBe('raw_exec');
    expect(driver.name).toBe('raw_exec');
    expect(allocLogDir('/a')).toBe('/a/alloc/logs');
  });
});

describe('a handle is recovered only while its process is the one it names', () => {
  it.each([
    [{ driver: 'exec', taskName: 'web', pid: 5, startTime: 1 }, 'invalid-handle', 'cannot recover task "web": the handle is for driver "exec"'],
    [{ driver: 'raw_exec', taskName: 'web' }, 'invalid-handle', 'cannot recover task "web": the handle lacks a pid and start time'],
    [{ driver: 'raw_exec', taskName: 'web', pid: 5 }, 'invalid-handle', 'cannot recover task "web": the handle lacks a pid and start time'],
    [{ driver: 'raw_exec', taskName: 'web', pid: 1, startTime: 1 }, 'invalid-handle', 'cannot recover task "web": the handle lacks a pid and start time'],
    [{ driver: 'raw_exec', taskName: 'web', startTime: 1 }, 'invalid-handle', 'cannot recover task "web": the handle lacks a pid and start time'],
    [{ driver: 'raw_exec', taskName: 'web', pid: NO_PID, startTime: 1 }, 'gone', `cannot recover task "web": process ${NO_PID} has exited`],
    // A supervisor record that is not one: read as no supervisor.
    [{ driver: 'raw_exec', taskName: 'web', pid: 1, startTime: 1, state: { supervisor: { prefix: 3, pid: 5 } } }, 'invalid-handle', 'cannot recover task "web": the handle lacks a pid and start time'],
    [{ driver: 'raw_exec', taskName: 'web', pid: 1, startTime: 1, state: { supervisor: { prefix: '/p', pid: '5' } } }, 'invalid-handle', 'cannot recover task "web": the handle lacks a pid and start time'],
    [{ driver: 'raw_exec', taskName: 'web', pid: 1, startTime: 1, state: { supervisor: { prefix: '/p', pid: 5 } } }, 'invalid-handle', 'cannot recover task "web": the handle lacks a pid and start time'],
  ])('%j is refused (%s)', (handle, reason, message) => {
    const err = recoverError(handle as DriverHandle);
    expect(err.reason).toBe(reason);
    expect(err.message).toBe(message);
  });

  it('a pid that now runs another process is refused as reused, naming both start times', async () => {
    const { pid, startTime } = await sleeper();
    const err = recoverError({ driver: 'raw_exec', taskName: 'web', pid, startTime: startTime + 1 });
    expect(err.reason).toBe('pid-reused');
    expect(err.message).toBe(`cannot recover task "web": pid ${pid} now belongs to another process (start time ${startTime}, expected ${startTime + 1})`);
  });

  it('a live group leader is recovered with its group, and gives the same handle back', async () => {
    const { pid, startTime } = await sleeper();
    const c = driver.recover({ driver: 'raw_exec', taskName: 'web', pid, startTime }, task(), context());
    expect(c.pid).toBe(pid);
    expect(c.handle()).toEqual({ driver: 'raw_exec', taskName: 'web', pid, startTime, state: { pgid: pid } });
    await c.close();
  });

  it('a live process that leads no group is recovered without one: a kill reaches it alone', async () => {
    const leader = await sleeper('sleep 600 & wait');
    for (let i = 0; i < 1000 && processGroupMembers(leader.pid).length < 2; i++) await new Promise((r) => setTimeout(r, 5));
    const member = processGroupMembers(leader.pid).find((m) => m.pid !== leader.pid)!;
    const c = driver.recover({ driver: 'raw_exec', taskName: 'web', pid: member.pid, startTime: member.startTime }, task(), context());
    expect(c.handle()).toEqual({ driver: 'raw_exec', taskName: 'web', pid: member.pid, startTime: member.startTime, state: { pgid: null } });
    await c.close();
  });

  it('a supervised handle is adopted even when its workload is gone: waiting reads the supervisor\'s record', async () => {
    const ctx = context();
    const prefix = join(ctx.allocDir, 'exec-0-tok');
    writeFileSync(`${prefix}.status`, '9\n');
    const supervisor = { prefix, pid: NO_PID, startTime: 77 };
    const c = driver.recover({ driver: 'raw_exec', taskName: 'web', pid: NO_PID - 1, startTime: 5, state: { pgid: NO_PID - 1, supervisor } }, task(), ctx);
    expect(c.handle()).toEqual({ driver: 'raw_exec', taskName: 'web', pid: NO_PID - 1, startTime: -1, state: { pgid: NO_PID - 1, supervisor } });
    await expect(c.wait(never())).resolves.toEqual({ exitCode: 9, signal: 0 });
  });

  it('a supervised handle of a live workload keeps its start time; a supervisor without one is kept without', async () => {
    const { pid, startTime } = await sleeper();
    const ctx = context();
    const supervisor = { prefix: join(ctx.allocDir, 'exec-0-tok'), pid: NO_PID };
    const c = driver.recover({ driver: 'raw_exec', taskName: 'web', pid, startTime, state: { supervisor: { ...supervisor, startTime: 'x' } } }, task(), ctx);
    expect(c.handle()).toEqual({ driver: 'raw_exec', taskName: 'web', pid, startTime, state: { pgid: pid, supervisor: { ...supervisor, startTime: undefined } } });
    await c.close();
  });
});

describe('what needs a started task says so', () => {
  it('wait, signal and stats before a start are TaskNotRunningError; shutdown and terminate succeed', async () => {
    const c = driver.controller(task(), context());
    expect(c.pid).toBeUndefined();
    expect(c.handle()).toBeUndefined();
    await expect(c.wait(never())).rejects.toThrow(new TaskNotRunningError('web', 'wait needs start() first'));
    await expect(c.signal('SIGHUP', never())).rejects.toThrow(new TaskNotRunningError('web', 'cannot send SIGHUP'));
    await expect(lastValueFrom(c.stats(1_000))).rejects.toThrow(new TaskNotRunningError('web', 'stats need start() first'));
    await expect(c.shutdown({ signal: 'SIGTERM', timeout: 1_000 }, never())).resolves.toBeUndefined();
    await expect(c.terminate(never())).resolves.toBeUndefined();
  });

  it("exec (a template's change_script) runs beside a running task: in its dir, with its env; exit status, output, timeout", async () => {
    // It had none: a change_mode "script" template under raw_exec failed with "the task's driver cannot run commands in it".
    const idle = driver.controller(task(), context());
    await expect(idle.exec!('true', [], { timeout: 1_000 }, never())).rejects.toThrow(TaskNotRunningError);
    const { pid, startTime } = await sleeper();
    const ctx = context({ env: { PATH: '/usr/bin:/bin', GREETING: 'hi' } });
    mkdirSync(ctx.taskDir, { recursive: true });
    const c = driver.recover({ driver: 'raw_exec', taskName: 'web', pid, startTime }, task(), ctx);
    expect(await c.exec!('/bin/sh', ['-c', 'echo "$GREETING from $(pwd)"; echo err >&2; exit 3'], { timeout: 10_000 }, never())).toEqual({ output: `hi from ${ctx.taskDir}\nerr\n`, exitCode: 3 });
    await expect(c.exec!('/bin/sh', ['-c', 'sleep 30'], { timeout: 50 }, never())).rejects.toThrow('exec "/bin/sh" in task "web" timed out after 50 ms');
    await expect(c.exec!('no-such-command', [], { timeout: 1_000 }, never())).rejects.toThrow(/no executable file found/);
    await c.close();
  });

  it('a signal by an unknown name is refused by name', async () => {
    const { pid, startTime } = await sleeper();
    const c = driver.recover({ driver: 'raw_exec', taskName: 'web', pid, startTime }, task(), context());
    await expect(c.signal('SIGNOPE', never())).rejects.toThrow(InvalidSignalError);
    await c.close();
  });

  it('a signal to a task whose process is gone is TaskNotRunningError', async () => {
    const { pid, startTime } = await sleeper();
    const c = driver.recover({ driver: 'raw_exec', taskName: 'web', pid, startTime }, task(), context());
    process.kill(pid, 'SIGKILL');
    for (let i = 0; i < 1000 && readProcStat(pid) !== undefined; i++) await new Promise((r) => setTimeout(r, 5));
    await expect(c.signal('SIGHUP', never())).rejects.toThrow(new TaskNotRunningError('web', 'cannot send SIGHUP'));
  });

  it('stats of a closed controller complete at once, holding no timer', async () => {
    const { pid, startTime } = await sleeper();
    const ctx = context();
    const c = driver.recover({ driver: 'raw_exec', taskName: 'web', pid, startTime }, task(), ctx);
    await c.close();
    await c.close();
    await expect(lastValueFrom(c.stats(1_000).pipe(toArray()))).resolves.toEqual([]);
    expect((ctx.clock as SimulatedClock).pendingTimers).toBe(0);
  });

  it('an aborted call does nothing', async () => {
    const c = driver.controller(task(), context());
    const ac = new AbortController();
    ac.abort(new Error('stop'));
    await expect(c.prepare(ac.signal)).rejects.toThrow('stop');
    await expect(c.remove(ac.signal)).rejects.toThrow('stop');
    await expect(c.signal('SIGHUP', ac.signal)).rejects.toThrow('stop');
  });

  it('a driver without supervisors finds no earlier start', async () => {
    await expect(driver.findStarted(task(), context({ attempt: 0 }), never())).resolves.toBeUndefined();
    await expect(createRawExecDriver().findStarted(task(), context(), never())).resolves.toBeUndefined();
  });
});

describe('the checks before a spawn', () => {
  it('refuses a bad config by field', async () => {
    await expect(driver.controller(task({ command: '' }), context()).prepare(never())).rejects.toThrow(RawExecConfigError);
  });

  it('refuses a logs block that cannot work', async () => {
    const c = driver.controller(task(), context({ logs: { maxFiles: 0, maxFileSize: 10 } }));
    await expect(c.prepare(never())).rejects.toThrow(LogConfigError);
  });

  it('takes the task\'s logs block when the context has none', async () => {
    const c = driver.controller(task(undefined, { logs: { maxFiles: 1, maxFileSize: 0 } } as Partial<TaskSpec>), context());
    await expect(c.prepare(never())).rejects.toThrow(LogConfigError);
  });

  it('makes the log dir and the task dir', async () => {
    const ctx = context();
    await driver.controller(task(), ctx).prepare(never());
    expect([existsSync(allocLogDir(ctx.allocDir)), existsSync(ctx.taskDir)]).toEqual([true, true]);
  });

  it('refuses a user it cannot resolve, naming the task', async () => {
    await expect(driver.controller(task(undefined, { user: 'no-such-user-allocrun' } as Partial<TaskSpec>), context()).prepare(never())).rejects.toThrow(/no-such-user-allocrun/);
  });

  it('refuses a working directory that is missing or not a directory, by path', async () => {
    const ctx = context();
    await expect(driver.controller(task({ command: 'sleep', work_dir: 'nope' }), ctx).start(never())).rejects.toThrow(
      new SpawnError('web', `working directory ${join(ctx.taskDir, 'nope')} does not exist or is not a directory`),
    );
    writeFileSync(join(ctx.taskDir, 'file'), '');
    await expect(driver.controller(task({ command: 'sleep', work_dir: 'file' }), ctx).start(never())).rejects.toThrow(SpawnError);
  });

  it('refuses a command it cannot find, saying where it looked', async () => {
    const ctx = context({ env: {} });
    const err = await driver.controller(task({ command: 'no-such-command-allocrun' }), ctx).start(never()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CommandNotFoundError);
    expect((err as Error).message).toBe(
      `task "web": cannot run config.command "no-such-command-allocrun": no executable file found (looked in ${ctx.taskDir}/local, ${ctx.taskDir} and PATH)`,
    );
    expect(existsSync(join(allocLogDir(ctx.allocDir), 'web.stdout.0'))).toBe(false);
  });
});

describe('a stop sends the kill signal, then SIGKILL once the kill timeout (at most max_kill_timeout) has passed', () => {
  /** A recovered task that ignores SIGTERM (its sleep inherits the ignored signal), on a simulated clock. */
  async function stubborn(options: { maxKillTimeout?: number } = {}) {
    const { pid, startTime } = await sleeper('trap "" TERM; exec sleep 600');
    // Once it is the sleep, SIGTERM is ignored for good.
    for (let i = 0; i < 1000 && readProcStat(pid)?.comm !== 'sleep'; i++) await new Promise((r) => setTimeout(r, 5));
    const ctx = context();
    const clock = ctx.clock as SimulatedClock;
    const c = createRawExecDriver({ supervise: false, pollIntervalMs: 100, ...options }).recover({ driver: 'raw_exec', taskName: 'web', pid, startTime }, task(), ctx);
    return { pid, clock, c };
  }

  /** Steps the clock until the stop resolves: the process dies in real time, its end is seen at a poll. */
  async function finish(clock: SimulatedClock, stopping: Promise<void>): Promise<void> {
    let done = false;
    void stopping.then(() => (done = true));
    for (let i = 0; i < 2_000 && !done; i++) {
      await new Promise((r) => setTimeout(r, 5));
      await clock.advance(100);
    }
    await stopping;
  }

  it('waits the task\'s timeout when it is under max_kill_timeout', async () => {
    const { pid, clock, c } = await stubborn({ maxKillTimeout: 10_000 });
    const stopping = c.shutdown({ signal: 'SIGTERM', timeout: 300 }, never());
    await clock.advance(299);
    await new Promise((r) => setTimeout(r, 50));
    expect(isAlive(pid)).toBe(true);
    await clock.advance(1);
    await finish(clock, stopping);
    await expect(c.wait(never())).resolves.toEqual({ exitCode: 137, signal: 9 });
  });

  it('waits no longer than max_kill_timeout', async () => {
    const { pid, clock, c } = await stubborn({ maxKillTimeout: 500 });
    const stopping = c.shutdown({ signal: 'SIGTERM', timeout: 60_000 }, never());
    await clock.advance(499);
    await new Promise((r) => setTimeout(r, 50));
    expect(isAlive(pid)).toBe(true);
    await clock.advance(1);
    await finish(clock, stopping);
    expect(isAlive(pid)).toBe(false);
  });

  it('takes a negative timeout as none: SIGKILL at once', async () => {
    const { pid, clock, c } = await stubborn();
    const stopping = c.shutdown({ signal: 'SIGTERM', timeout: -5 }, never());
    await clock.advance(0);
    await finish(clock, stopping);
    expect(isAlive(pid)).toBe(false);
  });

  it('defaults max_kill_timeout to 30 s', async () => {
    const { pid, clock, c } = await stubborn();
    const stopping = c.shutdown({ signal: 'SIGTERM', timeout: 120_000 }, never());
    await clock.advance(29_999);
    await new Promise((r) => setTimeout(r, 50));
    expect(isAlive(pid)).toBe(true);
    await clock.advance(1);
    await finish(clock, stopping);
    expect(isAlive(pid)).toBe(false);
  });

  it('a task that exits on the kill signal is not sent SIGKILL: its end is the signal', async () => {
    const { pid, startTime } = await sleeper();
    const ctx = context();
    const clock = ctx.clock as SimulatedClock;
    const c = createRawExecDriver({ supervise: false, pollIntervalMs: 100 }).recover({ driver: 'raw_exec', taskName: 'web', pid, startTime }, task(), ctx);
    await finish(clock, c.shutdown({ signal: 'SIGINT', timeout: 10_000 }, never()));
    expect(clock.now()).toBeLessThan(10_000);
    await expect(c.wait(never())).resolves.toEqual({ exitCode: 130, signal: 2 });
  });

  it('terminate sends SIGKILL at once, whatever the task ignores', async () => {
    const { pid, clock, c } = await stubborn();
    await finish(clock, c.terminate(never()));
    expect(isAlive(pid)).toBe(false);
    await expect(c.wait(never())).resolves.toEqual({ exitCode: 137, signal: 9 });
    // Stopped already: both succeed at once.
    await expect(c.shutdown({ signal: 'SIGTERM', timeout: 1_000 }, never())).resolves.toBeUndefined();
    await expect(c.terminate(never())).resolves.toBeUndefined();
  });

  it('an aborted stop sends nothing', async () => {
    const { pid, c } = await stubborn();
    const ac = new AbortController();
    ac.abort(new Error('stop'));
    await expect(c.terminate(ac.signal)).rejects.toThrow('stop');
    await expect(c.shutdown({ signal: 'SIGTERM', timeout: 0 }, ac.signal)).rejects.toThrow('stop');
    await new Promise((r) => setTimeout(r, 50));
    expect(isAlive(pid)).toBe(true);
  });

  it('a signal goes to the main process only', async () => {
    const { pid, startTime } = await sleeper('trap "exit 7" HUP; sleep 600 & wait');
    // The trap is set before the background sleep starts: once it runs, a HUP ends the shell alone.
    for (let i = 0; i < 1000 && processGroupMembers(pid).length < 2; i++) await new Promise((r) => setTimeout(r, 5));
    const child = processGroupMembers(pid).find((m) => m.pid !== pid)!;
    const c = driver.recover({ driver: 'raw_exec', taskName: 'web', pid, startTime }, task(), context());
    await c.signal('SIGHUP', never());
    for (let i = 0; i < 1000 && isAlive(pid); i++) await new Promise((r) => setTimeout(r, 5));
    expect(isAlive(pid)).toBe(false);
    expect(isAlive(child.pid)).toBe(true);
  });
});

const isAlive = (pid: number) => {
  const stat = readProcStat(pid);
  return stat !== undefined && stat.state !== 'Z' && stat.state !== 'X';
};

describe("the driver's intervals, and how long a follower of the logs keeps reading", () => {
  it('looks for the end of a recovered process every 100 ms by default', async () => {
    const { pid, startTime } = await sleeper();
    const ctx = context();
    const clock = ctx.clock as SimulatedClock;
    const c = createRawExecDriver({ supervise: false }).recover({ driver: 'raw_exec', taskName: 'web', pid, startTime }, task(), ctx);
    let got: unknown;
    void c.wait(never()).then((r) => (got = r));
    process.kill(pid, 'SIGKILL');
    for (let i = 0; i < 1000 && readProcStat(pid) !== undefined; i++) await new Promise((r) => setTimeout(r, 5));
    await clock.advance(99);
    expect(got).toBeUndefined();
    await clock.advance(1);
    expect(got).toMatchObject({ exitCode: -1 });
  });

  it('a follower of a task not yet started keeps looking every 250 ms by default; one of a closed task stops', async () => {
    const ctx = context();
    const clock = ctx.clock as SimulatedClock;
    const c = driver.controller(task(), ctx);
    let done = false;
    const sub = c.logs({ follow: true }).subscribe({ complete: () => (done = true) });
    await clock.advance(250);
    expect(done).toBe(false);
    expect(clock.pendingTimers).toBe(1);
    await c.close();
    await clock.advance(249);
    expect(done).toBe(false);
    await clock.advance(1);
    expect(done).toBe(true);
    sub.unsubscribe();
  });

  it('a follower of a recovered task reads until its process is gone', async () => {
    const { pid, startTime } = await sleeper();
    const ctx = context();
    const clock = ctx.clock as SimulatedClock;
    const c = createRawExecDriver({ supervise: false, logPollIntervalMs: 10 }).recover({ driver: 'raw_exec', taskName: 'web', pid, startTime }, task(), ctx);
    let done = false;
    c.logs({ follow: true }).subscribe({ complete: () => (done = true) });
    await clock.advance(10);
    expect(done).toBe(false);
    process.kill(pid, 'SIGKILL');
    for (let i = 0; i < 1000 && readProcStat(pid) !== undefined; i++) await new Promise((r) => setTimeout(r, 5));
    await clock.advance(10);
    expect(done).toBe(true);
  });
});
