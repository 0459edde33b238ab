import { describe, expect, it } from 'vitest';
import { createMockDriver } from '../../src/drivers/mock/mock-driver.ts';
import { parseMockConfig } from '../../src/drivers/mock/mock-config.ts';
import type { DriverContext } from '../../src/drivers/controller.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';
import { describeControllerConformance } from './controller-conformance.ts';

let clock = new SimulatedClock();
const ctx = (): DriverContext => ({ allocId: 'a', env: {}, taskDir: '/nonexistent', allocDir: '/nonexistent', clock });

describeControllerConformance({
  name: 'mock',
  make(kind) {
    clock = new SimulatedClock();
    const config = {
      exits0: { run_for: '1s' },
      exits3: { run_for: '1s', exit_code: 3 },
      runsLong: { run_for: '10h' },
      ignoresSigterm: { run_for: '10h', kill_after: '10h' },
    }[kind];
    return createMockDriver().controller({ name: kind, driver: 'mock', config }, ctx());
  },
  advance: (ms) => clock.advance(ms),
});

describe('mock driver config', () => {
  it("reports every bad option at once, each naming config.<key>", () => {
    expect(() => parseMockConfig({ run_for: 5n as unknown as string, exit_code: 'one', colour: 'red' })).toThrow(
      /config\.colour: unknown mock driver option; config\.run_for: expected a duration.*; config\.exit_code: expected an integer/,
    );
  });

  it('accepts Go durations and milliseconds', () => {
    expect(parseMockConfig({ run_for: '1m30s', kill_after: 250 })).toMatchObject({ runFor: 90_000, killAfter: 250 });
  });

  it('recovers a task from its handle with the rest of its run_for', async () => {
    clock = new SimulatedClock();
    const driver = createMockDriver();
    const first = driver.controller({ name: 't', driver: 'mock', config: { run_for: '10s', exit_code: 4 } }, ctx());
    const never = new AbortController().signal;
    await first.start(never);
    await clock.advance(4_000);
    const again = driver.recover!(first.handle!()!, { name: 't', driver: 'mock', config: { run_for: '10s', exit_code: 4 } }, ctx());
    const exit = again.wait(never);
    await clock.advance(6_000);
    expect(await exit).toEqual({ exitCode: 4, signal: 0 });
  });
});
