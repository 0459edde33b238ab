/** The drivers every runner has unless the caller replaces them. */
import type { Driver } from '../drivers/controller.ts';
import { createMockDriver } from '../drivers/mock/mock-driver.ts';
import { createRawExecDriver } from '../drivers/raw-exec/raw-exec-driver.ts';

/**
 * The default raw_exec driver, made once per process: it holds only its settings (the paths of `setsid` and
 * `mkfifo`, looked up on disk), so every runner can share it instead of searching PATH once per allocation.
 */
let sharedRawExec: Driver | undefined;
/** The same, one per default task user (`--task-user`): a handful at most, one in an agent. */
const rawExecAs = new Map<string, Driver>();

/** What the default drivers are made with. */
export interface DefaultDriverOptions {
  /** The user raw_exec runs tasks as when they name none (RawExecDriverOptions.taskUser). */
  taskUser?: string;
}

/**
 * `raw_exec` and `mock` (also under Nomad's name `mock_driver`), merged with the caller's drivers, which win.
 * The table has no prototype: a task's driver name is looked up in it, and `constructor` or `toString` must
 * find no driver (and be refused as unknown), not a method of Object.
 */
export function withDefaultDrivers(extra: Record<string, Driver> = {}, opts: DefaultDriverOptions = {}): Record<string, Driver> {
  // The mock driver lists the controllers it made (for tests to inspect): one per runner, so the list goes with it.
  const mock = createMockDriver();
  let rawExec: Driver;
  if (opts.taskUser === undefined) rawExec = sharedRawExec ??= createRawExecDriver();
  else {
    rawExec = rawExecAs.get(opts.taskUser) ?? createRawExecDriver({ taskUser: opts.taskUser });
    rawExecAs.set(opts.taskUser, rawExec);
  }
  return Object.assign(Object.create(null) as Record<string, Driver>, { raw_exec: rawExec, mock, mock_driver: mock }, extra);
}
