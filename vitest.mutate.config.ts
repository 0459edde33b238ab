import { defineConfig } from 'vitest/config';

// The suites Stryker runs against each mutant of machines/ and src/runtime/: everything that drives them in
// process. CLI and browser suites spawn processes or Chromium, which Stryker's per-test coverage cannot see.
// Property runs are kept small per mutant (PROPERTY_RUNS, see test/properties/arbitraries.ts).
process.env.PROPERTY_RUNS ??= '25';

export default defineConfig({
  test: {
    include: [
      'test/machines/**/*.test.ts',
      'test/runtime/**/*.test.ts',
      'test/model/**/*.test.ts',
      'test/properties/**/*.test.ts',
      'test/drivers/do.test.ts',
      'test/drivers/resolve-running.test.ts',
      'test/drivers/mock.test.ts',
      // src/runtime/create-executor.ts: the executor's in-process suite (mock and capturing drivers only).
      'test/drivers/create-executor.test.ts',
      'test/hooks/**/*.test.ts',
      // Nomad-fidelity scenarios, restore of damaged records and the task env: in process, on the mock driver.
      'test/fidelity/**/*.test.ts',
      'test/restore/corrupt-record.test.ts',
      'test/env/**/*.test.ts',
    ],
    // Real processes and agents (raw_exec) only time out under mutation; they do not drive the machines' logic.
    exclude: ['test/properties/broken-variants.test.ts', 'test/runtime/real-processes.test.ts', 'test/runtime/agent.test.ts'],
    // Unmutated, the slowest test here takes about a second. Under a mutant, a test that waits forever (a
    // restart loop at one instant of the simulated clock) is a detected mutant: fail it after 15 s rather
    // than wait for Stryker's own limit, which also restarts the test process.
    testTimeout: 15_000,
    hookTimeout: 15_000,
  },
});
