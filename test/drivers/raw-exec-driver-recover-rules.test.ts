/**
 * Which handles raw_exec recovers as supervised (raw-exec-driver.ts, `supervisorOf`), row by row: a supervisor
 * record is one only with a string prefix and a numeric pid; anything else is read as none, and the handle is
 * then judged as an unsupervised one (its process must be live and the one it names).
 */
import { describe, expect, it } from 'vitest';
import type { DriverHandle } from '../../src/drivers/controller.ts';
import { RecoverError } from '../../src/drivers/raw-exec/errors.ts';
import { createRawExecDriver } from '../../src/drivers/raw-exec/raw-exec-driver.ts';
import { driverFixtures, NO_PID } from './raw-exec-driver-fixtures.ts';

const { task, context } = driverFixtures();
const driver = createRawExecDriver({ supervise: false });

describe('a supervisor record that is not one is read as none', () => {
  it.each([
    ['a prefix that is not a string', { prefix: 3, pid: 5 }],
    ['no prefix', { pid: 5 }],
    ['a pid that is not a number', { prefix: '/p', pid: '5' }],
    ['no pid', { prefix: '/p' }],
    ['null', null],
  ])('%s: the handle of a gone process is refused as gone', (_what, supervisor) => {
    const handle = { driver: 'raw_exec', taskName: 'web', pid: NO_PID, startTime: 1, state: { pgid: NO_PID, supervisor } } as DriverHandle;
    let err: unknown;
    try {
      driver.recover(handle, task(), context());
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(RecoverError);
    expect((err as RecoverError).reason).toBe('gone');
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
