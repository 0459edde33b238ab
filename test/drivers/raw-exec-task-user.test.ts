/**
 * raw_exec's task `user` (issue 25, point 3), with real processes: a root agent runs the task as the user
 * (setpriv), hands it its task dir but not the supervisor's `private/` dir, and adopts it after a crash by pid
 * and start time as any task; an agent that cannot switch users (faked through `useUserSwitching`) or a user
 * that does not exist fails the start, naming the user, and nothing runs.
 */
import { execFile } from 'node:child_process';
import { chownSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { realClock } from '../../src/drivers/clock.ts';
import type { Controller, DriverContext, DriverHandle } from '../../src/drivers/controller.ts';
import { isLive, readProcStat } from '../../src/drivers/raw-exec/proc-stat.ts';
import { createRawExecDriver, type RawExecDriverOptions } from '../../src/drivers/raw-exec/raw-exec-driver.ts';
import { systemUserSwitching, useUserSwitching, type UserSwitching } from '../../src/drivers/raw-exec/task-user.ts';
import type { TaskSpec } from '../../src/jobspec/types.ts';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '..', '..');
const never = (): AbortSignal => new AbortController().signal;
const NOBODY = systemUserSwitching.lookup('nobody');
const asRoot = process.geteuid?.() === 0 && NOBODY !== undefined && systemUserSwitching.setpriv() !== undefined;

const dirs: string[] = [];
const controllers: Controller[] = [];
const strays: number[] = [];
let restoreSwitching: (() => void) | undefined;
afterEach(async () => {
  restoreSwitching?.();
  restoreSwitching = undefined;
  for (const c of controllers.splice(0)) await c.terminate(never()).catch(() => {});
  for (const pid of strays.splice(0)) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

interface Setup {
  task: TaskSpec;
  ctx: DriverContext;
  /** Stands in for the agent's data dir: 0700, the agent's, with a token file in it. */
  dataDir: string;
  allocDir: string;
  taskDir: string;
}

function setup(script: string | ((dataDir: string) => string), user?: string): Setup {
  const dataDir = mkdtempSync(join(tmpdir(), 'allocrun-task-user-'));
  if (typeof script === 'function') script = script(dataDir);
  dirs.push(dataDir);
  writeFileSync(join(dataDir, 'agent-token'), 'not-for-tasks-0123456789\n', { mode: 0o600 });
  const allocDir = join(dataDir, 'allocs', 'a1');
  const taskDir = join(allocDir, 't');
  const task: TaskSpec = { name: 't', driver: 'raw_exec', config: { command: '/bin/sh', args: ['-c', script] }, ...(user !== undefined && { user }) };
  const ctx: DriverContext = { allocId: 'a1', env: { PATH: '/usr/bin:/bin' }, taskDir, allocDir, clock: realClock, attempt: 0 };
  // As the task_dir hook builds it, before the driver's prepare.
  for (const sub of ['local', 'tmp']) mkdirSync(join(taskDir, sub), { recursive: true });
  mkdirSync(join(taskDir, 'secrets'), { mode: 0o700 });
  return { task, ctx, dataDir, allocDir, taskDir };
}

async function started(s: Setup, opts: RawExecDriverOptions = {}) {
  const c = createRawExecDriver({ pollIntervalMs: 20, ...opts }).controller(s.task, s.ctx);
  controllers.push(c);
  await c.prepare(never());
  await c.start(never());
  return c;
}

const stdout = (s: Setup): string => readFileSync(join(s.allocDir, 'alloc', 'logs', 't.stdout.0'), 'utf8');
/** The task's stderr; a log file is made on the first write, so none is nothing written. */
const stderr = (s: Setup): string => {
  const file = join(s.allocDir, 'alloc', 'logs', 't.stderr.0');
  return existsSync(file) ? readFileSync(file, 'utf8') : '';
};
/** The real uid of a live process, from /proc. */
const uidOf = (pid: number): number => Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);

/**
 * Waits until process `pid` runs as `uid`: the pid is known (and recorded) before the supervisor's inner
 * shell execs setpriv, which then switches; a bounded wait for that state, never a timed assertion.
 */
async function switchedTo(pid: number, uid: number): Promise<void> {
  const end = Date.now() + 10_000;
  while (uidOf(pid) !== uid) {
    if (Date.now() > end) throw new Error(`process ${pid} still runs as uid ${uidOf(pid)}, not ${uid}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** What the task checks about itself: who it is, what it can read and write. */
const PROBE = (dataDir: string) =>
  [
    'id -u',
    `cat ${dataDir}/agent-token >/dev/null 2>&1 && echo token-read || echo token-denied`,
    'echo mine > ./own-file && echo dir-writable',
    'echo more > local/more && echo local-writable',
    'ls private >/dev/null 2>&1 && echo private-listed || echo private-denied',
    'mv private p2 2>/dev/null && echo private-moved || echo private-kept',
  ].join('; ');

describe.runIf(asRoot)('raw_exec task user, under a root agent', () => {
  it('runs the task as its user: its uid, its own task dir to write, neither the token nor private/ to reach', async () => {
    const s = setup(PROBE, 'nobody');
    const c = await started(s);
    expect(await c.wait(never())).toEqual({ exitCode: 0, signal: 0 });
    expect(stdout(s).trim().split('\n')).toEqual([String(NOBODY!.uid), 'token-denied', 'dir-writable', 'local-writable', 'private-denied', 'private-kept']);
    expect(stderr(s)).toBe('');
    expect(statSync(join(s.taskDir, 'own-file')).uid).toBe(NOBODY!.uid);
    // The task dir: the agent's, writable by the user's group, sticky (private/ stays where the agent put it).
    const taskDir = lstatSync(s.taskDir);
    expect([taskDir.uid, taskDir.gid, taskDir.mode & 0o7777]).toEqual([0, NOBODY!.gid, 0o1770]);
    expect(lstatSync(join(s.taskDir, 'private')).uid).toBe(0);
    expect(statSync(join(s.taskDir, 'local')).uid).toBe(NOBODY!.uid);
  }, 20_000);

  it('runs a task naming no user as the driver\'s default taskUser (allocrun agent --task-user)', async () => {
    const s = setup('id -u; id -g');
    const c = await started(s, { taskUser: 'nobody' });
    expect(await c.wait(never())).toEqual({ exitCode: 0, signal: 0 });
    expect(stdout(s)).toBe(`${NOBODY!.uid}\n${NOBODY!.gid}\n`);
  }, 20_000);

  it('lets a task\'s own user win over the default', async () => {
    const s = setup('id -u', 'root');
    const c = await started(s, { taskUser: 'nobody' });
    expect(await c.wait(never())).toEqual({ exitCode: 0, signal: 0 });
    expect(stdout(s)).toBe('0\n');
  }, 20_000);

  it('runs the command found in the task dir by a path the user can resolve', async () => {
    const s = setup('unused', 'nobody');
    writeFileSync(join(s.taskDir, 'local', 'run.sh'), '#!/bin/sh\necho "ran as $(id -u)"\n', { mode: 0o755 });
    s.task.config = { command: 'run.sh' };
    const c = await started(s);
    expect(await c.wait(never())).toEqual({ exitCode: 0, signal: 0 });
    expect(stdout(s)).toBe(`ran as ${NOBODY!.uid}\n`);
  }, 20_000);

  it('runs an unsupervised task (no setsid) as its user too', async () => {
    const s = setup('id -u', 'nobody');
    const c = await started(s, { supervise: false });
    expect(await c.wait(never())).toEqual({ exitCode: 0, signal: 0 });
    expect(stdout(s)).toBe(`${NOBODY!.uid}\n`);
  }, 20_000);

  it('adopts a user task after its agent is gone, by pid and start time, and stops it', async () => {
    const s = setup('while [ ! -e release ]; do sleep 0.02; done; exit 3', 'nobody');
    const input = JSON.stringify({ task: s.task, allocDir: s.allocDir, taskDir: s.taskDir, env: s.ctx.env, attempt: 0 });
    const { stdout: out } = await promisify(execFile)(process.execPath, ['--import', 'tsx', join(here, 'fixtures', 'spawn-and-exit.ts'), input], { cwd: repoRoot });
    const handle = JSON.parse(out.trim().split('\n').at(-1)!) as DriverHandle;
    strays.push(handle.pid!);
    const sup = (handle.state as { supervisor: { prefix: string; pid: number } }).supervisor;
    // The workload is the user's; the supervisor that writes its status stays root.
    await switchedTo(handle.pid!, NOBODY!.uid);
    expect(uidOf(sup.pid)).toBe(0);
    expect(readProcStat(handle.pid!)!.startTime).toBe(handle.startTime);

    const c = createRawExecDriver({ pollIntervalMs: 20 }).recover(handle, s.task, s.ctx);
    controllers.push(c);
    expect(c.handle()).toMatchObject({ pid: handle.pid, startTime: handle.startTime });
    // The release file goes where the task looks: its own working directory.
    const exit = c.wait(never());
    writeFileSync(join(s.taskDir, 'release'), '');
    expect(await exit).toEqual({ exitCode: 3, signal: 0 });
    expect(readFileSync(`${sup.prefix}.claim`, 'utf8')).toBe(`${sup.pid}\npid ${handle.pid}\nstatus 3\n`);

    // And a second start of the same attempt finds that process again instead of running it twice.
    const found = await createRawExecDriver().findStarted(s.task, s.ctx, never());
    expect(found?.handle()).toMatchObject({ pid: handle.pid });
  }, 30_000);

  it('stops a user task with its kill signal (the root agent signals the user\'s process group)', async () => {
    const s = setup('sleep 600 & wait', 'nobody');
    const c = await started(s);
    const pid = c.pid!;
    await switchedTo(pid, NOBODY!.uid);
    await c.shutdown({ signal: 'SIGTERM', timeout: 5_000 }, never());
    expect(await c.wait(never())).toMatchObject({ signal: 15 });
    expect(isLive(readProcStat(pid))).toBe(false);
  }, 20_000);

  it('fails the start of a task whose user does not exist, naming it, and runs nothing', async () => {
    const s = setup('echo ran > ran', 'no-such-user-allocrun');
    const c = createRawExecDriver().controller(s.task, s.ctx);
    controllers.push(c);
    await expect(c.start(never())).rejects.toThrow('task "t": user "no-such-user-allocrun": no user "no-such-user-allocrun" on this machine');
    expect(c.pid).toBeUndefined();
    expect(existsSync(join(s.taskDir, 'ran'))).toBe(false);
  });

  it('refuses to start a supervisor in a private/ dir the task could have made', async () => {
    const s = setup('echo ran > ran', 'nobody');
    // What a task (owner of its files, writer of the task dir) could leave there: its own private/.
    rmSync(join(s.taskDir, 'private'), { recursive: true, force: true });
    mkdirSync(join(s.taskDir, 'private'), { mode: 0o700 });
    chownSync(join(s.taskDir, 'private'), NOBODY!.uid, NOBODY!.gid);
    const c = createRawExecDriver().controller(s.task, s.ctx);
    controllers.push(c);
    await expect(c.start(never())).rejects.toThrow(/private is owned by uid 65534; it must be a directory of the agent's user/);
    expect(existsSync(join(s.taskDir, 'ran'))).toBe(false);
  });
});

describe('raw_exec task user, under an agent that cannot switch users', () => {
  /** The machine as it is, except that switching users is not possible (an agent not running as root). */
  const notRoot: UserSwitching = { ...systemUserSwitching, cannotSwitch: () => 'allocrun runs as uid 1000, not root, so it cannot run a task as another user' };

  it('fails the start of a task naming a user, saying why and what to do, and runs nothing', async () => {
    restoreSwitching = useUserSwitching(notRoot);
    const s = setup('echo ran > ran', 'nobody');
    const c = createRawExecDriver().controller(s.task, s.ctx);
    controllers.push(c);
    await expect(c.start(never())).rejects.toThrow(
      'task "t": user "nobody": cannot run the task as "nobody": allocrun runs as uid 1000, not root, so it cannot run a task as another user; remove "user" from the task, or run the agent as root',
    );
    expect(c.pid).toBeUndefined();
    expect(existsSync(join(s.taskDir, 'ran'))).toBe(false);
  });

  it('still runs a task naming no user, as the agent\'s own user', async () => {
    restoreSwitching = useUserSwitching(notRoot);
    const s = setup('id -u');
    const c = await started(s);
    expect(await c.wait(never())).toEqual({ exitCode: 0, signal: 0 });
    expect(stdout(s)).toBe(`${process.getuid!()}\n`);
  }, 20_000);
});
