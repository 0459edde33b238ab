/** The drivers every runner has unless the caller replaces them. */
import type { Driver } from '../drivers/controller.ts';
import { createMockDriver } from '../drivers/mock/mock-driver.ts';
import { createRawExecDriver } from '../drivers/raw-exec/raw-exec-driver.ts';

/** `raw_exec` and `mock` (also under Nomad's name `mock_driver`), merged with the caller's drivers, which win. */
export function withDefaultDrivers(extra: Record<string, Driver> = {}): Record<string, Driver> {
  const mock = createMockDriver();
  return { raw_exec: createRawExecDriver(), mock, mock_driver: mock, ...extra };
}
