/**
 * What raw-exec-driver.ts settles once: where it looks for the supervisor's tools (`setsid`, `mkfifo`), a
 * search path built when the module loads and searched once per process, and the spawner helper a
 * supervising driver starts as it is made. Each test loads the module afresh (raw-exec-driver-fixtures.ts,
 * `loadedAfresh`), so that code runs under it: the system dirs are searched before the agent's PATH, never
 * the agent's working directory, so an agent whose PATH is empty still supervises its tasks, with the
 * system's tools, and its handles name the driver.
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { lookupBin } from '../../src/drivers/raw-exec/process.ts';
// Imported as well as loaded afresh: the suites a mutation run picks for this module are those importing it.
import { RAW_EXEC, type RawExecController } from '../../src/drivers/raw-exec/raw-exec-driver.ts';
import { driverFixtures, loadedAfresh, never, plantedInWorkingDir } from './raw-exec-driver-fixtures.ts';

type DriverModule = typeof import('../../src/drivers/raw-exec/raw-exec-driver.ts');
const DRIVER = '../../src/drivers/raw-exec/raw-exec-driver.ts';

const { task, context, tracked, dirs } = driverFixtures();

/** The command line of the supervisor of `c`'s task. */
function supervisorArgs(c: RawExecController): string[] {
  const supervisor = (c.handle()!.state as { supervisor: { pid: number } }).supervisor.pid;
  return readFileSync(`/proc/${supervisor}/cmdline`, 'utf8').split('\0');
}

/** The first of the system dirs, in their order, that holds `tool`. */
const systemTool = (tool: string) => lookupBin(tool, '/', '/usr/bin:/bin:/usr/sbin:/sbin');
const canSupervise = systemTool('setsid') !== undefined && systemTool('mkfifo') !== undefined;

describe.runIf(canSupervise)('the supervisor\'s tools are looked for in the system dirs, then on the agent\'s PATH', () => {
  it.each([
    ['empty', ''],
    ['unset', undefined],
  ])('an agent whose PATH is %s supervises its tasks with the system\'s setsid and mkfifo, its handles naming raw_exec', async (_what, agentPath) => {
    const { createRawExecDriver } = await loadedAfresh<DriverModule>(DRIVER, agentPath);
    const c = tracked(createRawExecDriver().controller(task(), { ...context(), attempt: 0 }));
    await c.start(never());
    expect(RAW_EXEC).toBe('raw_exec');
    expect(c.handle()).toMatchObject({ driver: RAW_EXEC, taskName: 'web', state: { supervisor: { pid: expect.any(Number), prefix: expect.any(String) } } });
    // The supervisor is handed the tools of the first system dir holding them (its arguments 2 and 4).
    expect(supervisorArgs(c)).toEqual(expect.arrayContaining([systemTool('setsid'), systemTool('mkfifo')]));
  });

  it('never in the agent\'s working directory: a setsid and a mkfifo planted there are not the supervisor\'s', async (test) => {
    if (!plantedInWorkingDir(['setsid', 'mkfifo'], dirs)) test.skip();
    const { createRawExecDriver } = await loadedAfresh<DriverModule>(DRIVER, process.env.PATH);
    const c = tracked(createRawExecDriver().controller(task(), { ...context(), attempt: 0 }));
    await c.start(never());
    expect(supervisorArgs(c)).toEqual(expect.arrayContaining([systemTool('setsid'), systemTool('mkfifo')]));
  });

  it('a driver told not to supervise runs its tasks unsupervised', async () => {
    const { createRawExecDriver } = await loadedAfresh<DriverModule>(DRIVER, '');
    const c = tracked(createRawExecDriver({ supervise: false }).controller(task(), { ...context(), attempt: 0 }));
    await c.start(never());
    expect(c.handle()?.state).toEqual({ pgid: c.pid });
  });
});


describe('the spawner helper is started as a supervising driver is made, and only then', () => {
  const SPAWNER = '../../src/drivers/raw-exec/spawner.ts';
  afterEach(() => {
    vi.doUnmock(SPAWNER);
  });

  it.each([
    ['a supervising driver starts it', {}, 1],
    ['a driver told not to supervise does not', { supervise: false }, 0],
  ])('%s', async (_what, options, starts) => {
    const warmSpawner = vi.fn();
    vi.doMock(SPAWNER, async (actual) => ({ ...(await actual<typeof import('../../src/drivers/raw-exec/spawner.ts')>()), warmSpawner }));
    const { createRawExecDriver } = await loadedAfresh<DriverModule>(DRIVER, process.env.PATH);
    createRawExecDriver(options);
    expect(warmSpawner).toHaveBeenCalledTimes(canSupervise ? starts : 0);
  });
});
