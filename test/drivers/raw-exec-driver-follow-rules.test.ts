/**
 * How long a follower of a raw_exec task's logs keeps reading (raw-exec-driver.ts, `logsActive`), and how a
 * recovered supervised task's exit is learned (`reattachOutput`), on a simulated clock: a spawned task's output
 * lasts as long as its pipes, not its process; a recovered task's while its process is the one recovered and
 * its exit unknown; and a recovered task whose supervisor lives is read again, its exit learned from the end
 * of its pipes without a poll.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SimulatedClock } from '../../src/testing/simulated-clock.ts';
import type { Subscription } from 'rxjs';
import { lookupBin } from '../../src/drivers/raw-exec/process.ts';
import { createRawExecDriver, type RawExecController } from '../../src/drivers/raw-exec/raw-exec-driver.ts';
import { driverFixtures, isAlive, never, NO_PID, until } from './raw-exec-driver-fixtures.ts';

const { task, context, sleeper, strays } = driverFixtures();
const canSupervise = ['setsid', 'mkfifo'].every((tool) => lookupBin(tool, '/', '/usr/bin:/bin') !== undefined);

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const f of cleanups.splice(0)) await f();
});

/** Follows `c`'s logs; `done()` says whether the follower has completed. */
function follow(c: RawExecController): () => boolean {
  let done = false;
  const sub: Subscription = c.logs({ follow: true }).subscribe({ complete: () => (done = true), error: () => (done = true) });
  cleanups.push(() => sub.unsubscribe());
  return () => done;
}

/** Whether `c` reads a recovered task's output pipes: they come from the spawner helper a moment after `recover`. */
const readsPipes = (c: RawExecController) => (c as unknown as { sources: unknown[] }).sources.length === 2;

/** Steps the clock by `stepMs` until `done()` or `realMs` of real time have passed; says whether it is done. */
async function stepUntil(clock: SimulatedClock, done: () => boolean, stepMs: number, realMs = 3_000): Promise<boolean> {
  const end = Date.now() + realMs;
  while (!done() && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 5));
    await clock.advance(stepMs);
  }
  return done();
}

describe('a follower of a spawned task reads as long as its output pipes are open', () => {
  it('stops once the task has closed its output, though it still runs', async () => {
    const ctx = context();
    const c = createRawExecDriver({ supervise: false, logPollIntervalMs: 10 }).controller(task({ command: '/bin/sh', args: ['-c', 'exec >/dev/null 2>&1; exec sleep 600'] }), ctx);
    cleanups.push(() => c.terminate(never()));
    await c.prepare(never());
    await c.start(never());
    const done = follow(c);
    expect(await stepUntil(ctx.clock, done, 10)).toBe(true);
    expect(c.handle()).toBeDefined();
    await expect(c.signal('SIGCONT', never())).resolves.toBeUndefined();
  });
});

describe('a follower of a recovered task reads while its process is the one recovered and its exit unknown', () => {
  it('stops once the exit is known, though the pid now runs another process', async () => {
    const { pid, startTime } = await sleeper();
    const ctx = context();
    mkdirSync(ctx.taskDir, { recursive: true });
    const prefix = join(ctx.taskDir, 'exec-0-tok');
    writeFileSync(`${prefix}.status`, '0\n');
    // The handle's start time is not the live process's: the pid was reused after the task exited.
    const handle = { driver: 'raw_exec', taskName: 'web', pid, startTime: startTime + 1, state: { pgid: pid, supervisor: { prefix, pid: NO_PID, startTime: 1 } } };
    const c = createRawExecDriver({ supervise: false, pollIntervalMs: 10, logPollIntervalMs: 10 }).recover(handle, task(), ctx);
    let exit: unknown;
    void c.wait(never()).then((r) => (exit = r));
    expect(await stepUntil(ctx.clock, () => exit !== undefined, 10)).toBe(true);
    expect(exit).toEqual({ exitCode: 0, signal: 0 });
    const done = follow(c);
    expect(await stepUntil(ctx.clock, done, 10)).toBe(true);
  });
});

describe.runIf(canSupervise)('a recovered task whose supervisor lives', () => {
  it('has its exit learned from the end of its output pipes, with no poll on the clock', async () => {
    const first = createRawExecDriver();
    const spawnCtx = { ...context(), attempt: 0 };
    const started = first.controller(task({ command: '/bin/sh', args: ['-c', 'while [ ! -e go ]; do sleep 0.01; done; exit 5'] }), spawnCtx);
    cleanups.push(() => started.terminate(never()));
    await started.start(never());
    const handle = started.handle()!;
    await started.close();
    // Polls so rare that none comes within the test: only the pipes' end can tell of the exit.
    const ctx = { ...spawnCtx, clock: context().clock };
    const c = createRawExecDriver({ pollIntervalMs: 3_600_000, watchedPollIntervalMs: 3_600_000 }).recover(handle, task(), ctx);
    let exit: unknown;
    void c.wait(never()).then((r) => (exit = r));
    await until(() => readsPipes(c), 'the pipes read again');
    writeFileSync(join(ctx.taskDir, 'go'), '');
    await until(() => exit !== undefined, 'the exit learned from the pipes', 5_000);
    expect(exit).toEqual({ exitCode: 5, signal: 0 });
    expect(ctx.clock.now()).toBe(0);
  });

  it('is looked at every 5 s by default while a process it left holds its pipes, not at every poll', async () => {
    const first = createRawExecDriver();
    const spawnCtx = { ...context(), attempt: 0 };
    // The task leaves a sleep in a session of its own holding both pipes, so their end never tells of its exit.
    const stray = 'echo $$ > stray.tmp && mv stray.tmp stray.pid && exec sleep 600';
    const script = `setsid /bin/sh -c '${stray}' & while [ ! -e go ]; do sleep 0.01; done; exit 5`;
    const started = first.controller(task({ command: '/bin/sh', args: ['-c', script] }), spawnCtx);
    cleanups.push(() => started.terminate(never()));
    await started.start(never());
    const handle = started.handle()!;
    await started.close();
    const pidFile = join(spawnCtx.taskDir, 'stray.pid');
    await until(() => existsSync(pidFile), 'the stray wrote its pid');
    strays.push(Number(readFileSync(pidFile, 'utf8')));
    // The poll interval is set, the watched one left to its default.
    const ctx = { ...spawnCtx, clock: context().clock };
    const c = createRawExecDriver({ pollIntervalMs: 100 }).recover(handle, task(), ctx);
    let exit: unknown;
    void c.wait(never()).then((r) => (exit = r));
    await until(() => readsPipes(c), 'the pipes read again');
    writeFileSync(join(ctx.taskDir, 'go'), '');
    const supervisor = (handle.state as { supervisor: { pid: number } }).supervisor.pid;
    await until(() => !isAlive(supervisor), 'the supervisor gone, the exit on file', 5_000);
    // Not a look before 5 s on the clock; then one every 5 s (the process may linger as a zombie, which only
    // some of the backstop's looks read) until the exit is known.
    await ctx.clock.advance(4_999);
    expect(exit).toBeUndefined();
    for (let looks = 0; exit === undefined && looks < 12; looks++) {
      await ctx.clock.advance(looks === 0 ? 1 : 5_000);
      await new Promise((r) => setImmediate(r));
    }
    expect(exit).toEqual({ exitCode: 5, signal: 0 });
  });
});
