/**
 * raw_exec's rules about processes, with real processes: a supervisor's claim on its token is exclusive
 * (of two claimants exactly one runs the task, and a voided token runs nothing); an adopted workload's
 * process group is reaped when its leader exits; and the last output a task writes before it exits reaches
 * its logs and its followers.
 */
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { lastValueFrom, toArray } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { realClock } from '../../src/drivers/clock.ts';
import type { Controller, DriverContext, DriverHandle } from '../../src/drivers/controller.ts';
import { isLive, readProcStat } from '../../src/drivers/raw-exec/proc-stat.ts';
import { lookupBin } from '../../src/drivers/raw-exec/process.ts';
import { createRawExecDriver } from '../../src/drivers/raw-exec/raw-exec-driver.ts';
import { attemptPrefix, CLAIM_LOST, ensurePrivateDir, readClaim, SUPERVISOR_SCRIPT, voidClaim } from '../../src/drivers/raw-exec/supervisor.ts';
import type { TaskSpec } from '../../src/jobspec/types.ts';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '..', '..');
const TOOLS = '/usr/bin:/bin:/usr/sbin:/sbin';
const setsid = lookupBin('setsid', '/', TOOLS)!;
const mkfifo = lookupBin('mkfifo', '/', TOOLS)!;
const never = (): AbortSignal => new AbortController().signal;
const gone = (pid: number): boolean => !isLive(readProcStat(pid));

const dirs: string[] = [];
const controllers: Controller[] = [];
const groups: number[] = [];
afterEach(async () => {
  for (const c of controllers.splice(0)) await c.terminate(never()).catch(() => {});
  for (const g of groups.splice(0)) {
    try {
      process.kill(-g, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const tmp = (name: string) => {
  const d = mkdtempSync(join(tmpdir(), `allocrun-${name}-`));
  dirs.push(d);
  return d;
};

/**
 * Runs the supervisor script for `prefix` as the driver does, its go given at once (stdin closed), the
 * task appending a line to `marker`. Resolves with the supervisor's exit status.
 */
async function supervisor(taskDir: string, prefix: string, marker: string): Promise<number | null> {
  const child = spawn('/bin/sh', ['-c', SUPERVISOR_SCRIPT, 'allocrun-supervisor', prefix, '-', mkfifo, 'allocrun_go', setsid, '/bin/sh', '-c', `echo ran >> ${marker}`], {
    cwd: taskDir,
    env: {},
    stdio: ['pipe', 'ignore', 'ignore', 'pipe'],
  });
  // A supervisor that lost its claim exits before reading its go: the write may find the pipe closed.
  child.stdin!.on('error', () => undefined);
  child.stdin!.end('go\n');
  (child.stdio[3] as Readable).resume();
  const [code] = (await once(child, 'exit')) as [number | null];
  return code;
}

const runs = (marker: string) => (existsSync(marker) ? readFileSync(marker, 'utf8').split('\n').filter(Boolean).length : 0);

describe("a supervisor's claim", () => {
  it('of a token an agent has voided runs nothing and exits CLAIM_LOST', async () => {
    const taskDir = tmp('claim');
    ensurePrivateDir(taskDir);
    const prefix = attemptPrefix(taskDir, 0, 'tok');
    expect(voidClaim(prefix)).toBe(true);
    const marker = join(taskDir, 'marker');
    expect(await supervisor(taskDir, prefix, marker)).toBe(CLAIM_LOST);
    expect(runs(marker)).toBe(0);
    expect(readClaim(prefix)).toEqual({ kind: 'void' });
  });

  it('is exclusive: of two supervisors of one token exactly one runs the task', async () => {
    const taskDir = tmp('claim');
    ensurePrivateDir(taskDir);
    const prefix = attemptPrefix(taskDir, 0, 'tok');
    const marker = join(taskDir, 'marker');
    const codes = await Promise.all([supervisor(taskDir, prefix, marker), supervisor(taskDir, prefix, marker)]);
    expect([...codes].sort()).toEqual([0, CLAIM_LOST].sort());
    expect(runs(marker)).toBe(1);
    expect(readClaim(prefix)).toMatchObject({ kind: 'supervisor' });
  });

  it('once made by a supervisor cannot be voided by an agent', async () => {
    const taskDir = tmp('claim');
    ensurePrivateDir(taskDir);
    const prefix = attemptPrefix(taskDir, 0, 'tok');
    expect(await supervisor(taskDir, prefix, join(taskDir, 'marker'))).toBe(0);
    expect(voidClaim(prefix)).toBe(false);
    expect(readClaim(prefix)).toMatchObject({ kind: 'supervisor' });
  });

  it('voided once cannot be voided again (the second agent learns it lost)', () => {
    const taskDir = tmp('claim');
    ensurePrivateDir(taskDir);
    const prefix = attemptPrefix(taskDir, 0, 'tok');
    expect([voidClaim(prefix), voidClaim(prefix)]).toEqual([true, false]);
  });
});

function setup(name: string, script: string): { task: TaskSpec; ctx: DriverContext; taskDir: string; allocDir: string; logDir: string } {
  const allocDir = tmp('raw-exec');
  const taskDir = join(allocDir, name);
  const task: TaskSpec = { name, driver: 'raw_exec', config: { command: '/bin/sh', args: ['-c', script] } };
  const ctx: DriverContext = { allocId: 'a1', env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, taskDir, allocDir, clock: realClock };
  return { task, ctx, taskDir, allocDir, logDir: join(allocDir, 'alloc', 'logs') };
}

/** Starts the task from another node process that prints the handle and exits: the agent that went away. */
async function spawnElsewhere(s: ReturnType<typeof setup>): Promise<DriverHandle> {
  const input = JSON.stringify({ task: s.task, allocDir: s.allocDir, taskDir: s.taskDir, env: s.ctx.env });
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', join(here, 'fixtures', 'spawn-and-exit.ts'), input], { cwd: repoRoot });
  const handle = JSON.parse(stdout.trim().split('\n').at(-1)!) as DriverHandle;
  groups.push(handle.pid!);
  return handle;
}

/** Polls `cond` until it holds, for at most 5 s: a wait for a state of processes this test does not own. */
async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; !cond(); i++) {
    if (i > 500) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Resolves once `path` holds a pid. */
async function pidIn(path: string): Promise<number> {
  const text = () => (existsSync(path) ? readFileSync(path, 'utf8').trim() : '');
  await until(() => text() !== '', `a pid in ${path}`);
  return Number(text());
}

describe('an adopted workload', () => {
  it('has its process group reaped when its leader exits: a background child it left is killed', async () => {
    const s = setup('t', 'sleep 600 & echo $! > bg.pid; until [ -e release ]; do sleep 0.02; done; exit 0');
    const handle = await spawnElsewhere(s);
    const bg = await pidIn(join(s.taskDir, 'bg.pid'));
    expect(readProcStat(bg)!.pgrp).toBe(handle.pid);
    // The background child holds the output pipes open, so the exit is found by polling: poll fast.
    const c = createRawExecDriver({ pollIntervalMs: 20, watchedPollIntervalMs: 20 }).recover(handle, s.task, s.ctx);
    controllers.push(c);
    const exit = c.wait(never());
    writeFileSync(join(s.taskDir, 'release'), '');
    expect(await exit).toEqual({ exitCode: 0, signal: 0 });
    // SIGKILLed as the exit is found; its death is the kernel's business, so wait for it (bounded).
    await until(() => gone(bg), 'the background child to be killed');
  }, 20_000);
});

describe("an exiting task's last output", () => {
  it('reaches the log file and a follower, down to a last line without a newline', async () => {
    // 200 kB at once, more than a pipe holds: at the exit, the end of it is still in the pipe.
    const s = setup('t', "echo first; until [ -e go ]; do sleep 0.02; done; head -c 200000 /dev/zero | tr '\\000' x; echo; printf last; exit 2");
    const c = createRawExecDriver().controller(s.task, s.ctx);
    controllers.push(c);
    await c.prepare(never());
    await c.start(never());
    const followed = lastValueFrom(c.logs({ follow: true, stream: 'stdout' }).pipe(toArray()));
    writeFileSync(join(s.taskDir, 'go'), '');
    expect(await c.wait(never())).toEqual({ exitCode: 2, signal: 0 });
    const file = readFileSync(join(s.logDir, 't.stdout.0'), 'utf8');
    expect(file).toBe(`first\n${'x'.repeat(200_000)}\nlast`);
    const lines = (await followed).map((l) => l.line);
    expect(lines.map((l) => l.length)).toEqual([5, 200_000, 4]);
    expect(lines.at(-1)).toBe('last');
  }, 20_000);
});

describe('the output drain at exit', () => {
  it('is bounded: a process that escaped the group and holds the output open does not hold up the exit', async () => {
    // The escaped process leads a session of its own, out of reach of the group kill at exit.
    // It says its pid once out of the group; the task exits only then, so the group kill at exit misses it.
    const s = setup('t', `echo before; ${setsid} /bin/sh -c 'echo $$ > escaped.pid.tmp; mv escaped.pid.tmp escaped.pid; exec sleep 600' & until [ -e escaped.pid ]; do sleep 0.01; done; echo after; exit 4`);
    const c = createRawExecDriver().controller(s.task, s.ctx);
    controllers.push(c);
    await c.prepare(never());
    await c.start(never());
    const escaped = await pidIn(join(s.taskDir, 'escaped.pid'));
    groups.push(escaped);
    expect(await c.wait(never())).toEqual({ exitCode: 4, signal: 0 });
    expect(gone(escaped)).toBe(false);
    expect(readFileSync(join(s.logDir, 't.stdout.0'), 'utf8')).toBe('before\nafter\n');
  }, 10_000);
});
