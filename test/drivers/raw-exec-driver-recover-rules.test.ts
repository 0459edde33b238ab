/**
 * Which handles raw_exec recovers as supervised (raw-exec-driver.ts, `supervisorOf`), row by row: a supervisor
 * record is one only with a string prefix and a numeric pid; anything else is read as none, and the handle is
 * then judged as an unsupervised one (its process must be live and the one it names). A pid is a number; and an
 * earlier start of an attempt is looked for only by a supervised driver, the only kind that records starts.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { DriverHandle } from '../../src/drivers/controller.ts';
import { RecoverError } from '../../src/drivers/raw-exec/errors.ts';
import { lookupBin } from '../../src/drivers/raw-exec/process.ts';
import { createRawExecDriver } from '../../src/drivers/raw-exec/raw-exec-driver.ts';
import { driverFixtures, never, NO_PID } from './raw-exec-driver-fixtures.ts';

const { task, context } = driverFixtures();
const driver = createRawExecDriver({ supervise: false });

/** The reason recover() gives for refusing `handle` (it must refuse with a RecoverError). */
function refusalOf(handle: DriverHandle): string {
  try {
    driver.recover(handle, task(), context());
  } catch (err) {
    expect(err).toBeInstanceOf(RecoverError);
    return (err as RecoverError).reason;
  }
  throw new Error('recover() took a handle it should refuse');
}

describe('a handle names its process by a numeric pid', () => {
  it.each([
    ['unsupervised', undefined],
    ['supervised', { prefix: '/nonexistent-allocrun/exec-0-tok', pid: NO_PID }],
  ])('a pid that is a string is refused as an invalid handle (%s)', (_what, supervisor) => {
    const handle = { driver: 'raw_exec', taskName: 'web', pid: '5', startTime: 1, state: { pgid: null, ...(supervisor && { supervisor }) } } as unknown as DriverHandle;
    expect(refusalOf(handle)).toBe('invalid-handle');
  });
});

describe('a supervisor record that is not one is read as none', () => {
  it.each([
    ['a prefix that is not a string', { prefix: 3, pid: 5 }],
    ['no prefix', { pid: 5 }],
    ['a pid that is not a number', { prefix: '/p', pid: '5' }],
    ['no pid', { prefix: '/p' }],
    ['null', null],
  ])('%s: the handle of a gone process is refused as gone', (_what, supervisor) => {
    const handle = { driver: 'raw_exec', taskName: 'web', pid: NO_PID, startTime: 1, state: { pgid: NO_PID, supervisor } } as DriverHandle;
    expect(refusalOf(handle)).toBe('gone');
  });

  it('a well-formed record is adopted, its start time kept only when it is a number', () => {
    const supervisor = { prefix: '/nonexistent-allocrun/exec-0-tok', pid: NO_PID };
    for (const [startTime, kept] of [[7, 7], ['7', undefined], [undefined, undefined]] as const) {
      const handle = { driver: 'raw_exec', taskName: 'web', pid: NO_PID, startTime: 1, state: { pgid: NO_PID, supervisor: { ...supervisor, startTime } } } as DriverHandle;
      const c = driver.recover(handle, task(), context());
      expect((c.handle()!.state as { supervisor: unknown }).supervisor).toStrictEqual({ ...supervisor, startTime: kept });
    }
  });
});

describe('an earlier start of the attempt is looked for only where starts are recorded', () => {
  const canSupervise = ['setsid', 'mkfifo'].every((tool) => lookupBin(tool, '/', '/usr/bin:/bin') !== undefined);

  it.runIf(canSupervise)('a supervised driver finds none for an attempt nobody started', async () => {
    await expect(createRawExecDriver().findStarted(task(), { ...context(), attempt: 2 }, never())).resolves.toBeUndefined();
  });

  it.runIf(canSupervise)('a driver without supervisors finds none, even for an attempt an earlier agent started', async () => {
    const ctx = { ...context(), attempt: 2 };
    const earlier = createRawExecDriver().controller(task(), ctx);
    await earlier.start(never());
    try {
      await earlier.close();
      const found = await createRawExecDriver().findStarted(task(), ctx, never());
      expect(found?.pid).toBe(earlier.pid);
      await found?.close();
      await expect(driver.findStarted(task(), ctx, never())).resolves.toBeUndefined();
    } finally {
      await earlier.terminate(never());
    }
  });
});

describe('a recovered task whose supervisor is gone', () => {
  /** The processes and pipes keeping this process's loop alive. */
  const held = (): number => process.getActiveResourcesInfo().filter((r) => r === 'PipeWrap' || r === 'ProcessWrap').length;

  it('is adopted without opening its output pipes, whoever still holds them', async () => {
    const ctx = context();
    mkdirSync(ctx.taskDir, { recursive: true });
    const prefix = join(ctx.taskDir, 'exec-0-tok');
    execFileSync('mkfifo', ['-m', '600', `${prefix}.out`, `${prefix}.err`]);
    // Held open for writing (and reading, so the open does not wait), as by a workload that outlived its supervisor.
    const fds = [openSync(`${prefix}.out`, constants.O_RDWR), openSync(`${prefix}.err`, constants.O_RDWR)];
    try {
      const before = held();
      const c = driver.recover({ driver: 'raw_exec', taskName: 'web', pid: NO_PID - 1, startTime: 5, state: { pgid: NO_PID - 1, supervisor: { prefix, pid: NO_PID, startTime: 1 } } }, task(), ctx);
      expect(held()).toBe(before);
      await c.close();
    } finally {
      for (const fd of fds) closeSync(fd);
    }
  });
});
