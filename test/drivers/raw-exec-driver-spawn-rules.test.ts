/**
 * How a raw_exec start fails (raw-exec-driver.ts, `spawn`), rule by rule: an unsupervised spawn the kernel
 * refuses names the command (a script whose interpreter is missing or cannot be run) or the spawn's own
 * error (a NUL byte in an argument, arguments too long); a task user under a supervisor needs setpriv; and
 * a start that failed can be tried again once the cause is gone.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CommandNotFoundError, SpawnError } from '../../src/drivers/raw-exec/errors.ts';
import { lookupBin } from '../../src/drivers/raw-exec/process.ts';
import { allocLogDir, createRawExecDriver } from '../../src/drivers/raw-exec/raw-exec-driver.ts';
import { systemUserSwitching, TaskUserError, useUserSwitching } from '../../src/drivers/raw-exec/task-user.ts';
import { driverFixtures, never } from './raw-exec-driver-fixtures.ts';

const { task, context, tempDir, tracked } = driverFixtures();
const driver = createRawExecDriver({ supervise: false });

/** An executable script in a temp dir whose first line is `#!<interpreter>`. */
function script(interpreter: string): string {
  const file = join(tempDir(), 'run.sh');
  writeFileSync(file, `#!${interpreter}\necho never\n`);
  chmodSync(file, 0o755);
  return file;
}

async function startError(config: unknown): Promise<unknown> {
  const c = tracked(driver.controller(task(config), context()));
  await c.prepare(never());
  return c.start(never()).then(
    () => new Error('started'),
    (e: unknown) => e,
  );
}

describe('an unsupervised spawn the kernel refuses says why', () => {
  it('a script whose interpreter is missing is a command that cannot be run (ENOENT)', async () => {
    const bin = script('/nonexistent/interpreter');
    const err = await startError({ command: bin });
    expect(err).toBeInstanceOf(CommandNotFoundError);
    expect((err as Error).message).toBe(`task "web": cannot run config.command ${JSON.stringify(bin)}: spawn ${bin} ENOENT`);
  });

  it('a script whose interpreter is a directory is a command that cannot be run (EACCES)', async () => {
    const bin = script(tempDir());
    const err = await startError({ command: bin });
    expect(err).toBeInstanceOf(CommandNotFoundError);
    expect((err as Error).message).toBe(`task "web": cannot run config.command ${JSON.stringify(bin)}: spawn ${bin} EACCES`);
  });

  it.each([
    ['a NUL byte in an argument', ['a\0b'], 'ERR_INVALID_ARG_VALUE'],
    ['arguments longer than the kernel takes', ['x'.repeat(200_000)], 'E2BIG'],
  ])('%s is a SpawnError naming the binary, with Node\'s error as its cause', async (_what, args, code) => {
    const err = await startError({ command: '/bin/echo', args });
    expect(err).toBeInstanceOf(SpawnError);
    const cause = (err as Error).cause as NodeJS.ErrnoException;
    expect(cause.code).toBe(code);
    expect((err as Error).message).toBe(`task "web": cannot spawn /bin/echo: ${cause.message}`);
  });
});

describe('an unsupervised task runs as it would under a supervisor', () => {
  async function output(script: string, env: Record<string, string>): Promise<string> {
    const ctx = context({ env });
    const c = tracked(driver.controller(task({ command: '/bin/sh', args: ['-c', script] }), ctx));
    await c.prepare(never());
    await c.start(never());
    await expect(c.wait(never())).resolves.toEqual({ exitCode: 0, signal: 0 });
    return readFileSync(join(allocLogDir(ctx.allocDir), 'web.stdout.0'), 'utf8');
  }

  it('with exactly the task env', async () => {
    // The shell adds PWD (and dash nothing else); what the driver passes is the task's and no more.
    const env = (await output('env', { PATH: '/usr/bin:/bin', ONLY_THIS: 'x y' })).split('\n').filter((l) => l !== '' && !l.startsWith('PWD='));
    expect(env.sort()).toEqual(['ONLY_THIS=x y', 'PATH=/usr/bin:/bin']);
  });

  it('with /dev/null as stdin: a read ends at once', async () => {
    expect(await output('read line; echo "read: $?"', { PATH: '/usr/bin:/bin' })).toBe('read: 1\n');
  });
});

describe('a bare command is looked up on the task\'s PATH, then on the agent\'s', () => {
  const agentPath = process.env.PATH;
  afterEach(() => {
    process.env.PATH = agentPath;
  });

  /** A dir holding an executable `allocrun-probe` that exits `code`. */
  function probeDir(code: number): string {
    const dir = tempDir();
    writeFileSync(join(dir, 'allocrun-probe'), `#!/bin/sh\nexit ${code}\n`);
    chmodSync(join(dir, 'allocrun-probe'), 0o755);
    return dir;
  }

  async function exitOf(env: Record<string, string>): Promise<unknown> {
    const c = tracked(driver.controller(task({ command: 'allocrun-probe' }), context({ env })));
    await c.prepare(never());
    await c.start(never());
    return c.wait(never());
  }

  it('finds it in the first dir of the agent\'s PATH after the task\'s', async () => {
    process.env.PATH = `${probeDir(6)}:${agentPath}`;
    await expect(exitOf({ PATH: '/nonexistent-allocrun' })).resolves.toEqual({ exitCode: 6, signal: 0 });
  });

  it('prefers the task\'s PATH', async () => {
    process.env.PATH = `${probeDir(6)}:${agentPath}`;
    await expect(exitOf({ PATH: probeDir(7) })).resolves.toEqual({ exitCode: 7, signal: 0 });
  });
});

describe('a start after a prepare does not prepare again', () => {
  it('a task dir removed in between is a SpawnError, not made again', async () => {
    const ctx = context();
    const c = tracked(driver.controller(task({ command: '/bin/sh', args: ['-c', 'exit 0'] }), ctx));
    await c.prepare(never());
    rmSync(ctx.taskDir, { recursive: true });
    await expect(c.start(never())).rejects.toThrow(new SpawnError('web', `working directory ${ctx.taskDir} does not exist or is not a directory`));
    expect(existsSync(ctx.taskDir)).toBe(false);
  });
});

describe('a start that failed can be tried again', () => {
  it('spawns once the working directory it lacked is there', async () => {
    const ctx = context();
    const c = tracked(driver.controller(task({ command: '/bin/sh', args: ['-c', 'exit 4'], work_dir: 'later' }), ctx));
    await c.prepare(never());
    await expect(c.start(never())).rejects.toThrow(SpawnError);
    mkdirSync(join(ctx.taskDir, 'later'));
    await c.start(never());
    await expect(c.wait(never())).resolves.toEqual({ exitCode: 4, signal: 0 });
  });
});

const NOBODY = systemUserSwitching.lookup('nobody');
const supervised = createRawExecDriver();
/** The supervisor needs setsid and mkfifo (the driver runs unsupervised without them); chowning the task dir needs root. */
const canSupervise = ['setsid', 'mkfifo'].every((tool) => lookupBin(tool, '/', '/usr/bin:/bin') !== undefined) && process.geteuid?.() === 0 && NOBODY !== undefined;

describe('a task user under a supervisor', () => {
  let restore: (() => void) | undefined;
  afterEach(() => {
    restore?.();
    restore = undefined;
  });

  it.runIf(canSupervise)('is refused at the start, naming task and user, when setpriv is not installed; nothing runs', async () => {
    restore = useUserSwitching({ cannotSwitch: () => undefined, lookup: (name) => (name === 'nobody' ? NOBODY : undefined), setpriv: () => undefined });
    const ctx = context();
    const c = supervised.controller(task({ command: '/bin/sh', args: ['-c', 'exit 0'] }, { user: 'nobody' }), ctx);
    await c.prepare(never());
    await expect(c.start(never())).rejects.toThrow(new TaskUserError('web', 'nobody', 'setpriv (util-linux) is not installed, and the agent switches users with it'));
    expect(c.pid).toBeUndefined();
  });
});
