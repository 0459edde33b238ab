/** The drivers every runner has unless the caller replaces them. */
import type { Driver } from '../drivers/controller.ts';
import { createMockDriver } from '../drivers/mock/mock-driver.ts';
import { createRawExecDriver } from '../drivers/raw-exec/raw-exec-driver.ts';

/**
 * The default raw_exec driver, made once per process: it holds only its settings (the paths of `setsid` and
 * `mkfifo`, looked up on disk), so every runner can share it instead of searching PATH once per allocation.
 */
let sharedRawExec: Driver | undefined;

/** `raw_exec` and `mock` (also under Nomad's name `mock_driver`), merged with the caller's drivers, which win. */
export function withDefaultDrivers(extra: Record<string, Driver> = {}): Record<string, Driver> {
  // The mock driver lists the controllers it made (for tests to inspect): one per runner, so the list goes with it.
  const mock = createMockDriver();
  sharedRawExec ??= createRawExecDriver();
  return { raw_exec: sharedRawExec, mock, mock_driver: mock, ...extra };
}
