/**
 * What raw_exec does with a started task's output (raw-exec-driver.ts, `wait`, `remove`), with real
 * processes on a simulated clock: a task's exit waits for its output pipes at most OUTPUT_DRAIN_MS (1 s) when a
 * process it left outside its group holds them, and a caller who gives up that wait gets the exit at once;
 * `remove` closes the log files, so what the task writes after it is not logged.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { allocLogDir, createRawExecDriver } from '../../src/drivers/raw-exec/raw-exec-driver.ts';
import { driverFixtures, never, until } from './raw-exec-driver-fixtures.ts';

const { strays, task, context, tracked } = driverFixtures();
const driver = createRawExecDriver({ supervise: false });

/** A task that exits 3 at once, leaving a sleep of its own session (outside its group) holding its output pipes. */
async function exitedHoldingPipes() {
  const ctx = context();
  const pidFile = join(ctx.allocDir, 'stray.pid');
  // The stray writes its pid once it has left the task's group; the task exits only then, so the reap of its
  // group after the exit cannot reach the stray.
  const script = `setsid /bin/sh -c 'echo $$ > ${pidFile}.tmp && mv ${pidFile}.tmp ${pidFile} && exec sleep 600' & while [ ! -e ${pidFile} ]; do sleep 0.01; done; exit 3`;
  const c = tracked(driver.controller(task({ command: '/bin/sh', args: ['-c', script] }), ctx));
  await c.prepare(never());
  await c.start(never());
  await until(() => existsSync(pidFile), 'the stray wrote its pid');
  strays.push(Number(readFileSync(pidFile, 'utf8')));
  return { c, ctx };
}

describe('an exit waits for the output pipes, at most 1 s', () => {
  it('answers as soon as the pipes close, with no step of the clock', async () => {
    const ctx = context();
    const c = tracked(driver.controller(task({ command: '/bin/sh', args: ['-c', 'echo last words; exit 2'] }), ctx));
    await c.prepare(never());
    await c.start(never());
    let result: unknown;
    void c.wait(never()).then((r) => (result = r));
    await until(() => result !== undefined, 'the exit', 5_000);
    expect(result).toEqual({ exitCode: 2, signal: 0 });
    expect(ctx.clock.now()).toBe(0);
    expect(readFileSync(join(allocLogDir(ctx.allocDir), 'web.stdout.0'), 'utf8')).toBe('last words\n');
  });

  it('answers 1 s (on the clock) after the exit when a process the task left holds the pipes', async () => {
    const { c, ctx } = await exitedHoldingPipes();
    let result: unknown;
    void c.wait(never()).then((r) => (result = r));
    // The exit is known and the drain's bound is set: the only timer on the clock.
    await until(() => ctx.clock.pendingTimers === 1, 'the drain\'s timer');
    await ctx.clock.advance(999);
    expect(result).toBeUndefined();
    await ctx.clock.advance(1);
    expect(result).toEqual({ exitCode: 3, signal: 0 });
  });

  it('waits for the last of the two pipes: a process the task left holding only its stderr keeps the exit until it writes and lets go', async () => {
    const ctx = context();
    const pidFile = join(ctx.allocDir, 'stray.pid');
    const go = join(ctx.allocDir, 'go');
    // The stray's stdout is /dev/null: the task's stdout pipe ends with the task, its stderr pipe with the stray.
    const stray = `echo $$ > ${pidFile}.tmp && mv ${pidFile}.tmp ${pidFile} && while [ ! -e ${go} ]; do sleep 0.01; done; echo late >&2`;
    const script = `setsid /bin/sh -c '${stray}' >/dev/null & while [ ! -e ${pidFile} ]; do sleep 0.01; done; echo done; exit 3`;
    const c = tracked(driver.controller(task({ command: '/bin/sh', args: ['-c', script] }), ctx));
    await c.prepare(never());
    await c.start(never());
    await until(() => existsSync(pidFile), 'the stray wrote its pid');
    strays.push(Number(readFileSync(pidFile, 'utf8')));
    let result: unknown;
    void c.wait(never()).then((r) => (result = r));
    // The exit is known and the drain's bound is set; the answer would already be there had stdout's end been taken for both.
    await until(() => result !== undefined || ctx.clock.pendingTimers === 1, 'the drain\'s timer');
    expect(result).toBeUndefined();
    writeFileSync(go, '');
    await until(() => result !== undefined, 'the exit, once stderr ended');
    expect(result).toEqual({ exitCode: 3, signal: 0 });
    expect(ctx.clock.now()).toBe(0);
    expect(readFileSync(join(allocLogDir(ctx.allocDir), 'web.stderr.0'), 'utf8')).toBe('late\n');
  });

  it('gives the exit at once to a caller who gives up the drain, and drops its timer', async () => {
    const { c, ctx } = await exitedHoldingPipes();
    const caller = new AbortController();
    let result: unknown;
    void c.wait(caller.signal).then((r) => (result = r));
    await until(() => ctx.clock.pendingTimers === 1, 'the drain\'s timer');
    caller.abort(new Error('given up'));
    await new Promise((r) => setImmediate(r));
    expect(result).toEqual({ exitCode: 3, signal: 0 });
    expect(ctx.clock.pendingTimers).toBe(0);
  });
});

describe('a log that fails to write stays closed', () => {
  it('drops the rest of the output, even once the log dir is back', async () => {
    // Files of 6 bytes: each line fills one, so the next line opens a new file.
    const ctx = context({ logs: { maxFiles: 10, maxFileSize: 6 } });
    const step = (n: number) => `while [ ! -e go${n} ]; do sleep 0.01; done`;
    const script = `echo first; ${step(1)}; echo second; touch wrote-second; ${step(2)}; echo third`;
    const c = tracked(driver.controller(task({ command: '/bin/sh', args: ['-c', script] }), ctx));
    await c.prepare(never());
    await c.start(never());
    const logDir = allocLogDir(ctx.allocDir);
    await until(() => existsSync(join(logDir, 'web.stdout.0')) && readFileSync(join(logDir, 'web.stdout.0'), 'utf8') === 'first\n', 'the first line logged');
    // The log dir goes away (a vanished disk): the second line's file cannot be opened.
    rmSync(logDir, { recursive: true });
    writeFileSync(join(ctx.taskDir, 'go1'), '');
    await until(() => existsSync(join(ctx.taskDir, 'wrote-second')), 'the second line written');
    // The line is in the pipe: the next poll phase of the loop reads it, before these two turns end.
    for (let i = 0; i < 2; i++) await new Promise((r) => setImmediate(r));
    mkdirSync(logDir);
    writeFileSync(join(ctx.taskDir, 'go2'), '');
    await expect(c.wait(never())).resolves.toEqual({ exitCode: 0, signal: 0 });
    expect(readdirSync(logDir).filter((f) => f.startsWith('web.stdout'))).toEqual([]);
  });
});

/** A task that logs `before`, waits for `go` in its dir, then logs `after` and exits `code`; started, `before` logged. */
async function loggingUntilGo(code: number) {
  const ctx = context();
  const script = `echo before; while [ ! -e go ]; do sleep 0.01; done; echo after; exit ${code}`;
  const c = tracked(driver.controller(task({ command: '/bin/sh', args: ['-c', script] }), ctx));
  await c.prepare(never());
  await c.start(never());
  const stdout = join(allocLogDir(ctx.allocDir), 'web.stdout.0');
  await until(() => existsSync(stdout) && readFileSync(stdout, 'utf8') === 'before\n', 'the first line logged');
  return { c, ctx, stdout, go: () => writeFileSync(join(ctx.taskDir, 'go'), '') };
}

describe('an output pipe that fails to read', () => {
  it('closes its log and takes nothing down: what follows is not logged, and the exit is answered', async () => {
    const { c, stdout, go } = await loggingUntilGo(4);
    // The stream the driver reads the task's stdout from reports a read error (Linux's pipes do not; a
    // terminal or a FIFO on a failing device can): an 'error' nobody handled would be thrown here.
    const [source] = (c as unknown as { sources: Readable[] }).sources;
    expect(() => source!.emit('error', Object.assign(new Error('read EIO'), { code: 'EIO' }))).not.toThrow();
    go();
    await expect(c.wait(never())).resolves.toEqual({ exitCode: 4, signal: 0 });
    expect(readFileSync(stdout, 'utf8')).toBe('before\n');
  });
});

describe('remove closes the task\'s log files', () => {
  it('logs nothing the task writes after it', async () => {
    const { c, stdout, go } = await loggingUntilGo(0);
    await c.remove(never());
    go();
    await expect(c.wait(never())).resolves.toEqual({ exitCode: 0, signal: 0 });
    expect(readFileSync(stdout, 'utf8')).toBe('before\n');
  });
});
