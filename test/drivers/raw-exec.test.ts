import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { firstValueFrom, lastValueFrom, toArray } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { realClock } from '../../src/drivers/clock.ts';
import type { Controller, DriverContext, DriverHandle } from '../../src/drivers/controller.ts';
import { isLive, readProcStat } from '../../src/drivers/raw-exec/proc-stat.ts';
import { lookupBin, signalGroup, signalPid, toSignalNumber } from '../../src/drivers/raw-exec/process.ts';
import { AdoptedWorkload } from '../../src/drivers/raw-exec/workload.ts';
import { InvalidSignalError } from '../../src/drivers/raw-exec/errors.ts';
import { createRawExecDriver, type RawExecController, type RawExecDriverOptions } from '../../src/drivers/raw-exec/raw-exec-driver.ts';
import { listLogIndices } from '../../src/drivers/raw-exec/rotating-log.ts';
import { readExitStatus } from '../../src/drivers/raw-exec/supervisor.ts';
import type { LogConfig, TaskSpec } from '../../src/jobspec/types.ts';
import { describeControllerConformance } from './controller-conformance.ts';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '..', '..');
const SH = '/bin/sh';
const NODE = process.execPath;
const never = (): AbortSignal => new AbortController().signal;

/** Polls `cond` until it holds; a bounded wait for a state, never a timed assertion. */
async function until(cond: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const gone = (pid: number): boolean => !isLive(readProcStat(pid));

// Every test gets a fresh alloc dir; every controller started is killed afterwards, whatever happened.
const allocDirs: string[] = [];
const controllers: Controller[] = [];
const strayPids: number[] = [];

async function cleanup(): Promise<void> {
  for (const c of controllers.splice(0)) await c.terminate(never()).catch(() => {});
  for (const pid of strayPids.splice(0)) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  for (const d of allocDirs.splice(0)) rmSync(d, { recursive: true, force: true });
}
afterEach(cleanup);

interface Setup {
  task: TaskSpec;
  ctx: DriverContext;
  allocDir: string;
  taskDir: string;
  logDir: string;
}

function setup(name: string, command: string, args: string[], opts: { logs?: LogConfig; env?: Record<string, string> } = {}): Setup {
  const allocDir = mkdtempSync(join(tmpdir(), 'allocrun-raw-exec-'));
  allocDirs.push(allocDir);
  const taskDir = join(allocDir, name);
  const task: TaskSpec = { name, driver: 'raw_exec', config: { command, args } };
  const ctx: DriverContext = {
    allocId: 'a1',
    env: opts.env ?? { PATH: process.env.PATH ?? '/usr/bin:/bin', TASK: name },
    taskDir,
    allocDir,
    clock: realClock,
    ...(opts.logs ? { logs: opts.logs } : {}),
  };
  return { task, ctx, allocDir, taskDir, logDir: join(allocDir, 'alloc', 'logs') };
}

function controllerFor(s: Setup, driverOpts: RawExecDriverOptions = {}): RawExecController {
  const c = createRawExecDriver(driverOpts).controller(s.task, s.ctx);
  controllers.push(c);
  return c;
}

async function run(s: Setup, driverOpts: RawExecDriverOptions = {}): Promise<RawExecController> {
  const c = controllerFor(s, driverOpts);
  await c.prepare(never());
  await c.start(never());
  return c;
}

const stdoutOf = (s: Setup, i = 0) => readFileSync(join(s.logDir, `${s.task.name}.stdout.${i}`), 'utf8');

/** Waits until the task has printed `ready` (it has installed its traps), read back from its log file. */
async function ready(s: Setup): Promise<void> {
  await until(() => existsSync(join(s.logDir, `${s.task.name}.stdout.0`)) && stdoutOf(s).includes('ready'), `${s.task.name} to be ready`);
}

describeControllerConformance({
  name: 'raw_exec',
  async make(kind) {
    const scripts = {
      exits0: 'exit 0',
      exits3: 'exit 3',
      runsLong: 'exec sleep 600',
      // Ignored signals stay ignored across exec, so the sleeps ignore SIGTERM too.
      ignoresSigterm: "trap '' TERM; echo ready; while :; do sleep 0.05; done",
    } as const;
    const s = setup(kind, SH, ['-c', scripts[kind]]);
    const c = controllerFor(s);
    if (kind !== 'ignoresSigterm') return c;
    // SIGTERM must not arrive before the trap is installed: start returns once the script says so.
    const start = c.start.bind(c);
    c.start = async (signal) => {
      await start(signal);
      await ready(s);
    };
    return c;
  },
  // Real time passes by itself; yielding briefly lets the bounded settle loop poll the outcome.
  advance: (ms) => new Promise((r) => setTimeout(r, Math.min(ms, 20))),
  cleanup,
});

// The process and workload rules (src/drivers/raw-exec/process.ts, workload.ts) sit here rather than in a file of
// their own: Stryker's vitest runner runs this suite alone (see vitest.mutate.config.ts), so its rules must be in
// it to be counted; first in the file, so a mutant they catch fails fast.
describe('raw_exec process rules', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  /** A task dir with executable files at the given relative paths (a trailing / makes a directory). */
  function taskDirWith(...paths: string[]): string {
    const dir = mkdtempSync(join(tmpdir(), 'allocrun-lookup-'));
    dirs.push(dir);
    for (const p of paths) {
      const at = join(dir, p);
      if (p.endsWith('/')) mkdirSync(at, { recursive: true });
      else {
        mkdirSync(dirname(at), { recursive: true });
        writeFileSync(at, '#!/bin/sh\n');
        chmodSync(at, p.includes('noexec') ? 0o644 : 0o755);
      }
    }
    return dir;
  }

  it('looks a command up as Nomad\'s lookupBin does: local/ first, then the task dir, then PATH for a bare name', () => {
    const dir = taskDirWith('local/tool', 'tool', 'only-here', 'bin/onpath', 'bin2/onpath', 'sub/deep');
    expect(lookupBin('tool', dir, undefined)).toBe(join(dir, 'local', 'tool'));
    expect(lookupBin('only-here', dir, undefined)).toBe(join(dir, 'only-here'));
    // PATH entries in order, empty ones skipped, relative ones from the task dir.
    expect(lookupBin('onpath', dir, `::${join(dir, 'bin2')}:bin`)).toBe(join(dir, 'bin2', 'onpath'));
    expect(lookupBin('onpath', dir, 'bin')).toBe(join(dir, 'bin', 'onpath'));
    expect(lookupBin('onpath', dir, undefined)).toBeUndefined();
    // A command with a slash is looked for in the task dir only, never on PATH.
    expect(lookupBin('sub/deep', dir, undefined)).toBe(join(dir, 'sub', 'deep'));
    expect(lookupBin('x/onpath', dir, join(dir, 'bin'))).toBeUndefined();
    // Even when a PATH directory holds that relative path.
    const elsewhere = taskDirWith('sub/deep');
    expect(lookupBin('sub/deep', join(dir, 'bin'), elsewhere)).toBeUndefined();
  });

  it('takes an absolute command only when it is an executable file', () => {
    const dir = taskDirWith('run', 'noexec-file', 'adir/');
    expect(lookupBin(join(dir, 'run'), '/nonexistent', undefined)).toBe(join(dir, 'run'));
    expect(lookupBin(join(dir, 'noexec-file'), dir, undefined)).toBeUndefined();
    expect(lookupBin(join(dir, 'adir'), dir, undefined)).toBeUndefined();
    expect(lookupBin(join(dir, 'missing'), dir, undefined)).toBeUndefined();
    // Relative candidates too: a directory or a file without the execute bit is skipped.
    const other = taskDirWith('local/adir/', 'adir', 'local/noexec-x', 'noexec-x');
    expect(lookupBin('adir', other, undefined)).toBe(join(other, 'adir'));
    expect(lookupBin('noexec-x', other, undefined)).toBeUndefined();
  });

  it('names signals by number and refuses an unknown name with InvalidSignalError', () => {
    expect(toSignalNumber('SIGTERM')).toBe(15);
    expect(toSignalNumber('SIGKILL')).toBe(9);
    expect(() => toSignalNumber('SIGNOPE')).toThrow(InvalidSignalError);
    expect(() => toSignalNumber('SIGNOPE')).toThrow('unknown signal "SIGNOPE": use a name like SIGTERM, SIGINT or SIGHUP');
  });

  it('signals a live pid, answers false for a gone one, and never signals group 0, 1 or below', () => {
    expect(signalPid(process.pid, 0)).toBe(true);
    // A pid past the kernel's pid_max is no process.
    expect(signalPid(4_194_305, 0)).toBe(false);
    expect(signalGroup(4_194_305, 0)).toBe(false);
    for (const pgid of [0, 1, -3, Number.NaN]) expect(() => signalGroup(pgid, 0)).toThrow(`refusing to signal process group ${pgid}`);
    // Other errors are thrown, not read as "gone": an invalid signal number.
    expect(() => signalPid(process.pid, 999)).toThrow();
  });
});

describe('an adopted workload\'s signals', () => {
  /** A `sleep` in a process group of its own with a background `sleep` beside it: the leader's and the child's pids. */
  async function group(): Promise<{ leader: number; child: number; startTime: number }> {
    const { spawn } = await import('node:child_process');
    const p = spawn(SH, ['-c', 'sleep 30 & echo $!; wait'], { detached: true, stdio: ['ignore', 'pipe', 'ignore'] });
    strayPids.push(p.pid!);
    const child = Number(await new Promise<string>((resolve) => p.stdout!.once('data', (d: Buffer) => resolve(d.toString()))));
    p.unref();
    return { leader: p.pid!, child, startTime: readProcStat(p.pid!)!.startTime };
  }

  it('signals nothing when the pid now belongs to a process with another start time (a reused pid)', async () => {
    const g = await group();
    const stranger = new AdoptedWorkload(g.leader, g.leader, g.startTime + 1, realClock, 20);
    expect(stranger.signalAll(9)).toBe(false);
    expect(stranger.signalMain(9)).toBe(false);
    expect(gone(g.leader) || gone(g.child)).toBe(false);
  });

  it('sends signalAll to the whole group, or to the pid alone without a group; signalMain to the leader only', async () => {
    const g = await group();
    const alone = new AdoptedWorkload(g.leader, undefined, g.startTime, realClock, 20);
    expect(alone.signalAll(0)).toBe(true);
    const grouped = new AdoptedWorkload(g.leader, g.leader, g.startTime, realClock, 20);
    expect(grouped.signalMain(9)).toBe(true);
    await until(() => gone(g.leader), 'the leader to go', 5_000);
    expect(gone(g.child)).toBe(false);
    // The leader gone, the group's pid is no longer "ours": nothing more is signalled through it.
    expect(grouped.signalAll(9)).toBe(false);

    const h = await group();
    expect(new AdoptedWorkload(h.leader, h.leader, h.startTime, realClock, 20).signalAll(9)).toBe(true);
    await until(() => gone(h.leader) && gone(h.child), 'the whole group to go', 5_000);
    process.kill(g.child, 'SIGKILL');
  });

  it('signals nothing once its exit is known', async () => {
    const g = await group();
    const w = new AdoptedWorkload(g.leader, g.leader, g.startTime, realClock, 20);
    const exit = w.waitExit();
    expect(w.signalAll(9)).toBe(true);
    // Its parent (this process) reaps it: the signal sent is the evidence of how it ended.
    expect(await exit).toMatchObject({ exitCode: 137, signal: 9 });
    expect(w.result).toBeDefined();
    expect(w.signalAll(9)).toBe(false);
    expect(w.signalMain(9)).toBe(false);
  });

  it('rejects a wait whose signal aborts, at once when already aborted, and leaves the process running', async () => {
    const g = await group();
    const w = new AdoptedWorkload(g.leader, g.leader, g.startTime, realClock, 20);
    const done = new AbortController();
    done.abort(new Error('given up'));
    await expect(w.waitExit(done.signal)).rejects.toThrow('given up');
    const later = new AbortController();
    const waiting = w.waitExit(later.signal);
    later.abort(new Error('later'));
    await expect(waiting).rejects.toThrow('later');
    expect(gone(g.leader)).toBe(false);
  });
});

describe('raw_exec driver', () => {
  describe('exit codes and signals', () => {
    it('reports the exit code of a process that exits on its own', async () => {
      const c = await run(setup('t', SH, ['-c', 'exit 42']));
      expect(await c.wait(never())).toEqual({ exitCode: 42, signal: 0 });
    });

    it('reports kill_signal SIGTERM as exit code 143, signal 15', async () => {
      const c = await run(setup('t', SH, ['-c', 'exec sleep 600']));
      await c.shutdown({ signal: 'SIGTERM', timeout: 5_000 }, never());
      expect(await c.wait(never())).toEqual({ exitCode: 143, signal: 15 });
    });

    it('reports a signal it did not send the same way (SIGINT → 130, 2)', async () => {
      const c = await run(setup('t', SH, ['-c', 'exec sleep 600']));
      process.kill(c.pid!, 'SIGINT');
      expect(await c.wait(never())).toEqual({ exitCode: 130, signal: 2 });
    });

    it('force-kills a process that ignores SIGTERM after the kill timeout', async () => {
      const s = setup('t', SH, ['-c', "trap '' TERM; echo ready; while :; do sleep 0.05; done"]);
      const c = await run(s);
      await ready(s);
      await c.shutdown({ signal: 'SIGTERM', timeout: 200 }, never());
      expect(await c.wait(never())).toEqual({ exitCode: 137, signal: 9 });
    });

    it('caps the kill timeout at the driver maximum', async () => {
      const s = setup('t', SH, ['-c', "trap '' TERM; echo ready; while :; do sleep 0.05; done"]);
      const c = await run(s, { maxKillTimeout: 100 });
      await ready(s);
      // Without the cap this would take ten minutes and the test would time out.
      await c.shutdown({ signal: 'SIGTERM', timeout: 600_000 }, never());
      expect(await c.wait(never())).toEqual({ exitCode: 137, signal: 9 });
    });

    it('sends signal() to the running process', async () => {
      const s = setup('t', SH, ['-c', "trap 'exit 7' USR1; echo ready; while :; do sleep 0.05; done"]);
      const c = await run(s);
      await ready(s);
      await c.signal('SIGUSR1', never());
      expect(await c.wait(never())).toEqual({ exitCode: 7, signal: 0 });
    });

    it('rejects signal() before start and for an unknown signal name', async () => {
      const c = controllerFor(setup('t', SH, ['-c', 'exec sleep 600']));
      await expect(c.signal('SIGHUP', never())).rejects.toMatchObject({ code: 'ErrTaskNotRunning' });
      await c.prepare(never());
      await c.start(never());
      await expect(c.signal('SIGNOPE', never())).rejects.toMatchObject({ code: 'ErrInvalidSignal' });
    });

    it('terminate kills at once and is a no-op after exit', async () => {
      const c = await run(setup('t', SH, ['-c', 'exec sleep 600']));
      await c.terminate(never());
      expect(await c.wait(never())).toEqual({ exitCode: 137, signal: 9 });
      await expect(c.terminate(never())).resolves.toBeUndefined();
    });
  });

  describe('process group', () => {
    it("kills the task's children and grandchildren with it, even ones that ignore SIGTERM", async () => {
      // task sh → child sh (ignores TERM) → grandchild sleep (inherits the ignore)
      const s = setup('t', SH, ['-c', `${SH} -c "trap '' TERM; sleep 600 & echo \\$! > grandchild.pid; wait" & wait`]);
      const c = await run(s);
      const pidFile = join(s.taskDir, 'grandchild.pid');
      await until(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() !== '', 'the grandchild pid');
      const grandchild = Number(readFileSync(pidFile, 'utf8'));
      expect(gone(grandchild)).toBe(false);
      expect(readProcStat(grandchild)!.pgrp).toBe(c.pid);
      await c.shutdown({ signal: 'SIGTERM', timeout: 5_000 }, never());
      expect(await c.wait(never())).toEqual({ exitCode: 143, signal: 15 });
      await until(() => gone(grandchild), 'the grandchild to be killed');
    });

    it('kills processes left in its group when the main process exits on its own', async () => {
      const s = setup('t', SH, ['-c', 'sleep 600 & echo $! > bg.pid']);
      const c = await run(s);
      expect(await c.wait(never())).toEqual({ exitCode: 0, signal: 0 });
      const bg = Number(readFileSync(join(s.taskDir, 'bg.pid'), 'utf8'));
      await until(() => gone(bg), 'the background process to be killed');
    });
  });

  describe('spawning', () => {
    it('runs the command without a shell, in the task dir, with exactly the task env', async () => {
      const env = { PATH: '/nonexistent', ONLY: 'this', NOMAD_TASK_NAME: 't' };
      const script = 'console.log(JSON.stringify({ env: process.env, cwd: process.cwd(), argv: process.argv.slice(1) }))';
      const s = setup('t', NODE, ['-e', script, '$HOME; echo hi', '*'], { env });
      const c = await run(s);
      expect(await c.wait(never())).toEqual({ exitCode: 0, signal: 0 });
      await until(() => stdoutOf(s).endsWith('\n'), 'the output');
      const out = JSON.parse(stdoutOf(s)) as { env: Record<string, string>; cwd: string; argv: string[] };
      expect(out.env).toEqual(env);
      expect(out.cwd).toBe(s.taskDir);
      expect(out.argv).toEqual(['$HOME; echo hi', '*']);
    });

    it('gives the task its own values of the names the supervisor scripts use (p, s, w, f, go)', async () => {
      const env = { p: 'P', s: 'S', w: 'W', f: 'F', go: 'GO', c: 'C', allocrun_go: 'mine' };
      const s = setup('t', NODE, ['-e', 'console.log(JSON.stringify(process.env))'], { env });
      const c = await run(s);
      expect(await c.wait(never())).toEqual({ exitCode: 0, signal: 0 });
      await until(() => stdoutOf(s).endsWith('\n'), 'the output');
      expect(JSON.parse(stdoutOf(s))).toEqual(env);
    });

    it('finds a bare command name on PATH', async () => {
      const c = await run(setup('t', 'sh', ['-c', 'exit 4']));
      expect(await c.wait(never())).toMatchObject({ exitCode: 4 });
    });

    it('rejects start with ErrCommandNotFound when the command does not exist', async () => {
      const c = controllerFor(setup('t', '/no/such/binary', []));
      await c.prepare(never());
      await expect(c.start(never())).rejects.toMatchObject({ code: 'ErrCommandNotFound', message: expect.stringContaining('/no/such/binary') });
      expect(c.handle()).toBeUndefined();
    });

    it('rejects prepare with an error naming config.command or config.args', async () => {
      const s = setup('t', SH, []);
      const bad = (config: Record<string, unknown>) => createRawExecDriver().controller({ ...s.task, config }, s.ctx).prepare(never());
      await expect(bad({})).rejects.toMatchObject({ code: 'ErrRawExecConfig', message: expect.stringContaining('config.command') });
      await expect(bad({ command: SH, args: 'x' })).rejects.toThrow('config.args must be a list');
      await expect(bad({ command: SH, args: ['ok', {}] })).rejects.toThrow('config.args[1]');
      await expect(bad({ command: SH, comand: 'typo' })).rejects.toThrow('config.comand');
    });

    it('rejects prepare for a logs block that cannot hold any output', async () => {
      const c = controllerFor(setup('t', SH, ['-c', 'exit 0'], { logs: { maxFiles: 0, maxFileSize: 10 } }));
      await expect(c.prepare(never())).rejects.toMatchObject({ code: 'ErrLogConfig' });
    });

    it('rejects wait before start', async () => {
      const c = controllerFor(setup('t', SH, ['-c', 'exit 0']));
      await expect(c.wait(never())).rejects.toMatchObject({ code: 'ErrTaskNotRunning' });
    });

    it('start is idempotent: a second call does not spawn again', async () => {
      const c = await run(setup('t', SH, ['-c', 'exec sleep 600']));
      const pid = c.pid;
      await c.start(never());
      expect(c.pid).toBe(pid);
    });

    it('has a handle with the pid and its /proc start time', async () => {
      const c = await run(setup('t', SH, ['-c', 'exec sleep 600']));
      const h = c.handle()!;
      expect(h).toMatchObject({ driver: 'raw_exec', taskName: 't', pid: c.pid });
      expect(h.startTime).toBe(readProcStat(c.pid!)!.startTime);
    });
  });

  describe('logs', () => {
    it('writes stdout and stderr to alloc/logs/<task>.stdout.0 and .stderr.0', async () => {
      const s = setup('web', SH, ['-c', 'echo out; echo err >&2']);
      const c = await run(s);
      await c.wait(never());
      const lines = await lastValueFrom(c.logs({ follow: true }).pipe(toArray()));
      expect(lines.map((l) => `${l.stream}:${l.line}`)).toEqual(['stdout:out', 'stderr:err']);
      expect(readFileSync(join(s.logDir, 'web.stderr.0'), 'utf8')).toBe('err\n');
    });

    it('has every byte of the output in the log files once wait resolves (the pipes are drained first)', async () => {
      // 60,000 bytes fit in the pipe: the task can exit before the agent has read any of them.
      const s = setup('web', SH, ['-c', "head -c 60000 /dev/zero | tr '\\000' x; exit 3"], { logs: { maxFiles: 2, maxFileSize: 1_000_000 } });
      const c = await run(s);
      expect(await c.wait(never())).toEqual({ exitCode: 3, signal: 0 });
      expect(stdoutOf(s)).toHaveLength(60_000);
    });

    it('rotates at the size limit and keeps only max_files files', async () => {
      // 100 lines of 10 bytes = 1000 bytes into 100-byte files: files 0..9, of which the last 3 are kept.
      const script = "for (let i = 0; i < 100; i++) process.stdout.write(String(i).padStart(9, '0') + '\\n')";
      const s = setup('web', NODE, ['-e', script], { logs: { maxFiles: 3, maxFileSize: 100 } });
      const c = await run(s);
      await c.wait(never());
      const lines = await lastValueFrom(c.logs({ follow: true, stream: 'stdout' }).pipe(toArray()));
      expect(listLogIndices(s.logDir, 'web.stdout')).toEqual([7, 8, 9]);
      for (const i of [7, 8, 9]) expect(stdoutOf(s, i)).toHaveLength(100);
      expect(lines.map((l) => Number(l.line))).toEqual(Array.from({ length: 30 }, (_, i) => 70 + i));
    });

    it('follows output as it is written and completes when the task exits', async () => {
      const s = setup('web', SH, ['-c', 'echo first; while [ ! -e go ]; do sleep 0.02; done; echo second']);
      const c = await run(s);
      const seen: string[] = [];
      const done = lastValueFrom(c.logs({ follow: true, stream: 'stdout' }).pipe(toArray()));
      const sub = c.logs({ follow: true, stream: 'stdout' }).subscribe((l) => seen.push(l.line));
      await until(() => seen.includes('first'), 'the first line');
      writeFileSync(join(s.taskDir, 'go'), '');
      expect((await done).map((l) => l.line)).toEqual(['first', 'second']);
      sub.unsubscribe();
    });
  });

  describe('stats', () => {
    it('emits CPU and memory for a live process, summed over its group', async () => {
      const s = setup('t', SH, ['-c', 'sleep 600 & exec sleep 600']);
      const c = await run(s);
      await until(() => readProcStat(c.pid!)?.comm === 'sleep', 'the exec');
      const usage = await firstValueFrom(c.stats(50));
      // The background sleep and the main one: both members of the task's group.
      expect(usage.pids).toContain(c.pid);
      expect(usage.pids).toHaveLength(2);
      expect(usage.memory.rss).toBeGreaterThan(0);
      expect(usage.cpu.percent).toBeGreaterThanOrEqual(0);
      expect(usage.cpu.userMs).toBeGreaterThanOrEqual(0);
    });

    it('completes the stats stream when the task is gone', async () => {
      const c = await run(setup('t', SH, ['-c', 'exec sleep 600']));
      const all = lastValueFrom(c.stats(20).pipe(toArray()));
      await c.terminate(never());
      await expect(all).resolves.toBeInstanceOf(Array);
    });
  });

  describe('recover', () => {
    /** Starts the task from a separate node process that prints the handle and exits. */
    async function spawnElsewhere(s: Setup): Promise<DriverHandle> {
      const input = JSON.stringify({ task: s.task, allocDir: s.allocDir, taskDir: s.taskDir, env: s.ctx.env, attempt: s.ctx.attempt });
      const { stdout } = await promisify(execFile)(NODE, ['--import', 'tsx', join(here, 'fixtures', 'spawn-and-exit.ts'), input], { cwd: repoRoot });
      const handle = JSON.parse(stdout.trim().split('\n').at(-1)!) as DriverHandle;
      strayPids.push(handle.pid!);
      return handle;
    }

    it('waits on a recovered process after the agent that started it is gone', async () => {
      const s = setup('t', SH, ['-c', 'while [ ! -e release ]; do sleep 0.02; done; exit 5']);
      const handle = await spawnElsewhere(s);
      const stat = readProcStat(handle.pid!);
      expect(isLive(stat)).toBe(true);
      expect(stat!.ppid).not.toBe(process.pid); // we are not its parent

      const c = createRawExecDriver({ pollIntervalMs: 20 }).recover(handle, s.task, s.ctx);
      expect(c.handle()).toMatchObject({ pid: handle.pid, startTime: handle.startTime });
      const exit = c.wait(never());
      writeFileSync(join(s.taskDir, 'release'), '');
      // Exact: the supervisor recorded it, whoever reaped the process.
      expect(await exit).toEqual({ exitCode: 5, signal: 0 });
    }, 20_000);

    it('learns of a recovered process exit from the end of its output pipes, without polling /proc', async () => {
      const s = setup('t', SH, ['-c', 'while [ ! -e release ]; do sleep 0.02; done; exit 4']);
      const handle = await spawnElsewhere(s);
      // The backstop poll would take ten minutes: only the pipes' end can answer within the test's time.
      const c = createRawExecDriver({ pollIntervalMs: 20, watchedPollIntervalMs: 600_000 }).recover(handle, s.task, s.ctx);
      const exit = c.wait(never());
      await new Promise((r) => setTimeout(r, 100)); // the first look finds it live; the next is ten minutes away
      writeFileSync(join(s.taskDir, 'release'), '');
      expect(await exit).toEqual({ exitCode: 4, signal: 0 });
    }, 20_000);

    it('keeps why it stopped a process: a restart the next agent reads back as a restart, not a kill', async () => {
      const s = setup('t', SH, ['-c', 'exec sleep 600']);
      const handle = await spawnElsewhere(s);
      const c = createRawExecDriver({ pollIntervalMs: 20 }).recover(handle, s.task, s.ctx);
      await c.shutdown({ signal: 'SIGTERM', timeout: 5_000, reason: 'restart' }, never());
      expect(await c.wait(never())).toEqual({ exitCode: 143, signal: 15, stoppedByAgent: true, stoppedFor: 'restart' });
      // The agent that began the restart died: the next one recovers the finished process from its files.
      const next = createRawExecDriver({ pollIntervalMs: 20 }).recover(handle, s.task, s.ctx);
      expect(await next.wait(never())).toEqual({ exitCode: 143, signal: 15, stoppedByAgent: true, stoppedFor: 'restart' });
    }, 20_000);

    it('shuts down a recovered process with its kill signal', async () => {
      const s = setup('t', SH, ['-c', 'exec sleep 600']);
      const handle = await spawnElsewhere(s);
      const c = createRawExecDriver({ pollIntervalMs: 20 }).recover(handle, s.task, s.ctx);
      await c.shutdown({ signal: 'SIGTERM', timeout: 5_000 }, never());
      // Marked as the end of a stop the agent began, so an agent restarted meanwhile still reads it as a kill.
      expect(await c.wait(never())).toEqual({ exitCode: 143, signal: 15, stoppedByAgent: true });
      expect(gone(handle.pid!)).toBe(true);
    }, 20_000);

    it('refuses an unsupervised handle whose start time does not match, or whose process is gone', async () => {
      const s = setup('t', SH, ['-c', 'exec sleep 600']);
      const c = await run(s, { supervise: false });
      const handle = c.handle()!;
      expect(handle.state).not.toHaveProperty('supervisor');
      const driver = createRawExecDriver();
      expect(() => driver.recover({ ...handle, startTime: handle.startTime! - 1 }, s.task, s.ctx)).toThrow(
        expect.objectContaining({ code: 'ErrRecoverFailed', reason: 'pid-reused' }),
      );
      await c.terminate(never());
      expect(() => driver.recover(handle, s.task, s.ctx)).toThrow(expect.objectContaining({ code: 'ErrRecoverFailed', reason: 'gone' }));
      expect(() => driver.recover({ driver: 'raw_exec', taskName: 't' }, s.task, s.ctx)).toThrow(/lacks a pid/);
    });

    it('recovers the exit status of a task that exited while no agent ran, from its supervisor', async () => {
      const s = setup('t', SH, ['-c', 'while [ ! -e release ]; do sleep 0.02; done; exit 7']);
      const handle = await spawnElsewhere(s);
      const sup = (handle.state as { supervisor: { prefix: string; pid: number } }).supervisor;
      writeFileSync(join(s.taskDir, 'release'), '');
      await until(() => readExitStatus(sup.prefix) !== undefined && gone(sup.pid), 'the supervisor to record the exit');
      expect(gone(handle.pid!)).toBe(true);
      const c = createRawExecDriver({ pollIntervalMs: 20 }).recover(handle, s.task, s.ctx);
      expect(await c.wait(never())).toEqual({ exitCode: 7, signal: 0 });
    }, 20_000);

    it('keeps what a task writes while no agent runs (no SIGPIPE), and the next agent logs it', async () => {
      const s = setup('t', SH, ['-c', 'echo before; until [ -e release ]; do sleep 0.02; done; echo after; echo oops >&2; until [ -e finish ]; do sleep 0.02; done; exit 6']);
      const handle = await spawnElsewhere(s);
      writeFileSync(join(s.taskDir, 'release'), '');
      const c = createRawExecDriver({ pollIntervalMs: 20 }).recover(handle, s.task, s.ctx);
      await until(() => existsSync(join(s.logDir, 't.stdout.0')) && stdoutOf(s).includes('after'), 'the output written while no agent ran');
      writeFileSync(join(s.taskDir, 'finish'), '');
      expect(await c.wait(never())).toEqual({ exitCode: 6, signal: 0 });
      expect(stdoutOf(s)).toBe('before\nafter\n');
      await until(() => readFileSync(join(s.logDir, 't.stderr.0'), 'utf8') === 'oops\n', 'stderr');
    }, 20_000);

    it('reports a task whose supervisor died with it, leaving no status, as lost', async () => {
      const s = setup('t', SH, ['-c', 'exec sleep 600']);
      const handle = await spawnElsewhere(s);
      const sup = (handle.state as { supervisor: { pid: number } }).supervisor;
      process.kill(sup.pid, 'SIGKILL');
      process.kill(handle.pid!, 'SIGKILL'); // its pid: it may not lead its group yet (SUPERVISOR_SCRIPT)
      await until(() => gone(sup.pid) && gone(handle.pid!), 'both processes to die');
      const c = createRawExecDriver({ pollIntervalMs: 20 }).recover(handle, s.task, s.ctx);
      await expect(c.wait(never())).rejects.toMatchObject({ code: 'ErrWorkloadLost', message: expect.stringContaining('no exit status was recorded') });
    }, 20_000);

    it('a start of an attempt that an earlier agent already spawned adopts that process instead of spawning again', async () => {
      const s = setup('t', SH, ['-c', 'exec sleep 600']);
      s.ctx = { ...s.ctx, attempt: 3 };
      const handle = await spawnElsewhere(s);
      const c = await run(s);
      expect(c.pid).toBe(handle.pid);
      expect(readdirSync(join(s.taskDir, 'private')).filter((f) => f.endsWith('.claim'))).toHaveLength(1);
      await c.shutdown({ signal: 'SIGTERM', timeout: 5_000 }, never());
      expect(await c.wait(never())).toEqual({ exitCode: 143, signal: 15, stoppedByAgent: true });
    }, 20_000);

    it('a start that finds an earlier start recorded but never spawned cancels that token and spawns afresh', async () => {
      const s = setup('t', SH, ['-c', 'exit 4']);
      s.ctx = { ...s.ctx, attempt: 1 };
      mkdirSync(join(s.taskDir, 'private'), { recursive: true });
      writeFileSync(join(s.taskDir, 'private', 'exec-1.intent'), 'deadbeef\n');
      const c = await run(s);
      expect(await c.wait(never())).toEqual({ exitCode: 4, signal: 0 });
      // A supervisor of the old token that starts late finds its claim taken and runs nothing.
      expect(readFileSync(join(s.taskDir, 'private', 'exec-1-deadbeef.claim'), 'utf8')).toBe('void\n');
      expect(readFileSync(join(s.taskDir, 'private', 'exec-1.intent'), 'utf8').trim()).not.toBe('deadbeef');
    });
  });
});
