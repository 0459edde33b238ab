/** The drivers every runner has unless the caller replaces them. */
import type { Driver } from '../drivers/controller.ts';
import { createMockDriver } from '../drivers/mock/mock-driver.ts';

/** `mock` (also under Nomad's name `mock_driver`), merged with the caller's drivers, which win. */
export function withDefaultDrivers(extra: Record<string, Driver> = {}): Record<string, Driver> {
  const mock = createMockDriver();
  return { mock, mock_driver: mock, ...extra };
}
